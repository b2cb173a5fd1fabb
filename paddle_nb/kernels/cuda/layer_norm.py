"""layer_norm on the device: kernels/cpu/layer_norm.py's two operations (its docstring has
the math) over X seen as ``(rows, cols)``, C-contiguous, read flat.

A row's statistics are a serial sum by one thread (one thread per row, as softmax takes
one per row: rows are many in a batch of sequences, and a thread owning its row needs no
atomics or second pass). The elementwise parts (Y, dX) are grid-stride loops over every
element, which find their row and column from the flat index. dScale and dBias are sums
down each column: one thread per column, whose neighbours read the neighbouring elements
of the same row (coalesced), and no atomics, so the same result every run. Elements are
read as ``float(x[j])``: float64 arithmetic on a GPU, and in the simulator too.

1 / sqrt(var + epsilon) is ``_inv_std``, written out: a constant row with epsilon 0 must
give inf as on the CPU, where the simulator's Python floats would raise on 1 / 0.0.
"""
from __future__ import annotations

import math

from numba import cuda

from .device import empty, flat, launch


@cuda.jit(device=True)
def _inv_std(v, eps):
    s = v + eps
    if s > 0.0:
        return 1.0 / math.sqrt(s)
    if s == 0.0:
        return math.inf
    return math.nan                          # a negative variance (an edited program), NaN


@cuda.jit(cache=True)
def _row_moments(x, rows, cols, eps, mean, var, mean64, rstd):
    """Each row's mean and biased variance (in X's type, the op's outputs) and, for
    ``_normalize``, its mean and 1 / sqrt(var + eps) in float64."""
    for i in range(cuda.grid(1), rows, cuda.gridsize(1)):
        s = 0.0
        for j in range(i * cols, (i + 1) * cols):
            s += float(x[j])
        m = s / cols
        d2 = 0.0
        for j in range(i * cols, (i + 1) * cols):
            d = float(x[j]) - m
            d2 += d * d
        v = d2 / cols
        mean[i] = m
        var[i] = v
        mean64[i] = m
        rstd[i] = _inv_std(v, eps)


@cuda.jit(cache=True)
def _normalize(x, cols, mean64, rstd, scale, has_scale, bias, has_bias, y):
    for k in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        i = k // cols
        j = k - i * cols
        v = (float(x[k]) - mean64[i]) * rstd[i]
        if has_scale:
            v *= float(scale[j])
        if has_bias:
            v += float(bias[j])
        y[k] = v


@cuda.jit(cache=True)
def _row_terms(x, dy, rows, cols, mean, var, eps, scale, has_scale, mean64, rstd, c1, c2):
    """Each row's mean(h) and mean(h * x_hat) (h = dY * scale), and its mean and
    1 / sqrt(var + eps) in float64, for ``_dx`` and ``_column_sums``."""
    for i in range(cuda.grid(1), rows, cuda.gridsize(1)):
        m = float(mean[i])
        r = _inv_std(float(var[i]), eps)
        sum_h = 0.0
        sum_hx = 0.0
        for k in range(i * cols, (i + 1) * cols):
            h = float(dy[k])
            if has_scale:
                h *= float(scale[k - i * cols])
            sum_h += h
            sum_hx += h * (float(x[k]) - m) * r
        mean64[i] = m
        rstd[i] = r
        c1[i] = sum_h / cols
        c2[i] = sum_hx / cols


@cuda.jit(cache=True)
def _dx(x, dy, cols, mean64, rstd, scale, has_scale, c1, c2, dx):
    for k in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        i = k // cols
        r = rstd[i]
        h = float(dy[k])
        if has_scale:
            h *= float(scale[k - i * cols])
        x_hat = (float(x[k]) - mean64[i]) * r
        dx[k] = r * (h - c1[i] - x_hat * c2[i])


@cuda.jit(cache=True)
def _column_sums(x, dy, rows, cols, mean64, rstd, dscale, dbias):
    """dScale = sum over rows of dY * x_hat, dBias = sum of dY: one thread per column."""
    for j in range(cuda.grid(1), cols, cuda.gridsize(1)):
        ds = 0.0
        db = 0.0
        for i in range(rows):
            d = float(dy[i * cols + j])
            ds += d * (float(x[i * cols + j]) - mean64[i]) * rstd[i]
            db += d
        dscale[j] = ds
        dbias[j] = db


def layer_norm(x, rows: int, cols: int, scale, bias, eps: float, stats_shape):
    """(Y, Mean, Variance) of the C-contiguous device array ``x`` as ``rows`` rows of
    ``cols``: Y in x's shape, the statistics of ``stats_shape`` (rows values), all in x's
    dtype. ``scale``, ``bias``: device vectors [cols], or None."""
    xf = flat(x)
    y = empty(x.shape, x.dtype)
    mean, var = empty(stats_shape, x.dtype), empty(stats_shape, x.dtype)
    mean64, rstd = empty((rows,), "float64"), empty((rows,), "float64")
    launch(_row_moments, rows, xf, rows, cols, float(eps), flat(mean), flat(var), mean64,
           rstd)
    launch(_normalize, x.size, xf, cols, mean64, rstd,
           xf if scale is None else flat(scale), scale is not None,  # (x: an unread stand-in)
           xf if bias is None else flat(bias), bias is not None, flat(y))
    return y, mean, var


def layer_norm_grad(x, dy, rows: int, cols: int, mean, var, scale, eps: float):
    """(dX in x's shape, dScale and dBias [cols]) of ``layer_norm``, all in x's dtype;
    ``mean``, ``var``: the forward's statistics (rows values), ``scale`` or None."""
    xf, dyf = flat(x), flat(dy)
    sf, has_scale = (xf, False) if scale is None else (flat(scale), True)
    mf, vf = flat(mean), flat(var)
    mean64, rstd = empty((rows,), "float64"), empty((rows,), "float64")
    c1, c2 = empty((rows,), "float64"), empty((rows,), "float64")
    dx = empty(x.shape, x.dtype)
    dscale, dbias = empty((cols,), x.dtype), empty((cols,), x.dtype)
    launch(_row_terms, rows, xf, dyf, rows, cols, mf, vf, float(eps), sf, has_scale, mean64,
           rstd, c1, c2)
    launch(_dx, x.size, xf, dyf, cols, mean64, rstd, sf, has_scale, c1, c2, flat(dx))
    # (no rows: each column's sum of nothing, 0)
    launch(_column_sums, cols, xf, dyf, rows, cols, mean64, rstd, flat(dscale), flat(dbias))
    return dx, dscale, dbias
