"""matrix_rank on the host's LAPACK (ops/matrix_rank.py says what the op is): the singular
values counted above a tolerance. One function of host arrays and attributes, which the
op's kernel calls (and puts the count on its place) and a compiled block calls through
``matrix_rank_in_python`` (linalg.py says why; a TolTensor keeps the op interpreted
there: an attribute given by a tensor).
"""
from __future__ import annotations

import numpy as np

from . import linalg as L
from .in_python import in_python, like


def singular_values(a: np.ndarray, hermitian: bool) -> np.ndarray:
    """Each matrix's singular values (float64, any order): |eigenvalues| for hermitian."""
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        return np.zeros(a.shape[:-2] + (0,))
    if hermitian:
        return np.abs(np.linalg.eigvalsh(a, UPLO="L"))
    return np.linalg.svd(a, compute_uv=False)


def _tolerance_tensor(tol, tol_shape, batch):
    """TolTensor's values (given as the attribute tol), checked against X's batch dims."""
    try:
        np.broadcast_shapes(tuple(batch), tuple(tol_shape))
    except ValueError:
        raise ValueError(f"matrix_rank: slot TolTensor: TolTensor's shape {list(tol_shape)} "
                         f"does not broadcast with X's batch dims {list(batch)}") from None
    return np.asarray(tol, np.float64).reshape(tol_shape)


def matrix_rank_arrays(x, hermitian, use_default_tol, tol, tol_shape=None):
    """Out, int32: the count per matrix (``tol_shape``: a TolTensor's shape, whose values
    ``tol`` holds)."""
    a = L.host_matrices(x, "matrix_rank", square=bool(hermitian))
    s = singular_values(a, bool(hermitian))
    if tol_shape is not None:
        tol = _tolerance_tensor(tol, tol_shape, a.shape[:-2])
    elif use_default_tol:
        eps = np.finfo(np.dtype(x.dtype)).eps
        tol = eps * max(a.shape[-2:]) * (s.max(axis=-1) if s.shape[-1] else 0.0)
    else:
        tol = np.float64(tol)
    count = (s > np.asarray(tol)[..., None]).sum(axis=-1)
    return L.result(count, np.int32)


matrix_rank_in_python = in_python(matrix_rank_arrays, like(0, -2, np.int32))
