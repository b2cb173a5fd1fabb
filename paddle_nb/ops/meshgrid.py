"""meshgrid: k vectors spread into k grids of one shape, and its gradient (Fluid's slots,
as ``paddle.meshgrid`` saves them).

Given vectors of lengths n0 ... n(k-1) (a 0-d tensor counts as length 1), Out[i] has shape
[n0, ..., n(k-1)] and holds X[i] along axis i, repeated along every other axis (numpy's
``indexing="ij"``). Each Out[i] is X[i] reshaped to lie along axis i and broadcast (the
places' ``broadcast_to``); the gradient sums each dOut[i] over every axis but i
(``sum_axes``).

Paddle 2.6.2 saves the gradient op with its incoming gradients in a slot named
``outputs@GRAD`` (its generated op maker names the slot after the backward's argument,
``outputs``, not after the forward slot ``Out``), so ``meshgrid_grad`` is declared here
by hand with that slot, and the gradient maker below writes it, so that programs Paddle
saved load and run.
"""
from __future__ import annotations

import math

from ..core import dtypes
from ..core.grad_maker import EMPTY_VAR, GradOp, grad_name
from ..core.registry import NO_GRADIENT, OpDef, Slot, register
from ..kernels.cpu.grids import grids_grad, grids_of
from ..kernels.cpu.reduce import MIN_PARALLEL_SUM
from ..kernels.lowered import Call
from . import arrays
from .common import FLOAT_TYPES, numba_holds, one_dtype
from ..backends import CPU, CUDA

# the element types Paddle's CPU meshgrid kernel is registered for
GRIDDABLE = ("int32", "int64", "float32", "float64")
GRADS_SLOT = "outputs@GRAD"                   # Paddle 2.6.2's name (see above)


def _grid_shape(ctx, slot: str = "X") -> list[int]:
    """[n0, ..., n(k-1)], after checking the inputs: at least two, each 0-d or 1-D, of
    one element type (Paddle's rules)."""
    names = ctx.input_names(slot)
    if len(names) < 2:
        ctx.fail("meshgrid needs at least two vectors", slot=slot, expected="2 or more "
                 "inputs", given=f"{len(names)} input(s)")
    first = ctx.dtype(slot)
    if dtypes.name(first) not in GRIDDABLE:
        ctx.fail("meshgrid needs int32, int64, float32 or float64 elements (Paddle's CPU "
                 "kernels)", slot=slot, expected="one of those", given=ctx.describe_input(slot))
    shape = []
    for i in range(len(names)):
        s = ctx.shape(slot, i)
        if len(s) > 1:
            ctx.fail("each input of meshgrid is a vector (or a 0-d tensor)", slot=slot,
                     expected="rank 0 or 1", given=ctx.describe_input(slot, i))
        if ctx.dtype(slot, i) != first:       # no silent promotion
            ctx.fail("every input of meshgrid must have the same element type", slot=slot,
                     expected=ctx.describe_input(slot), given=ctx.describe_input(slot, i))
        shape.append(s[0] if s else 1)
    return shape


def _meshgrid_infer(ctx):
    shape = _grid_shape(ctx)
    if len(ctx.output_names("Out")) != len(shape):
        ctx.fail("meshgrid makes one grid per input", slot="Out",
                 expected=f"{len(shape)} outputs", given=f"{len(ctx.output_names('Out'))}")
    for i in range(len(shape)):
        ctx.set_output("Out", shape, ctx.dtype("X"), i=i)


def _along(axis: int, rank: int, n: int) -> tuple:
    """The shape that puts a vector of n along ``axis`` of a rank-``rank`` grid."""
    return tuple(n if d == axis else 1 for d in range(rank))


def _meshgrid(place):
    def run(ctx):
        xs = ctx.inputs("X")
        shape = tuple(int(x.size) for x in xs)
        ctx.set_outputs("Out", [place.broadcast_to(x.reshape(_along(i, len(xs), int(x.size))),
                                                   shape) for i, x in enumerate(xs)])
    return run


def _meshgrid_grad(place):
    """dX[i]: dOut[i] summed over every axis but i, in X[i]'s shape."""
    def run(ctx):
        xs, douts = ctx.inputs("X"), ctx.inputs(GRADS_SLOT)
        for i, (x, dout) in enumerate(zip(xs, douts)):
            others = [d for d in range(len(xs)) if d != i]
            summed = place.sum_axes(arrays.astype(dout, x.dtype), others, False)
            ctx.set_output("X@GRAD", summed.reshape(tuple(int(d) for d in x.shape)), i)
    return run


