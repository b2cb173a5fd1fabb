"""searchsorted's binary search (ops/searchsorted.py): one search per value, written once
(``register_jitable``) for the CPU's loop here and the device's kernel
(kernels/cuda/searchsorted.py), and the op in a compiled block.

NaN counts as the largest value, as in numpy and Paddle: a NaN value goes after every
number.
"""
import numpy as np
from numba import njit
from numba.extending import register_jitable


@register_jitable
def sorts_before(a, b):
    """a sorts before b, NaN counting as the largest value."""
    return a < b or (a == a and b != b)


@register_jitable
def search_one(seq, start, m, v, right):
    """Where v goes in seq[start:start + m]: the first position whose element is not
    below v (C++'s lower_bound), or with ``right`` above it (upper_bound)."""
    low, high = 0, m
    while low < high:
        mid = (low + high) // 2
        e = seq[start + mid]
        go_right = not sorts_before(v, e) if right else sorts_before(e, v)
        if go_right:
            low = mid + 1
        else:
            high = mid
    return low


@njit(cache=True, fastmath=False, error_model="numpy")
def search_each(seq, m, rows, values, per_row, right, out):
    """out[i]: where values[i] goes in its row of ``seq`` (rows of m elements, one per
    ``per_row`` values; a single row serves every value). All flat."""
    for i in range(values.size):
        start = (i // per_row) * m if rows > 1 else 0
        out[i] = search_one(seq, start, m, values[i], right)


@njit(cache=True, fastmath=False, error_model="numpy")
def searched(seq, values, right, zero):
    """Out (of zero's dtype) in a compiled block, for Values of rank >= 1 and a sequence
    of their leading dims or 1-D, checked as the interpreter checks them (raising, so that
    the compiler reruns the op there for the named error)."""
    if seq.ndim > 1 and seq.shape[:-1] != values.shape[:-1]:
        raise ValueError("searchsorted: an N-D SortedSequence needs Values' leading dims")
    m = seq.shape[-1]
    out = np.full(values.shape, zero)
    if out.size == 0:
        return out
    flat_seq = np.ascontiguousarray(seq).reshape(seq.size)
    rows = flat_seq.size // m if m else 0
    for r in range(rows):
        for j in range(m - 1):
            if sorts_before(flat_seq[r * m + j + 1], flat_seq[r * m + j]):
                raise ValueError("searchsorted: the sequence is not sorted")
    per_row = values.shape[-1] if values.shape[-1] else 1
    search_each(flat_seq, m, rows, np.ascontiguousarray(values).reshape(values.size),
                per_row, right, out.reshape(out.size))
    return out
