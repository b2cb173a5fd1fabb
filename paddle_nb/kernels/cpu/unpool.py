"""Max unpooling (the unpool / unpool3d ops): each pooled value put back at the position
its max came from, zeros elsewhere; and its gradient, which reads dOut at those positions.

Both work on flattened volumes: ``x`` and ``indices`` (P, K) (P = batch x channels, K the
pooled elements of one volume), the output (P, size) (size = the unpooled plane or volume,
``output_size``'s product). The indices were range-checked by the op first. Two values
sent to one position: the later one (in X's order) stays, as in Paddle's CPU kernel (from
a max pool with overlapping windows the two are the same element of its input, so the
same value). The gradient gives dOut at a position only to the value that stayed there
(the one Out shows; the others do not reach Out: their gradient is 0, what central
differences say). Paddle 2.6.2's unpool_grad gives it to every value sent there, which
after an overlapping max pool counts the same input element twice.
"""
import numpy as np
from numba import njit

from .check import first_outside
from .threads import parallel_ok
from .twins import twins

# output elements from which the volumes are split between threads (a copy per element:
# the threshold of the pooling gradient's scatter, kernels/cpu/pool.py)
MIN_PARALLEL_UNPOOL = 32_768


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _unpool_volume(x, indices, out, p):
    for k in range(x.shape[1]):             # each volume by one thread: the order holds
        out[p, indices[p, k]] = x[p, k]


_unpool_serial, _unpool_parallel = twins(_unpool_volume, "_unpool", items="x.shape[0]")


def unpool(x, indices, size: int):
    """Out (P, size): zeros, and x[p, k] at indices[p, k]."""
    out = np.zeros((x.shape[0], size), x.dtype)
    parallel = out.size >= MIN_PARALLEL_UNPOOL and parallel_ok()
    (_unpool_parallel if parallel else _unpool_serial)(x, indices, out)
    return out


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _gather_volume(indices, dout, dx, owner, p):
    # who stayed at each position: the last value sent there (owner[at] = its k); every
    # position read below is written here first, so owner needs no clearing between
    # volumes
    for k in range(indices.shape[1]):
        owner[indices[p, k]] = k
    for k in range(indices.shape[1]):
        at = indices[p, k]
        dx[p, k] = dout[p, at] if owner[at] == k else 0


# who stayed where: the serial loop makes one array for all volumes, the parallel loop one
# per volume (threads must not share it)
_gather_serial, _gather_parallel = twins(
    _gather_volume, "_gather", items="indices.shape[0]",
    scratch={"owner": "np.empty(dout.shape[1], np.int64)"})


def unpool_grad(indices, dout):
    """dX (P, K): dX[p, k] = dOut[p, indices[p, k]] where X[p, k] is the value that stayed
    at that position, else 0."""
    dx = np.empty(indices.shape, dout.dtype)
    parallel = dout.size >= MIN_PARALLEL_UNPOOL and parallel_ok()
    (_gather_parallel if parallel else _gather_serial)(indices, dout, dx)
    return dx


# --- inside a compiled block (paddle_nb/compiler) -----------------------------------------
# unpool/unpool3d and their gradients with the serial loops above, Indices checked first
# (a position outside the output raises; the interpreter's rerun names the op and value).
@njit(cache=True, fastmath=False, error_model="numpy")
def _checked_positions(x, indices, size):
    """Indices (N, C, ...) as (N*C, K), every position in [0, size)."""
    if indices.shape != x.shape:
        raise ValueError("unpool: Indices must have X's shape")
    p = x.shape[0] * x.shape[1]
    flat = np.ascontiguousarray(indices).reshape((p, x.size // p if p else 0))
    if first_outside(flat.ravel(), 0, size, False, 0) >= 0:
        raise IndexError("unpool: an Indices position is out of range")
    return flat


@njit(cache=True, fastmath=False, error_model="numpy")
def unpooled(x, indices, output_size):
    """unpool's Out (N, C, *output_size): zeros, each X value at its Indices position."""
    size = 1
    for s in output_size:
        size *= s
    flat = _checked_positions(x, indices, size)
    out = np.zeros((flat.shape[0], size), x.dtype)
    _unpool_serial(np.ascontiguousarray(x).reshape(flat.shape), flat, out)
    return out.reshape((x.shape[0], x.shape[1]) + output_size)


@njit(cache=True, fastmath=False, error_model="numpy")
def unpooled_grad(x, indices, dout):
    """unpool_grad's dX from X, Indices and dOut (N, C, *output_size, X's dtype)."""
    if dout.shape[:2] != x.shape[:2]:
        raise ValueError("unpool_grad: Out@GRAD must have the unpooled output's shape")
    p = x.shape[0] * x.shape[1]
    size = dout.size // p if p else 0
    flat = _checked_positions(x, indices, size)
    dx = np.empty(flat.shape, dout.dtype)
    _gather_serial(flat, np.ascontiguousarray(dout).reshape((flat.shape[0], size)), dx)
    return dx.reshape(x.shape)
