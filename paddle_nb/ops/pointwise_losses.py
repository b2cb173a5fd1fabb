"""Losses computed element by element: sigmoid_cross_entropy_with_logits, bce_loss,
huber_loss (what ``F.smooth_l1_loss`` saves), Fluid's older smooth_l1_loss (summed per
row; Paddle 2.6 no longer registers it, programs saved by Fluid 1.x have it), and
label_smooth, which softens the labels they read (Fluid's slots and attributes, as
``paddle.nn.functional`` saves them).

The math of each, forward and gradient, is scalar functions under ``@pointwise``
(kernels/pointwise.py), so one op kernel serves both places through ``place.apply``
(those of the losses of a prediction and a label made by ops/elementwise_loss.py). In a
compiled block (kernels/lowered.py) the same functions are fused into their neighbours'
loops; huber_loss's two outputs, smooth_l1_loss's row sums and label_smooth's share of
epsilon per class (a size) take loops of kernels/cpu/loss.py instead, which call the same
scalar math.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import loss as CPU_LOSS
# (the scalar math, by name: numba's CUDA target compiles the @pointwise kernels too)
from ..kernels.cpu.loss import (huber_slope, huber_value, smooth_l1_slope, smooth_l1_value,
                                smoothed)
from ..kernels.cpu.lazy_ufunc import FLOAT_2, FLOAT_3
from ..kernels.cpu.reduce import MIN_PARALLEL_SUM
from ..kernels.lowered import Call, Elementwise
from ..kernels.pointwise import KERNELS, pointwise
from . import arrays
from .common import FLOAT_TYPES, OUT, X, Y
from .elementwise_loss import elementwise_loss, lowered_elementwise_loss
from ..backends import CPU, CUDA

FLOAT_4 = ["float32(float32, float32, float32, float32)",
           "float64(float64, float64, float64, float64)"]
LABEL = Slot("Label", "the targets, X's shape")


def _like_x(*slots):
    """Every slot holds floats of X's shape; Out has X's shape and dtype."""
    def infer(ctx):
        ctx.require_dtype("X", "float")
        xs = ctx.shape("X")
        for slot in slots:
            s = ctx.shape(slot)
            if len(s) != len(xs) or any(a >= 0 and b >= 0 and a != b for a, b in zip(s, xs)):
                ctx.fail(f"{slot} must have X's shape", slot=slot, expected=str(xs),
                         given=ctx.describe_input(slot))
            if ctx.dtype(slot) != ctx.dtype("X"):
                ctx.fail(f"{slot} must have X's element type", slot=slot,
                         expected=ctx.describe_input("X"), given=ctx.describe_input(slot))
        ctx.set_output("Out", xs, ctx.dtype("X"))
    return infer


# --- sigmoid_cross_entropy_with_logits -----------------------------------------------------------
@pointwise(FLOAT_3, params=1)
def sigmoid_xent(x, label, ignore):
    # max(x, 0) - x * label + log(1 + exp(-|x|)): no overflow for any x
    if label == ignore:
        return x * 0
    positive = x if x > 0 else 0.0         # (no max(): numba's CUDA target cannot type it)
    return positive - x * label + math.log1p(math.exp(-abs(x)))


@pointwise(FLOAT_4, params=1)
def sigmoid_xent_grad(x, label, dout, ignore):
    if label == ignore:
        return dout * 0
    return (1.0 / (1.0 + math.exp(-x)) - label) * dout


def _ignore(ctx, dtype):
    return dtype.type(ctx.attr("ignore_index"))


_sigmoid_xent, _sigmoid_xent_grad = elementwise_loss(sigmoid_xent, sigmoid_xent_grad,
                                                     param=_ignore)
_lowered_sigmoid_xent, _lowered_sigmoid_xent_grad = lowered_elementwise_loss(
    sigmoid_xent, sigmoid_xent_grad, param=_ignore)


def _sigmoid_xent_infer(ctx):
    for slot in ("pos_weight",):
        if ctx.has_input(slot):
            ctx.fail(f"{slot} is not supported yet", slot=slot, expected="no pos_weight",
                     given=str(ctx.input_names(slot)))
    if ctx.attr("normalize"):
        ctx.fail("normalize=True is not supported yet", slot="X",
                 expected="normalize=False (divide by the count with ops instead)",
                 given="normalize=True")
    _like_x("Label")(ctx)


register(OpDef(
    "sigmoid_cross_entropy_with_logits",
    [X, LABEL, Slot("pos_weight", "weights of the positive class (refused)",
                    dispensable=True)], [OUT],
    [Attr("normalize", A.BOOLEAN, False, "divide by the count of labels not ignored "
          "(refused)"),
     Attr("ignore_index", A.INT, -100, "elements with this label contribute 0")],
    comment="Out = the binary cross entropy of sigmoid(X) and Label, elementwise.",
    infer_shape=_sigmoid_xent_infer,
    kernels={"cpu": _sigmoid_xent(CPU), "cuda": _sigmoid_xent(CUDA)},
    lowered=_lowered_sigmoid_xent,
    grad=Grad(reads=["X", "Label"], writes=["X"], kernel=_sigmoid_xent_grad(CPU),
              cuda_kernel=_sigmoid_xent_grad(CUDA), lowered=_lowered_sigmoid_xent_grad)))


# --- bce_loss ------------------------------------------------------------------------------------
_E_MINUS_100 = math.exp(-100.0)     # below it, log would be under -100: Paddle's clip


@pointwise(FLOAT_2)
def bce(x, label):
    if not 0 <= x <= 1:
        # (the op's kernel refuses such an X before this runs, naming the element: only a
        # compiled block gets here, and it then reruns in the interpreter, which says it)
        raise ValueError("bce_loss: X holds a value outside [0, 1]")
    # Paddle clips each log at -100, so a probability of 0 or 1 gives 100, not inf
    # (log is only called above 0: Python's, which the CUDA simulator runs, raises at 0)
    log_x = math.log(x) if x > _E_MINUS_100 else -100.0
    log_1x = math.log(1 - x) if 1 - x > _E_MINUS_100 else -100.0
    return -(label * log_x + (1 - label) * log_1x)


@pointwise(FLOAT_3)
def bce_grad(x, label, dout):
    spread = (1 - x) * x
    return dout * (x - label) / (spread if spread > 1e-12 else 1e-12)


def _check_probabilities(x):
    """X outside [0, 1] (or NaN) has no cross entropy: refused, as Paddle refuses it (a
    device X is copied to the host for the check)."""
    host = arrays.host(x)
    bad = np.flatnonzero(~((host >= 0) & (host <= 1)).reshape(-1))
    if bad.size:
        where = ", ".join(str(int(i)) for i in np.unravel_index(bad[0], host.shape))
        raise ValueError(f"bce_loss: input slot X: expected probabilities in [0, 1], given "
                         f"X[{where}] = {float(host.reshape(-1)[bad[0]])!r} ({bad.size} outside)")


_bce, _bce_grad = elementwise_loss(bce, bce_grad, check=_check_probabilities)
_lowered_bce, _lowered_bce_grad = lowered_elementwise_loss(bce, bce_grad)


register(OpDef(
    "bce_loss", [Slot("X", "probabilities in [0, 1]"), LABEL], [OUT], [],
    comment="Out = -(Label log X + (1 - Label) log(1 - X)), elementwise (logs >= -100).",
    infer_shape=_like_x("Label"), kernels={"cpu": _bce(CPU), "cuda": _bce(CUDA)},
    lowered=_lowered_bce,
    grad=Grad(reads=["X", "Label"], writes=["X"], kernel=_bce_grad(CPU),
              cuda_kernel=_bce_grad(CUDA), lowered=_lowered_bce_grad)))


# --- huber_loss ----------------------------------------------------------------------------------
@pointwise(FLOAT_2)
def residual(x, y):
    return y - x


@pointwise(FLOAT_2, params=1, fastmath=False)
def huber(r, delta):
    return huber_value(r, delta)


@pointwise(FLOAT_3, params=1, fastmath=False)
def huber_grad_y(r, dout, delta):
    return huber_slope(r, dout, delta)


@pointwise(FLOAT_3, params=1, fastmath=False)
def huber_grad_x(r, dout, delta):
    # (negating the rounded slope or rounding the negated one: the same bits)
    return -huber_slope(r, dout, delta)


def _set_opposite_grads(ctx, place, plus: str, minus: str, grad) -> None:
    """``plus@GRAD`` = grad and ``minus@GRAD`` = -grad, those the program asks for: the
    gradients of a loss of a difference (huber's Y - X, smooth_l1's X - Y)."""
    if ctx.has_output(f"{plus}@GRAD"):
        ctx.set_output(f"{plus}@GRAD", grad)
    if ctx.has_output(f"{minus}@GRAD"):
        ctx.set_output(f"{minus}@GRAD", place.apply(KERNELS["neg"], grad, out=None,
                                                    out_dtype=grad.dtype))


def _huber(place):
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        r = place.apply(residual, x, y, out=ctx.out("Residual", x.shape, x.dtype),
                        out_dtype=x.dtype)
        ctx.set_output("Residual", r)
        ctx.set_output("Out", place.apply(huber, r, x.dtype.type(ctx.attr("delta")),
                                          out=ctx.out("Out", x.shape, x.dtype),
                                          out_dtype=x.dtype))
    return run


def _huber_grad(place):
    def run(ctx):
        r, dout = ctx.input("Residual"), ctx.input("Out@GRAD")
        delta = r.dtype.type(ctx.attr("delta"))
        if not ctx.has_output("Y@GRAD"):     # a fixed label: dX alone, in one pass
            if ctx.has_output("X@GRAD"):
                ctx.set_output("X@GRAD", place.apply(huber_grad_x, r, dout, delta,
                                                     out=None, out_dtype=r.dtype))
            return
        dy = place.apply(huber_grad_y, r, dout, delta, out=None, out_dtype=r.dtype)
        _set_opposite_grads(ctx, place, "Y", "X", dy)
    return run


def _lowered_huber(info):
    """Residual and Out from one loop (kernels/cpu/loss.py), for float X and Y of one
    dtype."""
    dtype = info.dtype("X")
    if dtype.name not in FLOAT_TYPES or info.dtype("Y") != dtype:
        return None
    return Call(CPU_LOSS.huber_residual_and_loss, ("X", "Y"), ("Residual", "Out"),
                (dtype.type(info.attr("delta")),))


def _lowered_huber_grad(info):
    """The one gradient asked for, fused into the loop of dOut's ops (dX of a fixed label,
    typically); both X's and Y's stay in the interpreter (two outputs of one loop)."""
    if info.has_output("X@GRAD") and info.has_output("Y@GRAD"):
        return "both X@GRAD and Y@GRAD: the interpreter negates one into the other"
    kernel, slot = (huber_grad_x, "X@GRAD") if info.has_output("X@GRAD") else \
        (huber_grad_y, "Y@GRAD")
    return Elementwise(kernel, ("Residual", "Out@GRAD"), slot,
                       (info.dtype("Residual").type(info.attr("delta")),))


def _huber_infer(ctx):
    _like_x("Y")(ctx)
    ctx.set_output("Residual", ctx.shape("X"), ctx.dtype("X"))


def _huber_grad_infer(ctx):
    rs = ctx.shape("Residual")
    if ctx.has_value("Out@GRAD"):
        ctx.require_gradient_fits("Out", want=rs)
    for slot in ("X@GRAD", "Y@GRAD"):
        if ctx.has_output(slot):
            ctx.set_output(slot, rs, ctx.dtype("Residual"))


register(OpDef(
    "huber_loss", [X, Y], [OUT, Slot("Residual", "Y - X, kept for the gradient",
                                     intermediate=True)],
    [Attr("delta", A.FLOAT, 1.0, "where the loss turns from square to linear")],
    comment="Out = 0.5 r^2 where |r| <= delta, else delta (|r| - delta / 2); r = Y - X.",
    infer_shape=_huber_infer, kernels={"cpu": _huber(CPU), "cuda": _huber(CUDA)},
    lowered=_lowered_huber,
    grad=Grad(reads=["Residual"], grads_of=["Out"], writes=["X", "Y"],
              kernel=_huber_grad(CPU), cuda_kernel=_huber_grad(CUDA),
              infer_shape=_huber_grad_infer, lowered=_lowered_huber_grad)))


# --- smooth_l1_loss (Fluid 1.x) ------------------------------------------------------------------
@pointwise(FLOAT_2, params=1, fastmath=False)
def smooth_l1(d, sigma2):
    return smooth_l1_value(d, sigma2)


@pointwise(FLOAT_3, params=1, fastmath=False)
def smooth_l1_grad(d, dout, sigma2):
    return smooth_l1_slope(d, dout, sigma2)


def _weights(ctx):
    """(InsideWeight, OutsideWeight), or (None, None): Fluid uses them only together."""
    inside, outside = ctx.input("InsideWeight"), ctx.input("OutsideWeight")
    return (inside, outside) if inside is not None and outside is not None else (None, None)


def _sigma2(ctx, dtype):
    return dtype.type(ctx.attr("sigma") * ctx.attr("sigma"))


def _smooth_l1(place):
    """Diff = InsideWeight (X - Y); Out = per row (the first axis), the sum of
    OutsideWeight * smooth_l1(Diff)."""
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        inside, outside = _weights(ctx)
        diff = place.apply(KERNELS["sub"], x, y, out=None, out_dtype=x.dtype)
        if inside is not None:
            diff = place.apply(KERNELS["mul"], diff, inside, out=None, out_dtype=x.dtype)
        ctx.set_output("Diff", diff)
        errors = place.apply(smooth_l1, diff, _sigma2(ctx, x.dtype), out=None,
                             out_dtype=x.dtype)
        if outside is not None:
            errors = place.apply(KERNELS["mul"], errors, outside, out=None, out_dtype=x.dtype)
        rows = int(x.shape[0])
        ctx.set_output("Out", place.sum_axes(errors, list(range(1, x.ndim)), False)
                       .reshape((rows, 1)))
    return run


def _smooth_l1_grad(place):
    """dX = dOut (per row) * InsideWeight * OutsideWeight * smooth_l1'(Diff); dY = -dX."""
    def run(ctx):
        diff, dout = ctx.input("Diff"), ctx.input("Out@GRAD")
        per_row = (int(diff.shape[0]),) + (1,) * (diff.ndim - 1)
        dx = place.apply(smooth_l1_grad, diff, arrays.astype(dout, diff.dtype).reshape(per_row),
                         _sigma2(ctx, diff.dtype), out=None, out_dtype=diff.dtype)
        for weight in _weights(ctx):
            if weight is not None:
                dx = place.apply(KERNELS["mul"], dx, weight, out=None, out_dtype=diff.dtype)
        _set_opposite_grads(ctx, place, "X", "Y", dx)
    return run


