"""softmax and log_softmax along an axis (Fluid's slots and attributes).

The axis is moved last and the tensor seen as (rows, classes) (places' ``rows``), so one
row kernel per place serves every axis: compiled row loops on the CPU for softmax and its
gradient, and for log_softmax's (kernels/cpu/reduce.py), one CUDA thread per row.
log_softmax is computed as X - max - log(sum(exp(X - max))), never as log(softmax(X)),
which would round small probabilities to 0 and give -inf.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu import reduce as KR
from ..kernels.lowered import Call
from . import arrays
from .common import FLOAT_TYPES, OUT, X, same_shape_as_x
from ..backends import CPU, CUDA


def _along_axis(place, rows_of: str, zero_d_value):
    """Out = the place's row function ``rows_of`` (row_softmax, row_log_softmax) along
    axis; a 0-d X (one value) gives ``zero_d_value``."""
    rows_fn = getattr(place, rows_of)

    def run(ctx):
        x = ctx.input("X")
        if x.ndim == 0:
            ctx.set_output("Out", arrays.full((), zero_d_value, x.dtype, like=x))
            return
        axis = ctx.attr("axis") % x.ndim
        out = rows_fn(place.rows(x, axis))
        ctx.set_output("Out", place.unrows(out, x.shape, axis))
    return run


def _grad_along_axis(place, rows_of: str):
    """X@GRAD = the place's ``rows_of(Out rows, dOut rows)`` along axis (0 for a 0-d X)."""
    rows_fn = getattr(place, rows_of)

    def run(ctx):
        out, dout = ctx.input("Out"), ctx.input("Out@GRAD")
        if out.ndim == 0:
            ctx.set_output("X@GRAD", arrays.zeros_like(out))
            return
        axis = ctx.attr("axis") % out.ndim
        dx = rows_fn(place.rows(out, axis), place.rows(dout, axis))
        ctx.set_output("X@GRAD", place.unrows(dx, out.shape, axis))
    return run


def _softmax_infer(ctx):
    ctx.require_dtype("X", "float")
    xs, axis = ctx.shape("X"), ctx.attr("axis")
    if xs and not -len(xs) <= axis < len(xs):
        ctx.fail(f"axis {axis} is out of range for a rank-{len(xs)} X", slot="X",
                 expected=f"axis in [{-len(xs)}, {len(xs) - 1}]", given=f"axis={axis}")
    same_shape_as_x(ctx)


def _lowered_last_axis(fn, reads, writes, floats):
    """``fn`` (kernels/cpu/reduce.py) in a compiled block, where the op's axis is the last
    of a float32/float64 X of rank >= 1 and ``floats`` share X's dtype (another axis, whose
    Out is a transposed view, stays in the interpreter)."""
    def lowered(info):
        dtype, rank = info.dtype(floats[0]), info.ndim(floats[0])
        if dtype.name not in FLOAT_TYPES or rank == 0 or \
                info.attr("axis") % rank != rank - 1 or \
                any(info.dtype(s) != dtype for s in floats):
            return None
        return Call(fn, reads, writes)
    return lowered


register(OpDef(
    "softmax", [X], [OUT],
    [Attr("axis", A.INT, -1, "the axis that sums to 1"),
     Attr("data_format", A.STRING, "AnyLayout", "kept for Paddle compatibility", extra=True),
     Attr("is_test", A.BOOLEAN, False, "inference mode (no effect here)", extra=True)],
    comment="Out = exp(X - max) / sum(exp(X - max)) along axis.",
    infer_shape=_softmax_infer,
    kernels={"cpu": _along_axis(CPU, "row_softmax", 1),       # one value: its softmax is 1
             "cuda": _along_axis(CUDA, "row_softmax", 1)},
    lowered=_lowered_last_axis(KR.softmax_last_axis, ("X",), ("Out",), ("X",)),
    grad=Grad(reads=["Out"], kernel=_grad_along_axis(CPU, "softmax_grad_rows"),
              cuda_kernel=_grad_along_axis(CUDA, "softmax_grad_rows"),
              lowered=_lowered_last_axis(KR.softmax_last_axis_grad, ("Out", "Out@GRAD"),
                                         ("X@GRAD",), ("Out", "Out@GRAD"))),
    activation=True))


# --- log_softmax ----------------------------------------------------------------------------
register(OpDef(
    "log_softmax", [X], [OUT], [Attr("axis", A.INT, -1, "the axis normalised over")],
    comment="Out = X - log(sum(exp(X))) along axis (computed stably).",
    infer_shape=_softmax_infer,
    kernels={"cpu": _along_axis(CPU, "row_log_softmax", 0),   # one value: log(1)
             "cuda": _along_axis(CUDA, "row_log_softmax", 0)},
    lowered=_lowered_last_axis(KR.log_softmax_last_axis, ("X",), ("Out",), ("X",)),
    grad=Grad(reads=["Out"], kernel=_grad_along_axis(CPU, "log_softmax_grad_rows"),
              cuda_kernel=_grad_along_axis(CUDA, "log_softmax_grad_rows"),
              lowered=_lowered_last_axis(KR.log_softmax_last_axis_grad, ("Out", "Out@GRAD"),
                                         ("X@GRAD",), ("Out", "Out@GRAD")))))
