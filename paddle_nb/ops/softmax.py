"""softmax and log_softmax along an axis (Fluid's slots and attributes).

The axis is moved last and the tensor seen as (rows, classes) (places' ``rows``), so one
row kernel per place serves every axis: numpy on the CPU, one CUDA thread per row.
log_softmax is computed as X - max - log(sum(exp(X - max))), never as log(softmax(X)),
which would round small probabilities to 0 and give -inf.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from . import arrays
from .common import OUT, X, same_shape_as_x
from .places import CPU, CUDA


def _softmax(place):
    def run(ctx):
        x = ctx.input("X")
        if x.ndim == 0:                  # one value: its softmax is 1
            ctx.set_output("Out", arrays.full((), 1, x.dtype, like=x))
            return
        axis = ctx.attr("axis") % x.ndim
        out = place.row_softmax(place.rows(x, axis))
        ctx.set_output("Out", place.unrows(out, x.shape, axis))
    return run


def _softmax_infer(ctx):
    ctx.require_dtype("X", "float")
    xs, axis = ctx.shape("X"), ctx.attr("axis")
    if xs and not -len(xs) <= axis < len(xs):
        ctx.fail(f"axis {axis} is out of range for a rank-{len(xs)} X", slot="X",
                 expected=f"axis in [{-len(xs)}, {len(xs) - 1}]", given=f"axis={axis}")
    same_shape_as_x(ctx)


def _softmax_grad(place):
    """dX = Out * (dOut - sum(dOut * Out, axis))."""
    def run(ctx):
        out, dout = ctx.input("Out"), ctx.input("Out@GRAD")
        if out.ndim == 0:
            ctx.set_output("X@GRAD", arrays.zeros_like(out))
            return
        axis = ctx.attr("axis") % out.ndim
        dx = place.softmax_grad_rows(place.rows(out, axis), place.rows(dout, axis))
        ctx.set_output("X@GRAD", place.unrows(dx, out.shape, axis))
    return run


register(OpDef(
    "softmax", [X], [OUT],
    [Attr("axis", A.INT, -1, "the axis that sums to 1"),
     Attr("data_format", A.STRING, "AnyLayout", "kept for Paddle compatibility", extra=True),
     Attr("is_test", A.BOOLEAN, False, "inference mode (no effect here)", extra=True)],
    comment="Out = exp(X - max) / sum(exp(X - max)) along axis.",
    infer_shape=_softmax_infer, kernels={"cpu": _softmax(CPU), "cuda": _softmax(CUDA)},
    grad=Grad(reads=["Out"], kernel=_softmax_grad(CPU), cuda_kernel=_softmax_grad(CUDA)),
    activation=True))


# --- log_softmax ----------------------------------------------------------------------------
def _log_softmax(place):
    def run(ctx):
        x = ctx.input("X")
        if x.ndim == 0:                  # one value: its log-softmax is log(1)
            ctx.set_output("Out", arrays.full((), 0, x.dtype, like=x))
            return
        axis = ctx.attr("axis") % x.ndim
        out = place.row_log_softmax(place.rows(x, axis))
        ctx.set_output("Out", place.unrows(out, x.shape, axis))
    return run


def _log_softmax_grad(place):
    """dX = dOut - exp(Out) * sum(dOut, axis)."""
    def run(ctx):
        out, dout = ctx.input("Out"), ctx.input("Out@GRAD")
        if out.ndim == 0:
            ctx.set_output("X@GRAD", arrays.zeros_like(out))
            return
        axis = ctx.attr("axis") % out.ndim
        dx = place.log_softmax_grad_rows(place.rows(out, axis), place.rows(dout, axis))
        ctx.set_output("X@GRAD", place.unrows(dx, out.shape, axis))
    return run


register(OpDef(
    "log_softmax", [X], [OUT], [Attr("axis", A.INT, -1, "the axis normalised over")],
    comment="Out = X - log(sum(exp(X))) along axis (computed stably).",
    infer_shape=_softmax_infer,
    kernels={"cpu": _log_softmax(CPU), "cuda": _log_softmax(CUDA)},
    grad=Grad(reads=["Out"], kernel=_log_softmax_grad(CPU),
              cuda_kernel=_log_softmax_grad(CUDA))))
