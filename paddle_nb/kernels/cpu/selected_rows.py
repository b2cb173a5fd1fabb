"""SelectedRows rows added into a dense table: ``dst[rows[i]] += f * value[i]`` for i in
the order of ``rows`` (f = ``sign * cell[0]``: 1 to make the dense gradient, -lr for an SGD
step), and the merge of repeated rows (Paddle's MergeAdd).

``dst`` is (V, D), ``rows`` int64 (n,), ``value`` (n, D). The rows were range-checked by
the op (ops/selected_rows.py) before these run. Serial on purpose: a sparse gradient has
a row per id looked up (a batch's worth, not the table's), and the order of the ids is
the order Paddle's CPU kernels add repeated rows in, which this loop keeps bit for bit
(each addition is rounded to dst's type before the next, as Paddle's in-place loop does).
The CUDA twin (kernels/cuda/selected_rows.py) keeps the same order per element.
"""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def _add_rows(dst, rows, value, cell, sign):
    f = sign * cell[0]
    for i in range(rows.shape[0]):
        r = rows[i]
        for j in range(value.shape[1]):
            dst[r, j] += f * value[i, j]


def add_rows(dst, rows, value, cell, sign: float):
    """``dst`` (V, D) with each row of ``value`` (n, D) times ``sign * cell[0]`` added at
    its row in ``rows`` (n,), in order; in place, and returned."""
    if rows.shape[0]:
        _add_rows(dst, rows, value, cell, float(sign))
    return dst


def merge(rows, value):
    """(the distinct rows, sorted; their values added up in the order of ``rows``)."""
    unique, where = np.unique(rows, return_inverse=True)
    summed = np.zeros((unique.shape[0], value.shape[1]), value.dtype)
    add_rows(summed, where.reshape(-1).astype(np.int64), value, np.ones(1, value.dtype), 1.0)
    return unique.astype(np.int64), summed
