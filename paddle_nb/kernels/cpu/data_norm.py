"""data_norm and its gradient inside a compiled block (paddle_nb/compiler): the steps of
ops/data_norm.py's kernels, column by column. Each is one correctly rounded operation per
element (a division, a square root, a difference, a product), which gives the interpreter's
ufuncs' bits; the column sums are its product with a row of ones (matmul.product).
"""
import math

import numpy as np
from numba import njit

from .matmul import product


@njit(cache=True, fastmath=False, error_model="numpy")
def data_normalized(x, size, total, squares):
    """(Y, Means, Scales): Means = BatchSum / BatchSize, Scales = sqrt(BatchSize /
    BatchSquareSum) (NaN for a negative ratio, as the sqrt kernel), Y = (X - Means) *
    Scales per column."""
    n, c = x.shape
    if size.shape != (c,) or total.shape != (c,) or squares.shape != (c,):
        raise ValueError("data_norm: the statistics do not fit X")
    means, scales = np.empty(c, x.dtype), np.empty(c, x.dtype)
    for j in range(c):
        means[j] = total[j] / size[j]
        ratio = size[j] / squares[j]
        scales[j] = math.sqrt(ratio) if ratio >= 0 else math.nan
    y = np.empty((n, c), x.dtype)
    for i in range(n):
        for j in range(c):
            y[i, j] = (x[i, j] - means[j]) * scales[j]
    return y, means, scales


@njit(cache=True, fastmath=False, error_model="numpy")
def _column_sums(a):
    """[C]: the sums of a [N, C]'s columns, as ones[1, N] @ a."""
    return product(np.ones((1, a.shape[0]), a.dtype), np.ascontiguousarray(a), False, False,
                   1.0).reshape(a.shape[1])


@njit(cache=True, fastmath=False, error_model="numpy")
def data_norm_grads(x, means, scales, dy, epsilon, want_size, want_sum, want_squares):
    """(X@GRAD, BatchSize@GRAD, BatchSum@GRAD, BatchSquareSum@GRAD) (an unset array where
    not wanted): dY * Scales, and this batch's count, column sums and centred square sums
    plus N * epsilon."""
    n, c = x.shape
    if means.shape != (c,) or scales.shape != (c,) or dy.shape != (n, c):
        raise ValueError("data_norm_grad: Means, Scales or Y@GRAD do not fit X")
    dx = np.empty((n, c), x.dtype)
    for i in range(n):
        for j in range(c):
            dx[i, j] = dy[i, j] * scales[j]
    count = np.full(c, n, x.dtype) if want_size else np.empty(c, x.dtype)
    sums = _column_sums(x) if want_sum else np.empty(c, x.dtype)
    squares = np.empty(c, x.dtype)
    if want_squares:
        d = np.empty((n, c), x.dtype)
        for i in range(n):
            for j in range(c):
                centred = x[i, j] - means[j]
                d[i, j] = centred * centred
        eps = x.dtype.type(n) * x.dtype.type(epsilon)
        squares = _column_sums(d) + eps
    return dx, count, sums, squares
