"""Picking elements by position along one axis: index_sample and take_along_axis, and their
gradients (Fluid's slots and attributes, as ``paddle.index_sample`` and
``paddle.take_along_axis`` save them).

Both are "one position per output element along an axis": Out has Index's shape, and each
of its elements is the element of X at the same place except along the axis, where Index
says which one. index_sample is the 2-D case along axis 1 (``Out[i, j] = X[i, Index[i,
j]]``; ``F.multi_margin_loss`` picks each row's target score with it); take_along_axis
takes any rank and axis. Along the other axes Index may be shorter than X (Paddle 2.6.2
reads the leading block of X then, ``broadcast=False``; with the default ``broadcast=True``
``paddle.take_along_axis`` first expands both to one shape, which the saved program shows as
``expand_v2`` ops).

Every position is range-checked before anything is read (kernels/check.py): Paddle 2.6.2
refuses a negative index_sample position, but its take_along_axis reads a negative one
from outside the row unchecked; here both refuse it, naming the op, the slot and the value.
The kernels are the places' row primitives (``take_along_rows``, and for the gradient
``put_along_rows``, which adds a position picked twice up): the axis is moved last and the
tensors become (rows, n) matrices. Inside a compiled block both are Calls of
kernels/cpu/indexing.py (``taken_along`` / ``put_along``), which check the same ranges.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import indexing as INDEXING
from ..kernels.lowered import Call
from . import arrays
from .common import OUT, X, axis_in_range, build_fail, int_shape, numba_holds, run_fail
from ..backends import CPU, CUDA

# the element types Paddle 2.6.2's CPU kernels take (float16 and bfloat16 aside)
PICKABLE = ("int32", "int64", "float32", "float64")
INDEX = Slot("Index", "the positions along the axis (int32 or int64)")


def _check_types(ctx, slot: str) -> None:
    if dtypes.name(ctx.dtype(slot)) not in PICKABLE:
        ctx.fail(f"{ctx.op_def.type} needs int32, int64, float32 or float64 elements "
                 "(Paddle's CPU kernels)", slot=slot, expected="one of those",
                 given=ctx.describe_input(slot))
    ctx.require_dtype("Index", "int")


# --- index_sample -------------------------------------------------------------------------------
def _index_sample_infer(ctx):
    _check_types(ctx, "X")
    xs, idx = ctx.shape("X"), ctx.shape("Index")
    if len(xs) != 2 or len(idx) != 2:
        ctx.fail("index_sample takes a matrix X and a matrix Index (one row of positions "
                 "per row of X)", slot="Index" if len(xs) == 2 else "X",
                 expected="2-D X and Index",
                 given=f"{ctx.describe_input('X')}, {ctx.describe_input('Index')}")
    if xs[0] >= 0 and idx[0] >= 0 and xs[0] != idx[0]:
        ctx.fail("Index needs one row per row of X", slot="Index",
                 expected=f"{xs[0]} rows", given=ctx.describe_input("Index"))
    ctx.set_output("Out", idx, ctx.dtype("X"))


def _checked_rows(x, index, op_type: str):
    """Index checked against X's row length (and its row count against X's)."""
    if index.ndim != 2 or x.ndim != 2 or int(index.shape[0]) != int(x.shape[0]):
        raise ValueError(f"{op_type}: slot Index: expected one row of positions per row of "
                         f"X {list(x.shape)}, given shape {list(index.shape)}")
    n = int(x.shape[1])
    check.indices(index, n, slot="Index", what=f"{op_type} position",
                  counted=f"X's rows have {n} entries")


def _index_sample(place):
    def run(ctx):
        x, index = ctx.input("X"), ctx.input("Index")
        _checked_rows(x, index, "index_sample")
        ctx.set_output("Out", place.take_along_rows(x, index))
    return run


def _index_sample_grad(place):
    """dX: zeros with each dOut element added at the position it was picked from."""
    def run(ctx):
        x, index, dout = ctx.input("X"), ctx.input("Index"), ctx.input("Out@GRAD")
        _checked_rows(x, index, "index_sample_grad")
        dout = arrays.astype(dout, x.dtype).reshape(int_shape(index))
        ctx.set_output("X@GRAD", place.put_along_rows(int(x.shape[1]), index, dout))
    return run


# --- in a compiled block (kernels/lowered.py) -----------------------------------------------
def _lowered_pick(fn, reads, writes, x: str, grad: bool, axis: bool):
    """A Call of ``fn`` for X of a type numba holds, Index of X's rank and a gradient
    of X's dtype (the kernels cast another); ``axis``: the Axis attribute is a const."""
    def lowered(info):
        dtype = info.dtype(x)
        if not numba_holds(dtype) or info.ndim("Index") != info.ndim(x) or \
                grad and info.dtype(reads[-1]) != dtype:
            return None
        return Call(fn, reads, writes, (info.attr("Axis") % info.ndim(x),) if axis else ())
    return lowered


