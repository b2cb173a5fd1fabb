"""Ops that read or write whole slices at positions given by data: gather_nd, scatter,
index_select, and their gradients (Fluid's slots and attributes, as ``paddle.gather_nd``,
``paddle.scatter`` and ``paddle.index_select`` save them).

As in indices.py (gather), every position read from a tensor is checked before anything
is read or written (kernels/check.py): one out of range, or negative, is an
``IndexRangeError`` naming the op, the slot, the value and where it sits. Each kernel is
one function over the places' primitives (backends/): gather_nd turns each index row
into one flat position (``linear_index``) and then is a ``take`` along one flattened axis,
so its gradient is gather's ``scatter_add``; scatter writes rows (``scatter_rows``), and
its gradient zeroes them (``zero_rows``) and takes them (``take``). Inside a compiled block
each is a Call of kernels/cpu/indexing.py, which checks the same ranges first.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import indexing as INDEXING
from ..kernels.lowered import Call
from . import arrays
from .common import OUT, X, numba_holds
from .indices import _axis_in
from ..backends import CPU, CUDA


def _fits(shape, want) -> bool:
    """Declared shapes agree (-1: not known until run time)."""
    return len(shape) == len(want) and all(a < 0 or b < 0 or a == b
                                           for a, b in zip(shape, want))


def _size(shape) -> int:
    return int(np.prod(shape, dtype=np.int64))


# --- gather_nd ----------------------------------------------------------------------------------
def nd_index(ctx, xs) -> tuple[list, int]:
    """Index's shape [..., k], each of its rows naming a position along X's first k axes
    (gather_nd, scatter_nd_add): k known and at most X's rank ``len(xs)``."""
    ctx.require_dtype("Index", "int")
    idx = ctx.require_rank("Index", 1)
    k = idx[-1]
    if k < 0 or k > len(xs):
        ctx.fail("Index's last dim counts X's leading axes each index row names, so it "
                 "must be known and at most X's rank", slot="Index",
                 expected=f"Index[..., k] with 0 <= k <= {len(xs)}",
                 given=ctx.describe_input("Index"))
    return idx, k


def _gather_nd_infer(ctx):
    xs = ctx.shape("X")
    idx, k = nd_index(ctx, xs)
    ctx.set_output("Out", idx[:-1] + xs[k:], ctx.dtype("X"))


def _nd_positions(place, ctx, x, what="gather_nd index"):
    """Each row of Index as one flat position among X's first k axes (checked: each
    column against its own axis), and the shapes around it: (positions, k, Index's
    leading shape). ``what`` names the index in an error (scatter_nd_add's too)."""
    index = ctx.input("Index")
    k = int(index.shape[index.ndim - 1])
    lead = tuple(int(d) for d in index.shape[:index.ndim - 1])
    rows = index.reshape((_size(lead), k))
    if rows.size:
        columns = place.rows(rows, 0)            # (k, m): each column contiguous
        for j in range(k):
            n = int(x.shape[j])
            check.indices(columns[j], n, slot="Index", what=what, shape=lead,
                          column=j, counted=f"X's axis {j} has {n} entries")
    return place.linear_index(rows, tuple(int(d) for d in x.shape[:k])), k, lead


def _gather_nd(place):
    def run(ctx):
        x = ctx.input("X")
        at, k, lead = _nd_positions(place, ctx, x)
        tail = tuple(int(d) for d in x.shape[k:])
        flat = x.reshape((_size(x.shape[:k]),) + tail)
        ctx.set_output("Out", place.take(flat, at, 0).reshape(lead + tail))
    return run


def _gather_nd_grad(place):
    """dX: zeros with each dOut slice added at its index row (repeats add up)."""
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        at, k, _ = _nd_positions(place, ctx, x)
        tail = tuple(int(d) for d in x.shape[k:])
        dout = arrays.astype(dout, x.dtype).reshape((int(at.size),) + tail)
        dx = place.scatter_add((_size(x.shape[:k]),) + tail, at, dout, 0)
        ctx.set_output("X@GRAD", dx.reshape(tuple(x.shape)))
    return run


def _lowered_gather_nd(info):
    if not numba_holds(info.dtype("X")) or info.ndim("X") == 0:
        return None
    return Call(INDEXING.gathered_nd, ("X", "Index"), ("Out",), (info.ndim("Out"),))


