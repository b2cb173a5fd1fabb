"""fill_diagonal_tensor: X with one diagonal of each (dim1, dim2) matrix replaced by Y, and
its gradient (Fluid's slots and attributes, as ``paddle.diagonal_scatter`` and
``Tensor.fill_diagonal_tensor`` save them).

The diagonal is the one ``paddle.diagonal(x, offset, dim1, dim2)`` reads: ``offset > 0``
above the main one, ``< 0`` below; its length is ``min(n1, n1 + offset, n2, n2 - offset)``
(none: nothing is written). Y holds X's other axes, in order, then the diagonal, the shape
``paddle.diagonal`` gives; Paddle saves a 1-D one as ``[1, length]`` (diagonal_scatter
reshapes it), which is taken too. The positions depend on the shapes only, so both places
work them out on the host (numpy's ``diagonal`` of X's flat positions) and write through
ops/write_at.py.

The gradient is Paddle 2.6.2's: ``fill_diagonal_tensor_grad`` gives X@GRAD only (dOut with
the diagonal zeroed, since it was overwritten); Paddle's op has no gradient for Y, so
``diagonal_scatter``'s y gets none here either.

In a compiled block both are kernels/cpu/structured.py's loops (diagonal_filled,
diagonal_zeroed), the positions worked out there from the run's shape, as numpy's
``diagonal`` orders them.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import structured as KS
from ..kernels.lowered import Call
from . import write_at
from .common import OUT, X, build_fail, run_fail
from ..backends import CPU, CUDA

# the element types taken here (Paddle 2.6.2 also has float16, the small ints, complex)
FILLABLE = ("bool", "int32", "int64", "float32", "float64")


def _diagonal(shape, offset: int, dim1: int, dim2: int, fail):
    """(dim1, dim2) made positive and checked; the shape Y must have (-1: unknown)."""
    rank = len(shape)
    if rank < 2:
        fail("X needs two axes to have a diagonal", expected="rank >= 2",
             given=f"rank {rank}")
    for name, d in (("dim1", dim1), ("dim2", dim2)):
        if not -rank <= d < rank:
            fail(f"{name} is out of range", expected=f"{name} in [{-rank}, {rank - 1}]",
                 given=f"{name}={d}")
    dim1, dim2 = dim1 % rank, dim2 % rank
    if dim1 == dim2:
        fail("dim1 and dim2 must be two different axes", expected="dim1 != dim2",
             given=f"dim1={dim1}, dim2={dim2}")
    n1, n2 = shape[dim1], shape[dim2]
    length = -1 if n1 < 0 or n2 < 0 else max(min(n1, n1 + offset, n2, n2 - offset), 0)
    others = [d for i, d in enumerate(shape) if i not in (dim1, dim2)]
    return dim1, dim2, others + [length]


def _y_fits(y_shape, want) -> bool:
    def same(a, b):
        return len(a) == len(b) and all(p < 0 or q < 0 or p == q for p, q in zip(a, b))
    return same(y_shape, want) or (len(want) == 1 and same(y_shape, [1] + want))


def _fill_infer(ctx):
    if dtypes.name(ctx.dtype("X")) not in FILLABLE:
        ctx.fail("fill_diagonal_tensor takes bool, int32, int64, float32 or float64 "
                 "elements", slot="X", expected="one of those", given=ctx.describe_input("X"))
    ctx.require_same_dtype("Y", "X")
    _check(ctx, ctx.shape("X"))
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _check(ctx, shape):
    fail = build_fail(ctx, "X")
    _, _, want = _diagonal(shape, ctx.attr("offset"), ctx.attr("dim1"), ctx.attr("dim2"),
                           fail)
    if ctx.has_input("Y") and not _y_fits(ctx.shape("Y"), want):
        ctx.fail("Y holds X's other axes, then the diagonal", slot="Y",
                 expected=f"{want}" + (f" (or [1, {want[0]}])" if len(want) == 1 else ""),
                 given=ctx.describe_input("Y"))


def _positions(ctx, shape: tuple) -> np.ndarray:
    """X's flat positions on the diagonal, in Y's order."""
    fail = run_fail("fill_diagonal_tensor")
    dim1, dim2, _ = _diagonal(list(shape), ctx.attr("offset"), ctx.attr("dim1"),
                              ctx.attr("dim2"), fail)
    flat = np.arange(write_at.numel(shape), dtype=np.int64).reshape(shape)
    diagonal = np.diagonal(flat, ctx.attr("offset"), dim1, dim2)
    return np.ascontiguousarray(diagonal).reshape(-1)


def _fill(place):
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        at = write_at.positions_on(ctx, _positions(ctx, tuple(int(d) for d in x.shape)))
        ctx.set_output("Out", write_at.write(place, x, at, y, accumulate=False))
    return run


def _fill_grad(place):
    """dX: dOut, 0 on the diagonal (it was overwritten by Y)."""
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        at = write_at.positions_on(ctx, _positions(ctx, tuple(int(d) for d in dout.shape)))
        ctx.set_output("X@GRAD", write_at.x_grad(place, dout, at, False, dout.shape))
    return run


def _fill_grad_infer(ctx):
    """dX has dOut's shape (Paddle's gradient op reads nothing else; this package's
    backward also gives X, to check dOut against)."""
    write_at.check_gradient(ctx, "X", "Out@GRAD")
    _check(ctx, ctx.shape("Out@GRAD"))
    ctx.set_output("X@GRAD", ctx.shape("Out@GRAD"), ctx.dtype("Out@GRAD"))


def _dims(info, slot: str):
    """(dim1, dim2) made positive for ``slot``'s rank, or None where they are not two
    axes of it (the interpreter names the error)."""
    rank = info.ndim(slot)
    dim1, dim2 = info.attr("dim1"), info.attr("dim2")
    if rank < 2 or not (-rank <= dim1 < rank and -rank <= dim2 < rank) or \
            dim1 % rank == dim2 % rank:
        return None
    return dim1 % rank, dim2 % rank


def _lowered_fill(info):
    dims = _dims(info, "X")
    if dims is None or info.dtype("X").name not in FILLABLE or \
            info.dtype("Y") != info.dtype("X"):
        return None
    return Call(KS.diagonal_filled, ("X", "Y"), ("Out",), (info.attr("offset"),) + dims)


def _lowered_fill_grad(info):
    dims = _dims(info, "Out@GRAD")
    if dims is None or info.dtype("Out@GRAD").name not in FILLABLE:
        return None
    return Call(KS.diagonal_zeroed, ("Out@GRAD",), ("X@GRAD",), (info.attr("offset"),) + dims)


register(OpDef(
    "fill_diagonal_tensor",
    [X, Slot("Y", "the new diagonal: X's other axes, then the diagonal's length")], [OUT],
    [Attr("offset", A.LONG, 0, "which diagonal: > 0 above the main one, < 0 below"),
     Attr("dim1", A.INT, 0, "the matrices' first axis"),
     Attr("dim2", A.INT, 1, "the matrices' second axis")],
    comment="Out = X with the (dim1, dim2, offset) diagonal replaced by Y.",
    infer_shape=_fill_infer, kernels={"cpu": _fill(CPU), "cuda": _fill(CUDA)},
    lowered=_lowered_fill,
    grad=Grad(reads=["X"], optional=("X",), writes=["X"], kernel=_fill_grad(CPU),
              cuda_kernel=_fill_grad(CUDA), infer_shape=_fill_grad_infer,
              lowered=_lowered_fill_grad)))
