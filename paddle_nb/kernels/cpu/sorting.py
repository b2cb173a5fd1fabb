"""Sorting rows on the CPU: the k largest (or smallest) values of each row in order and
their positions, the one loop behind top_k_v2, argsort and the order statistics, for the
interpreter (backends/cpu.py's ``top_k_rows``) and a compiled block (``top_k_along``).

Order, as Paddle's CPU kernels: NaN counts as the largest value; equal values come in the
order of their positions. A stable sort (numba's mergesort, numpy's "stable" order) keeps
that tie order, and a stable sort's result is the one permutation with it, so both paths
agree element for element.
"""
import numpy as np
from numba import njit

from .reduce import rows_over


@njit(cache=True, fastmath=False, error_model="numpy")
def _row_order(row, largest, is_float):
    """The positions of ``row`` in the order of its values (``largest``: down), stable."""
    if not largest:
        return np.argsort(row, kind="mergesort")              # NaN sorts last
    if not is_float:
        # -1 - v reverses the order of integers exactly (no overflow, unlike -v)
        return np.argsort(row.dtype.type(-1) - row, kind="mergesort")
    order = np.argsort(-row, kind="mergesort")                # down, NaN still last...
    nans = 0
    for j in range(row.size):
        if row[j] != row[j]:
            nans += 1
    if nans == 0:
        return order
    # ...so the NaNs (last, in the order of their positions) move to the front
    return np.concatenate((order[row.size - nans:], order[:row.size - nans]))


@njit(cache=True, fastmath=False, error_model="numpy")
def top_k_rows(rows, k, largest, is_float):
    """(values, positions): the first k of each row of a (rows, n) matrix in order, as
    (rows, k) matrices (positions int64); k < 0: the whole row (a sort)."""
    n = rows.shape[1]
    if k < 0:
        k = n
    elif k > n:                  # (the interpreter's check names k and the axis)
        raise ValueError("top_k: k is larger than the axis")
    values = np.empty((rows.shape[0], k), rows.dtype)
    positions = np.empty((rows.shape[0], k), np.int64)
    for r in range(rows.shape[0]):
        order = _row_order(rows[r], largest, is_float)
        for j in range(k):
            positions[r, j] = order[j]
            values[r, j] = rows[r, order[j]]
    return values, positions


@njit(cache=True, fastmath=False, error_model="numpy")
def top_k_along(x, order, inverse, k, largest, is_float):
    """top_k_rows of x (rank >= 1) along the axis ``order`` puts last (the others first,
    in order; ``inverse``: its inverse permutation), back in x's layout with k along that
    axis (k < 0: the whole axis)."""
    rows = rows_over(x, order, x.ndim - 1)
    values, positions = top_k_rows(rows, k, largest, is_float)
    moved = np.transpose(x, order).shape[:-1] + (values.shape[1],)
    return (np.ascontiguousarray(np.transpose(values.reshape(moved), inverse)),
            np.ascontiguousarray(np.transpose(positions.reshape(moved), inverse)))
