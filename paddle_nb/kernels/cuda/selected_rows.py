"""SelectedRows rows added into a dense table on the device: ``dst[rows[i]] += f *
value[i]`` (f = ``sign * cell[0]``, the cell read on the device), and the merge of
repeated rows.

Two ids alike add into one row. Atomic adds would make the order of those additions
vary between runs; instead the host groups the positions by row once (``segments``: a
stable sort of the n row numbers, a small copy back) and one thread owns each element of
a distinct row, adding its group's values in the order of the ids: the CPU's order, so
both places give the same bits (kernels/cpu/selected_rows.py). The rows were
range-checked by the op before launch.
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .copy import fill
from .device import flat, int_array, launch


def segments(rows_host: np.ndarray):
    """(distinct rows sorted, positions of ``rows_host`` grouped by row in their original
    order, where each group starts (one more entry: the end))."""
    order = np.argsort(rows_host, kind="stable")
    ranked = rows_host[order]
    starts = np.flatnonzero(np.r_[True, ranked[1:] != ranked[:-1]]) if ranked.size else \
        np.zeros(0, np.int64)
    return ranked[starts], order, np.append(starts, ranked.size)


@cuda.jit(cache=True)
def _add_segments(dst, dst_rows, order, bounds, value, width, cell, sign):
    f = sign * cell[0]
    for t in range(cuda.grid(1), dst_rows.size * width, cuda.gridsize(1)):
        g = t // width
        j = t % width
        at = dst_rows[g] * width + j
        for k in range(bounds[g], bounds[g + 1]):
            dst[at] += f * value[order[k] * width + j]     # this thread's element only


def _add(dst, dst_rows, order, bounds, value, cell, sign: float):
    width = int(value.shape[1])
    n = int(dst_rows.size) * width
    launch(_add_segments, n, flat(dst), int_array(dst_rows), int_array(order),
           int_array(bounds), flat(value), np.int64(width),
           cell, np.float64(sign))
    return dst


def add_rows(dst, rows, value, cell, sign: float):
    """``dst`` (V, D, on the device) with each row of ``value`` (n, D) times ``sign *
    cell[0]`` added at its row in ``rows`` (n,); in place, and returned."""
    unique, order, bounds = segments(rows.copy_to_host())
    return _add(dst, unique, order, bounds, value, cell, sign)


def merge(rows, value):
    """(the distinct rows, sorted; their values added up in the order of ``rows``), as
    device arrays."""
    unique, order, bounds = segments(rows.copy_to_host())
    width = int(value.shape[1])
    summed = fill((unique.size, width), 0, value.dtype)
    one = cuda.to_device(np.ones(1, value.dtype))
    _add(summed, np.arange(unique.size), order, bounds, value, one, 1.0)
    return int_array(unique), summed
