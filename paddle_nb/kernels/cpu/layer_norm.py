"""layer_norm on the CPU: X seen as a matrix ``(rows, cols)`` (ops/layer_norm.py: the dims
before ``begin_norm_axis`` make the rows), each row normalized over its own values, each
column with its own scale and bias.

Forward, per row i: mean, the biased variance (two-pass: the sum of squared deviations
from the mean, never E[x^2] - E[x]^2, which cancels for values far from 0), then
``y = (x - mean) * r * scale + bias`` with ``r = 1 / sqrt(var + epsilon)``. Sums
accumulate in float64 whatever X's type. Rows are independent, so the parallel twin
splits them (prange; twins.py).

Gradient, per row, with ``x_hat = (x - mean) * r`` and ``h = dY * scale``:
``dX = r * (h - mean(h) - x_hat * mean(h * x_hat))`` (the mean and the variance depend
on every x of the row, hence the two row means), a row's business alone. dScale and dBias
are column sums over every row (``sum dY * x_hat`` and ``sum dY``): rows running in
parallel would race on them, so each chunk of rows (one per thread) sums into its own
partial row and the partials are added at the end: the split depends only on the row
and thread counts, so every run gives the same bits, whichever thread ran which chunk.
"""
import numba
import numpy as np
from numba import njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from .fastmath32 import FASTMATH32
from .matrix_view import as_matrix, matrix_shape
from .threads import parallel_ok
from .twins import twins

# Elements from which the prange twins run (2 threads): kernels/cpu/norm.py's measured
# crossover (MIN_PARALLEL_NORM), for the same work per group (two passes for the moments,
# one to write). Measured here on a busy machine (load 2.7 on 2 cores, no idle core),
# float32 rows of 64 to 1024 columns, 32k to 1M elements: the twins took 0.97-1.14x the
# serial time at every size, so no crossover of their own could be seen; on a quiet
# machine it is likely at or below this one.
MIN_PARALLEL_LAYER_NORM = 262_144

# reassoc lets the sums vectorise; no "nnan"/"ninf": a NaN in X must make its row NaN.
_FLAGS = FASTMATH32 | {"reassoc"}


@njit(cache=True, fastmath=_FLAGS, error_model="numpy", inline="always")
def _forward_row(x, scale, bias, eps, y, mean, var, i):
    n = x.shape[1]
    s = 0.0                                  # float64 accumulators, for float32 X too
    for j in range(n):
        s += x[i, j]
    m = s / n
    d2 = 0.0
    for j in range(n):
        d = x[i, j] - m
        d2 += d * d
    v = d2 / n
    r = 1.0 / np.sqrt(v + eps)
    for j in range(n):
        y[i, j] = (x[i, j] - m) * r * scale[j] + bias[j]
    mean[i] = m
    var[i] = v


_forward_serial, _forward_parallel = twins(_forward_row, "_forward", items="x.shape[0]")


def _parallel(x) -> bool:
    return x.size >= MIN_PARALLEL_LAYER_NORM and x.shape[0] > 1 and parallel_ok()


def layer_norm(x, scale, bias, eps, y, mean, var):
    """Normalize each row of the C-contiguous 2-D ``x`` into ``y`` (x's shape and dtype);
    each row's mean and biased variance into ``mean`` and ``var`` [rows] (any float
    type). ``scale`` and ``bias``: float64 [cols]."""
    if _parallel(x):
        _forward_parallel(x, scale, bias, eps, y, mean, var)
    else:
        _forward_serial(x, scale, bias, eps, y, mean, var)
    return y


@njit(cache=True, fastmath=_FLAGS, error_model="numpy", inline="always")
def _grad_rows(x, dy, mean, var, scale, eps, dx, dscale, dbias, c, lo, hi):
    """Rows lo..hi-1: their dX, and their part of dScale and dBias in row c of the
    partial sums."""
    n = x.shape[1]
    for i in range(lo, hi):
        m = float(mean[i])                   # float64, though Mean may be float32
        r = 1.0 / np.sqrt(float(var[i]) + eps)
        sum_h, sum_hx = 0.0, 0.0
        for j in range(n):
            d = dy[i, j]
            x_hat = (x[i, j] - m) * r
            dscale[c, j] += d * x_hat
            dbias[c, j] += d
            h = d * scale[j]
            sum_h += h
            sum_hx += h * x_hat
        c1 = sum_h / n
        c2 = sum_hx / n
        for j in range(n):
            x_hat = (x[i, j] - m) * r
            dx[i, j] = r * (dy[i, j] * scale[j] - c1 - x_hat * c2)


