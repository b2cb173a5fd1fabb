"""Matrix products: BLAS through ``np.dot`` inside njit (numba calls scipy's BLAS)."""
import numpy as np
from numba import njit, prange


@njit(cache=True, fastmath=True, error_model="numpy")
def matmul2d(a, b):
    """(m, k) @ (k, n) for float32/float64 C-contiguous matrices."""
    return np.dot(a, b)


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def batched_matmul(a, b):
    """(batch, m, k) @ (batch, k, n), one BLAS call per batch item."""
    batch, m = a.shape[0], a.shape[1]
    n = b.shape[2]
    out = np.empty((batch, m, n), dtype=a.dtype)
    for i in prange(batch):
        out[i] = np.dot(a[i], b[i])
    return out