def _lowered_smooth_l1(grad: bool):
    """Both directions as loops of kernels/cpu/loss.py (the same scalar math, the row sum
    the kernel runs), for float operands of one dtype; the weights both read or both the
    literal None. Sums large enough for the interpreter's parallel row sum stay there."""
    def lowered(info):
        first = "Diff" if grad else "X"
        dtype = info.dtype(first)
        operands = [first, "Out@GRAD" if grad else "Y"]
        weighted = info.has_input("InsideWeight") and info.has_input("OutsideWeight")
        if weighted:
            operands += ["InsideWeight", "OutsideWeight"]
        if dtype.name not in FLOAT_TYPES or any(info.dtype(s) != dtype for s in operands):
            return None
        if not grad and math.prod(info.shape("X")) >= MIN_PARALLEL_SUM:
            return "large: the interpreter splits its row sums across the cores"
        sigma2 = dtype.type(info.attr("sigma") * info.attr("sigma"))
        consts = (sigma2,) if weighted else (None, None, sigma2)
        if grad:
            return Call(CPU_LOSS.smooth_l1_rows_grad, tuple(operands), ("X@GRAD", "Y@GRAD"),
                        consts)
        return Call(CPU_LOSS.smooth_l1_rows, tuple(operands), ("Diff", "Out"), consts)
    return lowered


