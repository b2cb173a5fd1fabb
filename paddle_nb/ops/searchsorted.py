"""searchsorted: where each of Values would go in SortedSequence to keep it sorted (Fluid's
slots and attributes, as ``paddle.searchsorted`` and ``paddle.bucketize`` save them; both
are this one op).

SortedSequence is 1-D (one sequence for every value) or has Values' leading dims (one
sequence per row: the last dims may differ). ``right=False`` gives the first position
whose element is not below the value (C++'s lower_bound), ``right=True`` the first
position whose element is above it (upper_bound). NaN counts as the largest value, as in
numpy and Paddle: a NaN value goes after every number. A sequence that is not sorted is
refused (Paddle searches it anyway, and its answer means nothing). Out has Values' shape,
int64 (int32 with ``out_int32``, which Paddle allows only while the sequence's length
fits).

One binary search per value, written once (kernels/cpu/searchsorted.py) for the CPU's
``njit`` loop and the device's ``cuda.jit`` kernel (one thread per value,
kernels/cuda/searchsorted.py). In a compiled block the op is ``searched``: the same
sortedness test (raising, so that the compiler reruns the op here for the named error) and
the CPU's loop.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import searchsorted as KS
from ..kernels.cuda import searchsorted as CS
from ..kernels.cuda.device import empty, flat, launch
from ..kernels.lowered import Call
from . import arrays
from ..backends import CPU, CUDA
from .common import require_element_type

# the element types Paddle's CPU searchsorted kernel is registered for
SEARCHABLE = ("int32", "int64", "float32", "float64")
INT32_MAX = 2 ** 31 - 1


def _check_shapes(seq_shape, value_shape, fail) -> None:
    if not seq_shape:
        fail("SortedSequence must have at least one dimension", "SortedSequence",
             "a 1-D or N-D tensor", f"shape {list(seq_shape)}")
    if len(seq_shape) > 1 and (len(seq_shape) != len(value_shape)
                               or list(seq_shape[:-1]) != list(value_shape[:-1])):
        fail("an N-D SortedSequence needs Values with the same leading dims", "Values",
             f"shape {list(seq_shape[:-1])} + [any]", f"shape {list(value_shape)}")


def _check_sorted(rows, fail) -> None:
    """Refuse a sequence that is not ascending (NaN last): a binary search in it would
    answer anything. Paddle does not check; one pass on the host (a device sequence comes
    back once)."""
    if rows is None or rows.shape[1] < 2:
        return
    before, after = rows[:, :-1], rows[:, 1:]
    with np.errstate(invalid="ignore"):
        out_of_order = (after < before) | (np.isnan(before) & ~np.isnan(after)) \
            if rows.dtype.kind == "f" else after < before
    if out_of_order.any():
        r, j = (int(v) for v in np.argwhere(out_of_order)[0])
        fail("the sequence must be sorted ascending (NaN last)", "SortedSequence",
             "each element >= the one before it",
             f"{rows[r, j + 1]!r} after {rows[r, j]!r} (row {r}, position {j + 1})")


def _searchsorted_infer(ctx):
    for slot in ("SortedSequence", "Values"):
        require_element_type(ctx, slot, SEARCHABLE, "searchsorted needs int32, int64, float32 "
                             "or float64 elements (Paddle's CPU kernels)")
    if ctx.dtype("SortedSequence") != ctx.dtype("Values"):
        ctx.fail("SortedSequence and Values must have one element type", slot="Values",
                 expected=dtypes.name(ctx.dtype("SortedSequence")),
                 given=ctx.describe_input("Values"))
    seq, values = ctx.shape("SortedSequence"), ctx.shape("Values")

    def fail(msg, slot, expected, given):
        ctx.fail(msg, slot=slot, expected=expected, given=given)
    if -1 not in seq and -1 not in values:
        _check_shapes(seq, values, fail)
    ctx.set_output("Out", values, dtypes.to_code("int32" if ctx.attr("out_int32")
                                                  else "int64"))


def _searchsorted(place):
    def run(ctx):
        seq, values = ctx.input("SortedSequence"), ctx.input("Values")
        seq_shape = tuple(int(d) for d in seq.shape)
        value_shape = tuple(int(d) for d in values.shape)

        def fail(msg, slot, expected, given):
            raise ValueError(f"searchsorted: slot {slot}: {msg}; expected {expected}, "
                             f"given {given}")
        _check_shapes(seq_shape, value_shape, fail)
        if seq.dtype != values.dtype:
            fail("SortedSequence and Values must have one element type", "Values",
                 str(seq.dtype), str(values.dtype))
        m = seq_shape[-1]
        _check_sorted(arrays.host(seq).reshape((-1, m)) if m else None, fail)
        out_int32 = ctx.attr("out_int32")
        if out_int32 and m > INT32_MAX:
            fail("out_int32 needs a sequence shorter than 2**31", "SortedSequence",
                 f"at most {INT32_MAX} elements per row", f"{m}")
        dtype = np.dtype(np.int32 if out_int32 else np.int64)
        rows = int(np.prod(seq_shape[:-1], dtype=np.int64))
        per_row = value_shape[-1] if value_shape and value_shape[-1] else 1
        right = bool(ctx.attr("right"))
        if place is CUDA:
            out = empty(value_shape, dtype)
            launch(CS.search_each, int(out.size), flat(seq), m, rows, flat(values),
                   per_row, right, flat(out))
        else:
            out = np.empty(value_shape, dtype)
            if out.size:
                KS.search_each(np.ascontiguousarray(seq).reshape(-1), m, rows,
                               np.ascontiguousarray(values).reshape(-1), per_row, right,
                               out.reshape(-1))
        ctx.set_output("Out", out)
    return run


# --- in a compiled block (kernels/lowered.py) ---------------------------------------------
def _lowered_searchsorted(info):
    """Values of rank >= 1 (a 0-D one has no last dim to count rows by); an N-D sequence
    of Values' rank (the interpreter refuses others)."""
    seq_rank, value_rank = info.ndim("SortedSequence"), info.ndim("Values")
    if value_rank == 0 or (seq_rank > 1 and seq_rank != value_rank) or \
            info.dtype("SortedSequence") != info.dtype("Values"):
        return None
    zero = (np.int32 if info.attr("out_int32") else np.int64)(0)
    return Call(KS.searched, ("SortedSequence", "Values"), ("Out",),
                (bool(info.attr("right")), zero))


register(OpDef(
    "searchsorted",
    [Slot("SortedSequence", "the sorted sequence (1-D, or one per row of Values)"),
     Slot("Values", "the values placed")],
    [Slot("Out", "each value's position in its sequence (int64; int32 with out_int32)")],
    [Attr("out_int32", A.BOOLEAN, False, "Out is int32 (False: int64)"),
     Attr("right", A.BOOLEAN, False, "after equal elements (False: before them)")],
    comment="Out = where each of Values goes in SortedSequence (lower_bound; right: "
            "upper_bound), NaN counting as the largest.",
    infer_shape=_searchsorted_infer,
    kernels={"cpu": _searchsorted(CPU), "cuda": _searchsorted(CUDA)},
    lowered=_lowered_searchsorted))
