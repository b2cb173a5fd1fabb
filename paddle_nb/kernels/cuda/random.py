"""Random fills from a counter-based generator: element i's value is a hash of (seed, i).

Why counter-based: a sequential generator (numpy's, numba's) has a state each draw
advances, so thousands of GPU threads would have to share or split it. A hash of the
element's index needs no state at all: every thread computes its own value, in any order,
and the same seed gives the same tensor on every run and any grid. (numba.cuda.random's
xoroshiro states work too, but must be created and stored per thread, and are very slow in
the simulator.)

The hash is murmur3's 32-bit finaliser ("fmix32": xor-shifts and multiplies that spread
every input bit over every output bit), applied twice with the seed mixed in between. All
arithmetic is on uint64 holding 32-bit values, so products never overflow 64 bits; every
constant is an explicit uint64 so numba never mixes signed and unsigned (which it would
type as float). Uniform values use 32 random bits, (h + 0.5) / 2**32 in (0, 1); Gaussian
values use Box-Muller on two of them.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda

from ..cpu.random import counter_uniform
from .device import empty, flat, launch

_MASK = np.uint64(0xFFFFFFFF)
_S16 = np.uint64(16)
_S13 = np.uint64(13)
_S32 = np.uint64(32)
_ONE = np.uint64(1)
_C1 = np.uint64(0x85EBCA6B)
_C2 = np.uint64(0xC2B2AE35)
_GOLDEN = np.uint64(0x9E3779B9)
_INV_2_32 = 1.0 / 4294967296.0


@cuda.jit(device=True)
def _fmix32(h):
    h = h ^ (h >> _S16)
    h = (h * _C1) & _MASK
    h = h ^ (h >> _S13)
    h = (h * _C2) & _MASK
    return h ^ (h >> _S16)


@cuda.jit(device=True)
def _uniform01(seed, counter):
    """A value in (0, 1) from (seed, counter); both uint64."""
    lo = counter & _MASK
    hi = counter >> _S32
    h = _fmix32(lo ^ _fmix32((seed & _MASK) ^ _GOLDEN))
    h = _fmix32((h + hi + (seed >> _S32) * _GOLDEN) & _MASK)
    return (h + 0.5) * _INV_2_32


@cuda.jit(cache=True)
def _uniform(seed, low, high, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = low + (high - low) * _uniform01(seed, np.uint64(i))


@cuda.jit(cache=True)
def _gaussian(seed, mean, std, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        c = np.uint64(i) << _ONE               # two counters per value: 2i and 2i + 1
        u1 = _uniform01(seed, c)
        u2 = _uniform01(seed, c | _ONE)
        z = math.sqrt(-2.0 * math.log(u1)) * math.cos(2.0 * math.pi * u2)
        out[i] = mean + std * z


def uniform(shape, low: float, high: float, seed: int, dtype=np.float32):
    """Values drawn uniformly from [low, high), the same for the same nonzero seed."""
    out = empty(shape, dtype)
    launch(_uniform, out.size, np.uint64(seed), float(low), float(high), flat(out))
    return out


def gaussian(shape, mean: float, std: float, seed: int, dtype=np.float32):
    """Values drawn from N(mean, std**2), the same for the same nonzero seed."""
    out = empty(shape, dtype)
    launch(_gaussian, out.size, np.uint64(seed), float(mean), float(std), flat(out))
    return out


@cuda.jit(cache=True)
def _dropout_mask(seed, p, mask):
    for i in range(cuda.grid(1), mask.size, cuda.gridsize(1)):
        mask[i] = 0 if counter_uniform(seed, np.uint64(i)) < p else 1


def dropout_mask(shape, seed: int, p: float):
    """uint8 of ``shape``: 0 where dropped, 1 where kept; the CPU's mask for the same seed
    (both draw kernels/cpu/random.py's counter_uniform)."""
    mask = empty(shape, np.uint8)
    launch(_dropout_mask, mask.size, np.uint64(seed), float(p), flat(mask))
    return mask
