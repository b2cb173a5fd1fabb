"""Max unpooling on the device: the same rules as kernels/cpu/unpool.py (its docstring).

Both run one thread per volume, which goes through its values in X's order, so that two
values sent to one position leave the later one, as on the CPU (one thread per element
would race there). The gradient first marks, in a scratch array of Out's size, which
value stayed at each position, then gathers dOut for those (0 for the others).
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .copy import fill
from .device import empty, flat, launch


@cuda.jit(cache=True)
def _unpool(x, indices, k, size, volumes, out):
    for p in range(cuda.grid(1), volumes, cuda.gridsize(1)):
        for j in range(p * k, p * k + k):
            out[p * size + indices[j]] = x[j]


def unpool(x, indices, size: int):
    """Out (P, size) of device ``x`` and ``indices`` (P, K): zeros, and x at indices."""
    volumes, k = int(x.shape[0]), int(x.shape[1])
    out = fill((volumes, size), 0, x.dtype)
    if x.size:
        launch(_unpool, volumes, flat(x), flat(indices), k, size, volumes, flat(out))
    return out


@cuda.jit(cache=True)
def _gather(indices, dout, k, size, volumes, owner, dx):
    for p in range(cuda.grid(1), volumes, cuda.gridsize(1)):
        for j in range(p * k, p * k + k):
            owner[p * size + indices[j]] = j
        for j in range(p * k, p * k + k):
            at = p * size + indices[j]
            dx[j] = dout[at] if owner[at] == j else 0


def unpool_grad(indices, dout):
    """dX (P, K) from device ``indices`` (P, K) and ``dout`` (P, size)."""
    volumes, k = int(indices.shape[0]), int(indices.shape[1])
    size = int(dout.shape[1])
    dx = empty(indices.shape, dout.dtype)
    if dx.size:
        owner = empty((volumes * size,), np.int64)
        launch(_gather, volumes, flat(indices), flat(dout), k, size, volumes, owner,
               flat(dx))
    return dx
