"""lstsq on the host's LAPACK (ops/lstsq.py says what the op is): one function of host
arrays and attributes, which the op's kernel calls (and puts the results on its place) and
a compiled block calls through ``lstsq_in_python`` (linalg.py says why).

Every driver gives gelsd's solution: through the singular value decomposition, the least
norm solution where X has not full rank.
"""
from __future__ import annotations

import numpy as np

from . import linalg as L
from .in_python import in_python, like, several

WITH_SINGULAR_VALUES = ("gelsd", "gelss")     # the drivers that give SingularValues


def lstsq_arrays(x, y, rcond, driver):
    """(Solution, Residuals, Rank, SingularValues)."""
    a, b = L.host_matrices(x, "lstsq", "X"), L.host_matrices(y, "lstsq", "Y")
    if a.shape[:-1] != b.shape[:-1]:
        raise ValueError(f"lstsq: slot Y: expected X's batch dims and rows "
                         f"{list(a.shape[:-1])}, given shape {list(b.shape)}")
    batch, (m, n), k = a.shape[:-2], a.shape[-2:], b.shape[-1]
    rcond = float(rcond)
    if rcond < 0:
        rcond = np.finfo(np.dtype(x.dtype)).eps * max(m, n)
    solution = np.zeros(batch + (n, k))
    rank = np.zeros(batch, np.int32)
    values = np.zeros(batch + (min(m, n),))
    if m and n:                          # numpy's LAPACK call refuses empty matrices
        # gelsd's least-norm solution, written out: V diag(1/s, s above the cutoff) U^T Y
        u, values, vh = np.linalg.svd(a, full_matrices=False)
        kept = values > rcond * values[..., :1]
        rank = kept.sum(axis=-1).astype(np.int32)
        inverse = np.divide(1.0, values, out=np.zeros_like(values), where=kept)
        solution = L.transpose(vh) @ (inverse[..., :, None] * (L.transpose(u) @ b))
    residuals = ((a @ solution - b) ** 2).sum(axis=-2) if m > n else np.zeros((0,))
    if driver not in WITH_SINGULAR_VALUES:
        values = np.zeros((0,))
    return (L.result(solution, x.dtype), L.result(residuals, x.dtype),
            L.result(rank, np.int32), L.result(values, x.dtype))


# one matrix pair: Residuals and SingularValues are vectors whether empty or not (a batch's
# have its rank unless empty, which its shapes decide, not its types)
lstsq_in_python = in_python(lstsq_arrays, several(like(0), like(0, ndim=1),
                                                    like(0, ndim=0, dtype=np.int32),
                                                    like(0, ndim=1)))
