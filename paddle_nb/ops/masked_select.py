"""masked_select: the elements of X where Mask is true, as one 1-D tensor, and its gradient
(Fluid's slots, as ``paddle.masked_select`` saves them).

X and Mask broadcast against each other (numpy's rule, as Paddle 2.6.2's kernel does), so
a mask of one row selects from every row. How many elements come out is known only when
Mask is read: shape inference says ``[-1]``. The positions are found on the host, from one
copy of the mask (a device mask comes back once, as control flow's masks do), and the
selection is a gather of those positions from X flattened (the places' ``take``); the
gradient puts each dY back at its position (``scatter_add``) and sums the broadcast copies
of X back to X's shape (arrays.unbroadcast), so an element selected from two rows gets
both gradients.

On the CPU both are kernels/cpu/value_sized.py's loops over the broadcast elements
(masked_select, masked_select_grad: numpy's sum for the broadcast copies), which a
compiled block calls too: Y's length comes from the mask on each run, so one compiled
segment serves every batch, whatever it selects.
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import OpDef, Slot, register
from ..core import limits
from ..core.limits import check_tensor_size
from ..kernels.cpu import value_sized as KV
from ..kernels.cuda import device
from ..kernels.lowered import Call
from . import arrays
from .common import X, broadcast_shapes
from ..backends import CPU, CUDA

# the element types Paddle's CPU masked_select kernel is registered for (and we compile)
SELECTABLE = ("int32", "int64", "float32", "float64")


def _on(place, array: np.ndarray):
    """``array`` (small, made on the host) on ``place``: a device copy on CUDA."""
    return device.to_device(array) if place is CUDA else array


def _padded(shape, rank: int) -> list[int]:
    return [1] * (rank - len(shape)) + list(shape)


def _masked_select_infer(ctx):
    ctx.require_dtype("Mask", "bool")
    if dtypes.name(ctx.dtype("X")) not in SELECTABLE:
        ctx.fail("masked_select needs int32, int64, float32 or float64 elements (Paddle's "
                 "CPU kernels)", slot="X", expected="one of those",
                 given=ctx.describe_input("X"))
    xs, ms = ctx.shape("X"), ctx.shape("Mask")
    rank = max(len(xs), len(ms))
    if broadcast_shapes(_padded(xs, rank), _padded(ms, rank)) is None:
        ctx.fail("X and Mask must broadcast against each other (numpy's rule)", slot="Mask",
                 expected=f"a shape that broadcasts with X's {xs}",
                 given=ctx.describe_input("Mask"))
    ctx.set_output("Y", [-1], ctx.dtype("X"))


def _broadcast_checked(x, mask) -> tuple:
    """The shape X and Mask broadcast to (numpy's error where they do not), checked
    against the tensor size limit for the positions' worst case (int64)."""
    shape = arrays.broadcast_shape(tuple(int(d) for d in x.shape),
                                   tuple(int(d) for d in mask.shape))
    check_tensor_size(shape, np.dtype(np.int64), "masked_select")
    return shape


def _most_positions() -> int:
    """The most elements X and Mask may broadcast to: the tensor size limit's worth of
    int64 positions (what _broadcast_checked allows)."""
    return limits.MAX_TENSOR_BYTES // 8


def _selected(x, mask) -> tuple[tuple, np.ndarray]:
    """(the shape X and Mask broadcast to, the flat positions in it where Mask is true)."""
    shape = _broadcast_checked(x, mask)
    positions = np.flatnonzero(np.broadcast_to(arrays.host(mask), shape))
    return shape, positions.astype(np.int64)


def _flat_broadcast(place, x, shape):
    """X broadcast to ``shape`` and flattened (a copy only where it was broadcast)."""
    if tuple(int(d) for d in x.shape) != shape:
        x = place.broadcast_to(x, shape)
    return x.reshape((int(np.prod(shape, dtype=np.int64)),))


def _loops_take(x, mask) -> bool:
    """Do kernels/cpu/value_sized's loops take these operands? Not a 0-d one (numba
    types the broadcast shape of two 0-d shapes as an empty tuple it cannot walk): those
    take the places' numpy path, which gives the same values."""
    return x.ndim > 0 and mask.ndim > 0


def _masked_select(place):
    def run(ctx):
        x, mask = ctx.input("X"), ctx.input("Mask")
        if place is CPU and _loops_take(x, mask):
            _broadcast_checked(x, mask)
            ctx.set_output("Y", KV.masked_select(x, mask, _most_positions()))
            return
        shape, positions = _selected(x, mask)
        ctx.set_output("Y", place.take(_flat_broadcast(place, x, shape),
                                       _on(place, positions), 0))
    return run


def _masked_select_grad(place):
    """dX: zeros with each dY at the position it was selected from, the broadcast copies
    summed back to X's shape."""
    def run(ctx):
        x, mask, dy = ctx.input("X"), ctx.input("Mask"), ctx.input("Y@GRAD")
        shape, positions = _selected(x, mask)
        if int(dy.size) != len(positions):
            raise ValueError(f"masked_select_grad: slot Y@GRAD: the gradient of Y must hold "
                             f"one value per selected element; expected {len(positions)} "
                             f"(Mask's true entries), given {int(dy.size)} values "
                             f"(shape {list(dy.shape)})")
        dy = arrays.astype(dy, x.dtype).reshape((len(positions),))
        if place is CPU and _loops_take(x, mask):
            ctx.set_output("X@GRAD", KV.masked_select_grad(x, mask, dy, _most_positions()))
            return
        total = int(np.prod(shape, dtype=np.int64))
        spread = place.scatter_add((total,), _on(place, positions), dy, 0)
        x_shape = tuple(int(d) for d in x.shape)
        ctx.set_output("X@GRAD", arrays.unbroadcast(spread.reshape(shape), x_shape, x_shape))
    return run


def _lowered_masked_select(info):
    """kernels/cpu/value_sized.masked_select, the interpreter's CPU loop."""
    if info.dtype("X").name not in SELECTABLE or info.dtype("Mask") != np.bool_ or \
            info.ndim("X") == 0 or info.ndim("Mask") == 0:
        return None
    return Call(KV.masked_select, ("X", "Mask"), ("Y",), (_most_positions(),))


def _lowered_masked_select_grad(info):
    """kernels/cpu/value_sized.masked_select_grad, the interpreter's CPU loop, for a dY of
    X's dtype (the kernel casts another first); a dY of another length than Mask's true
    entries raises before anything is written."""
    if not info.has_input("Y@GRAD") or info.dtype("X").name not in SELECTABLE or \
            info.dtype("Mask") != np.bool_ or info.dtype("Y@GRAD") != info.dtype("X") or \
            info.ndim("X") == 0 or info.ndim("Mask") == 0:
        return None
    return Call(KV.masked_select_grad, ("X", "Mask", "Y@GRAD"), ("X@GRAD",),
                (_most_positions(),))


register(OpDef(
    "masked_select", [X, Slot("Mask", "where to select (bool; broadcasts with X)")],
    [Slot("Y", "the selected elements of X, in row-major order (1-D)")], [],
    comment="Y = the elements of X where Mask is true (X and Mask broadcast), flattened.",
    infer_shape=_masked_select_infer,
    kernels={"cpu": _masked_select(CPU), "cuda": _masked_select(CUDA)},
    lowered=_lowered_masked_select,
    grad=Grad(reads=["X", "Mask"], grads_of=["Y"], writes=["X"],
              kernel=_masked_select_grad(CPU), cuda_kernel=_masked_select_grad(CUDA),
              lowered=_lowered_masked_select_grad)))
