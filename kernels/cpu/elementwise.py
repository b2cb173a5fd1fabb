"""Binary elementwise kernels as numba ufuncs: numpy broadcasting for free, one compiled
loop per dtype. Called with ``out=`` so the result keeps the operands' dtype."""
from numba import vectorize

# numpy picks the first loop the inputs cast to safely, and int32 -> float64 is safe:
# integer loops must come before float ones or int inputs would run in float64.
_ARITH = ["int32(int32, int32)", "int64(int64, int64)",
          "float32(float32, float32)", "float64(float64, float64)"]
_COMPARE = ["boolean(boolean, boolean)", "boolean(int32, int32)", "boolean(int64, int64)",
            "boolean(float32, float32)", "boolean(float64, float64)"]
_LOGIC = ["boolean(boolean, boolean)"]


@vectorize(_ARITH, cache=True)
def add(x, y):
    return x + y


@vectorize(_ARITH, cache=True)
def sub(x, y):
    return x - y


@vectorize(_ARITH, cache=True)
def mul(x, y):
    return x * y


@vectorize(["float32(float32, float32)", "float64(float64, float64)"], cache=True)
def div(x, y):
    return x / y


@vectorize(["int32(int32, int32)", "int64(int64, int64)"], cache=True)
def floor_div(x, y):   # integer elementwise_div truncates toward zero, as Paddle's C++ does
    q = abs(x) // abs(y) if y != 0 else 0
    return q if (x >= 0) == (y >= 0) else -q


@vectorize(_COMPARE, cache=True)
def greater_than(x, y):
    return x > y


@vectorize(_COMPARE, cache=True)
def less_than(x, y):
    return x < y


@vectorize(_COMPARE, cache=True)
def equal(x, y):
    return x == y


@vectorize(_COMPARE, cache=True)
def not_equal(x, y):
    return x != y


@vectorize(_LOGIC, cache=True)
def logical_and(x, y):
    return x and y


@vectorize(_LOGIC, cache=True)
def logical_or(x, y):
    return x or y


@vectorize(["boolean(boolean)"], cache=True)
def logical_not(x):
    return not x
