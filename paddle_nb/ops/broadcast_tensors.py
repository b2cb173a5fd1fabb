"""broadcast_tensors: every X broadcast to the one shape they all broadcast to, and its
gradient (Fluid's slots, as ``paddle.broadcast_tensors`` saves them).

The common shape is numpy's rule over all the inputs at once (dims aligned from the end, a
dim of 1 stretches). Each Out is a new array of that shape (the places' ``broadcast_to``);
each X's gradient is its Out's gradient summed back over the axes it was stretched along
(the places' ``sum_axes``, as expand_v2's gradient).
"""
from __future__ import annotations

import math

from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import OpDef, Slot, register
from ..core.limits import check_tensor_size
from ..core.grad_maker import EMPTY_VAR
from ..kernels.cpu.grids import broadcast_all, summed_each
from ..kernels.cpu.reduce import MIN_PARALLEL_SUM
from ..kernels.lowered import Call
from . import arrays
from .common import FLOAT_TYPES, broadcast_shapes, numba_holds, one_dtype
from .stack import broadcast_dims
from ..backends import CPU, CUDA

# the element types Paddle 2.6.2's CPU kernel is registered for (float16 aside)
BROADCASTABLE = ("bool", "int32", "int64", "float32", "float64")


def _padded(shape, rank: int) -> list[int]:
    return [1] * (rank - len(shape)) + list(shape)


def _broadcast_infer(ctx):
    shapes = ctx.shapes("X")
    for i in range(len(shapes)):
        if dtypes.name(ctx.dtype("X", i)) not in BROADCASTABLE:
            ctx.fail("broadcast_tensors needs bool, int32, int64, float32 or float64 "
                     "elements (Paddle's CPU kernels)", slot="X", expected="one of those",
                     given=ctx.describe_input("X", i))
        if ctx.dtype("X", i) != ctx.dtype("X"):           # Paddle checks it too
            ctx.fail("every input of broadcast_tensors must have the same element type",
                     slot="X", expected=ctx.describe_input("X"),
                     given=ctx.describe_input("X", i))
    rank = max(len(s) for s in shapes)
    common = _padded(shapes[0], rank)
    for i, s in enumerate(shapes[1:], 1):
        merged = broadcast_shapes(common, _padded(s, rank))
        if merged is None:
            ctx.fail("the inputs must broadcast to one shape (numpy's rule)", slot="X",
                     expected=f"a shape that broadcasts with {common}",
                     given=ctx.describe_input("X", i))
        common = merged
    for i in range(len(shapes)):
        ctx.set_output("Out", common, ctx.dtype("X"), i=i)


def _common_shape(xs) -> tuple[int, ...]:
    shape: tuple[int, ...] = ()
    for x in xs:
        shape = arrays.broadcast_shape(shape, tuple(int(d) for d in x.shape))
    return shape


def _broadcast(place):
    def run(ctx):
        xs = ctx.inputs("X")
        shape = _common_shape(xs)
        check_tensor_size((len(xs),) + shape, xs[0].dtype, "broadcast_tensors")
        ctx.set_outputs("Out", [place.broadcast_to(x, shape) for x in xs])
    return run


def _broadcast_grad(place):
    """dX_i: dOut_i summed over the axes X_i was stretched along (on the CPU the row sums
    of kernels/cpu/reduce.py, which the compiled form calls too)."""
    def run(ctx):
        xs, douts = ctx.inputs("X"), ctx.inputs("Out@GRAD")
        shape = _common_shape(xs)
        grads = []
        for x, dout in zip(xs, douts):
            x_shape = tuple(int(d) for d in x.shape)
            dout = arrays.astype(dout, x.dtype).reshape(shape)
            dims = broadcast_dims(x_shape, shape)
            grads.append(place.sum_axes(dout, dims, True).reshape(x_shape) if dims else
                         arrays.unbroadcast(dout, x_shape, x_shape))
        ctx.set_outputs("X@GRAD", grads)
    return run


# --- in a compiled block (kernels/lowered.py): kernels/cpu/grids.py ---------------------------
def _lowered_broadcast(info):
    dtype = one_dtype(info, "X")
    if dtype is None or not numba_holds(dtype):
        return None
    return Call(broadcast_all, ("X",), ("Out",), (info.ndim("Out"),))


def _lowered_broadcast_grad(info):
    """Inputs of the outputs' rank and one float dtype, every gradient asked for: each
    dOut summed over its X's stretched dims."""
    count, rank = len(info.pop.in_ix["X"]), info.ndim("Out@GRAD")
    dtype = one_dtype(info, "X")
    if dtype is None or dtype.name not in FLOAT_TYPES or \
            one_dtype(info, "Out@GRAD") != dtype or \
            any(info.ndim("X", i) != rank for i in range(count)) or \
            EMPTY_VAR in info.pop.outputs["X@GRAD"]:
        return None
    if info.shape("Out@GRAD") and math.prod(info.shape("Out@GRAD")) >= MIN_PARALLEL_SUM:
        return "large: the interpreter splits its sums across the cores"
    orders, kepts = [], []
    for i in range(count):
        dims = broadcast_dims(info.shape("X", i), info.shape("Out@GRAD"))
        kept = [d for d in range(rank) if d not in dims]
        orders.append(tuple(kept + dims))
        kepts.append(len(kept))
    return Call(summed_each, ("X", "Out@GRAD"), ("X@GRAD",),
                (tuple(orders), tuple(kepts), rank))


register(OpDef(
    "broadcast_tensors", [Slot("X", "the tensors to broadcast", duplicable=True)],
    [Slot("Out", "each X broadcast to the common shape", duplicable=True)], [],
    comment="Out[i] = X[i] broadcast to the shape all the X broadcast to (numpy's rule).",
    infer_shape=_broadcast_infer,
    kernels={"cpu": _broadcast(CPU), "cuda": _broadcast(CUDA)}, lowered=_lowered_broadcast,
    grad=Grad(reads=["X"], writes=["X"], kernel=_broadcast_grad(CPU),
              cuda_kernel=_broadcast_grad(CUDA), lowered=_lowered_broadcast_grad)))
