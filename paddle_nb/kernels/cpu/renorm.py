"""renorm's math (ops/renorm.py): each slice of X along an axis scaled so that its p-norm
is at most max_norm, its gradient, and both in a compiled block.

The elementwise parts are @pointwise functions (``pointwise_scalar``: the interpreter's
kernels are ``pointwise.KERNELS[name]``, over the places' ``sum_axes``; this module keeps
the scalar functions). In a compiled block the op and its gradient are one njit function
each (``renormed``, ``renormed_grad``): X's slices as the rows of a matrix (the axis moved
first, as ``sum_axes`` moves it), the same scalar functions on each element and the same
serial row sum (reduce._row_sum_serial, which the interpreter's ``sum_axes`` runs), so the
numbers are the interpreter's bit for bit.
"""
import numpy as np
from numba import njit

from .lazy_ufunc import FLOAT_2, FLOAT_3
from .reduce import _row_sum_serial, pointwise_scalar, rows_over, unmoved

FLOAT_6 = ["float32(float32, float32, float32, float32, float32, float32)",
           "float64(float64, float64, float64, float64, float64, float64)"]
EPSILON = 1e-7                      # Paddle's, added to the norm before dividing by it


@pointwise_scalar(FLOAT_2, fastmath=False, params=1)
def renorm_abs_pow(x, p):
    return abs(x) ** p


@pointwise_scalar(FLOAT_3, fastmath=False, params=2)
def renorm_scale(power_sum, p, max_norm):
    norm = power_sum ** (1.0 / p)
    return max_norm / (norm + EPSILON) if norm > max_norm else 1.0   # (a NaN norm too)


@pointwise_scalar(FLOAT_2)
def renorm_times(x, y):
    return x * y


@pointwise_scalar(FLOAT_6, fastmath=False, params=2)
def renorm_grad(x, dout, power_sum, dot, p, max_norm):
    # dot: sum of dOut * X over x's slice
    norm = power_sum ** (1.0 / p)
    if not norm > max_norm:
        return dout
    scale = max_norm / (norm + EPSILON)
    if x == 0:
        return dout * scale
    d_norm = norm ** (1.0 - p) * abs(x) ** (p - 1.0) * (1.0 if x > 0 else -1.0)
    return dout * scale - dot * max_norm / ((norm + EPSILON) * (norm + EPSILON)) * d_norm


# --- in a compiled block (kernels/lowered.py) ---------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def _power_sums(rows, p):
    """sum |x|^p of each row (slice), as the interpreter's sum_axes adds them."""
    powered = np.empty_like(rows)
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            powered[i, j] = renorm_abs_pow(rows[i, j], p)
    return _row_sum_serial(powered)


@njit(cache=True, fastmath=False, error_model="numpy")
def renormed(x, order, inverse, p, max_norm):
    """Out: ``order`` puts the axis first; ``inverse`` is its inverse."""
    rows = rows_over(x, order, 1)
    sums = _power_sums(rows, p)
    out = np.empty_like(rows)
    for i in range(rows.shape[0]):
        scale = x.dtype.type(renorm_scale(sums[i], p, max_norm))  # stored as the ufunc stores it
        for j in range(rows.shape[1]):
            out[i, j] = renorm_times(rows[i, j], scale)
    return unmoved(out, x, order, inverse)


@njit(cache=True, fastmath=False, error_model="numpy")
def renormed_grad(x, dout, order, inverse, p, max_norm):
    """X@GRAD, with ``order`` and ``inverse`` as renormed's."""
    rows, d = rows_over(x, order, 1), rows_over(dout, order, 1)
    sums = _power_sums(rows, p)
    products = np.empty_like(rows)
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            products[i, j] = renorm_times(d[i, j], rows[i, j])
    dots = _row_sum_serial(products)
    dx = np.empty_like(rows)
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            dx[i, j] = renorm_grad(rows[i, j], d[i, j], sums[i], dots[i], p, max_norm)
    return unmoved(dx, x, order, inverse)
