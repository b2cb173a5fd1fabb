"""Binary elementwise kernels as numba ufuncs: numpy broadcasting for free.

They are dynamic ufuncs (no signature list): a loop is compiled (and cached on disk) the
first time a dtype is used, so importing costs nothing and a process loads only the loops
it needs. Numba's scalar typing may widen (int32 + int32 runs as int64), so callers pass
``out=`` arrays of the operands' dtype and numpy casts the result back.
"""
from numba import vectorize

@vectorize(cache=True)
def add(x, y):
    return x + y


@vectorize(cache=True)
def sub(x, y):
    return x - y


@vectorize(cache=True)
def mul(x, y):
    return x * y


@vectorize(cache=True)
def div(x, y):
    return x / y


@vectorize(cache=True)
def floor_div(x, y):   # integer elementwise_div truncates toward zero, as Paddle's C++ does
    q = abs(x) // abs(y) if y != 0 else 0
    return q if (x >= 0) == (y >= 0) else -q


@vectorize(cache=True)
def greater_than(x, y):
    return x > y


@vectorize(cache=True)
def less_than(x, y):
    return x < y


@vectorize(cache=True)
def equal(x, y):
    return x == y


@vectorize(cache=True)
def not_equal(x, y):
    return x != y


@vectorize(cache=True)
def logical_and(x, y):
    return x and y


@vectorize(cache=True)
def logical_or(x, y):
    return x or y


@vectorize(cache=True)
def logical_not(x):
    return not x
