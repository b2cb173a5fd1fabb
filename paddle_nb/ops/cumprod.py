"""cumprod: running products along an axis (Fluid's slots and attributes, as
``paddle.cumprod(x, dim)`` saves them), and its gradient.

Paddle's ``cumprod_grad`` reads X, Out and dOut. The gradient here is computed without
dividing by X, so zeros in X give the exact gradient, not NaN (kernels/cumprod.py shows
the two-pass recurrence); Out is read only to check its shape. One function per
direction for both places, over kernels/cumprod.py's ``CPU`` and ``CUDA``; in a compiled
block, kernels/cpu/running_products.py (the same CPU loops).
"""
from __future__ import annotations

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..kernels import cumprod as K
from ..kernels.cpu import running_products as KRP
from ..kernels.lowered import Call
from .common import OUT, X

# the element types Paddle's CPU cumprod kernel is registered for (complex aside)
MULTIPLIABLE = ("int32", "int64", "float32", "float64")


def _cumprod_infer(ctx):
    if dtypes.name(ctx.dtype("X")) not in MULTIPLIABLE:
        ctx.fail("cumprod needs int32, int64, float32 or float64 elements (Paddle's CPU "
                 "kernels)", slot="X", expected="one of those", given=ctx.describe_input("X"))
    rank = max(len(ctx.shape("X")), 1)       # a 0-d X is one line of one element
    ctx.require_range("dim", ctx.attr("dim"), -rank, rank, slot="X")
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _axis(ctx, x) -> int:
    return ctx.attr("dim") % max(x.ndim, 1)


def _cumprod(place):
    def run(ctx):
        x = ctx.input("X")
        ctx.set_output("Out", place.cumprod(x, _axis(ctx, x)))
    return run


def _cumprod_grad(place):
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        dout = dout.reshape(tuple(int(d) for d in x.shape))
        ctx.set_output("X@GRAD", place.cumprod_grad(x, dout, _axis(ctx, x)))
    return run


def _lowered(info):
    """For X of rank >= 1 (a 0-d X is one line of one element)."""
    rank = info.ndim("X")
    if rank == 0 or info.dtype("X").name not in MULTIPLIABLE:
        return None
    return Call(KRP.cumprod_along, ("X",), ("Out",), (info.attr("dim") % rank,))


def _lowered_grad(info):
    """For a dOut of X's dtype (the kernel casts X to dOut's)."""
    rank = info.ndim("X")
    if rank == 0 or info.dtype("X").name not in MULTIPLIABLE or \
            info.dtype("Out@GRAD") != info.dtype("X"):
        return None
    return Call(KRP.cumprod_along_grad, ("X", "Out@GRAD"), ("X@GRAD",),
                (info.attr("dim") % rank,))


register(OpDef(
    "cumprod", [X], [OUT],
    [Attr("dim", A.INT, -1, "the axis multiplied along")],
    comment="Out = the running products of X along dim.", infer_shape=_cumprod_infer,
    kernels={"cpu": _cumprod(K.CPU), "cuda": _cumprod(K.CUDA)}, lowered=_lowered,
    grad=Grad(reads=["X", "Out"], writes=["X"], kernel=_cumprod_grad(K.CPU),
              cuda_kernel=_cumprod_grad(K.CUDA), lowered=_lowered_grad)))
