"""Binary elementwise kernels as numba ufuncs: numpy broadcasting for free, one loop per
dtype (see lazy_ufunc.py). Callers pass ``out=`` arrays of the operands' dtype."""
from .lazy_ufunc import BOOL_1, BOOL_2, COMPARE_2, FLOAT_2, INT_2, INT_AND_FLOAT_2, ufunc


@ufunc(INT_AND_FLOAT_2)
def add(x, y):
    return x + y


@ufunc(INT_AND_FLOAT_2)
def sub(x, y):
    return x - y


@ufunc(INT_AND_FLOAT_2)
def mul(x, y):
    return x * y


@ufunc(FLOAT_2)
def div(x, y):
    return x / y


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
