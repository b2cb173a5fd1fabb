"""range's length and values (ops/arange.py), inside a compiled block too
(kernels/lowered.py): the length comes from the values of Start, End and Step, so the
compiled code works it out when the block runs, with the kernel's checks, before it
allocates. ``range_count`` is the formula's one home: the interpreter's kernel counts with
it (after checks of its own that name the values in their messages)."""
import math

import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def range_count(start, end, step, integer, limit):
    """How many values Paddle's range makes from numpy scalars of one type: for integers
    ceil(|end - start| / |step|) exactly (an unsigned difference: no overflow), for
    floats ceil(|(end - start) / step|) in their type, as Paddle computes it (``integer``
    says which). Raises
    where the progression never reaches end, its bounds are not numbers, or the count
    exceeds ``limit``."""
    if step == 0:
        raise ValueError("range: Step is 0")
    if (start < end and step < 0) or (start > end and step > 0):
        raise ValueError("range: Step moves away from End")
    if integer:
        lo, hi = (start, end) if start <= end else (end, start)
        gap = np.uint64(np.int64(hi)) - np.uint64(np.int64(lo))
        stride = np.uint64(abs(np.int64(step)))
        count = gap // stride + np.uint64(1 if gap % stride else 0)
        if count > np.uint64(limit):
            raise ValueError("range: too many values")
        return np.int64(count)
    size = abs((end - start) / step)
    if not math.isfinite(size):
        raise ValueError("range: no finite number of values")
    if size > limit:
        raise ValueError("range: too many values")
    return np.int64(math.ceil(size))


@njit(cache=True, fastmath=False, error_model="numpy")
def arange_of(start, end, step, integer, limit):
    """range's Out from 1-element arrays: ``start + i * step`` for each i below the
    count, worked out in int64 (``integer``) or float64 and stored in Start's type,
    as the interpreter's ``arange``; at most ``limit`` values."""
    s = start.reshape(start.size)[0]
    k = step.reshape(step.size)[0]
    n = range_count(s, end.reshape(end.size)[0], k, integer, limit)
    out = np.empty(n, start.dtype)
    if integer:
        s64, k64 = np.int64(s), np.int64(k)
        for i in range(n):
            out[i] = s64 + i * k64
    else:
        f64, g64 = np.float64(s), np.float64(k)
        for i in range(n):
            out[i] = f64 + np.float64(i) * g64
    return out