register(OpDef(
    "index_sample", [X, INDEX], [OUT], [],
    comment="Out[i, j] = X[i, Index[i, j]] (X and Index are matrices with as many rows).",
    infer_shape=_index_sample_infer,
    kernels={"cpu": _index_sample(CPU), "cuda": _index_sample(CUDA)},
    lowered=_lowered_pick(INDEXING.sampled, ("X", "Index"), ("Out",), "X", False, False),
    grad=Grad(reads=["X", "Index"], writes=["X"], kernel=_index_sample_grad(CPU),
              cuda_kernel=_index_sample_grad(CUDA),
              lowered=_lowered_pick(INDEXING.sampled_grad, ("X", "Index", "Out@GRAD"),
                                    ("X@GRAD",), "X", True, False))))


# --- take_along_axis -----------------------------------------------------------------------------
def _axis_of(rank: int, axis: int, fail) -> int:
    return axis_in_range(rank, axis, "Axis", fail, "rank-{rank} tensors")


def _fits_inside(xs, idx, axis: int) -> bool:
    """Along every axis but ``axis``, Index is no longer than Input (-1: unknown)."""
    return all(i < 0 or x < 0 or i <= x for d, (x, i) in enumerate(zip(xs, idx)) if d != axis)


def _take_along_infer(ctx):
    _check_types(ctx, "Input")
    xs, idx = ctx.shape("Input"), ctx.shape("Index")
    fail = build_fail(ctx, "Index")
    if len(xs) != len(idx) or not xs:
        fail("Index must have Input's rank (at least 1)", expected=f"rank {len(xs)} (>= 1)",
             given=ctx.describe_input("Index"))
    axis = _axis_of(len(xs), ctx.attr("Axis"), fail)
    if not _fits_inside(xs, idx, axis):
        fail("along the other axes Index may not be longer than Input",
             expected=f"at most {xs} except along Axis {axis}", given=ctx.describe_input("Index"))
    ctx.set_output("Result", idx, ctx.dtype("Input"))


def _block(x_shape, index_shape, axis: int):
    """The per-axis maps of the leading block of Input that Index covers (None: all of
    it): Index's length along every axis but ``axis``, Input's along it."""
    if all(i == x for d, (x, i) in enumerate(zip(x_shape, index_shape)) if d != axis):
        return None
    return [np.arange(x if d == axis else i, dtype=np.int64)
            for d, (x, i) in enumerate(zip(x_shape, index_shape))]


def _prepared(ctx, op_type: str):
    """(Input, Index, axis, the block maps or None), everything checked."""
    x, index = ctx.input("Input"), ctx.input("Index")
    xs, idx = int_shape(x), int_shape(index)
    fail = run_fail(op_type, "Index")
    if len(xs) != len(idx) or not xs:
        fail("Index must have Input's rank", f"rank {len(xs)}", f"shape {list(idx)}")
    axis = _axis_of(len(xs), int(ctx.attr("Axis")), fail)
    if not _fits_inside(xs, idx, axis):
        fail("along the other axes Index may not be longer than Input",
             f"at most {list(xs)} except along Axis {axis}", f"shape {list(idx)}")
    n = xs[axis]
    check.indices(index, n, slot="Index", what=f"{op_type} position",
                  counted=f"Input's axis {axis} has {n} entries")
    return x, index, axis, _block(xs, idx, axis)


def _take_along(place):
    def run(ctx):
        x, index, axis, maps = _prepared(ctx, "take_along_axis")
        if index.size == 0:
            ctx.set_output("Result", place.full(int_shape(index), 0, x.dtype))
            return
        block = x if maps is None else place.gather_maps(x, maps)
        rows = place.take_along_rows(place.rows(block, axis), place.rows(index, axis))
        ctx.set_output("Result", place.unrows(rows, int_shape(index), axis))
    return run


def _take_along_grad(place):
    """dInput: zeros with each dResult element added where it was taken from."""
    def run(ctx):
        x, index, axis, maps = _prepared(ctx, "take_along_axis_grad")
        dres = arrays.astype(ctx.input("Result@GRAD"), x.dtype).reshape(int_shape(index))
        if index.size == 0:
            ctx.set_output("Input@GRAD", place.full(int_shape(x), 0, x.dtype))
            return
        n = int(x.shape[axis])
        put = place.put_along_rows(n, place.rows(index, axis), place.rows(dres, axis))
        block_shape = tuple(len(m) for m in maps) if maps is not None else int_shape(x)
        dblock = place.unrows(put, block_shape, axis)
        ctx.set_output("Input@GRAD", dblock if maps is None else
                       place.scatter_maps(int_shape(x), maps, dblock))
    return run


register(OpDef(
    "take_along_axis", [Slot("Input", "the tensor to pick from"), INDEX],
    [Slot("Result", "the picked elements (Index's shape)")],
    [Attr("Axis", A.INT, 0, "the axis Index gives positions along")],
    comment="Result[..., j, ...] = Input[..., Index[..., j, ...], ...] along Axis.",
    infer_shape=_take_along_infer,
    kernels={"cpu": _take_along(CPU), "cuda": _take_along(CUDA)},
    lowered=_lowered_pick(INDEXING.taken_along, ("Input", "Index"), ("Result",), "Input",
                          False, True),
    grad=Grad(reads=["Input", "Index"], grads_of=["Result"], writes=["Input"],
              kernel=_take_along_grad(CPU), cuda_kernel=_take_along_grad(CUDA),
              lowered=_lowered_pick(INDEXING.put_along,
                                    ("Input", "Index", "Result@GRAD"), ("Input@GRAD",),
                                    "Input", True, True))))
