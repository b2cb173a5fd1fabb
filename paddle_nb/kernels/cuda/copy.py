"""Data movement on the device: one strided-copy kernel does transpose, broadcast, concat,
split and stack; two row kernels route rows by an index (row-wise IfElse); fill and copy.

The idea: an array in memory is a flat buffer plus *strides* (how many elements to skip
per step along each dim). A transpose is the same buffer read with permuted strides; a
broadcast reads a dim with stride 0; a piece of a split starts at an offset. So one kernel,
``_gather``, that walks the output in C order and reads the source through (offset,
strides) covers them all; ``_scatter`` is its mirror (writes a source into a region of a
larger output: concat). Each thread turns its flat output index into a multi-index
(``unravel``), then into a source offset.

Launchers take and return C-contiguous device arrays; they never write into their inputs.
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .device import c_strides, empty, flat, int_array, launch


# --- kernels ------------------------------------------------------------------------------
@cuda.jit(device=True)
def _unravel_offset(i, shape, strides, offset):
    """``offset`` + the offset, through ``strides``, of flat C-order index i of ``shape``
    (unravelled last dim fastest)."""
    for d in range(shape.size - 1, -1, -1):
        extent = shape[d]
        offset += (i % extent) * strides[d]
        i //= extent
    return offset


@cuda.jit(cache=True)
def _gather(src, src_offset, src_strides, out_shape, out):
    """out[i] = src[src_offset + sum(index_d(i) * src_strides[d])], out flat, C order."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = src[_unravel_offset(i, out_shape, src_strides, src_offset)]


@cuda.jit(cache=True)
def _scatter(src, src_shape, out, out_offset, out_strides):
    """out[out_offset + sum(index_d(i) * out_strides[d])] = src[i], src flat, C order."""
    for i in range(cuda.grid(1), src.size, cuda.gridsize(1)):
        out[_unravel_offset(i, src_shape, out_strides, out_offset)] = src[i]


@cuda.jit(cache=True)
def _take_rows(src, rows, row_len, out):
    """out row r = src row rows[r] (rows of row_len elements, flat arrays)."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = src[rows[i // row_len] * row_len + i % row_len]


@cuda.jit(cache=True)
def _put_rows(src, rows, row_len, out):
    """out row rows[r] = src row r."""
    for i in range(cuda.grid(1), src.size, cuda.gridsize(1)):
        out[rows[i // row_len] * row_len + i % row_len] = src[i]


@cuda.jit(cache=True)
def _fill(out, value):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = value


@cuda.jit(cache=True)
def _convert(src, out):
    """out[i] = src[i] converted to out's dtype (numba's casts: float -> int truncates,
    anything -> bool is ``!= 0``)."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = src[i]


# --- launchers ----------------------------------------------------------------------------
def _shape(shape) -> tuple[int, ...]:
    return tuple(int(d) for d in shape)


def gather(src, shape, strides, offset: int = 0, dtype=None):
    """A new C-contiguous array of ``shape`` read from ``src``'s buffer through element
    ``strides`` starting at element ``offset``."""
    shape = _shape(shape)
    out = empty(shape, dtype or src.dtype)
    n = out.size
    if n == 0:
        return out
    if not shape:                     # 0-d: one element, a rank-1 walk of length 1
        shape, strides = (1,), (0,)
    launch(_gather, n, flat(src), offset, int_array(strides), int_array(shape),
           flat(out))
    return out


def copy(x):
    """A new device array equal to ``x`` (a device-to-device copy, no kernel)."""
    out = empty(x.shape, x.dtype)
    if x.size:
        out.copy_to_device(x)
    return out


def astype(x, dtype):
    """``x`` converted to ``dtype`` (a copy when it already has it)."""
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return copy(x)
    out = empty(x.shape, dtype)
    launch(_convert, x.size, flat(x), flat(out))
    return out


def fill(shape, value, dtype):
    """A new array of ``shape`` and ``dtype`` with every element ``value``."""
    dtype = np.dtype(dtype)
    out = empty(_shape(shape), dtype)
    # the value in the array's own type, so the kernel stores it without conversion
    launch(_fill, out.size, flat(out), dtype.type(value))
    return out


def zeros_like(x):
    return fill(x.shape, 0, x.dtype)


def transpose(x, perm):
    """``np.transpose(x, perm)`` as a new C-contiguous array."""
    perm = [int(p) for p in perm]
    strides = c_strides(x.shape)
    return gather(x, [x.shape[p] for p in perm], [strides[p] for p in perm])


def broadcast_to(x, shape):
    """``np.broadcast_to(x, shape)`` materialised: broadcast dims are read with stride 0."""
    shape = _shape(shape)
    lead = len(shape) - x.ndim
    if lead < 0:
        raise ValueError(f"cannot broadcast shape {x.shape} to {shape}")
    src_shape = (1,) * lead + _shape(x.shape)
    src_strides = [0] * lead + c_strides(x.shape)
    strides = []
    for d, (have, want) in enumerate(zip(src_shape, shape)):
        if have == want:
            strides.append(src_strides[d])
        elif have == 1:
            strides.append(0)
        else:
            raise ValueError(f"cannot broadcast shape {x.shape} to {shape}")
    return gather(x, shape, strides)


def concat(xs, axis: int):
    """``np.concatenate(xs, axis)``: each input is scattered into its slab of the output."""
    first = xs[0]
    axis %= max(first.ndim, 1)
    shape = list(first.shape)
    shape[axis] = sum(int(x.shape[axis]) for x in xs)
    out = empty(shape, first.dtype)
    out_strides = c_strides(shape)
    start = 0
    for x in xs:
        launch(_scatter, x.size, flat(x), int_array(x.shape), flat(out),
               start * out_strides[axis], int_array(out_strides))
        start += int(x.shape[axis])
    return out


def split(x, sizes, axis: int) -> list:
    """``np.split`` by piece sizes along ``axis``: each piece is a gather at an offset."""
    axis %= max(x.ndim, 1)
    strides = c_strides(x.shape)
    pieces, start = [], 0
    for size in sizes:
        shape = list(x.shape)
        shape[axis] = int(size)
        pieces.append(gather(x, shape, strides, start * strides[axis]))
        start += int(size)
    return pieces


def stack(xs, axis: int = 0):
    """``np.stack(xs, axis)``: a concat of the inputs with a new dim of size 1."""
    first = xs[0]
    axis %= first.ndim + 1
    shape = list(first.shape)
    shape.insert(axis, 1)
    return concat([copy_if_strided(x).reshape(tuple(shape)) for x in xs], axis)


def copy_if_strided(x):
    return x if x.is_c_contiguous() else copy(x)


def take_rows(x, rows):
    """``x[rows]`` for a host list/array of row indices: a new array of len(rows) rows."""
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    out = empty((len(rows),) + _shape(x.shape[1:]), x.dtype)
    if out.size:
        row_len = out.size // len(rows)
        launch(_take_rows, out.size, flat(x), int_array(rows), row_len, flat(out))
    return out


def put_rows(out, rows, src):
    """``out[rows] = src``, writing into ``out``: an array the caller has just made (these
    kernels never write into an op's inputs)."""
    rows = np.asarray(rows, dtype=np.int64).reshape(-1)
    if src.size:
        row_len = src.size // len(rows)
        launch(_put_rows, src.size, flat(src), int_array(rows), row_len, flat(out))
    return out
