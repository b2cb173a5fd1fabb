"""Running maxima/minima (cummax, cummin) and running log-sum-exp (logcumsumexp) along an
axis, with logcumsumexp's gradient, for both places (ops/cum_extrema.py,
ops/logcumsumexp.py).

The tensor is seen as ``(outer, n, inner)`` around the axis, as kernels/cumprod.py and
kernels/cuda/scan.py see theirs: one line is the n elements ``base + j * inner``. The work
of one line is written once, as ``register_jitable`` functions that the CPU's ``njit`` loop
and the device's ``cuda.jit`` kernel (one thread per line) both call.

cummax/cummin follow Paddle 2.6.2's CPU rule: a new element replaces the running value
when it is NaN, or when neither is NaN and it is >= (cummax) / <= (cummin) the running
value. So ties move the index to the latest position, and NaN, once met, stays (each
later NaN moving the index on).

logcumsumexp: ``out_j = log(exp(x_0) + ... + exp(x_j))``, each step ``logaddexp(out, x)``
(exclusive: the sum of the elements before j, -inf for the first; reverse: from the end).
Its gradient, with the inclusive sums ``s`` (recomputed from X, so exclusive needs no
special care), is ``dX_i = sum over later j of dOut_j * exp(x_i - s_j)``; one pass from the
end keeps ``r_i = dOut'_i + exp(s_i - s_{i+1}) * r_{i+1}`` (s never falls along the line,
so the factor is at most 1 and nothing overflows) and ``dX_i = exp(x_i - s_i) * r_i``.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda, njit
from numba.extending import register_jitable

from .cuda.device import empty, flat, launch


@register_jitable
def _line_base(line, n, inner):
    return (line // inner) * n * inner + line % inner


@register_jitable
def _line_extremum(x, out, indices, base, n, inner, largest):
    best = x[base]
    where = 0
    for j in range(n):
        at = base + j * inner
        v = x[at]
        replace = v != v                         # NaN always takes over
        if not replace and best == best:         # neither NaN: >= (max) or <= (min)
            replace = v >= best if largest else v <= best
        if replace:
            best = v
            where = j
        out[at] = best
        indices[at] = where


@register_jitable
def _logaddexp(a, b):
    if a == b:                                   # also +-inf with itself
        return a + math.log(2.0)
    hi, lo = (a, b) if a > b else (b, a)     # (CUDA's compiler types no 2-argument max)
    if hi != hi or lo != lo:
        return hi + lo                           # NaN
    return hi + math.log1p(math.exp(lo - hi))


@register_jitable
def _line_logcumsumexp(x, out, base, n, inner, exclusive, reverse):
    total = -np.inf
    for k in range(n):
        at = base + (n - 1 - k if reverse else k) * inner
        if exclusive:
            out[at] = total
            total = _logaddexp(total, x[at])
        else:
            total = _logaddexp(total, x[at])
            out[at] = total


@register_jitable
def _line_logcumsumexp_grad(x, dout, dx, base, n, inner, exclusive, reverse):
    # pass 1: the inclusive sums s, into dx (overwritten in pass 2)
    _line_logcumsumexp(x, dx, base, n, inner, False, reverse)
    # pass 2, from the far end of the scan: r and dX (exclusive: dOut'_k = dOut_{k+1})
    r = 0.0
    later = np.inf                               # s past the end (its factor is unused)
    for k in range(n):
        step = n - 1 - k                         # the step's place in scan order
        at = base + ((n - 1 - step) if reverse else step) * inner
        s = dx[at]
        if exclusive:
            if step == n - 1:
                d = 0.0
            else:
                d = dout[base + ((n - 2 - step) if reverse else step + 1) * inner]
        else:
            d = dout[at]
        if s == -np.inf:                         # every x so far is -inf: no gradient
            r = 0.0
            dx[at] = 0.0
        else:
            r = d + (math.exp(s - later) * r if k else 0.0)
            dx[at] = math.exp(x[at] - s) * r
        later = s


# --- the CPU: one loop over the lines -----------------------------------------------------
@njit(cache=True, error_model="numpy")
def _cpu_extremum(x, n, inner, largest, out, indices):
    for line in range(out.size // n):
        _line_extremum(x, out, indices, _line_base(line, n, inner), n, inner, largest)


@njit(cache=True, error_model="numpy")
def _cpu_logcumsumexp(x, n, inner, exclusive, reverse, out):
    for line in range(out.size // n):
        _line_logcumsumexp(x, out, _line_base(line, n, inner), n, inner, exclusive, reverse)


@njit(cache=True, error_model="numpy")
def _cpu_logcumsumexp_grad(x, dout, n, inner, exclusive, reverse, dx):
    for line in range(dx.size // n):
        _line_logcumsumexp_grad(x, dout, dx, _line_base(line, n, inner), n, inner,
                                exclusive, reverse)


# --- CUDA: one thread per line --------------------------------------------------------------
@cuda.jit(cache=True)
def _cuda_extremum(x, n, inner, largest, out, indices):
    for line in range(cuda.grid(1), out.size // n, cuda.gridsize(1)):
        _line_extremum(x, out, indices, _line_base(line, n, inner), n, inner, largest)


@cuda.jit(cache=True)
def _cuda_logcumsumexp(x, n, inner, exclusive, reverse, out):
    for line in range(cuda.grid(1), out.size // n, cuda.gridsize(1)):
        _line_logcumsumexp(x, out, _line_base(line, n, inner), n, inner, exclusive, reverse)


@cuda.jit(cache=True)
def _cuda_logcumsumexp_grad(x, dout, n, inner, exclusive, reverse, dx):
    for line in range(cuda.grid(1), dx.size // n, cuda.gridsize(1)):
        _line_logcumsumexp_grad(x, dout, dx, _line_base(line, n, inner), n, inner,
                                exclusive, reverse)


def _lines(shape, axis: int):
    """(n, inner) of ``shape`` around ``axis`` (a 0-d tensor is one line of one)."""
    if not shape:
        return 1, 1
    return shape[axis], int(np.prod(shape[axis + 1:], dtype=np.int64))


def _shape(x):
    return tuple(int(d) for d in x.shape)


class CPU:
    @staticmethod
    def extremum(x, axis: int, largest: bool, index_dtype):
        """(running max or min of x along axis, where each came from, in index_dtype)."""
        shape = _shape(x)
        out, indices = np.empty(shape, x.dtype), np.empty(shape, index_dtype)
        n, inner = _lines(shape, axis)
        if out.size:
            _cpu_extremum(np.ascontiguousarray(x).reshape(-1), n, inner, largest,
                          out.reshape(-1), indices.reshape(-1))
        return out, indices

    @staticmethod
    def logcumsumexp(x, axis: int, exclusive: bool, reverse: bool):
        shape = _shape(x)
        out = np.empty(shape, x.dtype)
        n, inner = _lines(shape, axis)
        if out.size:
            _cpu_logcumsumexp(np.ascontiguousarray(x).reshape(-1), n, inner, exclusive,
                              reverse, out.reshape(-1))
        return out

    @staticmethod
    def logcumsumexp_grad(x, dout, axis: int, exclusive: bool, reverse: bool):
        shape = _shape(x)
        dx = np.empty(shape, x.dtype)
        n, inner = _lines(shape, axis)
        if dx.size:
            _cpu_logcumsumexp_grad(np.ascontiguousarray(x).reshape(-1),
                                   np.ascontiguousarray(dout, x.dtype).reshape(-1), n, inner,
                                   exclusive, reverse, dx.reshape(-1))
        return dx


class CUDA:
    @staticmethod
    def extremum(x, axis: int, largest: bool, index_dtype):
        shape = _shape(x)
        out, indices = empty(shape, x.dtype), empty(shape, np.dtype(index_dtype))
        n, inner = _lines(shape, axis)
        if out.size:
            launch(_cuda_extremum, out.size // n, flat(x), n, inner, largest, flat(out),
                   flat(indices))
        return out, indices

    @staticmethod
    def logcumsumexp(x, axis: int, exclusive: bool, reverse: bool):
        shape = _shape(x)
        out = empty(shape, x.dtype)
        n, inner = _lines(shape, axis)
        if out.size:
            launch(_cuda_logcumsumexp, out.size // n, flat(x), n, inner, exclusive, reverse,
                   flat(out))
        return out

    @staticmethod
    def logcumsumexp_grad(x, dout, axis: int, exclusive: bool, reverse: bool):
        shape = _shape(x)
        dx = empty(shape, x.dtype)
        n, inner = _lines(shape, axis)
        if dx.size:
            launch(_cuda_logcumsumexp_grad, dx.size // n, flat(x), flat(dout), n, inner,
                   exclusive, reverse, flat(dx))
        return dx
