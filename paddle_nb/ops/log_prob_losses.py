"""Losses on log-probabilities: nll_loss and kldiv_loss, and their gradients (Fluid's
slots and attributes, as Paddle 2.6.2 saves ``F.nll_loss`` / ``nn.NLLLoss`` and
``F.kl_div`` / ``nn.KLDivLoss``).

``nll_loss``: X holds log-probabilities [N, C] or [N, C, H, W] (``F.nll_loss`` reshapes
other ranks to 4-D before the op), Label a class per sample [N] or per pixel [N, H, W].
Each element's loss is -X[n, Label, ...] * Weight[Label] (Weight, optional, one per
class: 1 without it); an element labelled ``ignore_index`` contributes nothing.
``reduction`` none keeps the per-element losses (Total_weight 0), sum adds them, mean
divides the sum by Total_weight, the summed weights of the elements not ignored (not by
the count: a weighted mean), unless that is 0. Labels index X by data, so every one is
checked first (kernels/check.py). The kernels are kernels/*/nll_loss.py.

``kldiv_loss``: Loss = Target * (log(Target) - X) element by element, 0 where Target
<= 0 (Paddle's rule: 0 log 0 = 0); with ``log_target`` Target is itself a log-probability
and Loss = exp(Target) * (Target - X). ``reduction`` none, sum, mean (over every element)
or batchmean (the sum over N, X's first dim). Paddle 2.6.2 has no ``log_target`` (its
programs load with the default, False); Paddle 3 saves it. ``F.kl_div(reduction=
"batchmean")`` in 2.6.2 appends kldiv_loss with none and divides with ops of its own;
the op's own batchmean is here too, for programs that use it. The math is ``@pointwise``
scalar functions, so one kernel serves both places. Target gets no gradient (Paddle's
kldiv_loss_grad writes only X@GRAD).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import loss as CPU_LOSS
# (the scalar math, by name: numba's CUDA target compiles the @pointwise kernels too)
from ..kernels.cpu.loss import (kldiv_log_target_slope, kldiv_log_target_value, kldiv_slope,
                                kldiv_value)
from ..kernels.cpu import nll_loss as CPU_NLL
from ..kernels.cuda import nll_loss as CUDA_NLL
from ..kernels.cpu.lazy_ufunc import FLOAT_2, FLOAT_3
from ..kernels.lowered import Call, Elementwise
from ..kernels.pointwise import pointwise
from . import arrays
from .common import FLOAT_TYPES
from ..backends import CPU, CUDA


def _fits(shape, want) -> bool:
    return len(shape) == len(want) and all(a < 0 or b < 0 or a == b
                                           for a, b in zip(shape, want))


# --- nll_loss ------------------------------------------------------------------------------
NLL_REDUCTIONS = ("none", "mean", "sum")


def _reduction_in(choices):
    """The attribute check (``check_attrs``) of a loss whose ``reduction`` is one of
    ``choices``; the shape rule runs the same check (:func:`_require_reduction`)."""
    def check(values: dict) -> str | None:
        if values["reduction"] not in choices:
            return f"reduction must be one of {choices}, given {values['reduction']!r}"
        return None
    return check


def _require_reduction(ctx, choices) -> None:
    problem = _reduction_in(choices)({"reduction": ctx.attr("reduction")})
    if problem:
        ctx.fail(problem, slot="X", expected=" or ".join(choices),
                 given=repr(ctx.attr("reduction")))


def _nll_infer(ctx):
    _require_reduction(ctx, NLL_REDUCTIONS)
    ctx.require_dtype("X", "float")
    xs = ctx.shape("X")
    if len(xs) not in (2, 4):
        ctx.fail("X must hold log-probabilities [N, C] or [N, C, H, W] (F.nll_loss "
                 "reshapes other ranks to 4-D)", slot="X", expected="rank 2 or 4",
                 given=ctx.describe_input("X"))
    ctx.require_dtype("Label", "int")
    per_element = [xs[0]] + xs[2:]
    if not _fits(ctx.shape("Label"), per_element):
        ctx.fail("Label must hold one class per sample (per pixel for a 4-D X)",
                 slot="Label", expected=str(per_element), given=ctx.describe_input("Label"))
    if ctx.has_input("Weight"):
        if ctx.dtype("Weight") != ctx.dtype("X") or not _fits(ctx.shape("Weight"), [xs[1]]):
            ctx.fail("Weight must hold one weight per class, of X's element type",
                     slot="Weight", expected=f"{[xs[1]]} of X's type",
                     given=ctx.describe_input("Weight"))
    if xs[1] == 0:
        ctx.fail("X has no classes", slot="X", expected="C >= 1",
                 given=ctx.describe_input("X"))
    none = ctx.attr("reduction") == "none"
    ctx.set_output("Out", per_element if none else [], ctx.dtype("X"))
    ctx.set_output("Total_weight", [], ctx.dtype("X"))


def _nll_inputs(ctx, place):
    """(x contiguous, flat labels checked to be classes or ignore_index, weight (ones
    without one), classes, inner): X seen as (N, C, inner)."""
    x, label = ctx.input("X"), ctx.input("Label")
    classes = int(x.shape[1])
    inner = int(np.prod(x.shape[2:], dtype=np.int64))
    ignore = ctx.attr("ignore_index")
    check.indices(label, classes, slot="Label", what="class index", ignore=ignore,
                  counted=f"X has {classes} classes")
    weight = ctx.input("Weight")
    if weight is None:
        weight = arrays.full((classes,), 1, x.dtype, like=x)
    if place is CPU:
        x, weight = np.ascontiguousarray(x), np.ascontiguousarray(weight)
        label = np.ascontiguousarray(label).reshape(-1)
    else:
        label = label.reshape((int(label.size),))
    return x, label, weight, classes, inner, ignore


def _nll(place):
    k = CPU_NLL if place is CPU else CUDA_NLL

    def run(ctx):
        x, label, weight, classes, inner, ignore = _nll_inputs(ctx, place)
        loss, used = k.nll_elements(x.reshape(-1) if place is CPU else x, label, weight,
                                    ignore, classes, inner)
        reduction = ctx.attr("reduction")
        if reduction == "none":
            ctx.set_output("Out", loss.reshape((int(x.shape[0]),) + tuple(
                int(d) for d in x.shape[2:])))
            ctx.set_output("Total_weight", arrays.full((), 0, x.dtype, like=x))
            return
        out, total = k.nll_total(loss, used, reduction == "mean")
        if place is CPU:
            out, total = np.array(out, x.dtype), np.array(total, x.dtype)
        ctx.set_output("Out", out.reshape(()))
        ctx.set_output("Total_weight", total.reshape(()))
    return run


def _nll_grad(place):
    def run(ctx):
        x, label, weight, classes, inner, ignore = _nll_inputs(ctx, place)
        dout = ctx.input("Out@GRAD")
        reduction = ctx.attr("reduction")
        divisor = 1.0
        if reduction == "mean":
            total = float(arrays.host_scalar(ctx.input("Total_weight")))
            divisor = total if total != 0 else 1.0    # (the forward divides only then)
        per_element = reduction == "none"
        if place is CPU:
            dout = np.ascontiguousarray(arrays.astype(dout, x.dtype)).reshape(-1)
            dx = CPU_NLL.nll_grad(label, weight, ignore, classes, inner, dout, per_element,
                                  divisor, np.empty(x.size, x.dtype))
        else:
            dx = CUDA_NLL.nll_grad(label, weight, ignore, classes, inner,
                                      arrays.astype(dout, x.dtype), per_element, divisor,
                                      int(x.size), x.dtype)
        ctx.set_output("X@GRAD", dx.reshape(tuple(int(d) for d in x.shape)))
    return run


# In a compiled block (kernels/lowered.py): the CPU kernel's loops, after the same range
# check of the labels (kernels/cpu/nll_loss.py). Weight, where the op has none, is the
# literal None (the kernels then weigh every class 1, as _nll_inputs does).
def _weight_reads(info) -> tuple[tuple, tuple]:
    """(the Weight slot to read, or none; the None const in its place)."""
    return (("Weight",), ()) if info.has_input("Weight") else ((), (None,))


def _lowered_nll(info):
    if info.dtype("X").name not in FLOAT_TYPES:
        return None
    weight, no_weight = _weight_reads(info)
    ignore = int(info.attr("ignore_index"))
    if info.attr("reduction") == "none":
        return Call(CPU_NLL.nll_per_element, ("X", "Label", *weight), ("Out", "Total_weight"),
                    (*no_weight, ignore))
    return Call(CPU_NLL.nll_reduced, ("X", "Label", *weight), ("Out", "Total_weight"),
                (*no_weight, ignore, info.attr("reduction") == "mean"))


def _lowered_nll_grad(info):
    dtype = info.dtype("X")
    if dtype.name not in FLOAT_TYPES or info.dtype("Out@GRAD") != dtype:
        return None                  # (the kernel casts dOut to X's dtype first)
    weight, no_weight = _weight_reads(info)
    reduction = info.attr("reduction")
    return Call(CPU_NLL.nll_grad_of, ("X", "Label", "Total_weight", "Out@GRAD", *weight),
                ("X@GRAD",), (*no_weight, int(info.attr("ignore_index")),
                              reduction == "none", reduction == "mean"))


register(OpDef(
    "nll_loss",
    [Slot("X", "log-probabilities, [N, C] or [N, C, H, W]"),
     Slot("Label", "the class of each sample (pixel): [N] or [N, H, W]"),
     Slot("Weight", "one weight per class, [C]", dispensable=True)],
    [Slot("Out", "the losses (none: per element) or their sum / weighted mean"),
     Slot("Total_weight", "the summed weights of the elements not ignored (0 for none)")],
    [Attr("ignore_index", A.LONG, -100, "elements with this label contribute nothing"),
     Attr("reduction", A.STRING, "mean", "none, mean (weighted by Weight) or sum")],
    comment="Out = -X[Label] * Weight[Label] per element, reduced (mean: over the summed "
            "weights).",
    infer_shape=_nll_infer, kernels={"cpu": _nll(CPU), "cuda": _nll(CUDA)},
    lowered=_lowered_nll,
    grad=Grad(reads=["X", "Label", "Weight", "Total_weight"], grads_of=["Out"],
              writes=["X"], kernel=_nll_grad(CPU), cuda_kernel=_nll_grad(CUDA),
              lowered=_lowered_nll_grad),
    check_attrs=_reduction_in(NLL_REDUCTIONS)))


# --- kldiv_loss ----------------------------------------------------------------------------
KL_REDUCTIONS = ("none", "batchmean", "mean", "sum")


# (the math is kernels/cpu/loss.py's, whose loop a compiled block runs for a reduced loss)
@pointwise(FLOAT_2, fastmath=False)
def kldiv(target, x):
    return kldiv_value(target, x)


@pointwise(FLOAT_2, fastmath=False)
def kldiv_log_target(target, x):
    return kldiv_log_target_value(target, x)


@pointwise(FLOAT_3, params=1, fastmath=False)
def kldiv_grad(target, dloss, divisor):
    return kldiv_slope(target, dloss, divisor)


@pointwise(FLOAT_3, params=1, fastmath=False)
def kldiv_log_target_grad(target, dloss, divisor):
    return kldiv_log_target_slope(target, dloss, divisor)


def _kl_infer(ctx):
    _require_reduction(ctx, KL_REDUCTIONS)
    ctx.require_dtype("X", "float")
    ctx.require_same_dtype("Target", "X")
    ctx.require_same_shape("Target", "X")
    xs = ctx.shape("X")
    if ctx.attr("reduction") == "batchmean" and not xs:
        ctx.fail("batchmean divides by X's first dim: X needs one", slot="X",
                 expected="rank >= 1", given=ctx.describe_input("X"))
    ctx.set_output("Loss", xs if ctx.attr("reduction") == "none" else [], ctx.dtype("X"))


def _kl_divisor(ctx, shape) -> float:
    """What the summed loss is divided by: every element (mean), the first dim
    (batchmean), else 1. Nothing to divide by (an empty X) gives NaN for mean, as a mean
    of nothing; batchmean of N = 0 leaves the sum (0), as Paddle's kernel."""
    reduction = ctx.attr("reduction")
    if reduction == "mean":
        n = int(np.prod(shape, dtype=np.int64))
        return float(n) if n else math.nan
    if reduction == "batchmean":
        return float(shape[0]) if shape[0] else 1.0
    return 1.0