def _smooth_l1_infer(ctx):
    xs = ctx.require_rank("X", 2)
    if ctx.has_input("InsideWeight") != ctx.has_input("OutsideWeight"):
        ctx.fail("InsideWeight and OutsideWeight are given together or not at all",
                 slot="InsideWeight" if ctx.has_input("OutsideWeight") else "OutsideWeight",
                 expected="both or neither",
                 given="only " + ("InsideWeight" if ctx.has_input("InsideWeight")
                                  else "OutsideWeight"))
    _like_x("Y", *[s for s in ("InsideWeight", "OutsideWeight") if ctx.has_input(s)])(ctx)
    ctx.set_output("Diff", xs, ctx.dtype("X"))
    ctx.set_output("Out", [xs[0], 1], ctx.dtype("X"))


def _smooth_l1_grad_infer(ctx):
    ds = ctx.require_rank("Diff", 2)
    if ctx.has_value("Out@GRAD"):
        ctx.require_gradient_fits("Out", want=[ds[0], 1])
    for slot in ("InsideWeight", "OutsideWeight"):
        if ctx.has_input(slot) and ctx.has_value(slot) and len(ctx.shape(slot)) != len(ds):
            ctx.fail(f"{slot} must have Diff's shape", slot=slot, expected=str(ds),
                     given=ctx.describe_input(slot))
    for slot in ("X@GRAD", "Y@GRAD"):
        if ctx.has_output(slot):
            ctx.set_output(slot, ds, ctx.dtype("Diff"))


