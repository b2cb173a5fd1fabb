"""How many elements a tensor holds, in a compiled block: ``size`` (ops/size.py) and
``is_empty`` (ops/closeness.py). Both read only X's dims, never its elements, and answer
with a new 0-D array, as their interpreter kernels do.
"""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def element_count(x):
    """size's Out: X's element count, a new 0-D int64 array."""
    return np.full((), x.size, np.int64)


@njit(cache=True, fastmath=False, error_model="numpy")
def has_no_elements(x):
    """is_empty's Out: whether X has no elements, a new 0-D bool array."""
    return np.full((), x.size == 0)
