"""What ops do with a SelectedRows (core/selected_rows.py), on either place: make one (an
embedding's sparse gradient), read one an op was given (checked), add its rows into a
dense table, merge its repeated rows, add several up (``sum``).

The sparse updates of sgd and momentum (ops/optimizer.py) and adam (ops/adam.py) are
written over these, next to their dense ones. The row loops are kernels/*/selected_rows.py.
"""
from __future__ import annotations

import numpy as np

from ..core.selected_rows import SelectedRows, is_selected_rows
from ..kernels import check
from ..kernels.cpu import selected_rows as CPU_ROWS
from ..kernels.cuda import copy as cuda_copy
from ..kernels.cuda import selected_rows as CUDA_ROWS
from . import arrays


def _rows_kernels(value):
    if arrays.on_device(value):
        return CUDA_ROWS
    return CPU_ROWS


def from_lookup(ids, dout_rows, height: int) -> SelectedRows:
    """An embedding's sparse gradient (Paddle's EmbeddingSparseGradKernel): rows = the
    ids as given (flat, repeats and the padding id included), value = a copy of the
    rows of Out@GRAD (n, D) in the same order, height = the table's rows."""
    if arrays.on_device(dout_rows):
        return SelectedRows(cuda_copy.astype(ids, np.int64), cuda_copy.copy(dout_rows),
                            height)
    return SelectedRows(np.array(ids, dtype=np.int64), np.array(dout_rows, copy=True),
                        height)


def checked_rows(sr: SelectedRows, slot: str, height: int, counted: str):
    """``sr``'s rows, each checked to be in [0, height) (an IndexRangeError naming
    ``slot`` otherwise), and its value as (n, row width)."""
    check.indices(sr.rows, height, slot=slot, what="row", counted=counted)
    n = int(sr.rows.shape[0])
    width = int(np.prod(sr.value.shape[1:], dtype=np.int64))
    value = sr.value if sr.value.ndim == 2 else sr.value.reshape((n, width))
    return sr.rows, value


def given(ctx, slot: str, like: str):
    """The SelectedRows in input ``slot`` that updates the tensor in input ``like`` (an
    optimizer's Grad and Param): (rows checked against like's rows, value as (n, D) in
    like's type). Its shape was checked against ``like`` by the op's shape rule."""
    sr, target = ctx.input(slot), ctx.input(like)
    height = int(target.shape[0])
    if tuple(sr.shape) != tuple(int(d) for d in target.shape):
        raise ValueError(f"slot {slot}: {sr!r} stands for a tensor of shape "
                         f"{list(sr.shape)}; {like} has shape {list(target.shape)}")
    rows, value = checked_rows(sr, slot, height, f"{like} has {height} rows")
    return rows, arrays.astype(value, target.dtype)


def add_rows(dst2d, rows, value2d, cell, sign: float):
    """``dst2d`` (V, D) += ``sign * cell[0]`` * each row of ``value2d`` at its row, in the
    order of ``rows``, in place (on dst's place)."""
    return _rows_kernels(dst2d).add_rows(dst2d, rows, value2d, cell, sign)


def one(like):
    """A one-element array holding 1 in ``like``'s type, on its place (add_rows's cell
    when the rows are added as they are)."""
    return arrays.full((1,), 1, like.dtype, like)


def dense(rows, value2d, shape):
    """The dense tensor of ``shape`` the rows stand for: zeros, each row added at its
    row in the order of ``rows`` (so repeats add as Paddle's MergeAdd adds them)."""
    n_rows = int(shape[0])
    out = arrays.full((n_rows, int(value2d.shape[1])), 0, value2d.dtype, value2d)
    add_rows(out, rows, value2d, one(value2d), 1.0)
    return out.reshape(tuple(int(d) for d in shape))


def merge(rows, value2d):
    """(distinct rows sorted, their values added in the order of ``rows``)."""
    return _rows_kernels(value2d).merge(rows, value2d)


# --- sum ---------------------------------------------------------------------------------------
def sum_kernel(ctx, place, xs):
    """``sum`` with a SelectedRows among its inputs, as Paddle's sum (add_n) does: all of
    them SelectedRows -> one SelectedRows, each row once (sorted; Paddle merges them, which
    is how an embedding used twice gets one gradient); otherwise a dense tensor: zeros
    plus each input in order, a SelectedRows' rows added in the order of its ids (how a
    weight decay term joins a sparse gradient)."""
    first = xs[0]
    shape = tuple(int(d) for d in first.shape)
    parts = []
    for i, x in enumerate(xs):
        if is_selected_rows(x):
            counted = f"X[{i}] stands for a tensor of {shape[0]} rows"
            rows, value = checked_rows(x, "X", shape[0], counted)
            parts.append((rows, arrays.astype(value, first.dtype)))
        else:
            parts.append((None, x))
    if all(rows is not None for rows, _ in parts):
        rows = arrays.concat([r for r, _ in parts])
        value = arrays.concat([v for _, v in parts])
        unique, summed = merge(rows, value)
        ctx.set_output("Out", SelectedRows(unique, summed.reshape(
            (int(summed.shape[0]),) + shape[1:]), shape[0]))
        return
    out = arrays.full(shape, 0, first.dtype, parts[0][1])
    for rows, x in parts:
        if rows is None:
            out = place.binary("elementwise_add", out, x, out if place.name == "cpu" else None)
        else:
            add_rows(out.reshape((shape[0], int(x.shape[1]))), rows, x, one(x), 1.0)
    ctx.set_output("Out", out)