def _lowered_gather_nd_grad(info):
    """dX; dOut of X's dtype (the kernel casts another)."""
    if not numba_holds(info.dtype("X")) or info.dtype("Out@GRAD") != info.dtype("X") or \
            info.ndim("X") == 0:
        return None
    return Call(INDEXING.gathered_nd_grad, ("X", "Index", "Out@GRAD"), ("X@GRAD",))


register(OpDef(
    "gather_nd", [X, Slot("Index", "index rows [..., k] into X's first k axes")], [OUT], [],
    comment="Out[i...] = X[Index[i..., 0], ..., Index[i..., k-1]] (a slice of X's other "
            "axes).",
    infer_shape=_gather_nd_infer, kernels={"cpu": _gather_nd(CPU), "cuda": _gather_nd(CUDA)},
    lowered=_lowered_gather_nd,
    grad=Grad(reads=["X", "Index"], writes=["X"], kernel=_gather_nd_grad(CPU),
              cuda_kernel=_gather_nd_grad(CUDA), lowered=_lowered_gather_nd_grad)))


# --- scatter ------------------------------------------------------------------------------------
def _ids_count(ctx, slot="Ids") -> int:
    """Ids is [k], [k, 1] or a 0-d id; how many ids (-1: not known yet)."""
    ctx.require_dtype(slot, "int")
    ids = ctx.shape(slot)
    if len(ids) > 2 or len(ids) == 2 and ids[1] not in (1, -1):
        ctx.fail(f"{slot} must be 1-D (or [k, 1])", slot=slot, expected="shape [k] or [k, 1]",
                 given=ctx.describe_input(slot))
    return ids[0] if ids else 1


def _updates_shape(ctx, ref) -> list[int]:
    """Updates: one slice of ``ref``'s rows for each id (a 0-d id: just the slice)."""
    if not ctx.shape("Ids"):
        return list(ref[1:])
    return [_ids_count(ctx)] + list(ref[1:])


def _scatter_infer(ctx):
    xs = ctx.require_rank("X", 1)
    _ids_count(ctx)
    want = _updates_shape(ctx, xs)
    if not _fits(ctx.shape("Updates"), want):
        ctx.fail("Updates must hold one row of X for each id", slot="Updates",
                 expected=str(want), given=ctx.describe_input("Updates"))
    if ctx.dtype("Updates") != ctx.dtype("X"):
        ctx.fail("Updates must have X's element type", slot="Updates",
                 expected=ctx.describe_input("X"), given=ctx.describe_input("Updates"))
    ctx.set_output("Out", xs, ctx.dtype("X"))


def _checked_ids(ctx, rows: int):
    ids = ctx.input("Ids")
    check.indices(ids, rows, slot="Ids", what="row", counted=f"X has {rows} rows")
    return ids.reshape((int(ids.size),))


def _scatter(place):
    def run(ctx):
        x, updates = ctx.input("X"), ctx.input("Updates")
        ids = _checked_ids(ctx, int(x.shape[0]))
        updates = updates.reshape((int(ids.size),) + tuple(int(d) for d in x.shape[1:]))
        ctx.set_output("Out", place.scatter_rows(x, ids, updates, ctx.attr("overwrite")))
    return run


def _scatter_grad(place):
    """As Paddle, whatever ``overwrite``: dX is dOut with the rows at Ids zeroed, and
    dUpdates is dOut's rows at Ids (with overwrite and a repeated id, the update that was
    overwritten gets the row's gradient too: Paddle's value, kept)."""
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        ids = _checked_ids(ctx, int(dout.shape[0]))
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", place.zero_rows(dout, ids))
        if ctx.has_output("Updates@GRAD"):
            updates = ctx.input("Updates")
            ctx.set_output("Updates@GRAD",
                           place.take(dout, ids, 0).reshape(tuple(updates.shape)))
    return run


def _scatter_grad_infer(ctx):
    """dOut is X's shape, which the gradient op sees only as [?] + Updates' rows."""
    us = ctx.shape("Updates")
    if ctx.has_value("Out@GRAD"):
        gs = ctx.shape("Out@GRAD")
        rows = us if not ctx.shape("Ids") else us[1:]
        if not gs or not _fits(gs[1:], rows):
            ctx.fail("the gradient must have the shape of Out: rows like Updates'",
                     slot="Out@GRAD", expected=f"[n] + {rows}",
                     given=ctx.describe_input("Out@GRAD"))
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", gs, ctx.dtype("Out@GRAD"))
    if ctx.has_output("Updates@GRAD"):
        ctx.set_output("Updates@GRAD", us, ctx.dtype("Updates"))


