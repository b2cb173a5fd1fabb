"""Unary elementwise kernels (activations and friends) as numba ufuncs."""
import math

from numba import vectorize

_FLOAT = ["float32(float32)", "float64(float64)"]


@vectorize(_FLOAT, cache=True)
def relu(x):
    return x if x > 0 else 0


@vectorize(_FLOAT, cache=True)
def sigmoid(x):
    # Split by sign so exp never overflows for large |x|.
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


@vectorize(_FLOAT, cache=True)
def tanh(x):
    return math.tanh(x)


@vectorize(_FLOAT, cache=True)
def exp(x):
    return math.exp(x)


@vectorize(_FLOAT, cache=True)
def log(x):
    # error_model="numpy" semantics: log(0) = -inf, log(<0) = nan, no exception
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


# integer loops first: see elementwise.py on numpy's loop order
@vectorize(["int32(int32)", "int64(int64)"] + _FLOAT, cache=True)
def square(x):
    return x * x


@vectorize(["float32(float32, float32, float32)", "float64(float64, float64, float64)"],
           cache=True)
def scale_then_bias(x, scale, bias):
    return x * scale + bias


@vectorize(["float32(float32, float32, float32)", "float64(float64, float64, float64)"],
           cache=True)
def bias_then_scale(x, scale, bias):
    return (x + bias) * scale
