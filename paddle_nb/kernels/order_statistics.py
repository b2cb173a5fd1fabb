"""The k-th smallest value, the most frequent value and the NaN-ignoring median of each row,
read from the rows sorted (ops/order_statistics.py), for both places.

Each op first sorts its rows ascending with the places' ``top_k_rows`` (NaN last, equal
values in the order of their positions, with the position each value came from); what is
left is one pass over a sorted row, written once as ``register_jitable`` functions that the
CPU's ``njit`` loop and the device's ``cuda.jit`` kernel (one thread per row) both call,
the statistic chosen per call (``which``).

- kthvalue: column k - 1 of the sorted row.
- mode: the longest run of equal values (NaN never equals itself, so each NaN is a run
  of one); the first longest run wins, so the smallest of the most frequent values, and
  its index is the run's last position (the largest position of that value).
- nanmedian: m = how many values are not NaN; the middle one (m odd) or the mean of the
  two middle ones (m even), with both positions (twice the same for m odd; -1, -1 and NaN
  where the row is all NaN).
"""
from __future__ import annotations

import numpy as np
from numba import cuda, njit
from numba.extending import register_jitable

from .cuda.device import empty, launch


@register_jitable
def _row_kth(values, positions, r, k, out, index):
    out[r] = values[r, k - 1]
    index[r] = positions[r, k - 1]


@register_jitable
def _row_mode(values, positions, r, out, index):
    n = values.shape[1]
    best, best_count, run = 0, 0, 0
    for j in range(n):
        run += 1
        if j == n - 1 or values[r, j + 1] != values[r, j]:
            if run > best_count:             # strictly longer: the first longest wins
                best, best_count = j, run
            run = 0
    out[r] = values[r, best]
    index[r] = positions[r, best]


@register_jitable
def _row_nanmedian(values, positions, r, out, index):
    n = values.shape[1]
    m = 0
    while m < n and values[r, m] == values[r, m]:    # NaN sorts last: count the numbers
        m += 1
    if m == 0:
        out[r] = np.nan
        index[2 * r] = -1
        index[2 * r + 1] = -1
        return
    low, high = (m - 1) // 2, m // 2
    if low == high:
        out[r] = values[r, low]
    else:                                    # the mean, halved first: no overflow
        out[r] = values[r, low] / 2 + values[r, high] / 2
    index[2 * r] = positions[r, low]
    index[2 * r + 1] = positions[r, high]


# --- one loop over the rows per place -----------------------------------------------------
KTH, MODE, NANMEDIAN = 0, 1, 2
_INDEX_PER_ROW = {KTH: 1, MODE: 1, NANMEDIAN: 2}     # positions each row's answer keeps


@register_jitable
def _row(which, values, positions, k, r, out, index):
    if which == KTH:
        _row_kth(values, positions, r, k, out, index)
    elif which == MODE:
        _row_mode(values, positions, r, out, index)
    else:
        _row_nanmedian(values, positions, r, out, index)


@njit(cache=True)
def cpu_rows(which, values, positions, k, out, index):
    for r in range(values.shape[0]):
        _row(which, values, positions, k, r, out, index)


@cuda.jit(cache=True)
def _cuda_rows(which, values, positions, k, out, index):
    for r in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):     # a thread a row
        _row(which, values, positions, k, r, out, index)


def _run(on_device: bool, which: int, values, positions, k: int = 0):
    """(one value per row, its positions) of ``which`` statistic from sorted (R, n) rows."""
    rows = int(values.shape[0])
    make = empty if on_device else np.empty
    out = make((rows,), values.dtype)
    index = make((rows * _INDEX_PER_ROW[which],), np.dtype(np.int64))
    if on_device:
        launch(_cuda_rows, rows, which, values, positions, k, out, index)
    elif rows:
        cpu_rows(which, values, positions, k, out, index)
    return out, index


class CPU:
    on_device = False

    @classmethod
    def kth(cls, values, positions, k: int):
        return _run(cls.on_device, KTH, values, positions, k)

    @classmethod
    def mode(cls, values, positions):
        return _run(cls.on_device, MODE, values, positions)

    @classmethod
    def nanmedian(cls, values, positions):
        return _run(cls.on_device, NANMEDIAN, values, positions)


class CUDA(CPU):
    on_device = True
