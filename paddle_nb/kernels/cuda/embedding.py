"""Embedding rows on the device: ``out[i] = w[ids[i]]`` (zeros where ``ids[i]`` is the
padding id) and its gradient, ``dw[ids[i]] += dout[i]`` for every i that is not padding.

Both are grid-stride loops over the elements of ``out`` / ``dout`` seen as (n, D). The
ids were range-checked by the op before launch (kernels/check.py): these kernels read and
write where the ids say, unchecked. In the gradient two ids alike add into one row of
``dw`` from different threads, so each addition is an atomic add (float32 and float64:
compute capability 6.0 and above), as Paddle's own CUDA kernel does; the order of the
additions into one element is not fixed, so float sums may differ in the last bits
between runs (the CPU's serial loop adds in the order of the ids).
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .copy import fill
from .device import empty, flat, launch


@cuda.jit(cache=True)
def _lookup(w, ids, padding_idx, width, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        r = ids[i // width]
        if r == padding_idx:
            out[i] = 0
        else:
            out[i] = w[r * width + i % width]


def lookup(w, ids, padding_idx: int, out=None):
    """(n, D): the rows of ``w`` (V, D) at the flat ``ids`` (n,) (checked), zeros where an
    id is ``padding_idx`` (-1: none). ``out`` is ignored (the CPU's signature)."""
    width = int(w.shape[1])
    out = empty((int(ids.size), width), w.dtype)
    launch(_lookup, out.size, flat(w), flat(ids), np.int64(padding_idx), np.int64(width),
           flat(out))
    return out


@cuda.jit(cache=True)
def _lookup_grad(dout, ids, padding_idx, width, dw):
    for i in range(cuda.grid(1), dout.size, cuda.gridsize(1)):
        r = ids[i // width]
        if r != padding_idx:
            cuda.atomic.add(dw, r * width + i % width, dout[i])


def lookup_grad(dout, ids, padding_idx: int, shape, out=None):
    """Zeros of ``shape`` (V, D) with each row of ``dout`` (n, D) added at its id in the
    flat ``ids`` (n,) (checked), rows whose id is ``padding_idx`` left out. ``out`` is
    ignored (the CPU's signature)."""
    dw = fill(tuple(int(d) for d in shape), 0, dout.dtype)
    launch(_lookup_grad, dout.size, flat(dout), flat(ids), np.int64(padding_idx),
           np.int64(shape[1]), flat(dw))
    return dw