register(OpDef(
    "smooth_l1_loss",
    [X, Y, Slot("InsideWeight", "scales X - Y (given with OutsideWeight)", dispensable=True),
     Slot("OutsideWeight", "scales each element's loss", dispensable=True)],
    [Slot("Diff", "InsideWeight * (X - Y), kept for the gradient", intermediate=True),
     Slot("Out", "the loss of each row (the first axis), [N, 1]")],
    [Attr("sigma", A.FLOAT, 1.0, "the loss is quadratic where |Diff| < 1 / sigma^2")],
    comment="Out[i] = sum_j OutsideWeight * (0.5 (sigma d)^2 if |d| < 1/sigma^2 else "
            "|d| - 0.5/sigma^2), d = InsideWeight (X - Y), over row i.",
    infer_shape=_smooth_l1_infer,
    kernels={"cpu": _smooth_l1(CPU), "cuda": _smooth_l1(CUDA)},
    lowered=_lowered_smooth_l1(grad=False),
    grad=Grad(reads=["InsideWeight", "OutsideWeight", "Diff"], grads_of=["Out"],
              writes=["X", "Y"], kernel=_smooth_l1_grad(CPU),
              cuda_kernel=_smooth_l1_grad(CUDA), infer_shape=_smooth_l1_grad_infer,
              lowered=_lowered_smooth_l1(grad=True))))


