"""svd: each matrix of X as U diag(S) VH, and its gradient (Fluid's slots and attribute, as
``paddle.linalg.svd`` saves them; ``cond``, ``pinv`` and ``pca_lowrank`` build on it).

For an m x n matrix and k = min(m, n): S holds the k singular values, largest first; U is
m x k and VH is k x n (``full_matrices``: m x m and n x n). LAPACK's gesdd on the host
(ops/lapack.py says why, on both places; the math: kernels/cpu/svd.py), so the signs of
the singular vectors are Paddle's.

The gradient (Paddle's ``svd_grad``, the usual formula for distinct, non-zero singular
values; with ``full_matrices`` only the first k columns of U and rows of VH enter, as in
Paddle, and a loss that reads the others, an arbitrary orthonormal completion, is
refused). With V = VH^T, F_ij = 1 / (s_j^2 - s_i^2) off the diagonal and 0 on it,
J = F o (U^T dU), K = F o (V^T dV):

    dX = U [ (J + J^T) S + S (K + K^T) + diag(dS) ] VH
         + (I - U U^T) dU S^-1 VH          (m > k: what U's columns leave out)
         + U S^-1 dV^T (I - V V^T)         (n > k: what V's columns leave out)
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.svd import (SVD_SLOTS, svd_arrays, svd_grad_arrays, svd_grad_in_python,
                               svd_in_python)
from ..kernels.lowered import Call
from . import lapack as L
from .common import X


def _svd_infer(ctx):
    shape = L.check_matrices(ctx, "svd")
    batch, m, n = shape[:-2], shape[-2], shape[-1]
    k = min(m, n) if m >= 0 and n >= 0 else -1
    full = ctx.attr("full_matrices")
    ctx.set_output("U", batch + [m, m if full else k], ctx.dtype("X"))
    ctx.set_output("S", batch + [k], ctx.dtype("X"))
    ctx.set_output("VH", batch + [n if full else k, n], ctx.dtype("X"))


# The math: kernels/cpu/svd.py (host arrays in, host results out; a gradient not written is
# None), which a compiled block calls too (``*_in_python``)
def _svd(ctx):
    L.set_results(ctx, SVD_SLOTS, svd_arrays(L.host(ctx.input("X")), ctx.attr("full_matrices")))


def _svd_grad(ctx):
    factors = [L.host(ctx.input(slot)) for slot in SVD_SLOTS]
    grads = [L.host(ctx.input_or_none(f"{slot}@GRAD")) for slot in SVD_SLOTS]
    L.set_results(ctx, ("X@GRAD",), (svd_grad_arrays(L.host(ctx.input("X")), *factors,
                                                     *grads),))


def _lowered_svd_grad(info):
    reads = L.gradient_reads(info, SVD_SLOTS)
    if reads is None:
        return None
    return Call(svd_grad_in_python, ("X",) + SVD_SLOTS + reads[0], ("X@GRAD",), (reads[1],))


register(OpDef(
    "svd", [X],
    [Slot("U", "the left singular vectors, one per column"),
     Slot("S", "the singular values, largest first"),
     Slot("VH", "the right singular vectors, one per row (V transposed)")],
    [Attr("full_matrices", A.BOOLEAN, False,
          "U m x m and VH n x n (else m x k and k x n, k = min(m, n))")],
    comment="U, S, VH = the singular value decomposition of each matrix of X "
            "(X = U diag(S) VH).",
    infer_shape=_svd_infer, kernels={"cpu": _svd, "cuda": _svd},
    lowered=lambda info: Call(svd_in_python, ("X",), SVD_SLOTS,
                              (bool(info.attr("full_matrices")),)),
    grad=Grad(reads=["X", "U", "S", "VH"], writes=["X"], kernel=_svd_grad,
              cuda_kernel=_svd_grad, lowered=_lowered_svd_grad)))
