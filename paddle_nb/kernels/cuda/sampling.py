"""The sampling ops' draws on the device: the scalar functions of kernels/cpu/sampling.py
(read it first), called from one thread per element (bernoulli, poisson, randint, rrelu's
noise), one thread per row (multinomial, gumbel_softmax: a row's draws depend on each
other), or one thread for randperm's shuffle (each swap reads the previous ones). The
draws are counter-based, so the values are the CPU's for the same seed."""
from __future__ import annotations

import numpy as np
from numba import cuda

from ..cpu import sampling as cpu
from ..cpu.sampling import draw, pick_below, poisson_one
from .device import empty, flat, launch

# the functions that take arrays, compiled as device functions from their Python code
# (numba's CUDA simulator cannot hand its arrays to a CPU-compiled function; scalar ones,
# draw, pick_below and poisson_one, are called as they are)
multinomial_row = cuda.jit(device=True)(cpu.multinomial_row.py_func)
gumbel_softmax_row = cuda.jit(device=True)(cpu.gumbel_softmax_row.py_func)
randperm_into = cuda.jit(device=True)(cpu.randperm_into.py_func)


@cuda.jit(cache=True)
def _bernoulli(p, seed, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = 1.0 if draw(seed, i, 0) < p[i] else 0.0


@cuda.jit(cache=True)
def _poisson(lam, seed, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = poisson_one(seed, i, lam[i])


@cuda.jit(cache=True)
def _randint(low, high, seed, out):
    span = high - low
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = low + pick_below(draw(seed, i, 0), span)


@cuda.jit(cache=True)
def _rrelu_noise(x, lower, upper, seed, noise):
    for i in range(cuda.grid(1), noise.size, cuda.gridsize(1)):
        noise[i] = lower + (upper - lower) * draw(seed, i, 0) if x[i] < 0 else 1.0


@cuda.jit(cache=True)
def _multinomial(probs, samples, replacement, seed, out):
    for r in range(cuda.grid(1), probs.shape[0], cuda.gridsize(1)):
        multinomial_row(seed, r, probs[r], samples, replacement, out[r])


@cuda.jit(cache=True)
def _gumbel_softmax(rows, temperature, hard, seed, out):
    for r in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        gumbel_softmax_row(seed, r, rows[r], temperature, hard, out[r])


@cuda.jit(cache=True)
def _randperm(seed, out):
    if cuda.grid(1) == 0:
        randperm_into(seed, out)


def _elementwise(kernel, like, dtype, *args):
    out = empty(tuple(int(d) for d in like.shape), dtype)
    launch(kernel, out.size, *args, flat(out))
    return out


def bernoulli(p, seed: int):
    return _elementwise(_bernoulli, p, p.dtype, flat(p), np.uint64(seed))


def poisson(lam, seed: int):
    return _elementwise(_poisson, lam, lam.dtype, flat(lam), np.uint64(seed))


def randint(shape, low: int, high: int, seed: int, dtype):
    out = empty(tuple(shape), dtype)
    launch(_randint, out.size, np.int64(low), np.int64(high), np.uint64(seed), flat(out))
    return out


def rrelu_noise(x, lower: float, upper: float, seed: int):
    return _elementwise(_rrelu_noise, x, x.dtype, flat(x), float(lower), float(upper),
                        np.uint64(seed))


def multinomial(probs, samples: int, replacement: bool, seed: int):
    """int64 [R, samples] category indices of each row of probs [R, C]."""
    out = empty((int(probs.shape[0]), samples), np.int64)
    if out.size:
        launch(_multinomial, int(probs.shape[0]), probs, np.int64(samples), bool(replacement),
               np.uint64(seed), out)
    return out


def gumbel_softmax(rows, temperature: float, hard: bool, seed: int):
    out = empty(tuple(int(d) for d in rows.shape), rows.dtype)
    if out.size:
        launch(_gumbel_softmax, int(rows.shape[0]), rows, float(temperature), bool(hard),
               np.uint64(seed), out)
    return out


def randperm(n: int, seed: int, dtype):
    out = empty((n,), dtype)
    if n:
        _randperm[1, 1](np.uint64(seed), out)
    return out
