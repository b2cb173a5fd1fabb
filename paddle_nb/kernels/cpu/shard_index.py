"""shard_index's map of an id to its shard-local id (ops/shard_index.py), and the op in a
compiled block.

``shard_local_id`` is a @pointwise function (the interpreter's kernel is
``pointwise.KERNELS["shard_local_id"]``; this module keeps the scalar function), so the
interpreter's ufunc and the compiled loop map each id with one function.
"""
import numpy as np
from numba import njit

from .check import first_outside
from .reduce import pointwise_scalar

ID_TYPES = ("int32", "int64")          # the id types Paddle registers shard_index for


@pointwise_scalar([f"{t}({t}, {t}, {t}, {t})" for t in ID_TYPES], params=3)
def shard_local_id(x, shard_size, shard_id, ignore_value):
    return x - shard_id * shard_size if x // shard_size == shard_id else ignore_value


@njit(cache=True, fastmath=False, error_model="numpy")
def shard_local(x, index_num, shard_size, shard_id, ignore_value):
    """Out in a compiled block: shard_local_id of each id, every id checked first (the
    interpreter's check raises the op's own error when the compiler reruns it)."""
    flat = np.ascontiguousarray(x).reshape(x.size)
    if first_outside(flat, 0, index_num, False, 0) >= 0:
        raise IndexError("shard_index: an id is out of range")
    out = np.empty(x.size, x.dtype)
    for i in range(flat.size):
        out[i] = shard_local_id(flat[i], shard_size, shard_id, ignore_value)
    return out.reshape(x.shape)
