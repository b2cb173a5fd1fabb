"""The device scan behind kernels/check.py: every thread tests its values and the lowest
bad position wins an atomic min, so one int64 comes back to the host (and, when there is
a bad value, that one value)."""
from __future__ import annotations

import numpy as np
from numba import cuda

from .device import flat, launch


@cuda.jit(cache=True)
def _first_outside(values, low, high, has_ignore, ignore, found):
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        v = values[i]
        if (v < low or v >= high) and not (has_ignore and v == ignore):
            cuda.atomic.min(found, 0, i)


def first_outside(values, low: int, high: int, has_ignore: bool, ignore: int):
    """(flat position of the first value outside ``[low, high)``, that value), or (-1,
    None)."""
    n = values.size
    found = cuda.to_device(np.array([n], np.int64))
    flat_values = flat(values)
    launch(_first_outside, n, flat_values, int(low), int(high), bool(has_ignore), int(ignore),
           found)
    pos = int(found.copy_to_host()[0])
    if pos >= n:
        return -1, None
    return pos, int(flat_values[pos:pos + 1].copy_to_host()[0])
