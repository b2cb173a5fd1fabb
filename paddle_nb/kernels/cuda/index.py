"""Kernels that index by data: gather along an axis and its scatter-add gradient, one-hot,
the position of each row's largest or smallest value; gather_nd's flat positions, scatter's
row writes, picks and puts at one position per row, and each row's k largest (or
smallest) values.

Tensors are seen as ``(outer, n, inner)`` around the indexed axis, so one kernel serves
every axis. The indices were range-checked by the op before launch (kernels/check.py):
these kernels read and write where the indices say, unchecked, as numba kernels do.
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .copy import copy, fill
from .device import empty, flat, int_array, launch


@cuda.jit(device=True)
def _source(i, index, n, inner):
    """Where element i of the gathered (outer, k, inner) array sits in (outer, n, inner)."""
    k = index.size
    return ((i // (inner * k)) * n + index[(i // inner) % k]) * inner + i % inner


@cuda.jit(cache=True)
def _gather(x, index, n, inner, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = x[_source(i, index, n, inner)]


def gather(x, index, axis: int):
    """``np.take(x, index, axis)`` for a 1-D ``index`` of checked positions."""
    shape = tuple(int(d) for d in x.shape)
    n, inner = shape[axis], int(np.prod(shape[axis + 1:]))
    out = empty(shape[:axis] + (int(index.size),) + shape[axis + 1:], x.dtype)
    launch(_gather, out.size, flat(x), flat(index), n, inner, flat(out))
    return out


@cuda.jit(cache=True)
def _scatter_add(dout, index, n, inner, dx):
    for i in range(cuda.grid(1), dout.size, cuda.gridsize(1)):
        cuda.atomic.add(dx, _source(i, index, n, inner), dout[i])


def _add_at(dx, index, dout, axis: int):
    """dx's slices at ``index`` along ``axis`` += dout's, in place (atomic: a repeated
    index adds up)."""
    shape = tuple(int(d) for d in dx.shape)
    launch(_scatter_add, dout.size, flat(dout), flat(index), shape[axis],
           int(np.prod(shape[axis + 1:])), flat(dx))
    return dx


def scatter_add(shape, index, dout, axis: int):
    """Zeros of ``shape`` with ``dout``'s slices added at ``index`` along ``axis`` (a
    repeated index adds up): the gradient of ``gather``."""
    return _add_at(fill(tuple(int(d) for d in shape), 0, dout.dtype), index, dout, axis)


@cuda.jit(cache=True)
def _one_hot(x, depth, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i * depth + x[i]] = 1


def one_hot(x, depth: int, dtype):
    """x's shape + [depth], 1 at each value's position (values checked to be < depth)."""
    out = fill(tuple(int(d) for d in x.shape) + (depth,), 0, dtype)
    launch(_one_hot, x.size, flat(x), depth, flat(out))
    return out


@cuda.jit(cache=True)
def _arg_extreme(x, n, inner, largest, out):
    """For each (outer, inner) position, the first j of the largest (or smallest) x[o, j,
    r] along n; a NaN counts as the extreme, as numpy's argmax."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        o = i // inner
        r = i % inner
        base = o * n * inner + r
        best = x[base]
        at = 0
        for j in range(1, n):
            v = x[base + j * inner]
            if best != best:
                break
            if v != v or (v > best if largest else v < best):
                best = v
                at = j
        out[i] = at


def arg_extreme(x, axis: int, largest: bool, dtype):
    """The index of each row's largest (or smallest) value along ``axis`` (not empty)."""
    shape = tuple(int(d) for d in x.shape)
    n, inner = shape[axis], int(np.prod(shape[axis + 1:]))
    out = empty(shape[:axis] + shape[axis + 1:], dtype)
    launch(_arg_extreme, out.size, flat(x), n, inner, largest, flat(out))
    return out


