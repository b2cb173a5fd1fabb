"""tril_triu's triangle (ops/triangular.py): the positions of a [rows, cols] matrix with
j - i <= diagonal (the lower triangle) or j - i >= diagonal (the upper), and, inside a
compiled block (kernels/lowered.py), each matrix of a batch kept there and zeroed
elsewhere. ``triangle_mask`` is the rule's one home: the interpreter's kernels make their
mask with it too, on either place."""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def triangle_mask(rows, cols, diagonal, lower):
    """The [rows, cols] bool mask of the triangle (module docstring)."""
    mask = np.empty((rows, cols), np.bool_)
    for i in range(rows):
        for j in range(cols):
            mask[i, j] = j - i <= diagonal if lower else j - i >= diagonal
    return mask


@njit(cache=True, fastmath=False, error_model="numpy")
def triangle_of(x, diagonal, lower):
    """tril_triu's Out (and, of dOut, its dX): a new array of x's shape holding x inside
    the triangle of each matrix in its last two dims and zeros elsewhere (a NaN outside
    becomes 0)."""
    rows, cols = x.shape[-2], x.shape[-1]
    mask = triangle_mask(rows, cols, diagonal, lower).reshape(rows * cols)
    src = np.ascontiguousarray(x).reshape(x.size)
    out = np.zeros(x.size, x.dtype)
    per = rows * cols
    for k in range(x.size):
        if mask[k % per]:
            out[k] = src[k]
    return out.reshape(x.shape)
