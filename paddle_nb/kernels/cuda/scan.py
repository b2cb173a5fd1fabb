"""Running sums on the device: cumsum along an axis, and range (an arithmetic progression,
the running sum of a constant step, computed directly as ``start + i * step``).

cumsum sees its tensor as ``(outer, n, inner)`` around the summed axis, so one kernel
serves every axis: one thread per (outer, inner) line walks its n elements in order
(forward or reversed), as the CPU's sequential sum does, so both round the same way.
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .device import empty, flat, launch


@cuda.jit(cache=True)
def _cumsum(x, n, inner, exclusive, reverse, zero, out):
    for line in range(cuda.grid(1), out.size // n, cuda.gridsize(1)):
        base = (line // inner) * n * inner + line % inner
        total = zero                          # 0 in x's type (x - x is NaN for inf)
        for k in range(n):
            j = n - 1 - k if reverse else k
            at = base + j * inner
            if exclusive:
                out[at] = total
                total += x[at]
            else:
                total += x[at]
                out[at] = total


def cumsum(x, axis: int, exclusive: bool, reverse: bool):
    """The running sums of ``x`` along ``axis`` (an axis of x; 0-d: x itself), in x's
    dtype; ``exclusive``: each leaves its own element out; ``reverse``: from the end."""
    shape = tuple(int(d) for d in x.shape)
    out = empty(shape, x.dtype)
    if out.size == 0:
        return out
    n = shape[axis] if shape else 1
    inner = int(np.prod(shape[axis + 1:])) if shape else 1
    launch(_cumsum, out.size // n, flat(x), n, inner, exclusive, reverse, x.dtype.type(0),
           flat(out))
    return out


@cuda.jit(cache=True)
def _arange(start, step, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = start + i * step


def arange(size: int, start, step, dtype):
    """``[start, start + step, ...]``, ``size`` values of ``dtype`` (start and step:
    int64 for integer types, float64 for floats, so each value is rounded once)."""
    out = empty((size,), dtype)
    launch(_arange, size, start, step, out)
    return out
