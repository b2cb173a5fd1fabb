"""cumsum: running sums along an axis (Fluid's slots and attributes, as ``paddle.cumsum``
saves them), and its gradient.

The gradient of a running sum is a running sum of dOut from the other end (each X
element counts in every later output), so ``cumsum_grad`` is the same kernel with
``reverse`` flipped, as Paddle's is. One function for both places over the places'
``cumsum`` (numpy's sequential sum on the CPU; kernels/cuda/scan.py on the device). In a
compiled block, kernels/cpu/reduce.cumsum_along and cumsum_flat sum in numpy's order.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu import scans as KS
from ..kernels.lowered import Call
from .common import OUT, X
from ..backends import CPU, CUDA


def _cumsum_infer(ctx):
    ctx.require_dtype("X", "number")
    xs = ctx.shape("X")
    flatten = ctx.attr("flatten")
    rank = 1 if flatten else max(len(xs), 1)     # a 0-d X sums along its one element
    ctx.require_range("axis", ctx.attr("axis"), -rank, rank, slot="X")
    if flatten:
        size = 1
        for d in xs:
            size = -1 if d < 0 or size < 0 else size * d
        xs = [size]
    ctx.set_output("Out", xs, ctx.dtype("X"))


def _along(ctx, value):
    """``value`` (X, or dOut) as the kernel sums it, and the axis: flatten makes it 1-D."""
    if ctx.attr("flatten"):
        value = value.reshape((value.size,))
    return value, ctx.attr("axis") % max(value.ndim, 1)


def scan_attrs(axis_comment: str, verb: str) -> list:
    """The attributes of a running scan along an axis (cumsum, logcumsumexp)."""
    return [Attr("axis", A.INT, -1, axis_comment),
            Attr("flatten", A.BOOLEAN, False, f"{verb} X as one row (Out is 1-D)"),
            Attr("exclusive", A.BOOLEAN, False, "each sum leaves its own element out"),
            Attr("reverse", A.BOOLEAN, False, f"{verb} from the end of the axis")]


def running_scan(scan):
    """The forward kernel of a running scan along an axis (cumsum, logcumsumexp):
    ``scan(x, axis, exclusive, reverse)`` over X as ``flatten`` and ``axis`` say."""
    def run(ctx):
        x, axis = _along(ctx, ctx.input("X"))
        ctx.set_output("Out", scan(x, axis, ctx.attr("exclusive"), ctx.attr("reverse")))
    return run


def _cumsum_grad(place):
    def run(ctx):
        x = ctx.input("X")
        dout, axis = _along(ctx, ctx.input("Out@GRAD"))
        dx = place.cumsum(dout, axis, ctx.attr("exclusive"), not ctx.attr("reverse"))
        ctx.set_output("X@GRAD", dx.reshape(tuple(int(d) for d in x.shape)))
    return run


def _lowered_cumsum(grad: bool):
    """cumsum's (``grad``: its gradient's: dOut's sums from the other end) form:
    kernels/cpu/reduce.cumsum_along, or cumsum_flat where ``flatten`` (of X, or of a 0-d
    X's one element), for int32/int64/float32/float64 elements."""
    def lowered(info):
        if info.dtype("X").name not in ("int32", "int64", "float32", "float64"):
            return None
        # (a gradient sums dOut from the other end)
        exclusive, reverse = bool(info.attr("exclusive")), bool(info.attr("reverse")) != grad
        rank = info.ndim("X")
        if info.attr("flatten"):
            if grad:
                return Call(KS.cumsum_flat_grad, ("X", "Out@GRAD"), ("X@GRAD",),
                            (exclusive, reverse))
            return Call(KS.cumsum_flat, ("X",), ("Out",), (exclusive, reverse))
        if rank == 0:
            return None
        axis = info.attr("axis") % rank
        order = tuple([d for d in range(rank) if d != axis] + [axis])
        inverse = tuple(order.index(d) for d in range(rank))
        if grad:
            return Call(KS.cumsum_along, ("Out@GRAD",), ("X@GRAD",),
                        (order, inverse, exclusive, reverse))
        return Call(KS.cumsum_along, ("X",), ("Out",), (order, inverse, exclusive, reverse))
    return lowered


register(OpDef(
    "cumsum", [X], [OUT],
    scan_attrs("the axis summed along", "sum"),
    comment="Out = the running sums of X along axis.", infer_shape=_cumsum_infer,
    kernels={"cpu": running_scan(CPU.cumsum), "cuda": running_scan(CUDA.cumsum)},
    lowered=_lowered_cumsum(grad=False),
    grad=Grad(reads=["X"], writes=["X"], kernel=_cumsum_grad(CPU),
              cuda_kernel=_cumsum_grad(CUDA), lowered=_lowered_cumsum(grad=True))))
