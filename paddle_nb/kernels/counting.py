"""Counting values into bins, for both places (ops/histogram.py): ``histogram`` (equal-width
bins over [lo, hi]) and ``bincount`` (one bin per integer, optionally weighted).

One element's work is a ``register_jitable`` function that the CPU's ``njit`` loop and the
device's ``cuda.jit`` kernel (one thread per element, ``cuda.atomic.add`` into the bins,
since two elements may fall into one bin) both call. The bins are checked by the op before
a kernel runs: every index written here is in range.
"""
from __future__ import annotations

import numpy as np
from numba import cuda, njit
from numba.extending import register_jitable

from .cuda.device import empty, flat, launch


@register_jitable
def _bin_of(v, lo, hi, bins, integer):
    """The bin of v (-1 outside [lo, hi] or NaN), with Paddle's arithmetic: in X's type,
    integer division for integers, hi itself in the last bin."""
    if not (v >= lo and v <= hi):
        return -1
    if integer:
        b = ((v - lo) * bins) // (hi - lo)
    else:
        b = int((v - lo) * bins / (hi - lo))
    b = int(b)
    last = int(bins) - 1
    return last if b > last else b       # (no min(): numba's CUDA target fails to type it)


@njit(cache=True)
def _cpu_histogram(x, lo, hi, bins, integer, out):
    for i in range(x.size):
        b = _bin_of(x[i], lo, hi, bins, integer)
        if b >= 0:
            out[b] += 1


@cuda.jit(cache=True)
def _cuda_histogram(x, lo, hi, bins, integer, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        b = _bin_of(x[i], lo, hi, bins, integer)
        if b >= 0:
            cuda.atomic.add(out, b, 1)


@njit(cache=True)
def _cpu_bincount(x, weights, weighted, out):
    for i in range(x.size):
        out[x[i]] += weights[i] if weighted else 1


@cuda.jit(cache=True)
def _cuda_bincount(x, weights, weighted, out):
    for i in range(cuda.grid(1), x.size, cuda.gridsize(1)):
        cuda.atomic.add(out, x[i], weights[i] if weighted else 1)


def _args(x, lo, hi, bins):
    return histogram_args(x.dtype, lo, hi, bins)


def histogram_args(dtype, lo, hi, bins):
    """lo, hi and bins in X's element type (Paddle computes in it), int64 for integers (so
    (x - lo) * bins cannot wrap around in int32), and whether they are integers."""
    integer = dtype.kind in "iu"
    t = np.int64 if integer else dtype.type
    return t(lo), t(hi), t(bins), integer


@njit(cache=True, fastmath=False, error_model="numpy")
def histogram_counts(x, lo, hi, bins, integer):
    """histogram in a compiled block, for a range given by the attributes: the CPU's loop
    into new zeros (``lo``, ``hi``, ``bins``, ``integer`` as histogram_args gives them)."""
    out = np.zeros(int(bins), np.int64)
    _cpu_histogram(np.ascontiguousarray(x).reshape(x.size), lo, hi, bins, integer, out)
    return out


class CPU:
    @staticmethod
    def histogram(x, lo, hi, bins: int):
        out = np.zeros(bins, np.int64)
        _cpu_histogram(np.ascontiguousarray(x).reshape(-1), *_args(x, lo, hi, bins), out)
        return out

    @staticmethod
    def bincount(x, weights, size: int, dtype):
        out = np.zeros(size, dtype)
        flat_x = np.ascontiguousarray(x).reshape(-1)
        w = flat_x if weights is None else np.ascontiguousarray(weights, dtype).reshape(-1)
        _cpu_bincount(flat_x, w.astype(dtype, copy=False), weights is not None, out)
        return out


class CUDA:
    @staticmethod
    def histogram(x, lo, hi, bins: int):
        out = cuda.to_device(np.zeros(bins, np.int64))
        launch(_cuda_histogram, x.size, flat(x), *_args(x, lo, hi, bins), out)
        return out

    @staticmethod
    def bincount(x, weights, size: int, dtype):
        out = cuda.to_device(np.zeros(size, dtype))
        if x.size:
            w = empty((1,), dtype) if weights is None else flat(weights)
            launch(_cuda_bincount, x.size, flat(x), w, weights is not None, out)
        return out