# --- gather_nd: each index row as one flat position ----------------------------------------
@cuda.jit(cache=True)
def _linear_index(index, dims, k, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        at = 0
        for j in range(k):
            at = at * dims[j] + index[i * k + j]
        out[i] = at


def linear_index(index, dims):
    """The row-major position in ``dims`` of each row of the (m, k) ``index`` (checked to
    be in range): gather_nd then takes along one flattened axis."""
    m, k = int(index.shape[0]), int(index.shape[1])
    out = empty((m,), np.int64)
    launch(_linear_index, m, flat(index), int_array(list(dims) or [1]), k, out)
    return out


# --- scatter: whole rows written at Ids --------------------------------------------------
@cuda.jit(cache=True)
def _last_writer(ids, writer):
    for i in range(cuda.grid(1), ids.size, cuda.gridsize(1)):
        cuda.atomic.max(writer, ids[i], i)


@cuda.jit(cache=True)
def _write_rows(updates, ids, writer, inner, out):
    """Row i of updates goes to row ids[i] if no later row goes there (the CPU's order:
    the last write wins), so the result does not depend on the threads' order."""
    for e in range(cuda.grid(1), updates.size, cuda.gridsize(1)):
        i = e // inner
        row = ids[i]
        if writer[row] == i:
            out[row * inner + e % inner] = updates[e]


@cuda.jit(cache=True)
def _zero_rows(ids, inner, out):
    for e in range(cuda.grid(1), ids.size * inner, cuda.gridsize(1)):
        out[ids[e // inner] * inner + e % inner] = 0


def zero_rows(x, ids):
    """A copy of ``x`` with the rows at ``ids`` (checked) set to 0."""
    out = copy(x)
    inner = int(np.prod(tuple(int(d) for d in x.shape[1:])))
    if ids.size and inner:
        launch(_zero_rows, ids.size * inner, flat(ids), inner, flat(out))
    return out


def scatter_rows(x, ids, updates, overwrite: bool):
    """x with row ids[i] set to updates[i] (overwrite: the last one wins) or set to the
    sum of every updates[i] aimed at it."""
    n = int(x.shape[0])
    inner = int(np.prod(tuple(int(d) for d in x.shape[1:])))
    if not overwrite:
        return _add_at(zero_rows(x, ids), ids, updates, 0)
    out = copy(x)
    if ids.size and inner:
        writer = fill((n,), -1, np.int64)
        launch(_last_writer, ids.size, flat(ids), writer)
        launch(_write_rows, updates.size, flat(updates), flat(ids), writer, inner, flat(out))
    return out


# --- one position per row, k per row -----------------------------------------------------
@cuda.jit(cache=True)
def _take_along_rows(rows, index, n, k, has_ignore, ignore, out):
    for e in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        at = index[e]
        if has_ignore and at == ignore:
            out[e] = 0
        else:
            out[e] = rows[(e // k) * n + at]


def take_along_rows(rows, index, ignore=None):
    """out[r, c] = rows[r, index[r, c]] for (R, n) rows and (R, k) checked positions; 0
    where index is ``ignore``."""
    r, n, k = int(rows.shape[0]), int(rows.shape[1]), int(index.shape[1])
    out = empty((r, k), rows.dtype)
    launch(_take_along_rows, out.size, flat(rows), flat(index), n, k, ignore is not None,
           0 if ignore is None else int(ignore), flat(out))
    return out


@cuda.jit(cache=True)
def _put_along_rows(values, index, n, k, has_ignore, ignore, out):
    for e in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        at = index[e]
        if not (has_ignore and at == ignore):
            cuda.atomic.add(out, (e // k) * n + at, values[e])


def put_along_rows(n: int, index, values, ignore=None):
    """Zeros of (R, n) with values[r, c] added at [r, index[r, c]] (a repeated position
    adds up; ``ignore`` positions are skipped): the gradient of take_along_rows."""
    r, k = int(values.shape[0]), int(values.shape[1])
    out = fill((r, n), 0, values.dtype)
    launch(_put_along_rows, values.size, flat(values), flat(index), n, k, ignore is not None,
           0 if ignore is None else int(ignore), flat(out))
    return out


@cuda.jit(device=True)
def _comes_first(a, i, b, j, largest):
    """Whether a (at i) is ranked before b (at j): by value, NaN counted largest (Paddle's
    order), ties by position, so every element of a row has its own rank."""
    a_nan, b_nan = a != a, b != b
    if a_nan or b_nan:
        if a_nan and b_nan:
            return i < j
        return a_nan if largest else b_nan
    if a == b:
        return i < j
    return a > b if largest else a < b


@cuda.jit(cache=True)
def _top_k(rows, n, k, largest, out, indices):
    """One thread per element: its rank is how many elements of its row come first; the
    first k ranks are written in order (no sort, no shared memory)."""
    for e in range(cuda.grid(1), rows.size, cuda.gridsize(1)):
        base = (e // n) * n
        j = e - base
        v = rows[e]
        rank = 0
        for i in range(n):
            if i != j and _comes_first(rows[base + i], i, v, j, largest):
                rank += 1
        if rank < k:
            at = (e // n) * k + rank
            out[at] = v
            indices[at] = j


def top_k_rows(rows, k: int, largest: bool):
    """The k largest (or smallest) values of each row of (R, n) ``rows``, in order, and
    their positions (int64)."""
    r, n = int(rows.shape[0]), int(rows.shape[1])
    out, indices = empty((r, k), rows.dtype), empty((r, k), np.int64)
    if out.size:
        launch(_top_k, rows.size, flat(rows), n, k, largest, flat(out), flat(indices))
    return out, indices
