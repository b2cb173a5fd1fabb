"""searchsorted on the device: one thread per value runs kernels/cpu/searchsorted.py's
binary search (read it first) in its row of the sequence.
"""
from __future__ import annotations

from numba import cuda

from ..cpu.searchsorted import search_one


@cuda.jit(cache=True)
def search_each(seq, m, rows, values, per_row, right, out):
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        start = (i // per_row) * m if rows > 1 else 0
        out[i] = search_one(seq, start, m, values[i], right)