def _meshgrid_grad_infer(ctx):
    """Each dOut[i] has the grid's shape; dX[i] has X[i]'s."""
    shape = _grid_shape(ctx)
    grads = ctx.input_names(GRADS_SLOT)
    if len(grads) != len(shape):
        ctx.fail("meshgrid_grad needs the gradient of every grid", slot=GRADS_SLOT,
                 expected=f"{len(shape)} gradients", given=f"{len(grads)}")
    for i in range(len(grads)):
        got = ctx.shape(GRADS_SLOT, i)
        if len(got) != len(shape) or any(a >= 0 and b >= 0 and a != b
                                         for a, b in zip(got, shape)):
            ctx.fail("the gradient of a grid must have the grid's shape", slot=GRADS_SLOT,
                     expected=str(shape), given=ctx.describe_input(GRADS_SLOT, i))
    for i, name in enumerate(ctx.output_names("X@GRAD")):
        if name != EMPTY_VAR:
            ctx.set_output("X@GRAD", ctx.shape("X", i), ctx.dtype("X", i), i=i)


def _meshgrid_grad_maker(op, no_grad):
    """meshgrid_grad, reading X and every dOut (slot ``outputs@GRAD``, Paddle's name)."""
    wanted = [EMPTY_VAR if n in no_grad else grad_name(n) for n in op.input("X")]
    if all(n == EMPTY_VAR for n in wanted):
        return []
    return [GradOp("meshgrid_grad",
                   {"X": op.input("X"), GRADS_SLOT: [grad_name(n) for n in op.output("Out")]},
                   {"X@GRAD": wanted}, dict(op.attrs))]


# --- in a compiled block (kernels/lowered.py): kernels/cpu/grids.py ---------------------------
def _lowered_meshgrid(info):
    dtype = one_dtype(info, "X")
    if dtype is None or not numba_holds(dtype):
        return None
    return Call(grids_of, ("X",), ("Out",), (len(info.pop.in_ix["X"]),))


def _lowered_meshgrid_grad(info):
    """Vectors of one float dtype, every gradient asked for: dOut i summed over every
    axis but i."""
    count = len(info.pop.in_ix["X"])
    dtype = one_dtype(info, "X")
    if dtype is None or dtype.name not in FLOAT_TYPES or one_dtype(info, GRADS_SLOT) != dtype \
            or any(info.ndim("X", i) != 1 for i in range(count)) or \
            EMPTY_VAR in info.pop.outputs["X@GRAD"]:
        return None
    if math.prod(info.shape(GRADS_SLOT)) >= MIN_PARALLEL_SUM:
        return "large: the interpreter splits its sums across the cores"
    orders = tuple((i,) + tuple(d for d in range(count) if d != i) for i in range(count))
    return Call(grids_grad, ("X", GRADS_SLOT), ("X@GRAD",), (orders,))


register(OpDef(
    "meshgrid", [Slot("X", "the vectors (0-d or 1-D, one element type)", duplicable=True)],
    [Slot("Out", "one grid per vector, each of shape [len(X[0]), ..., len(X[k-1])]",
          duplicable=True)], [],
    comment="Out[i] = X[i] laid along axis i of the grid and repeated along the others "
            "(numpy's meshgrid with indexing='ij').",
    infer_shape=_meshgrid_infer, kernels={"cpu": _meshgrid(CPU), "cuda": _meshgrid(CUDA)},
    lowered=_lowered_meshgrid, grad=_meshgrid_grad_maker))

register(OpDef(
    "meshgrid_grad",
    [Slot("X", "the forward vectors", duplicable=True),
     Slot(GRADS_SLOT, "the gradient of each grid (Paddle's slot name)", duplicable=True)],
    [Slot("X@GRAD", "the gradient of each vector", duplicable=True, dispensable=True)], [],
    comment="X@GRAD[i] = the gradient of grid i summed over every axis but i.",
    infer_shape=_meshgrid_grad_infer,
    kernels={"cpu": _meshgrid_grad(CPU), "cuda": _meshgrid_grad(CUDA)}, grad=NO_GRADIENT,
    lowered=_lowered_meshgrid_grad, grad_of="meshgrid"))
