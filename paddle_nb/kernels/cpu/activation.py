"""Unary elementwise kernels (activations and friends) and their gradients as numba
ufuncs (see lazy_ufunc.py); callers pass ``out=`` arrays of the input's dtype.

Each kernel keeps its scalar code in one module-level ``@njit`` function (``_sigmoid``...)
that both its ufunc (the serial variant) and its ``prange`` twin (``_sigmoid_parallel``, a
loop over flat contiguous arrays) call, so both compute the same values. exp / tanh /
sigmoid of float32 use the fast approximations of fastmath32.py (float64: libm); their
flags, and relu's, are ``FASTMATH32`` (fastmath without "nnan"/"ninf", so NaN and inf come
out as numpy gives them).
"""
import math

from numba import njit, prange

from .fastmath32 import FASTMATH32, fexp, fsigmoid, ftanh
from .lazy_ufunc import FLOAT_1, FLOAT_2, FLOAT_3, INT_AND_FLOAT_1, ufunc

# Elements from which the prange twin runs: the first measured size (float32, 2 threads,
# powers of 2) where it took <= ~0.8x the serial loop's time.
MIN_PARALLEL_MATH = 32_768     # exp/tanh/sigmoid: measured crossover 16-24k elements
MIN_PARALLEL_LOG = 4_096       # log (a libm call per element): measured crossover < 2k
MIN_PARALLEL_CHEAP = 131_072   # relu/square: measured crossover ~64k elements
MIN_PARALLEL_GRAD = 65_536     # the gradients (2 reads, 1 write): measured crossover ~24k


# --- scalar code, shared by each ufunc and its twin -----------------------------------------
# relu and its gradient let NaN through as numpy's maximum and Paddle do: the compares are
# written so that NaN takes the "keep" side (a NaN compares false), and their flags are
# FASTMATH32, without "nnan", which would let LLVM assume the compare never sees a NaN.
@njit(cache=True, fastmath=FASTMATH32, error_model="numpy")
def _relu(x):
    return x if not x <= 0 else 0           # NaN -> NaN (x > 0 would give 0)


@njit(cache=True, fastmath=FASTMATH32, error_model="numpy")
def _sigmoid(x):
    return fsigmoid(x)


@njit(cache=True, fastmath=FASTMATH32, error_model="numpy")
def _tanh(x):
    return ftanh(x)


@njit(cache=True, fastmath=FASTMATH32, error_model="numpy")
def _exp(x):
    return fexp(x)


@njit(cache=True, fastmath=FASTMATH32, error_model="numpy")
def _log(x):
    # numpy semantics without a libm error path: log(0) = -inf, log(<0) = nan
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


@njit(cache=True, fastmath=True, error_model="numpy")
def _square(x):
    return x * x


@njit(cache=True, fastmath=FASTMATH32, error_model="numpy")
def _relu_grad(out, dout):
    # Paddle's dout * (out > 0): a NaN (or inf) dout stays NaN where the unit is off too
    return dout if out > 0 else dout * 0


@njit(cache=True, fastmath=True, error_model="numpy")
def _sigmoid_grad(out, dout):
    return dout * out * (1 - out)


@njit(cache=True, fastmath=True, error_model="numpy")
def _tanh_grad(out, dout):
    return dout * (1 - out * out)


@njit(cache=True, fastmath=True, error_model="numpy")
def _exp_grad(out, dout):
    return dout * out


# fastmath=False, said explicitly: "arcp" may round x / y as x * (1/y), and a callee that
# names no fastmath inherits the flags of whichever caller compiled it first.
@njit(cache=True, fastmath=False, error_model="numpy")
def _log_grad(x, dout):
    return dout / x


@njit(cache=True, fastmath=True, error_model="numpy")
def _square_grad(x, dout):
    return dout * 2 * x


# --- twins: the same scalar code in prange loops over flat arrays -------------------------
@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _relu_parallel(x, out):
    for i in prange(out.size):
        out[i] = _relu(x[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _sigmoid_parallel(x, out):
    for i in prange(out.size):
        out[i] = _sigmoid(x[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _tanh_parallel(x, out):
    for i in prange(out.size):
        out[i] = _tanh(x[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _exp_parallel(x, out):
    for i in prange(out.size):
        out[i] = _exp(x[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _log_parallel(x, out):
    for i in prange(out.size):
        out[i] = _log(x[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _square_parallel(x, out):
    for i in prange(out.size):
        out[i] = _square(x[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _relu_grad_parallel(out_, dout, out):
    for i in prange(out.size):
        out[i] = _relu_grad(out_[i], dout[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _sigmoid_grad_parallel(out_, dout, out):
    for i in prange(out.size):
        out[i] = _sigmoid_grad(out_[i], dout[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _tanh_grad_parallel(out_, dout, out):
    for i in prange(out.size):
        out[i] = _tanh_grad(out_[i], dout[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _exp_grad_parallel(out_, dout, out):
    for i in prange(out.size):
        out[i] = _exp_grad(out_[i], dout[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _log_grad_parallel(x, dout, out):
    for i in prange(out.size):
        out[i] = _log_grad(x[i], dout[i])


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def _square_grad_parallel(x, dout, out):
    for i in prange(out.size):
        out[i] = _square_grad(x[i], dout[i])


# --- the ufuncs: the entry points the ops call --------------------------------------------
@ufunc(FLOAT_1, _relu_parallel, MIN_PARALLEL_CHEAP)
def relu(x):
    return _relu(x)


@ufunc(FLOAT_1, _sigmoid_parallel, MIN_PARALLEL_MATH)
def sigmoid(x):
    return _sigmoid(x)


@ufunc(FLOAT_1, _tanh_parallel, MIN_PARALLEL_MATH)
def tanh(x):
    return _tanh(x)


@ufunc(FLOAT_1, _exp_parallel, MIN_PARALLEL_MATH)
def exp(x):
    return _exp(x)


@ufunc(FLOAT_1, _log_parallel, MIN_PARALLEL_LOG)
def log(x):
    return _log(x)


@ufunc(INT_AND_FLOAT_1, _square_parallel, MIN_PARALLEL_CHEAP)
def square(x):
    return _square(x)


@ufunc(FLOAT_3)
def scale_then_bias(x, scale, bias):
    return x * scale + bias


@ufunc(FLOAT_3)
def bias_then_scale(x, scale, bias):
    return (x + bias) * scale


# --- gradients: dX from the forward output (or input) and dOut ---------------------------
@ufunc(FLOAT_2, _relu_grad_parallel, MIN_PARALLEL_GRAD)
def relu_grad(out, dout):
    return _relu_grad(out, dout)


@ufunc(FLOAT_2, _sigmoid_grad_parallel, MIN_PARALLEL_GRAD)
def sigmoid_grad(out, dout):
    return _sigmoid_grad(out, dout)


@ufunc(FLOAT_2, _tanh_grad_parallel, MIN_PARALLEL_GRAD)
def tanh_grad(out, dout):
    return _tanh_grad(out, dout)


@ufunc(FLOAT_2, _exp_grad_parallel, MIN_PARALLEL_GRAD)
def exp_grad(out, dout):
    return _exp_grad(out, dout)


@ufunc(FLOAT_2, _log_grad_parallel, MIN_PARALLEL_GRAD)
def log_grad(x, dout):
    return _log_grad(x, dout)


@ufunc(FLOAT_2, _square_grad_parallel, MIN_PARALLEL_GRAD)
def square_grad(x, dout):
    return _square_grad(x, dout)