def _lowered_scatter(info):
    if not numba_holds(info.dtype("X")):
        return None
    return Call(INDEXING.scatter_rows_of, ("X", "Ids", "Updates"), ("Out",),
                (info.attr("overwrite"),))


def _lowered_scatter_grad(info):
    if not numba_holds(info.dtype("Out@GRAD")):
        return None
    calls = []
    if info.has_output("X@GRAD"):
        calls.append(Call(INDEXING.rows_zeroed, ("Out@GRAD", "Ids"), ("X@GRAD",)))
    if info.has_output("Updates@GRAD"):
        calls.append(Call(INDEXING.rows_taken, ("Out@GRAD", "Ids", "Updates"),
                          ("Updates@GRAD",)))
    return tuple(calls) or None


register(OpDef(
    "scatter", [X, Slot("Ids", "the rows of X to write (1-D)"),
                Slot("Updates", "one row for each id")], [OUT],
    [Attr("overwrite", A.BOOLEAN, True, "True: a row is replaced (the last id wins); "
          "False: the row is zeroed, then every update aimed at it is added")],
    comment="Out = X with row Ids[i] replaced by Updates[i] (or by their sum).",
    infer_shape=_scatter_infer, kernels={"cpu": _scatter(CPU), "cuda": _scatter(CUDA)},
    lowered=_lowered_scatter,
    grad=Grad(reads=["Ids", "Updates"], writes=["X", "Updates"], kernel=_scatter_grad(CPU),
              cuda_kernel=_scatter_grad(CUDA), infer_shape=_scatter_grad_infer,
              lowered=_lowered_scatter_grad)))


# --- index_select -------------------------------------------------------------------------------
def _index_select_infer(ctx):
    xs = ctx.require_rank("X", 1)
    count = _ids_count(ctx, "Index")
    if not ctx.shape("Index"):
        ctx.fail("Index must be 1-D", slot="Index", expected="shape [k]",
                 given=ctx.describe_input("Index"))
    axis = _axis_in(ctx, ctx.attr("dim"), len(xs))
    out = list(xs)
    out[axis] = count
    ctx.set_output("Out", out, ctx.dtype("X"))


def _select_index(ctx, x):
    index, axis = ctx.input("Index"), ctx.attr("dim") % x.ndim
    n = int(x.shape[axis])
    check.indices(index, n, slot="Index", what="index", counted=f"X's axis {axis} has {n} "
                  "entries")
    return index.reshape((int(index.size),)), axis


def _index_select(place):
    def run(ctx):
        x = ctx.input("X")
        index, axis = _select_index(ctx, x)
        ctx.set_output("Out", place.take(x, index, axis))
    return run


def _index_select_grad(place):
    """dX: zeros with dOut's slices added at Index along dim (repeats add up)."""
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        index, axis = _select_index(ctx, x)
        ctx.set_output("X@GRAD", place.scatter_add(x.shape, index,
                                                   arrays.astype(dout, x.dtype), axis))
    return run


def _lowered_index_select(info):
    if not numba_holds(info.dtype("X")):
        return None
    return Call(INDEXING.taken_at, ("X", "Index"), ("Out",),
                (info.attr("dim") % info.ndim("X"), info.ndim("Out")))


def _lowered_index_select_grad(info):
    """dX; dOut of X's dtype (the kernel casts another)."""
    if not numba_holds(info.dtype("X")) or info.dtype("Out@GRAD") != info.dtype("X"):
        return None
    return Call(INDEXING.added_at, ("X", "Index", "Out@GRAD"), ("X@GRAD",),
                (info.attr("dim") % info.ndim("X"),))


register(OpDef(
    "index_select", [X, Slot("Index", "the positions to take along dim (1-D)")], [OUT],
    [Attr("dim", A.INT, 0, "the axis to take along")],
    comment="Out = X's entries at Index along dim.", infer_shape=_index_select_infer,
    kernels={"cpu": _index_select(CPU), "cuda": _index_select(CUDA)},
    lowered=_lowered_index_select,
    grad=Grad(reads=["X", "Index"], writes=["X"], kernel=_index_select_grad(CPU),
              cuda_kernel=_index_select_grad(CUDA), lowered=_lowered_index_select_grad)))
