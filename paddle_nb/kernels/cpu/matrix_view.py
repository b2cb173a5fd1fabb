"""A tensor seen as a matrix, in numba code: how the compiled forms of the ops (paddle_nb/
compiler) hand tensors of any rank to the row kernels and to BLAS, as the places' ``rows``
and mul's flattening do in the interpreter."""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def matrix_shape(a, leading):
    """(rows, columns) of ``a`` as a matrix whose rows are its first ``leading`` dims."""
    rows = cols = 1
    for d in range(a.ndim):
        if d < leading:
            rows *= a.shape[d]
        else:
            cols *= a.shape[d]
    return rows, cols


@njit(cache=True, fastmath=False, error_model="numpy")
def as_matrix(a, leading):
    """``a`` as a C-contiguous matrix of matrix_shape(a, leading) (a view when ``a`` is
    C-contiguous)."""
    return np.ascontiguousarray(a).reshape(matrix_shape(a, leading))


@njit(cache=True, fastmath=False, error_model="numpy")
def last_axis_rows(a):
    """``a`` as a C-contiguous (rows, last dim) matrix: the places' ``rows`` for the last
    axis."""
    n = a.shape[-1]
    return np.ascontiguousarray(a).reshape((a.size // n if n else 0, n))
