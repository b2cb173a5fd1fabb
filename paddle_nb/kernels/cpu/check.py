"""The compiled scan behind kernels/check.py: the first value outside a range.

One pass, no allocation, stopping at the first bad value: on a (65536,) int64 label vector
it costs about as much as a sum. Serial on purpose: a check is cheap next to the kernel it
guards, and it must not wake the thread pool for nothing.
"""
from numba import njit


@njit(cache=True, fastmath=True, error_model="numpy")
def first_outside(flat, low, high, has_ignore, ignore):
    """The position of the first value of ``flat`` not in ``[low, high)`` (values equal to
    ``ignore`` pass when ``has_ignore``), or -1."""
    for i in range(flat.size):
        v = flat[i]
        if (v < low or v >= high) and not (has_ignore and v == ignore):
            return i
    return -1
