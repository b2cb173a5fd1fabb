"""layer_norm and its gradient (Fluid's slots and attributes, as Paddle 2.6.2 saves them).

X is seen as a matrix: the dims before ``begin_norm_axis`` make its rows (``left``, their
product), the dims from it its columns (``right``). Each row is normalized over its own
values, each column scaled and shifted by its own Scale and Bias:

    Y = (X - mean) / sqrt(var + epsilon) * Scale + Bias

with the mean and the biased variance of the row. Why rows: a sample's features are
normalized together, whatever else is in the batch (batch_norm normalizes each feature
over the batch), so training and inference compute the same thing and a batch of one
works; for [N, T, D] at axis 2, each of the N*T tokens over its D features, as
transformers do. Scale and Bias are 1-D [right] and optional (then 1 and 0).

Mean and Variance have X's dims before the axis ([N, T] above), as Paddle 2.6.2's shape
rule makes them (older programs declare them [left]: the gradient reads any shape of
``left`` values), and Variance is the variance itself, not 1 / sqrt(var + epsilon) as
batch_norm's SavedVariance. The gradient reads them, as Paddle's does, instead of
recomputing them.

Paddle's own checks are kept: 0 < begin_norm_axis < rank(X) (so X has rank 2 or more),
0 <= epsilon <= 1e-3, Scale and Bias 1-D of ``right`` values and X's element type
(float32 or float64). A row with no values (a 0 dim from the axis on) is refused: its
mean would be 0 / 0 (Paddle returns what its memory held). No rows (a 0 dim before the
axis) is an empty result, as in Paddle.

The kernels (kernels/cpu/layer_norm.py, kernels/cuda/layer_norm.py) see X as that
(rows, cols) matrix, C-contiguous, and compute in float64 whatever X's type.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.infer_shape import numel
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import layer_norm as CPU_LN
from ..kernels.cuda import layer_norm as CUDA_LN
from ..kernels.lowered import Call
from .batch_norm import epsilon_check, require_float


# --- shapes -------------------------------------------------------------------------------------
def _axis(ctx, xs) -> int:
    axis = ctx.attr("begin_norm_axis")
    if isinstance(axis, bool) or not isinstance(axis, int) or not 0 < axis < len(xs):
        ctx.fail(f"begin_norm_axis={axis!r} must split the {len(xs)} dims of X into rows "
                 "(the dims before it) and the values each row normalizes (from it on)",
                 slot="X", expected=f"0 < begin_norm_axis < {len(xs)} (the rank of X), as "
                                    "Paddle checks", given=f"X {xs}, begin_norm_axis={axis!r}")
    return axis


def _row_vector(ctx, slot: str, right: int) -> None:
    """The optional Scale or Bias: 1-D, one value per column (-1: unknown), X's type."""
    if not ctx.has_input(slot):
        return
    ctx.require_same_dtype(slot, "X")
    shape = ctx.shape(slot)
    if len(shape) != 1 or (right >= 0 and shape[0] >= 0 and shape[0] != right):
        ctx.fail(f"{slot} must hold one value per normalized position: the product of X's "
                 "dims from begin_norm_axis on", slot=slot, expected=f"[{right}]",
                 given=f"{ctx.input_names(slot)[0]}: {shape}")


def _split(ctx) -> tuple[list, int, int, int]:
    """(X's shape, begin_norm_axis, left, right) after the checks both ops share."""
    require_float(ctx, "X")
    xs = ctx.shape("X")
    axis = _axis(ctx, xs)
    left, right = numel(xs[:axis]), numel(xs[axis:])
    if right == 0:
        ctx.fail("each row of X has no values to normalize", slot="X",
                 expected=f"every dim from begin_norm_axis={axis} on > 0", given=f"{xs}")
    for slot in ("Scale", "Bias"):
        _row_vector(ctx, slot, right)
    return xs, axis, left, right


def _layer_norm_infer(ctx):
    xs, axis, _, _ = _split(ctx)
    ctx.set_output("Y", xs, ctx.dtype("X"))
    for slot in ("Mean", "Variance"):
        if ctx.has_output(slot):
            ctx.set_output(slot, xs[:axis], ctx.dtype("X"))


def _layer_norm_grad_infer(ctx):
    xs, _, left, right = _split(ctx)
    require_float(ctx, "Y@GRAD")
    ctx.require_gradient_fits("Y", want=xs)
    for slot in ("Mean", "Variance"):       # left values, in X's dims before the axis or not
        ctx.require_dtype(slot, "float")
        n = numel(ctx.shape(slot))
        if n >= 0 and left >= 0 and n != left:
            ctx.fail(f"{slot} must hold one value per row of X, as the forward op saved it",
                     slot=slot, expected=f"{left} values (X {xs} before begin_norm_axis)",
                     given=f"{ctx.input_names(slot)[0]}: {ctx.shape(slot)}")
    ctx.set_output("X@GRAD", xs, ctx.dtype("X"))
    for slot in ("Scale", "Bias"):
        if ctx.has_output(slot + "@GRAD"):
            ctx.set_output(slot + "@GRAD", [right], ctx.dtype("X"))


# --- kernels ------------------------------------------------------------------------------------
def _matrix(ctx, x) -> tuple[tuple, int, int, int]:
    """(X's shape, begin_norm_axis, rows, cols)."""
    shape = tuple(int(d) for d in x.shape)
    axis = ctx.attr("begin_norm_axis")
    return shape, axis, numel(shape[:axis]), numel(shape[axis:])


def _host_vector(ctx, slot: str, n: int, absent: float) -> np.ndarray:
    """Scale or Bias as float64 [n] on the host (``absent`` everywhere where not given)."""
    if not ctx.has_input(slot):
        return np.full(n, absent)
    return np.asarray(ctx.input(slot), np.float64).reshape(n)


