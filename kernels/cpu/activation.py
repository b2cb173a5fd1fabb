"""Unary elementwise kernels (activations and friends) as numba dynamic ufuncs; see
elementwise.py for why callers pass ``out=``."""
import math

from numba import vectorize


@vectorize(cache=True)
def relu(x):
    return x if x > 0 else 0


@vectorize(cache=True)
def sigmoid(x):
    # Split by sign so exp never overflows for large |x|.
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


@vectorize(cache=True)
def tanh(x):
    return math.tanh(x)


@vectorize(cache=True)
def exp(x):
    return math.exp(x)


@vectorize(cache=True)
def log(x):
    # error_model="numpy" semantics: log(0) = -inf, log(<0) = nan, no exception
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


@vectorize(cache=True)
def square(x):
    return x * x


@vectorize(cache=True)
def scale_then_bias(x, scale, bias):
    return x * scale + bias


@vectorize(cache=True)
def bias_then_scale(x, scale, bias):
    return (x + bias) * scale
