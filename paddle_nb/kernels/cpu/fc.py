"""fc inside a compiled block (ops/fc.py): Out = act(Input2D @ W + Bias) as the op's kernel
computes it, mul's product (matmul.product: BLAS from numba, or numpy's for a product
OpenBLAS would thread), then the bias added and relu applied in place, element by element
(an add and a select: the same bits as elementwise_add's and relu's ufuncs)."""
import numpy as np
from numba import literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from .matmul import product
from .matrix_view import as_matrix


@njit(cache=True, fastmath=False, error_model="numpy")
def fully_connected(x, w, bias, in_num_col_dims, out_rank, pad, relu):
    """fc's Out of shape x.shape[:in_num_col_dims] + [columns]: ``pad`` rows and columns
    of W dropped at its end (padding_weights: 4, else 0); ``bias`` an array of one value a
    column, or None; ``relu``: ops/activation.relu's ``x if not x <= 0 else 0`` (NaN
    stays NaN)."""
    literally(out_rank)
    weights = w[:w.shape[0] - pad, :w.shape[1] - pad]
    out = product(as_matrix(x, in_num_col_dims), weights, False, False, 1.0)
    if bias is not None:
        if bias.size != out.shape[1]:
            raise ValueError("fc: Bias does not hold one value per output column")
        b = np.ascontiguousarray(bias).reshape(bias.size)
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                out[i, j] = out[i, j] + b[j]
    if relu:
        for i in range(out.shape[0]):
            for j in range(out.shape[1]):
                v = out[i, j]
                out[i, j] = v if not v <= 0 else 0
    dims = np.empty(out_rank, np.int64)
    for d in range(in_num_col_dims):
        dims[d] = x.shape[d]
    dims[in_num_col_dims] = out.shape[1]
    return out.reshape(to_fixed_tuple(dims, out_rank))