@njit(cache=True, fastmath=_FLAGS, error_model="numpy", inline="always")
def _grad_chunk(x, dy, mean, var, scale, eps, dx, dscale, dbias, c):
    """Chunk c of the rows (as many chunks as dscale has rows of partial sums: 1 serial)."""
    chunks, rows = dscale.shape[0], x.shape[0]
    _grad_rows(x, dy, mean, var, scale, eps, dx, dscale, dbias, c,
               c * rows // chunks, (c + 1) * rows // chunks)


_grad_serial, _grad_parallel = twins(_grad_chunk, "_grad", items="dscale.shape[0]")


def layer_norm_grad(x, dy, mean, var, scale, eps, dx):
    """dX into ``dx`` (x's shape and dtype), and dScale and dBias (float64 [cols]) of
    ``layer_norm``: ``x``, ``dy`` C-contiguous 2-D, ``mean`` and ``var`` [rows] as the
    forward saved them, ``scale`` float64 [cols]."""
    parallel = _parallel(x)
    # one partial row of sums per chunk of rows; as many chunks as threads, at most one
    # per row (zeroed: the chunks add into them)
    chunks = min(numba.get_num_threads(), x.shape[0]) if parallel else 1
    dscale = np.zeros((chunks, x.shape[1]), np.float64)
    dbias = np.zeros((chunks, x.shape[1]), np.float64)
    if parallel:
        _grad_parallel(x, dy, mean, var, scale, eps, dx, dscale, dbias)
    else:
        _grad_serial(x, dy, mean, var, scale, eps, dx, dscale, dbias)
    return dx, dscale.sum(axis=0), dbias.sum(axis=0)


# --- inside a compiled block (paddle_nb/compiler): the serial loops above, called from
# numba code. ``axis`` (begin_norm_axis, a literal) splits X's dims into rows and columns;
# a Scale or Bias not given is passed as X with ``has_scale`` / ``has_bias`` False.
@njit(cache=True, fastmath=False, error_model="numpy")
def _vector(v, given, cols, absent):
    """Scale or Bias as float64 [cols], or ``absent`` everywhere when not given."""
    if given:
        return np.ascontiguousarray(v).reshape(cols).astype(np.float64)
    return np.full(cols, absent)


@njit(cache=True, fastmath=False, error_model="numpy")
def normalized(x, scale, bias, has_scale, has_bias, eps, axis):
    """layer_norm's Y, Mean and Variance (the interpreter's serial loop, its dtypes)."""
    numba.literally(axis)
    xm = as_matrix(x, axis)
    rows, cols = xm.shape
    y = np.empty((rows, cols), x.dtype)
    mean, var = np.empty(rows, x.dtype), np.empty(rows, x.dtype)
    _forward_serial(xm, _vector(scale, has_scale, cols, 1.0),
                    _vector(bias, has_bias, cols, 0.0), eps, y, mean, var)
    lead = np.empty(axis, np.int64)                # the row dims: Mean's and Variance's
    for d in range(axis):
        lead[d] = x.shape[d]
    rows_shape = to_fixed_tuple(lead, axis)
    return y.reshape(x.shape), mean.reshape(rows_shape), var.reshape(rows_shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def normalized_grad(x, scale, mean, var, dy, has_scale, eps, axis):
    """layer_norm's X@GRAD, Scale@GRAD and Bias@GRAD (one chunk of rows: the serial
    loop's sums, in its order)."""
    numba.literally(axis)
    rows, cols = matrix_shape(x, axis)
    dx = np.empty((rows, cols), x.dtype)
    dscale, dbias = np.zeros((1, cols)), np.zeros((1, cols))
    _grad_serial(as_matrix(x, axis), as_matrix(dy, axis),
                 np.ascontiguousarray(mean).reshape(rows),
                 np.ascontiguousarray(var).reshape(rows),
                 _vector(scale, has_scale, cols, 1.0), eps, dx, dscale, dbias)
    return dx.reshape(x.shape), dscale[0].astype(x.dtype), dbias[0].astype(x.dtype)
