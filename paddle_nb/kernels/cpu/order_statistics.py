"""kthvalue, mode and nanmedian and their gradients in a compiled block (ops/
order_statistics.py): the interpreter's own steps as one njit function each.

The forward ops move the searched axes last (reduce.rows_over, as the places' ``rows``),
sort each row with the interpreter's loop (sorting.top_k_rows) and read each sorted row
with its per-row loop (kernels/order_statistics.cpu_rows), so the values and positions
are the interpreter's. ``order`` lists X's kept dims (the first ``kept``) then the searched
ones; ``out_rank``, a literal, is Out's rank (reduce.py's convention). The gradients add
each dOut into zeros at the position the forward op found, in row order, as the
interpreter's ``np.add.at`` does; a position out of range raises (the compiler then reruns
the op in the interpreter, which names it).
"""
import numpy as np
from numba import literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..order_statistics import KTH, NANMEDIAN, cpu_rows
from .check import first_outside
from .matrix_view import matrix_shape
from .reduce import reduced_dims, rows_over, unmoved
from .sorting import top_k_rows


@njit(cache=True, fastmath=False, error_model="numpy")
def picked(x, order, kept, keep_dim, out_rank, which, k, is_float):
    """(Out, the positions, flat: one per row, two for nanmedian) of statistic ``which``
    over the dims ``order`` puts last."""
    literally(out_rank)
    rows = rows_over(x, order, kept)
    n = rows.shape[1]
    if n == 0:
        raise ValueError("the axes searched are empty")
    if which == KTH and not 1 <= k <= n:
        raise ValueError("kthvalue: k is out of range")
    values, positions = top_k_rows(rows, -1, False, is_float)
    out = np.empty(rows.shape[0], x.dtype)
    index = np.empty(rows.shape[0] * (2 if which == NANMEDIAN else 1), np.int64)
    cpu_rows(which, values, positions, k, out, index)
    shape = to_fixed_tuple(reduced_dims(x, order, kept, keep_dim, out_rank), out_rank)
    return out.reshape(shape), index


@njit(cache=True, fastmath=False, error_model="numpy")
def picked_with_indices(x, order, kept, keep_dim, out_rank, which, k, is_float):
    """kthvalue's and mode's Out and Indices (of Out's shape)."""
    out, index = picked(x, order, kept, keep_dim, out_rank, which, k, is_float)
    return out, index.reshape(out.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def put_back(x, index, dout, order, inverse, kept, per_row, half):
    """dX: zeros of X's shape with dOut (``half``: half of it, nanmedian's, whose -1
    positions are none) added at each of the ``per_row`` positions ``index`` holds for
    each row of the dims ``order`` puts after its first ``kept``."""
    count, n = matrix_shape(np.transpose(x, order), kept)
    if index.size != per_row * count or dout.size != count:
        raise ValueError("expected one gradient and its positions per row of X")
    at = np.ascontiguousarray(index).reshape(index.size)
    if first_outside(at, 0, n, half, -1) >= 0:
        raise IndexError("a position read from a tensor is out of range")
    d = np.ascontiguousarray(dout).reshape(count)
    rows = np.zeros((count, n), x.dtype)
    for r in range(count):
        v = x.dtype.type(d[r] * 0.5) if half else d[r]
        for c in range(per_row):
            if at[r * per_row + c] >= 0:
                rows[r, at[r * per_row + c]] += v
    return unmoved(rows, x, order, inverse)
