"""Matrix products: BLAS through ``np.dot`` inside njit (numba calls scipy's BLAS).

Both entry points tell threads.py that BLAS ran, so the prange kernels stay serial while
BLAS's threads may still hold the cores.
"""
import numpy as np
from numba import njit, prange

from .threads import note_blas, parallel_ok

# batched_matmul runs a prange over the batch only for many small products: each one a
# single-threaded BLAS call, so the two thread pools do not fight over the 2 cores.
MIN_PARALLEL_WORK = 262_144      # all products together (batch*m*k*n): measured crossover
#                                  ~200k (64 x 16^3: 0.86x serial; 64 x 8^3: 1.2x)
MAX_PARALLEL_WORK = 262_144      # one product: 64^3 still 0.52x serial; from 128^3 BLAS
#                                  threads itself and the prange stalls (8 ms, not 0.45)


@njit(cache=True, fastmath=True, error_model="numpy")
def _matmul2d(a, b):
    return np.dot(a, b)


@njit(cache=True, fastmath=True, error_model="numpy")
def _matmul2d_into(a, b, out):
    np.dot(a, b, out)


def matmul2d(a, b, out=None):
    """(m, k) @ (k, n) for float32/float64 matrices, each C- or F-contiguous (a transpose
    needs no copy); written into ``out`` (C-contiguous, (m, n), their dtype) when given."""
    if out is None:
        out = _matmul2d(a, b)
    else:
        _matmul2d_into(a, b, out)
    note_blas()
    return out


@njit(cache=True, fastmath=True, error_model="numpy")
def _batched_matmul_serial(a, b):
    batch, m = a.shape[0], a.shape[1]
    out = np.empty((batch, m, b.shape[2]), dtype=a.dtype)
    for i in range(batch):
        np.dot(a[i], b[i], out[i])
    return out


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _batched_matmul_parallel(a, b):
    batch, m = a.shape[0], a.shape[1]
    out = np.empty((batch, m, b.shape[2]), dtype=a.dtype)
    for i in prange(batch):
        np.dot(a[i], b[i], out[i])
    return out


def batched_matmul(a, b):
    """(batch, m, k) @ (batch, k, n), one BLAS call per batch item."""
    work = a.shape[1] * a.shape[2] * b.shape[2]
    small = work <= MAX_PARALLEL_WORK
    if small and a.shape[0] > 1 and a.shape[0] * work >= MIN_PARALLEL_WORK and parallel_ok():
        return _batched_matmul_parallel(a, b)
    out = _batched_matmul_serial(a, b)
    if not small:
        note_blas()
    return out
