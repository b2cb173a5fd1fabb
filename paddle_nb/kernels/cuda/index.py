"""Kernels that index by data: gather along an axis and its scatter-add gradient, one-hot,
and the position of each row's largest or smallest value.

Tensors are seen as ``(outer, n, inner)`` around the indexed axis, so one kernel serves
every axis. The indices were range-checked by the op before launch (kernels/check.py):
these kernels read and write where the indices say, unchecked, as numba kernels do.
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .copy import fill
from .device import empty, flat, launch_1d


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
    if out.size:
        blocks, threads = launch_1d(out.size)
        _gather[blocks, threads](flat(x), flat(index), n, inner, flat(out))
    return out


@cuda.jit(cache=True)
def _scatter_add(dout, index, n, inner, dx):
    for i in range(cuda.grid(1), dout.size, cuda.gridsize(1)):
        cuda.atomic.add(dx, _source(i, index, n, inner), dout[i])


def scatter_add(shape, index, dout, axis: int):
    """Zeros of ``shape`` with ``dout``'s slices added at ``index`` along ``axis`` (a
    repeated index adds up): the gradient of ``gather``."""
    shape = tuple(int(d) for d in shape)
    dx = fill(shape, 0, dout.dtype)
    if dout.size:
        blocks, threads = launch_1d(dout.size)
        _scatter_add[blocks, threads](flat(dout), flat(index), shape[axis],
                                      int(np.prod(shape[axis + 1:])), flat(dx))
    return dx


@cuda.jit(cache=True)
def _one_hot(x, depth, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        out[i * depth + x[i]] = 1


def one_hot(x, depth: int, dtype):
    """x's shape + [depth], 1 at each value's position (values checked to be < depth)."""
    out = fill(tuple(int(d) for d in x.shape) + (depth,), 0, dtype)
    if x.size:
        blocks, threads = launch_1d(x.size)
        _one_hot[blocks, threads](flat(x), depth, flat(out))
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
    if out.size:
        blocks, threads = launch_1d(out.size)
        _arg_extreme[blocks, threads](flat(x), n, inner, largest, flat(out))
    return out
