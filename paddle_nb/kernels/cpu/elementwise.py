"""Binary elementwise kernels as numba ufuncs: numpy broadcasting for free, one loop per
dtype (see lazy_ufunc.py). Callers pass ``out=`` arrays of the operands' dtype.

add/sub/mul/div have a ``prange`` twin (a loop over flat arrays) for large same-shape
contiguous operands; the ufunc and the twin call the same scalar ``@njit`` function."""
from numba import njit, prange

from .lazy_ufunc import BOOL_1, BOOL_2, COMPARE_2, FLOAT_2, INT_2, INT_AND_FLOAT_2, ufunc

# Elements from which the prange twin runs (2 threads; memory-bound loops): the first
# measured power of 2 where it took <= ~0.8x the serial loop's time.
MIN_PARALLEL = 65_536       # add float32: measured crossover ~32k elements


@njit(cache=True, fastmath=True, error_model="numpy")
def _add(x, y):
    return x + y


@njit(cache=True, fastmath=True, error_model="numpy")
def _sub(x, y):
    return x - y


@njit(cache=True, fastmath=True, error_model="numpy")
def _mul(x, y):
    return x * y


# fastmath=False, said explicitly: "arcp" may round x / y as x * (1/y), and a callee that
# names no fastmath inherits the flags of whichever caller compiled it first.
@njit(cache=True, fastmath=False, error_model="numpy")
def _div(x, y):
    return x / y


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _add_parallel(x, y, out):
    for i in prange(out.size):
        out[i] = _add(x[i], y[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _sub_parallel(x, y, out):
    for i in prange(out.size):
        out[i] = _sub(x[i], y[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _mul_parallel(x, y, out):
    for i in prange(out.size):
        out[i] = _mul(x[i], y[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _div_parallel(x, y, out):
    for i in prange(out.size):
        out[i] = _div(x[i], y[i])


@ufunc(INT_AND_FLOAT_2, _add_parallel, MIN_PARALLEL)
def add(x, y):
    return _add(x, y)


@ufunc(INT_AND_FLOAT_2, _sub_parallel, MIN_PARALLEL)
def sub(x, y):
    return _sub(x, y)


@ufunc(INT_AND_FLOAT_2, _mul_parallel, MIN_PARALLEL)
def mul(x, y):
    return _mul(x, y)


@ufunc(FLOAT_2, _div_parallel, MIN_PARALLEL)
def div(x, y):
    return _div(x, y)


@ufunc(INT_2)
def floor_div(x, y):   # integer elementwise_div truncates toward zero, as Paddle's C++ does
    q = abs(x) // abs(y) if y != 0 else 0
    return q if (x >= 0) == (y >= 0) else -q


@ufunc(COMPARE_2)
def greater_than(x, y):
    return x > y


@ufunc(COMPARE_2)
def less_than(x, y):
    return x < y


@ufunc(COMPARE_2)
def equal(x, y):
    return x == y


@ufunc(COMPARE_2)
def not_equal(x, y):
    return x != y


@ufunc(BOOL_2)
def logical_and(x, y):
    return x and y


@ufunc(BOOL_2)
def logical_or(x, y):
    return x or y


@ufunc(BOOL_1)
def logical_not(x):
    return not x
