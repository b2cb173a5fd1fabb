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
from numba.extending import overload

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


# --- inside a compiled block (paddle_nb/compiler): batch_norm and its gradient as
# ops/batch_norm.py computes them on the CPU, with the serial loops above (each group's
# arithmetic is the same in the prange ones) and the per-channel vectors in float64. X is
# seen as (P, C, 1, S): (N, C, 1, H*W), or channels last (N*H*W, C, 1, 1). A Scale or Bias
# not given is passed as X with ``has_scale`` / ``has_bias`` False.
@njit(cache=True, fastmath=False, error_model="numpy")
def _channel_view(x, last):
    """X (C-contiguous) as the (P, C, 1, S) view batch_norm normalizes."""
    xc = np.ascontiguousarray(x)
    if last and x.ndim > 2:
        c = x.shape[x.ndim - 1]
        return xc.reshape((x.size // c if c else 0, c, 1, 1))
    inner = 1
    for d in range(2, x.ndim):
        inner *= x.shape[d]
    return xc.reshape((x.shape[0], x.shape[1], 1, inner))


@njit(cache=True, fastmath=False, error_model="numpy")
def _per_channel(v, given, c, absent):
    """Scale or Bias as float64 [C, 1], or ``absent`` everywhere when not given."""
    if given:
        if v.size != c:
            raise ValueError("batch_norm: Scale and Bias must hold one value per channel")
        return np.ascontiguousarray(v).reshape((c, 1)).astype(np.float64)
    return np.full((c, 1), absent)


@njit(cache=True, fastmath=False, error_model="numpy")
def _statistic(v, c):
    """A per-channel statistic as float64 [C] (checked: one value per channel)."""
    if v.size != c:
        raise ValueError("batch_norm: the statistics must hold one value per channel of X")
    return np.ascontiguousarray(v).reshape(c).astype(np.float64)


@njit(cache=True, fastmath=False, error_model="numpy")
def batch_normalized(x, scale, bias, mean, variance, has_scale, has_bias, global_stats,
                     momentum, eps, last):
    """batch_norm's Y, MeanOut, VarianceOut, SavedMean and SavedVariance (the two saved
    ones zeros with ``global_stats``, as the op leaves them)."""
    x4 = _channel_view(x, last)
    c = x4.shape[1]
    running_mean, running_var = _statistic(mean, c), _statistic(variance, c)
    if global_stats:
        m, var = running_mean, running_var
        new_mean, new_var = running_mean, running_var               # unchanged
        saved_mean, saved_inv = np.zeros(c), np.zeros(c)
    else:
        m, var = np.empty(c), np.empty(c)
        _moments_serial(x4, m, var)
        new_mean = momentum * running_mean + (1.0 - momentum) * m
        new_var = momentum * running_var + (1.0 - momentum) * var
        saved_mean, saved_inv = m, 1.0 / np.sqrt(var + eps)
    y = np.empty(x4.shape, x.dtype)
    _normalize_serial(x4, m, 1.0 / np.sqrt(var + eps), _per_channel(scale, has_scale, c, 1.0),
                      _per_channel(bias, has_bias, c, 0.0), y)
    return (y.reshape(x.shape), new_mean.astype(mean.dtype), new_var.astype(variance.dtype),
            saved_mean.astype(mean.dtype), saved_inv.astype(variance.dtype))


@njit(cache=True, fastmath=False, error_model="numpy")
def batch_normalized_grad(x, scale, bias, mean, variance, dy, has_scale, global_stats, eps,
                          last):
    """batch_norm_grad's X@GRAD, Scale@GRAD and Bias@GRAD (in Scale's and Bias's dtypes,
    X's where not given: passed as X). ``mean`` and ``variance``: SavedMean and
    SavedVariance (1 / sqrt(var + epsilon)), or with ``global_stats`` MeanOut and
    VarianceOut (the variance itself)."""
    if dy.shape != x.shape:
        raise ValueError("batch_norm_grad: Y@GRAD must have the shape of X")
    x4 = _channel_view(x, last)
    c = x4.shape[1]
    m = _statistic(mean, c)
    inv = 1.0 / np.sqrt(_statistic(variance, c) + eps) if global_stats else \
        _statistic(variance, c)
    dx = np.empty(x4.shape, x.dtype)
    dscale, dbias = np.empty((c, 1)), np.empty((c, 1))
    _grad_serial(x4, _channel_view(dy, last), m, inv, _per_channel(scale, has_scale, c, 1.0),
                 not global_stats, dx, dscale, dbias)
    return dx.reshape(x.shape), dscale.reshape(c).astype(scale.dtype), \
        dbias.reshape(c).astype(bias.dtype)


# instance_norm and group_norm (ops/group_norm.py) likewise: X (channels first,
# C-contiguous) as (1, N*G, C/G, S), a group per sample and channel group (instance_norm:
# G = C), each channel with its own scale and bias, the batch's statistics always.
@njit(cache=True, fastmath=False, error_model="numpy")
def _sample_groups(x, groups):
    """X [N, C, ...] as the (1, N*groups, C/groups, S) view."""
    inner = 1
    for d in range(2, x.ndim):
        inner *= x.shape[d]
    return np.ascontiguousarray(x).reshape((1, x.shape[0] * groups, x.shape[1] // groups,
                                            inner))


@njit(cache=True, fastmath=False, error_model="numpy")
def _tiled(v, given, n, groups, per_group, absent):
    """Scale or Bias [C] as float64 [n*groups, per_group]: its (groups, per_group) rows
    once per sample, as the op's np.tile; ``absent`` everywhere when not given."""
    out = np.full((n * groups, per_group), absent)
    if given:
        if v.size != groups * per_group:
            raise ValueError("group_norm: Scale and Bias must hold one value per channel")
        rows = np.ascontiguousarray(v).reshape((groups, per_group)).astype(np.float64)
        for i in range(n):
            out[i * groups:(i + 1) * groups] = rows
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def _sample_summed(d, n, c):
    """A per-(sample, channel) float64 gradient as [C]: the sum over samples, the first
    sample's row plus each next one in turn (numpy's sum over axis 0 of [N, C], for C > 1:
    of [N, 1] numpy sums pairwise, so ops/group_norm.py lowers no gradient for C = 1)."""
    rows = d.reshape((n, c))
    out = rows[0].copy()
    for i in range(1, n):
        out += rows[i]
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def _group_normalized(x4, scale2, bias2, eps):
    """(Y of the view, mean, biased variance, 1 / sqrt(var + eps)), float64 statistics."""
    g = x4.shape[1]
    mean, var = np.empty(g), np.empty(g)
    _moments_serial(x4, mean, var)
    inv = 1.0 / np.sqrt(var + eps)
    y = np.empty(x4.shape, x4.dtype)
    _normalize_serial(x4, mean, inv, scale2, bias2, y)
    return y, mean, var, inv


@njit(cache=True, fastmath=False, error_model="numpy")
def _group_normalized_grad(x4, dy4, mean, inv, scale2, n, c):
    """(dX of the view, dScale and dBias [C] float64, summed over the samples)."""
    dx = np.empty(x4.shape, x4.dtype)
    dscale, dbias = np.empty(scale2.shape), np.empty(scale2.shape)
    _grad_serial(x4, dy4, mean, inv, scale2, True, dx, dscale, dbias)
    return dx, _sample_summed(dscale, n, c), _sample_summed(dbias, n, c)


def _nchw(a, last):
    """A 4-D NHWC ``a`` moved to NCHW (a copy), else ``a`` (C-contiguous), in numba code."""
    raise NotImplementedError("_nchw is called from numba code only")


def _nhwc_again(a, last):
    """_nchw's inverse, in numba code."""
    raise NotImplementedError("_nhwc_again is called from numba code only")


# (by the array's rank: a transpose of 4 axes does not type for X of another rank)
@overload(_nchw)
def _nchw_of_rank(a, last):
    if a.ndim != 4:
        return lambda a, last: np.ascontiguousarray(a)
    return lambda a, last: np.ascontiguousarray(a.transpose((0, 3, 1, 2)) if last else a)


@overload(_nhwc_again)
def _nhwc_again_of_rank(a, last):
    if a.ndim != 4:
        return lambda a, last: np.ascontiguousarray(a)
    return lambda a, last: np.ascontiguousarray(a.transpose((0, 2, 3, 1)) if last else a)


@njit(cache=True, fastmath=False, error_model="numpy")
def group_normalized(x, scale, bias, has_scale, has_bias, groups, eps, last):
    """group_norm's Y, Mean and Variance ([N, groups], X's dtype); ``last``: 4-D NHWC."""
    xc = _nchw(x, last)
    n, c = xc.shape[0], xc.shape[1]
    if c % groups:
        raise ValueError("group_norm: groups must divide the channels of X")
    y, mean, var, _ = _group_normalized(
        _sample_groups(xc, groups), _tiled(scale, has_scale, n, groups, c // groups, 1.0),
        _tiled(bias, has_bias, n, groups, c // groups, 0.0), eps)
    return (_nhwc_again(y.reshape(xc.shape), last), mean.reshape((n, groups)).astype(x.dtype),
            var.reshape((n, groups)).astype(x.dtype))


@njit(cache=True, fastmath=False, error_model="numpy")
def group_normalized_grad(x, scale, bias, mean, variance, dy, has_scale, groups, eps, last):
    """group_norm_grad's X@GRAD, Scale@GRAD and Bias@GRAD (in Scale's and Bias's dtypes,
    X's where not given: passed as X)."""
    if dy.shape != x.shape:
        raise ValueError("group_norm_grad: Y@GRAD must have the shape of X")
    xc, dyc = _nchw(x, last), _nchw(dy, last)
    n, c = xc.shape[0], xc.shape[1]
    if c % groups or mean.size != n * groups or variance.size != n * groups:
        raise ValueError("group_norm_grad: Mean and Variance must hold one value per group")
    m = np.ascontiguousarray(mean).reshape(n * groups).astype(np.float64)
    inv = 1.0 / np.sqrt(np.ascontiguousarray(variance).reshape(n * groups).astype(np.float64)
                        + eps)
    dx, dscale, dbias = _group_normalized_grad(
        _sample_groups(xc, groups), _sample_groups(dyc, groups), m, inv,
        _tiled(scale, has_scale, n, groups, c // groups, 1.0), n, c)
    return _nhwc_again(dx.reshape(xc.shape), last), dscale.astype(scale.dtype), \
        dbias.astype(bias.dtype)


@njit(cache=True, fastmath=False, error_model="numpy")
def instance_normalized(x, scale, bias, has_scale, has_bias, eps):
    """instance_norm's Y, SavedMean and SavedVariance (1 / sqrt(var + epsilon)), [N*C]."""
    n, c = x.shape[0], x.shape[1]
    y, mean, _, inv = _group_normalized(
        _sample_groups(x, c), _tiled(scale, has_scale, n, c, 1, 1.0),
        _tiled(bias, has_bias, n, c, 1, 0.0), eps)
    return y.reshape(x.shape), mean.astype(x.dtype), inv.astype(x.dtype)


@njit(cache=True, fastmath=False, error_model="numpy")
def instance_normalized_grad(x, scale, bias, saved_mean, saved_inv, dy, has_scale):
    """instance_norm_grad's X@GRAD, Scale@GRAD and Bias@GRAD (dtypes as
    group_normalized_grad's)."""
    n, c = x.shape[0], x.shape[1]
    if dy.shape != x.shape or saved_mean.size != n * c or saved_inv.size != n * c:
        raise ValueError("instance_norm_grad: the saved statistics must hold one value per "
                         "instance, and Y@GRAD the shape of X")
    dx, dscale, dbias = _group_normalized_grad(
        _sample_groups(x, c), _sample_groups(dy, c),
        np.ascontiguousarray(saved_mean).reshape(n * c).astype(np.float64),
        np.ascontiguousarray(saved_inv).reshape(n * c).astype(np.float64),
        _tiled(scale, has_scale, n, c, 1, 1.0), n, c)
    return dx.reshape(x.shape), dscale.astype(scale.dtype), dbias.astype(bias.dtype)
