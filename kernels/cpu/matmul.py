"""Matrix products: BLAS through ``np.dot`` inside njit (numba calls scipy's BLAS).

Both entry points tell threads.py that BLAS ran, so the prange kernels stay serial while
BLAS's threads may still hold the cores.
"""
import numpy as np
from numba import njit, prange

from .threads import note_blas, parallel_ok

# batched_matmul runs a prange over the batch only for many small products: each one a
# single-threaded BLAS call, so the two thread pools do not fight over the 2 cores.
MIN_PARALLEL_BATCH = 8           # at least this many products ...
MAX_PARALLEL_WORK = 65_536       # ... of at most this many multiply-adds (m*k*n) each;
# measured crossovers (float32, 2 threads): the prange pays from 32 products of 16x16x16;
# from 128x128x128 up it stalls (8 ms instead of 0.45 ms) as BLAS threads itself.


@njit(cache=True, fastmath=True, error_model="numpy")
def _matmul2d(a, b):
    return np.dot(a, b)


def matmul2d(a, b):
    """(m, k) @ (k, n) for float32/float64 C-contiguous matrices."""
    out = _matmul2d(a, b)
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
    small = a.shape[1] * a.shape[2] * b.shape[2] <= MAX_PARALLEL_WORK
    if small and a.shape[0] >= MIN_PARALLEL_BATCH and parallel_ok():
        return _batched_matmul_parallel(a, b)
    out = _batched_matmul_serial(a, b)
    if not small:
        note_blas()
    return out
