"""bilinear_tensor_product and its gradient inside a compiled block (paddle_nb/compiler):
ops/bilinear_tensor_product.py's products, step by step, through matmul.py's ``product``
(a 2-D matmul as the places' matmul runs it) and ``batched_product`` (a stack of them, as
matmul_nd runs it), so the numbers are the interpreter's, bit for bit. The shapes are
checked here (the interpreter's rerun names the op); the batch size is the run's.
"""
import numpy as np
from numba import njit

from .matmul import batched_product, product


@njit(cache=True, fastmath=False, error_model="numpy")
def _dims(x, y, w):
    """(B, K, M, N), checked: X [B, M], Y [B, N], Weight [K, M, N]."""
    b, k, m, n = x.shape[0], w.shape[0], w.shape[1], w.shape[2]
    if x.shape[1] != m or y.shape != (b, n):
        raise ValueError("bilinear_tensor_product: X and Y do not fit Weight")
    return b, k, m, n


@njit(cache=True, fastmath=False, error_model="numpy")
def _rows_times_slices(x, w, b, k, m, n):
    """T [B, K, N]: T[b, k] = X[b] . Weight[k] (one [B, M] x [M, K*N] product)."""
    w2 = np.ascontiguousarray(w.transpose((1, 0, 2))).reshape((m, k * n))
    return product(np.ascontiguousarray(x), w2, False, False, 1.0).reshape((b, k, n))


@njit(cache=True, fastmath=False, error_model="numpy")
def bilinear(x, y, w):
    """Out [B, K]: Out[b, k] = X[b] . Weight[k] . Y[b]^T."""
    b, k, m, n = _dims(x, y, w)
    t = _rows_times_slices(x, w, b, k, m, n)
    yc = np.ascontiguousarray(y).reshape((b, n, 1))
    return batched_product(t, yc, False, False, 1.0).reshape((b, k))


@njit(cache=True, fastmath=False, error_model="numpy")
def bilinear_biased(x, y, w, bias):
    """Out [B, K] plus Bias [1, K] on each row."""
    if bias.shape != (1, w.shape[0]):
        raise ValueError("bilinear_tensor_product: Bias must be [1, K]")
    return bilinear(x, y, w) + bias


@njit(cache=True, fastmath=False, error_model="numpy")
def bilinear_grads(x, y, w, dout, want_dx, want_dy, want_dw, want_dbias):
    """(dX, dY, dWeight, dBias) (an unset array where not wanted)."""
    b, k, m, n = _dims(x, y, w)
    if dout.shape != (b, k):
        raise ValueError("bilinear_tensor_product_grad: Out@GRAD must be [B, K]")
    d = np.ascontiguousarray(dout)
    drow = d.reshape((b, 1, k))
    xc, yc = np.ascontiguousarray(x), np.ascontiguousarray(y)
    dx, dy = np.empty((b, m), x.dtype), np.empty((b, n), x.dtype)
    dw, dbias = np.empty((k, m, n), x.dtype), np.empty((1, k), x.dtype)
    if want_dx:            # S[b, k, :] = Weight[k] . Y[b]
        s = product(yc, np.ascontiguousarray(w).reshape((k * m, n)), False, True, 1.0)
        dx = batched_product(drow, s.reshape((b, k, m)), False, False, 1.0).reshape((b, m))
    if want_dy:
        t = _rows_times_slices(xc, w, b, k, m, n)
        dy = batched_product(drow, t, False, False, 1.0).reshape((b, n))
    if want_dw:            # dOut^T . (X[b] outer Y[b])
        outer = batched_product(xc.reshape((b, m, 1)), yc.reshape((b, 1, n)), False, False,
                                1.0)
        dw = product(d, outer.reshape((b, m * n)), True, False, 1.0).reshape((k, m, n))
    if want_dbias:         # the column sums, as ones[1, B] . dOut
        dbias = product(np.ones((1, b), x.dtype), d, False, False, 1.0)
    return dx, dy, dw, dbias