def _layer_norm_cpu(ctx):
    x = np.ascontiguousarray(ctx.input("X"))
    shape, axis, rows, cols = _matrix(ctx, x)
    # into the context's arrays, which the fast path may hand out again next run
    y = ctx.out("Y", shape, x.dtype)
    mean, var = (ctx.out(slot, shape[:axis], x.dtype) for slot in ("Mean", "Variance"))
    CPU_LN.layer_norm(x.reshape(rows, cols), _host_vector(ctx, "Scale", cols, 1.0),
                      _host_vector(ctx, "Bias", cols, 0.0), float(ctx.attr("epsilon")),
                      y.reshape(rows, cols), mean.reshape(rows), var.reshape(rows))
    for slot, value in (("Y", y), ("Mean", mean), ("Variance", var)):
        ctx.set_output(slot, value)


def _layer_norm_cuda(ctx):
    x = ctx.input("X")
    shape, axis, rows, cols = _matrix(ctx, x)
    given = {slot: ctx.input(slot) if ctx.has_input(slot) else None
             for slot in ("Scale", "Bias")}
    y, mean, var = CUDA_LN.layer_norm(x, rows, cols, given["Scale"], given["Bias"],
                                      float(ctx.attr("epsilon")), shape[:axis])
    for slot, value in (("Y", y), ("Mean", mean), ("Variance", var)):
        ctx.set_output(slot, value)


def _layer_norm_grad_cpu(ctx):
    x = np.ascontiguousarray(ctx.input("X"))
    shape, _, rows, cols = _matrix(ctx, x)
    dy = np.ascontiguousarray(ctx.input("Y@GRAD")).reshape(rows, cols)
    mean, var = (np.ascontiguousarray(ctx.input(s)).reshape(rows) for s in ("Mean", "Variance"))
    dx = ctx.out("X@GRAD", shape, x.dtype)
    _, dscale, dbias = CPU_LN.layer_norm_grad(
        x.reshape(rows, cols), dy, mean, var, _host_vector(ctx, "Scale", cols, 1.0),
        float(ctx.attr("epsilon")), dx.reshape(rows, cols))
    ctx.set_output("X@GRAD", dx)
    ctx.set_output("Scale@GRAD", dscale.astype(x.dtype))
    ctx.set_output("Bias@GRAD", dbias.astype(x.dtype))


# --- inside a compiled block (kernels/lowered.py): kernels/cpu/layer_norm.normalized(_grad),
# the serial loops of the CPU kernel; a Scale or Bias not given is passed as X, flagged
def _lowered(grad: bool):
    def lowered(info):
        if info.dtype("X") not in (np.float32, np.float64):
            return None
        if math.prod(info.shape("X")) >= CPU_LN.MIN_PARALLEL_LAYER_NORM:
            return "large: the interpreter splits it across the cores"
        scale, bias = (slot if info.has_input(slot) else "X" for slot in ("Scale", "Bias"))
        eps, axis = float(info.attr("epsilon")), info.attr("begin_norm_axis")
        if not grad:
            return Call(CPU_LN.normalized, ("X", scale, bias), ("Y", "Mean", "Variance"),
                        (scale != "X", bias != "X", eps, axis))
        return Call(CPU_LN.normalized_grad, ("X", scale, "Mean", "Variance", "Y@GRAD"),
                    ("X@GRAD", "Scale@GRAD", "Bias@GRAD"), (scale != "X", eps, axis))
    return lowered


def _layer_norm_grad_cuda(ctx):
    x = ctx.input("X")
    _, _, rows, cols = _matrix(ctx, x)
    scale = ctx.input("Scale") if ctx.has_input("Scale") else None
    dx, dscale, dbias = CUDA_LN.layer_norm_grad(
        x, ctx.input("Y@GRAD"), rows, cols, ctx.input("Mean"), ctx.input("Variance"), scale,
        float(ctx.attr("epsilon")))
    ctx.set_output("X@GRAD", dx)
    ctx.set_output("Scale@GRAD", dscale)
    ctx.set_output("Bias@GRAD", dbias)


register(OpDef(
    "layer_norm",
    [Slot("X", "the input; the dims before begin_norm_axis are its rows"),
     Slot("Scale", "one scale per position in a row, 1-D (the product of X's dims from "
          "begin_norm_axis on)", dispensable=True),
     Slot("Bias", "one bias per position in a row, 1-D, as Scale", dispensable=True)],
    [Slot("Y", "the normalized X"),
     Slot("Mean", "each row's mean (X's dims before begin_norm_axis)", intermediate=True),
     Slot("Variance", "each row's variance (X's dims before begin_norm_axis)",
          intermediate=True)],
    [Attr("epsilon", A.FLOAT, 1e-5, "added to the variance", check=epsilon_check),
     Attr("begin_norm_axis", A.INT, 1, "the first dim normalized over: the dims before it "
                                       "are the rows")],
    comment="Y = (X - mean) / sqrt(var + epsilon) * Scale + Bias, with the mean and "
            "variance of each row: X's values from begin_norm_axis on, for each index of "
            "the dims before it.",
    infer_shape=_layer_norm_infer,
    kernels={"cpu": _layer_norm_cpu, "cuda": _layer_norm_cuda}, lowered=_lowered(False),
    grad=Grad(reads=["X", "Scale", "Bias", "Mean", "Variance"], grads_of=["Y"],
              writes=["X", "Scale", "Bias"], kernel=_layer_norm_grad_cpu,
              cuda_kernel=_layer_norm_grad_cuda, infer_shape=_layer_norm_grad_infer,
              lowered=_lowered(True))))
