"""index_put and its gradient inside a compiled block (paddle_nb/compiler), for 1-D integer
index tensors (of one dtype): ops/index_put.py's positions (the indices broadcast together,
negative ones from the end, each row of x's first axes followed by its slice) worked out
from the run's values, each index range-checked before any is used; the values written in
order (the last of a repeated position wins, as numpy's assignment) or added into zeros in
order and then to x (``np.add.at``, then the add: the interpreter's order). The value's
gradient is set_value.py's (numpy's sum back over the broadcast axes).
"""
import numpy as np
from numba import njit

from .set_value import shape_of, spread, written_grads


@njit(cache=True, fastmath=False, error_model="numpy")
def _positions(shape, indices):
    """(the flat positions written, in value's order; value's target shape)."""
    k = len(indices)
    if k > len(shape):
        raise ValueError("index_put: the indices name more axes than x has")
    length = 1
    for i in range(k):
        n = indices[i].size
        if n != 1:
            if length != 1 and n != length:
                raise ValueError("index_put: the index tensors do not broadcast together")
            length = n
    for i in range(k):
        for v in indices[i]:
            if v < -shape[i] or v >= shape[i]:
                raise IndexError("index_put: an index is out of range")
    inner = 1
    for d in range(k, len(shape)):
        inner *= shape[d]
    positions = np.empty(length * inner, np.int64)
    for j in range(length):
        row = 0
        for i in range(k):
            v = indices[i][0 if indices[i].size == 1 else j]
            row = row * shape[i] + (v + shape[i] if v < 0 else v)
        for t in range(inner):
            positions[j * inner + t] = row * inner + t
    target = np.empty(1 + len(shape) - k, np.int64)
    target[0] = length
    for d in range(k, len(shape)):
        target[1 + d - k] = shape[d]
    return positions, target


@njit(cache=True, fastmath=False, error_model="numpy")
def index_put(x, indices, value, accumulate):
    """index_put's out: x with value (broadcast) written, or added, at the positions."""
    positions, target = _positions(x.shape, indices)
    values = spread(np.ascontiguousarray(value).reshape(value.size), shape_of(value), target)
    flat = np.ascontiguousarray(x).reshape(x.size)
    if accumulate:
        added = np.zeros(x.size, x.dtype)
        for k in range(positions.size):
            added[positions[k]] += values[k]
        return (flat + added).reshape(x.shape)
    out = flat.copy()
    for k in range(positions.size):
        out[positions[k]] = values[k]
    return out.reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def index_put_grads(dout, indices, value, accumulate, want_x, want_value):
    """(x@GRAD, value@GRAD) (an unset array where not wanted): dOut (0 where a value was
    written, unless added), and dOut at the positions summed back to value's shape."""
    positions, target = _positions(dout.shape, indices)
    return written_grads(dout, positions, target, value, want_x, not accumulate, want_value)
