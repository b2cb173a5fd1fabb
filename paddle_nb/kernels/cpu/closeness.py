"""The closeness test of isclose and allclose (ops/closeness.py), and the whole-tensor
answers of allclose and equal_all in a compiled block.

``is_close`` is a @pointwise function (the interpreter's kernel is
``pointwise.KERNELS["is_close"]``; this module keeps the scalar function). allclose and
equal_all in a compiled block count the elements whose scalar test fails, as the
interpreter's kernels count them (ops/bool_reduce.py's flags and a sum): counts are exact,
so the answers are the interpreter's.
"""
import numpy as np
from numba import njit

from .reduce import pointwise_scalar

_CLOSE_TYPES = [f"boolean({t}, {t}, float64, float64, boolean)" for t in ("float32", "float64")]


@pointwise_scalar(_CLOSE_TYPES, fastmath=False, params=3)
def is_close(x, y, rtol, atol, equal_nan):
    a, b = x * 1.0, y * 1.0                        # in float64, as Paddle's
    if a != a or b != b:
        return equal_nan and a != a and b != b
    if a == b:
        return True                                # equal infinities too
    return abs(a - b) <= atol + rtol * abs(b)


@njit(cache=True, fastmath=False, error_model="numpy")
def all_close(x, y, rtol, atol, equal_nan):
    """allclose: a 0-D bool, whether is_close holds for every pair (x and y of one shape)."""
    if x.shape != y.shape:
        raise ValueError("allclose: Other has another shape than Input")
    a, b = np.ascontiguousarray(x).reshape(x.size), np.ascontiguousarray(y).reshape(y.size)
    misses = 0
    for i in range(a.size):
        if not is_close(a[i], b[i], rtol, atol, equal_nan):
            misses += 1
    return np.full((), misses == 0)


@njit(cache=True, fastmath=False, error_model="numpy")
def all_equal(x, y):
    """equal_all for x and y of one rank: a 0-D bool (False for another shape). Each pair
    is compared as the ``equal`` op's scalar function compares it (x == y, NaN unequal)."""
    if x.shape != y.shape:
        return np.full((), False)
    a, b = np.ascontiguousarray(x).reshape(x.size), np.ascontiguousarray(y).reshape(y.size)
    misses = 0
    for i in range(a.size):
        if not a[i] == b[i]:
            misses += 1
    return np.full((), misses == 0)
