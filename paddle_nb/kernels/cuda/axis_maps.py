"""Copies through one index map per axis: slice, strided_slice, flip, pad and pad3d on the
device, and their gradients.

Each of those ops reads output position ``(o_0, ..., o_r-1)`` from input position
``(map_0[o_0], ..., map_r-1[o_r-1])``: a slice's map is ``start + o * stride``, a flip's
``n - 1 - o``, a reflect pad's a mirrored index; ``-1`` means "outside X", where the pad
value goes. The maps of all axes travel as one int64 array (axis d's starts at
``starts[d]``), so one kernel serves every such op and any rank. The gradient is the
mirror: each dOut element is added into dX where its maps point, atomically, since a
reflect or replicate pad reads one X element for several outputs.

Launchers take and return C-contiguous device arrays; maps are built on the host (their
total length is the sum of the output's dims, not its size).
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .copy import fill
from .device import c_strides, empty, flat, int_array, launch


@cuda.jit(device=True)
def _mapped_offset(i, maps, starts, shape, strides):
    """The flat offset the maps send element i of a tensor of ``shape`` to (in a tensor of
    ``strides``), or -1 where any axis' map says "outside"."""
    rem = i
    offset = 0
    for d in range(shape.size - 1, -1, -1):       # unravel, last dim fastest
        extent = shape[d]
        src = maps[starts[d] + rem % extent]
        rem //= extent
        if src < 0:
            return -1
        offset += src * strides[d]
    return offset


@cuda.jit(cache=True)
def _gather(x, x_strides, maps, starts, out_shape, value, out):
    """out[i] = x at the mapped position of i's multi-index, or value where a map is -1."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        offset = _mapped_offset(i, maps, starts, out_shape, x_strides)
        out[i] = x[offset] if offset >= 0 else value


@cuda.jit(cache=True)
def _scatter_add(dout, maps, starts, dout_shape, dx_strides, dx):
    """dx at the mapped position of i's multi-index += dout[i] (unmapped i: dropped)."""
    for i in range(cuda.grid(1), dout.size, cuda.gridsize(1)):
        offset = _mapped_offset(i, maps, starts, dout_shape, dx_strides)
        if offset >= 0:
            cuda.atomic.add(dx, offset, dout[i])


def _packed(maps) -> tuple:
    """The maps as one int64 device array and where each axis' map starts in it."""
    lengths = [len(m) for m in maps]
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]) if maps else np.zeros(0)
    joined = np.concatenate([np.asarray(m, np.int64) for m in maps]) if maps else \
        np.zeros(1, np.int64)             # (a 0-d tensor: no maps, one element)
    return int_array(joined), int_array(starts)


def gather_maps(x, maps, value=0):
    """A new array of shape ``[len(m) for m in maps]`` read from ``x`` through the maps
    (every entry -1 or a position in x's axis), ``value`` where an entry is -1."""
    shape = tuple(len(m) for m in maps)
    if x.size == 0:                       # nothing to read: every position is outside
        return fill(shape, value, x.dtype)
    out = empty(shape, x.dtype)
    if out.size:
        packed, starts = _packed(maps)
        launch(_gather, out.size, flat(x), int_array(c_strides(x.shape)), packed, starts,
               int_array(shape), x.dtype.type(value), flat(out))
    return out


def scatter_maps(shape, maps, dout):
    """Zeros of ``shape`` with each element of ``dout`` (shaped by the maps) added where
    its maps point: the gradient of ``gather_maps``."""
    shape = tuple(int(d) for d in shape)
    dx = fill(shape, 0, dout.dtype)
    if dout.size and dx.size:
        packed, starts = _packed(maps)
        launch(_scatter_add, dout.size, flat(dout), packed, starts, int_array(dout.shape),
               int_array(c_strides(shape)), flat(dx))
    return dx
