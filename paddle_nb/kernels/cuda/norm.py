"""Normalization over groups on the device: kernels/cpu/norm.py's three operations (its
docstring describes the 4-D view ``(P, G, K, S)`` every caller makes).

A group's statistics are a serial sum by one thread (one thread per group, as softmax
takes one per row): groups are few and independent, and a thread owning its group needs
no atomics or second pass. The elementwise parts (normalize, dX) are grid-stride loops
over every element, which find their group and channel from the flat index. Elements are
read as ``float(x[j])``: float64 arithmetic on a GPU, and in the simulator too (where
numpy's rules would keep float32 - float in float32, and 1e30 squared would overflow).
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .device import empty, flat, launch


@cuda.jit(cache=True)
def _moments(x, p_, g_, k_, s_, mean, var):
    n = p_ * k_ * s_
    for g in range(cuda.grid(1), g_, cuda.gridsize(1)):
        s = 0.0
        for p in range(p_):
            for j in range((p * g_ + g) * k_ * s_, (p * g_ + g + 1) * k_ * s_):
                s += float(x[j])
        m = s / n
        d2 = 0.0
        for p in range(p_):
            for j in range((p * g_ + g) * k_ * s_, (p * g_ + g + 1) * k_ * s_):
                d = float(x[j]) - m
                d2 += d * d
        mean[g] = m
        var[g] = d2 / n


@cuda.jit(cache=True)
def _normalize(x, g_, k_, s_, mean, inv_std, scale, bias, y):
    for j in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        k = (j // s_) % k_
        g = (j // (s_ * k_)) % g_
        a = scale[g * k_ + k] * inv_std[g]
        y[j] = (float(x[j]) - mean[g]) * a + bias[g * k_ + k]


@cuda.jit(cache=True)
def _channel_sums(x, dy, p_, g_, k_, s_, mean, inv_std, dscale, dbias):
    """dScale and dBias of each (g, k): one thread each."""
    for gk in range(cuda.grid(1), g_ * k_, cuda.gridsize(1)):
        g = gk // k_
        k = gk % k_
        ds = 0.0
        db = 0.0
        for p in range(p_):
            start = ((p * g_ + g) * k_ + k) * s_
            for j in range(start, start + s_):
                d = float(dy[j])
                ds += d * (float(x[j]) - mean[g])
                db += d
        dscale[gk] = ds * inv_std[g]
        dbias[gk] = db


@cuda.jit(cache=True)
def _group_terms(k_, n, scale, dscale, dbias, batch_stats, c1, c2):
    """mean(h) and mean(h * x_hat) of each group (h = dY * scale); 0 without batch
    statistics, where the mean and variance do not depend on X."""
    for g in range(cuda.grid(1), c1.size, cuda.gridsize(1)):
        sum_h = 0.0
        sum_hx = 0.0
        for k in range(g * k_, (g + 1) * k_):
            sum_h += scale[k] * dbias[k]
            sum_hx += scale[k] * dscale[k]
        c1[g] = sum_h / n if batch_stats else 0.0
        c2[g] = sum_hx / n if batch_stats else 0.0


@cuda.jit(cache=True)
def _dx(x, dy, g_, k_, s_, mean, inv_std, scale, c1, c2, dx):
    for j in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        k = (j // s_) % k_
        g = (j // (s_ * k_)) % g_
        r = inv_std[g]
        x_hat = (float(x[j]) - mean[g]) * r
        dx[j] = r * (scale[g * k_ + k] * float(dy[j]) - c1[g] - x_hat * c2[g])


def _dims(x):
    return tuple(int(d) for d in x.shape)


def moments(x):
    """(mean, biased variance) of each group of the 4-D device view ``x``, float64 [G]."""
    p_, g_, k_, s_ = _dims(x)
    mean, var = empty((g_,), np.float64), empty((g_,), np.float64)
    launch(_moments, g_, flat(x), p_, g_, k_, s_, mean, var)
    return mean, var


def normalize(x, mean, inv_std, scale, bias, y=None):
    """(x - mean[g]) * inv_std[g] * scale[g, k] + bias[g, k], a new device array."""
    _, g_, k_, s_ = _dims(x)
    y = empty(_dims(x), x.dtype)
    launch(_normalize, x.size, flat(x), g_, k_, s_, mean, inv_std, flat(scale), flat(bias),
           flat(y))
    return y


def normalize_grad(x, dy, mean, inv_std, scale, batch_stats, dx=None):
    """(dX, dScale, dBias) of ``normalize``, as kernels/cpu/norm.py's."""
    p_, g_, k_, s_ = _dims(x)
    dscale, dbias = empty((g_, k_), np.float64), empty((g_, k_), np.float64)
    c1, c2 = empty((g_,), np.float64), empty((g_,), np.float64)
    dx = empty(_dims(x), x.dtype)
    launch(_channel_sums, g_ * k_, flat(x), flat(dy), p_, g_, k_, s_, mean, inv_std,
           flat(dscale), flat(dbias))
    launch(_group_terms, g_, k_, float(p_ * k_ * s_), flat(scale), flat(dscale), flat(dbias),
           bool(batch_stats), c1, c2)
    launch(_dx, x.size, flat(x), flat(dy), g_, k_, s_, mean, inv_std, flat(scale), c1, c2,
           flat(dx))
    return dx, dscale, dbias