def _kl(place):
    def run(ctx):
        x, target = ctx.input("X"), ctx.input("Target")
        kernel = kldiv_log_target if ctx.attr("log_target") else kldiv
        if ctx.attr("reduction") == "none":
            ctx.set_output("Loss", place.apply(kernel, target, x,
                                               out=ctx.out("Loss", x.shape, x.dtype),
                                               out_dtype=x.dtype))
            return
        loss = place.apply(kernel, target, x, out=None, out_dtype=x.dtype)
        total = place.sum_axes(loss.reshape((int(loss.size),)), [0], False)
        divisor = _kl_divisor(ctx, tuple(int(d) for d in x.shape))
        ctx.set_output("Loss", total if divisor == 1.0 else place.scale(total, 1 / divisor))
    return run


def _kl_grad(place):
    def run(ctx):
        x, target = ctx.input("X"), ctx.input("Target")
        dloss = arrays.astype(ctx.input("Loss@GRAD"), x.dtype)
        kernel = kldiv_log_target_grad if ctx.attr("log_target") else kldiv_grad
        divisor = _kl_divisor(ctx, tuple(int(d) for d in x.shape))
        if ctx.attr("reduction") != "none":
            dloss = dloss.reshape(())                  # one value for every element
        ctx.set_output("X@GRAD", place.apply(kernel, target, dloss,
                                             x.dtype.type(divisor), out=None,
                                             out_dtype=x.dtype))
    return run


