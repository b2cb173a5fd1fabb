"""matrix_rank: how many singular values of each matrix of X exceed a tolerance (Fluid's
slots and attributes, as ``paddle.linalg.matrix_rank`` saves them).

The tolerance: with ``use_default_tol`` (``tol=None`` in Paddle) it is eps * max(m, n) *
the largest singular value, eps of X's type; otherwise ``tol``, or the tensor
``TolTensor`` read at run time (``tol`` given as a tensor: one tolerance per matrix,
broadcast against X's batch dims, so Out has the broadcast shape). With ``hermitian`` X is
taken to be symmetric and the singular values are the eigenvalues' magnitudes (only the
lower triangle is read, as Paddle's eigvalsh does). Out is int32, one count per matrix.

The singular values come from LAPACK on the host, on both places (ops/lapack.py; the math:
kernels/cpu/matrix_rank.py); the count is data, never a gradient.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core import dtypes
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.matrix_rank import matrix_rank_arrays, matrix_rank_in_python
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


# The math: kernels/cpu/matrix_rank.py (host arrays in, the count out), which a compiled
# block calls too (``matrix_rank_in_python``)
def _matrix_rank(ctx):
    tol_shape = (tuple(int(d) for d in ctx.input("TolTensor").shape)
                 if ctx.has_input("TolTensor") else None)
    count = matrix_rank_arrays(L.host(ctx.input("X")), ctx.attr("hermitian"),
                               ctx.attr("use_default_tol"), ctx.attr("tol"), tol_shape)
    L.set_results(ctx, ("Out",), (count,))


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
