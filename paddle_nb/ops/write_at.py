"""Writing into a tensor at flat positions: the one primitive under set_value, index_put,
put_along_axis and fill_diagonal_tensor (ops/set_value.py, ops/scatter_into.py).

Each of those ops first works out *which* elements of X it writes, as row-major positions
into X flattened (from its attributes, or from index tensors it has range-checked), and
then every one of them is the same three moves over the places' primitives
(backends/), so both places run them as their own kernels (on CUDA the indexing
kernels of kernels/cuda/index.py):

* forward: X flattened to rows of one element, ``scatter_rows`` the values in (assign: a
  repeated position keeps the last value, numpy's rule) or ``scatter_add`` them on top
  (accumulate);
* gradient of X: dOut with the written positions zeroed (``zero_rows``: what was
  overwritten got no gradient through X), or dOut itself where the values were added;
* gradient of the values: dOut ``take``-n at the positions, then summed back over the
  axes the values were broadcast along (``arrays.unbroadcast``).
"""
from __future__ import annotations

import numpy as np

from . import arrays


def numel(shape) -> int:
    return int(np.prod(tuple(int(d) for d in shape), dtype=np.int64))


def _rows(a):
    """``a`` as (n, 1): one element per row, the shape the row primitives take."""
    return a.reshape((numel(a.shape), 1))


def check_gradient(ctx, slot: str, grad: str) -> None:
    """A gradient op that Paddle gives only the incoming gradient ``grad`` (not the
    forward input ``slot``): where this package's backward also gives ``slot`` (an
    optional read, ``Grad(optional=...)``), ``grad`` must have its shape."""
    if ctx.has_input(slot) and ctx.has_value(grad):
        want, got = ctx.shape(slot), ctx.shape(grad)
        if len(want) != len(got) or any(a >= 0 and b >= 0 and a != b
                                        for a, b in zip(want, got)):
            ctx.fail(f"the gradient must have the shape of {slot}", slot=grad,
                     expected=str(want), given=ctx.describe_input(grad))


def positions_on(ctx, positions: np.ndarray):
    """Positions made on the host, on the op's place (a device copy on CUDA)."""
    return arrays.to_place(ctx.place, np.ascontiguousarray(positions, dtype=np.int64))


def write(place, x, positions, values, accumulate: bool):
    """X with ``values`` (as many elements as ``positions``, in their order) written at
    the flat ``positions`` (or added there, with ``accumulate``)."""
    if numel(positions.shape) == 0:
        return place.copy(x)
    values = _rows(arrays.astype(values, x.dtype))
    if accumulate:
        added = place.scatter_add((numel(x.shape), 1), positions, values, 0)
        return arrays.add(_rows(x), added).reshape(tuple(x.shape))
    return place.scatter_rows(_rows(x), positions, values, True).reshape(tuple(x.shape))


def x_grad(place, dout, positions, accumulate: bool, shape):
    """dX: dOut where X was kept (or everywhere, where the values were added), 0 where
    it was overwritten."""
    if accumulate or numel(positions.shape) == 0:
        return place.copy(dout).reshape(tuple(shape))
    return place.zero_rows(_rows(dout), positions).reshape(tuple(shape))


def values_grad(place, dout, positions, written_shape, value_shape):
    """dValues: dOut at the positions (shaped ``written_shape``, the values as they were
    broadcast), summed back to the values' own shape."""
    if numel(positions.shape) == 0:           # nothing was written: no gradient
        return arrays.full(tuple(value_shape), 0, dout.dtype, dout)
    taken = place.take(_rows(dout), positions, 0).reshape(tuple(written_shape))
    return arrays.unbroadcast(taken, tuple(value_shape), tuple(value_shape))
