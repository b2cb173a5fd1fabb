"""matrix_rank: how many singular values of each matrix of X exceed a tolerance (Fluid's
slots and attributes, as ``paddle.linalg.matrix_rank`` saves them).

The tolerance: with ``use_default_tol`` (``tol=None`` in Paddle) it is eps * max(m, n) *
the largest singular value, eps of X's type; otherwise ``tol``, or the tensor
``TolTensor`` read at run time (``tol`` given as a tensor: one tolerance per matrix,
broadcast against X's batch dims, so Out has the broadcast shape). With ``hermitian`` X is
taken to be symmetric and the singular values are the eigenvalues' magnitudes (only the
lower triangle is read, as Paddle's eigvalsh does). Out is int32, one count per matrix.

The singular values come from LAPACK on the host, on both places (ops/lapack.py); the
count is data, never a gradient.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.in_python import in_python, like
from ..kernels.lowered import Call
from . import lapack as L
from .common import OUT, X, broadcast_shapes

TOL_TENSOR = Slot("TolTensor", "the tolerance per matrix (read at run time, instead of "
                               "tol; broadcasts against X's batch dims)", dispensable=True)


def _out_shape(batch, tol_shape, fail):
    rank = max(len(batch), len(tol_shape))
    padded = [[1] * (rank - len(s)) + list(s) for s in (batch, tol_shape)]
    shape = broadcast_shapes(*padded)
    if shape is None:
        fail(f"TolTensor's shape {list(tol_shape)} does not broadcast with X's batch dims "
             f"{list(batch)}")
    return shape


def _matrix_rank_infer(ctx):
    shape = L.check_matrices(ctx, "matrix_rank")
    batch = shape[:-2]
    if ctx.has_input("TolTensor"):
        if dtypes.name(ctx.dtype("TolTensor")) not in L.FLOATS:
            ctx.fail("the tolerance must be float32 or float64", slot="TolTensor",
                     expected="a float tensor", given=ctx.describe_input("TolTensor"))
        batch = _out_shape(batch, ctx.shape("TolTensor"),
                           lambda msg: ctx.fail(msg, slot="TolTensor"))
    ctx.set_output("Out", batch, "int32")


def singular_values(a: np.ndarray, hermitian: bool) -> np.ndarray:
    """Each matrix's singular values (float64, any order): |eigenvalues| for hermitian."""
    if a.shape[-1] == 0 or a.shape[-2] == 0:
        return np.zeros(a.shape[:-2] + (0,))
    if hermitian:
        return np.abs(np.linalg.eigvalsh(a, UPLO="L"))
    return np.linalg.svd(a, compute_uv=False)


def _tolerance_tensor(tol, tol_shape, batch):
    """TolTensor's values (given as the attribute tol), checked against X's batch dims."""
    def fail(msg):
        raise ValueError(f"matrix_rank: slot TolTensor: {msg}")
    _out_shape(batch, tol_shape, fail)
    return np.asarray(tol, np.float64).reshape(tol_shape)


# The kernel's math, one function of host arrays and attributes (the kernel puts the count
# on its place), also called from a compiled block (kernels/cpu/linalg.py says why; a
# TolTensor keeps the op interpreted there: an attribute given by a tensor)
def matrix_rank_arrays(x, hermitian, use_default_tol, tol, tol_shape=None):
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


def _matrix_rank(ctx):
    tol_shape = (tuple(int(d) for d in ctx.input("TolTensor").shape)
                 if ctx.has_input("TolTensor") else None)
    count = matrix_rank_arrays(ctx.input("X"), ctx.attr("hermitian"),
                               ctx.attr("use_default_tol"), ctx.attr("tol"), tol_shape)
    L.set_results(ctx, ("Out",), (count,))


matrix_rank_in_python = in_python(matrix_rank_arrays, like(0, -2, np.int32))


def _lowered_matrix_rank(info):
    return Call(matrix_rank_in_python, ("X",), ("Out",),
                (bool(info.attr("hermitian")), bool(info.attr("use_default_tol")),
                 float(info.attr("tol"))))


register(OpDef(
    "matrix_rank", [X, TOL_TENSOR], [OUT],
    [Attr("tol", A.FLOAT, 0.0, "singular values at most this count as zero"),
     Attr("hermitian", A.BOOLEAN, False, "X is symmetric: use its eigenvalues' magnitudes"),
     Attr("use_default_tol", A.BOOLEAN, True,
          "ignore tol: eps * max(m, n) * the largest singular value")],
    comment="Out = the rank of each matrix of X: its singular values above the tolerance "
            "(int32).",
    infer_shape=_matrix_rank_infer, kernels={"cpu": _matrix_rank, "cuda": _matrix_rank},
    lowered=_lowered_matrix_rank,
    reads_attr_tensors=("TolTensor",)))
