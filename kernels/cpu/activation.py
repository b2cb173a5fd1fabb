"""Unary elementwise kernels (activations and friends) and their gradients as numba
ufuncs (see lazy_ufunc.py); callers pass ``out=`` arrays of the input's dtype."""
import math

from .lazy_ufunc import FLOAT_1, FLOAT_2, FLOAT_3, INT_AND_FLOAT_1, ufunc


@ufunc(FLOAT_1)
def relu(x):
    return x if x > 0 else 0


@ufunc(FLOAT_1)
def sigmoid(x):
    # Split by sign so exp never overflows for large |x|.
    if x >= 0:
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


@ufunc(FLOAT_1)
def tanh(x):
    return math.tanh(x)


@ufunc(FLOAT_1)
def exp(x):
    return math.exp(x)


@ufunc(FLOAT_1)
def log(x):
    # error_model="numpy" semantics: log(0) = -inf, log(<0) = nan, no exception
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


@ufunc(INT_AND_FLOAT_1)
def square(x):
    return x * x


@ufunc(FLOAT_3)
def scale_then_bias(x, scale, bias):
    return x * scale + bias


@ufunc(FLOAT_3)
def bias_then_scale(x, scale, bias):
    return (x + bias) * scale


# --- gradients: dX from the forward output (or input) and dOut ---------------------------
@ufunc(FLOAT_2)
def relu_grad(out, dout):
    return dout if out > 0 else 0


@ufunc(FLOAT_2)
def sigmoid_grad(out, dout):
    return dout * out * (1 - out)


@ufunc(FLOAT_2)
def tanh_grad(out, dout):
    return dout * (1 - out * out)


@ufunc(FLOAT_2)
def exp_grad(out, dout):
    return dout * out


@ufunc(FLOAT_2)
def log_grad(x, dout):
    return dout / x


@ufunc(FLOAT_2)
def square_grad(x, dout):
    return dout * 2 * x