# In a compiled block: reduction none (and its gradient), the scalar function fused into
# its neighbours' loop; reduced, loops of kernels/cpu/loss.py (the same math and row sum),
# which count the divisor at run time (it is a size: compiled code is not specialised on
# sizes). X of rank 0 (no first dim to type) stays in the interpreter.
def _lowered_kl(info):
    if info.attr("reduction") == "none":
        kernel = kldiv_log_target if info.attr("log_target") else kldiv
        return Elementwise(kernel, ("Target", "X"), "Loss")
    if info.dtype("X").name not in FLOAT_TYPES or info.ndim("X") == 0:
        return None
    return Call(CPU_LOSS.kldiv_reduced, ("Target", "X"), ("Loss",),
                (bool(info.attr("log_target")), info.attr("reduction")))


def _lowered_kl_grad(info):
    if info.attr("reduction") == "none":
        kernel = kldiv_log_target_grad if info.attr("log_target") else kldiv_grad
        return Elementwise(kernel, ("Target", "Loss@GRAD"), "X@GRAD",
                           (info.dtype("X").type(1.0),))
    dtype = info.dtype("X")
    if dtype.name not in FLOAT_TYPES or info.ndim("X") == 0 or \
            info.dtype("Loss@GRAD") != dtype:
        return None                    # (the kernel casts dLoss to X's dtype first)
    return Call(CPU_LOSS.kldiv_reduced_grad, ("Target", "X", "Loss@GRAD"), ("X@GRAD",),
                (bool(info.attr("log_target")), info.attr("reduction")))


register(OpDef(
    "kldiv_loss", [Slot("X", "log-probabilities"), Slot("Target", "X's shape and type")],
    [Slot("Loss", "the divergence per element (none) or reduced (0-d)")],
    [Attr("reduction", A.STRING, "mean", "none, batchmean (sum / N), mean or sum"),
     Attr("log_target", A.BOOLEAN, False, "Target holds log-probabilities (Paddle 3; "
          "programs of Paddle 2.6.2 have no such attribute)")],
    comment="Loss = Target * (log(Target) - X) (0 where Target <= 0), reduced.",
    infer_shape=_kl_infer, kernels={"cpu": _kl(CPU), "cuda": _kl(CUDA)},
    lowered=_lowered_kl,
    grad=Grad(reads=["X", "Target"], grads_of=["Loss"], writes=["X"],
              kernel=_kl_grad(CPU), cuda_kernel=_kl_grad(CUDA), lowered=_lowered_kl_grad),
    check_attrs=_reduction_in(KL_REDUCTIONS)))
