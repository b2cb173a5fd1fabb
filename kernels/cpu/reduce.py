"""Reductions over the last axis of a 2-D view ``(outer, inner)``; callers move the
reduced axes last. Accumulate in float64 so long sums of float32 stay accurate."""
import numpy as np
from numba import njit, prange


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def row_sum(a):
    outer, inner = a.shape
    out = np.empty(outer, dtype=a.dtype)
    for i in prange(outer):
        s = 0.0
        for j in range(inner):
            s += a[i, j]
        out[i] = s
    return out


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def row_softmax(a):
    """Numerically stable softmax of each row: exp(x - max) / sum."""
    rows, cols = a.shape
    out = np.empty_like(a)
    for i in prange(rows):
        m = a[i, 0]
        for j in range(1, cols):
            if a[i, j] > m:
                m = a[i, j]
        s = 0.0
        for j in range(cols):
            e = np.exp(a[i, j] - m)
            out[i, j] = e
            s += e
        inv = 1.0 / s
        for j in range(cols):
            out[i, j] = out[i, j] * inv
    return out