# --- label_smooth --------------------------------------------------------------------------------
@pointwise(FLOAT_3, params=2, fastmath=False)
def affine(x, a, b):
    return smoothed(x, a, b)


@pointwise(FLOAT_4, params=2)
def mix(x, prior, a, b):
    return x * a + prior * b


def _label_smooth(place):
    """Out = (1 - epsilon) X + epsilon / K (K: X's last dim), or + epsilon PriorDist."""
    def run(ctx):
        x, prior, eps = ctx.input("X"), ctx.input("PriorDist"), ctx.attr("epsilon")
        keep = x.dtype.type(1 - eps)
        out = ctx.out("Out", x.shape, x.dtype)
        if prior is None:
            classes = x.shape[x.ndim - 1]        # (a simulator shape has no [-1])
            value = place.apply(affine, x, keep, x.dtype.type(eps / classes), out=out,
                                out_dtype=x.dtype)
        else:
            value = place.apply(mix, x, prior, keep, x.dtype.type(eps), out=out,
                                out_dtype=x.dtype)
        ctx.set_output("Out", value)
    return run


def _label_smooth_grad(place):
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        ctx.set_output("X@GRAD", place.apply(affine, dout,
                                             dout.dtype.type(1 - ctx.attr("epsilon")),
                                             dout.dtype.type(0), out=None,
                                             out_dtype=dout.dtype))
    return run


