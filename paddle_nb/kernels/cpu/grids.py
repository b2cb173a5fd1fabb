"""Several tensors made one shape, inside a compiled block (kernels/lowered.py):
broadcast_tensors (each input broadcast to the shape they all broadcast to) and meshgrid
(k vectors laid along the k axes of one grid), and their gradients, which sum each
output's gradient back over the axes its input was repeated along as the interpreter's
``sum_axes`` sums them (kernels/cpu/reduce's row sums). The common shape is found when the
block runs, so one compiled function serves every batch size.
"""
import numpy as np
from numba import literal_unroll, literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from .reduce import summed_over


@njit(cache=True, fastmath=False, error_model="numpy")
def broadcast_all(xs, rank):
    """broadcast_tensors' Out: each array of the tuple ``xs`` broadcast to their common
    shape (numpy's rule; ``rank``, a literal, the largest rank), copied; a list."""
    literally(rank)
    dims = np.ones(rank, np.int64)
    for x in literal_unroll(xs):
        lead = rank - x.ndim
        for k in range(x.ndim):
            d = x.shape[k]
            if dims[lead + k] == 1:
                dims[lead + k] = d
            elif d != 1 and d != dims[lead + k]:
                raise ValueError("broadcast_tensors: the inputs do not broadcast to one shape")
    shape = to_fixed_tuple(dims, rank)
    outs = []
    for x in literal_unroll(xs):
        outs.append(np.broadcast_to(x, shape).copy())
    return outs


@njit(cache=True, fastmath=False, error_model="numpy")
def summed_each(xs, douts, orders, kepts, rank):
    """broadcast_tensors' dX (the tuples ``xs`` and ``douts`` of one rank ``rank``, a
    literal): each dOut summed over the dims its X was stretched along (``orders[i]``:
    X's other dims, the first ``kepts[i]``, then those), in X's shape; a list."""
    literally(rank)
    grads = []
    for i in range(len(xs)):
        if kepts[i] == rank:                  # nothing stretched: a copy
            grads.append(np.copy(douts[i]).reshape(xs[i].shape))
        else:
            summed = summed_over(douts[i], orders[i], kepts[i], True, rank, False)
            grads.append(summed.reshape(xs[i].shape))
    return grads


@njit(cache=True, fastmath=False, error_model="numpy")
def grids_of(xs, rank):
    """meshgrid's Out: for the tuple of vectors (or 0-d values) ``xs``, ``rank`` (a
    literal) of them, grid i holds xs[i] along axis i, repeated along the others; a
    list."""
    literally(rank)
    dims = np.empty(rank, np.int64)
    i = 0
    for x in literal_unroll(xs):
        dims[i] = x.size
        i += 1
    shape = to_fixed_tuple(dims, rank)
    total = dims.prod()
    grids = []
    inner = total
    i = 0
    for x in literal_unroll(xs):
        src = np.ascontiguousarray(x).reshape(x.size)
        inner = inner // max(dims[i], 1)
        flat = np.empty(total, x.dtype)
        for p in range(total):
            flat[p] = src[(p // inner) % dims[i]]
        grids.append(flat.reshape(shape))
        i += 1
    return grids


@njit(cache=True, fastmath=False, error_model="numpy")
def grids_grad(xs, douts, orders):
    """meshgrid's dX for 1-D xs: dOut i summed over every axis but i (``orders[i]``: i,
    then the others), a vector of xs[i]'s length; a list."""
    grads = []
    for i in range(len(xs)):
        grads.append(summed_over(douts[i], orders[i], 1, False, 1, False).reshape(xs[i].shape))
    return grads
