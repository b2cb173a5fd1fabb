"""Normalization over groups: the statistics, the affine normalization and its gradient
shared by batch_norm, instance_norm and group_norm.

Every kernel sees X as a 4-D view ``(P, G, K, S)`` and normalizes each group ``g`` over
its ``P * K * S`` elements, with a scale and a bias per ``(g, k)``:
- batch_norm (NCHW): ``(N, C, 1, H*W)``, a group per channel (NHWC: ``(N*H*W, C, 1, 1)``);
- instance_norm: ``(1, N*C, 1, H*W)``, a group per sample and channel;
- group_norm: ``(1, N*G, C/G, H*W)``, a group per sample and channel group, whose ``C/G``
  channels each keep their own scale and bias (hence K).
Views of a contiguous X need no copy for any of them. Sums accumulate in float64 (a
float32 sum of 50k values would lose digits); the variance is two-pass (sum of squared
deviations from the mean), never E[x^2] - E[x]^2, which cancels catastrophically for
values far from 0. Groups are independent, so the parallel twins split them (prange;
twins.py).
"""
import numpy as np
from numba import njit

from .fastmath32 import FASTMATH32
from .threads import parallel_ok
from .twins import twins

# Elements from which the prange twins run (2 threads): the first measured power of 2 where
# they took <= ~0.8x the serial time, 16 groups of float32 (moments 0.62x and the gradient
# 0.72x at 256k; 1.04-1.08x at 128k; normalize, memory-bound, ~1x at every size). Measured
# while other processes kept the machine busy (load ~2.6 on 2 cores): on a quiet machine
# the crossover is likely lower.
MIN_PARALLEL_NORM = 262_144

# reassoc lets the sums vectorise; no "nnan"/"ninf": a NaN in X must make its group NaN.
_FLAGS = FASTMATH32 | {"reassoc"}


@njit(cache=True, fastmath=_FLAGS, error_model="numpy", inline="always")
def _moments_of(x, mean, var, g):
    n = x.shape[0] * x.shape[2] * x.shape[3]
    s = 0.0
    for p in range(x.shape[0]):
        for k in range(x.shape[2]):
            for i in range(x.shape[3]):
                s += x[p, g, k, i]
    m = s / n
    d2 = 0.0
    for p in range(x.shape[0]):
        for k in range(x.shape[2]):
            for i in range(x.shape[3]):
                d = x[p, g, k, i] - m
                d2 += d * d
    mean[g] = m
    var[g] = d2 / n


_moments_serial, _moments_parallel = twins(_moments_of, "_moments", items="x.shape[1]")


def moments(x):
    """(mean, biased variance) of each group of the 4-D view ``x``, float64 [G]."""
    mean = np.empty(x.shape[1], np.float64)
    var = np.empty(x.shape[1], np.float64)
    if x.size >= MIN_PARALLEL_NORM and x.shape[1] > 1 and parallel_ok():
        _moments_parallel(x, mean, var)
    else:
        _moments_serial(x, mean, var)
    return mean, var


@njit(cache=True, fastmath=_FLAGS, error_model="numpy", inline="always")
def _normalize_group(x, mean, inv_std, scale, bias, y, g):
    for k in range(x.shape[2]):
        a = scale[g, k] * inv_std[g]         # y = (x - mean) * inv_std * scale + bias
        b = bias[g, k] - mean[g] * a         #   = x * a + b
        for p in range(x.shape[0]):
            for i in range(x.shape[3]):
                y[p, g, k, i] = x[p, g, k, i] * a + b


_normalize_serial, _normalize_parallel = twins(_normalize_group, "_normalize",
                                                items="x.shape[1]")


def normalize(x, mean, inv_std, scale, bias, y):
    """y = (x - mean[g]) * inv_std[g] * scale[g, k] + bias[g, k], into ``y`` (x's shape
    and dtype); mean and inv_std float64 [G], scale and bias float64 [G, K]."""
    if x.size >= MIN_PARALLEL_NORM and x.shape[1] > 1 and parallel_ok():
        _normalize_parallel(x, mean, inv_std, scale, bias, y)
    else:
        _normalize_serial(x, mean, inv_std, scale, bias, y)
    return y


@njit(cache=True, fastmath=_FLAGS, error_model="numpy", inline="always")
def _grad_group(x, dy, mean, inv_std, scale, batch_stats, dx, dscale, dbias, g):
    m, r = mean[g], inv_std[g]
    sum_h, sum_hx = 0.0, 0.0            # sums of h = dy * scale and of h * x_hat
    for k in range(x.shape[2]):
        ds, db = 0.0, 0.0
        for p in range(x.shape[0]):
            for i in range(x.shape[3]):
                d = dy[p, g, k, i]
                ds += d * (x[p, g, k, i] - m)
                db += d
        dscale[g, k] = ds * r
        dbias[g, k] = db
        sum_h += scale[g, k] * db
        sum_hx += scale[g, k] * ds * r
    # With batch statistics the mean and the variance depend on x too:
    # dx = r * (h - mean(h) - x_hat * mean(h * x_hat)); with given ones, dx = r * h.
    n = x.shape[0] * x.shape[2] * x.shape[3]
    c1 = sum_h / n if batch_stats else 0.0
    c2 = sum_hx / n if batch_stats else 0.0
    for k in range(x.shape[2]):
        a = scale[g, k]
        for p in range(x.shape[0]):
            for i in range(x.shape[3]):
                x_hat = (x[p, g, k, i] - m) * r
                dx[p, g, k, i] = r * (a * dy[p, g, k, i] - c1 - x_hat * c2)


_grad_serial, _grad_parallel = twins(_grad_group, "_grad", items="x.shape[1]")


def normalize_grad(x, dy, mean, inv_std, scale, batch_stats, dx):
    """dX (into ``dx``), dScale and dBias (float64 [G, K]) of ``normalize``; with
    ``batch_stats`` the mean and inv_std were x's own (training), else given."""
    dscale = np.empty(scale.shape, np.float64)
    dbias = np.empty(scale.shape, np.float64)
    if x.size >= MIN_PARALLEL_NORM and x.shape[1] > 1 and parallel_ok():
        _grad_parallel(x, dy, mean, inv_std, scale, batch_stats, dx, dscale, dbias)
    else:
        _grad_serial(x, dy, mean, inv_std, scale, batch_stats, dx, dscale, dbias)
    return dx, dscale, dbias