def _lowered_label_smooth(info):
    """With PriorDist: mix, fused into the neighbours' loop (the prior read along the last
    dims); without: epsilon / classes is a size's share, so a loop of kernels/cpu/loss.py
    that divides at run time (the same scalar math)."""
    dtype = info.dtype("X")
    if dtype.name not in FLOAT_TYPES:
        return None
    keep, eps = dtype.type(1 - info.attr("epsilon")), info.attr("epsilon")
    if info.has_input("PriorDist"):
        return Elementwise(mix, ("X", "PriorDist"), params=(keep, dtype.type(eps)))
    return Call(CPU_LOSS.uniformly_smoothed, ("X",), ("Out",), (keep, float(eps)))


def _lowered_label_smooth_grad(info):
    dtype = info.dtype("Out@GRAD")
    return Elementwise(affine, ("Out@GRAD",), "X@GRAD",
                       (dtype.type(1 - info.attr("epsilon")), dtype.type(0)))


def _label_smooth_infer(ctx):
    xs = ctx.require_rank("X", 1)
    ctx.require_dtype("X", "float")
    if not 0 <= ctx.attr("epsilon") <= 1:
        ctx.fail("epsilon must be in [0, 1]", slot="X", expected="0 <= epsilon <= 1",
                 given=f"epsilon={ctx.attr('epsilon')}")
    if ctx.has_input("PriorDist"):
        ps = ctx.shape("PriorDist")
        if not ps or ps[-1] not in (xs[-1], -1) or any(d not in (1, -1) for d in ps[:-1]):
            ctx.fail("PriorDist must be one distribution over X's last dim", slot="PriorDist",
                     expected=f"[{xs[-1]}] or [1, {xs[-1]}]",
                     given=ctx.describe_input("PriorDist"))
    ctx.set_output("Out", xs, ctx.dtype("X"))


def _label_smooth_grad_infer(ctx):
    """dX has dOut's shape; given X (this package's backward), dOut must have X's."""
    if ctx.has_input("X") and ctx.has_value("X") and ctx.has_value("Out@GRAD"):
        ctx.require_gradient_fits("Out", want=ctx.shape("X"))
    ctx.set_output("X@GRAD", ctx.shape("Out@GRAD"), ctx.dtype("Out@GRAD"))


register(OpDef(
    "label_smooth", [X, Slot("PriorDist", "the distribution to mix in (default uniform)",
                             dispensable=True)], [OUT],
    [Attr("epsilon", A.FLOAT, 0.0, "how much of the prior to mix in")],
    comment="Out = (1 - epsilon) X + epsilon * prior (uniform over X's last dim by default).",
    infer_shape=_label_smooth_infer,
    kernels={"cpu": _label_smooth(CPU), "cuda": _label_smooth(CUDA)},
    lowered=_lowered_label_smooth,
    grad=Grad(reads=["X"], optional=("X",), grads_of=["Out"], writes=["X"],
              kernel=_label_smooth_grad(CPU),
              cuda_kernel=_label_smooth_grad(CUDA), infer_shape=_label_smooth_grad_infer,
              lowered=_lowered_label_smooth_grad)))
