"""svd: each matrix of X as U diag(S) VH, and its gradient (Fluid's slots and attribute, as
``paddle.linalg.svd`` saves them; ``cond``, ``pinv`` and ``pca_lowrank`` build on it).

For an m x n matrix and k = min(m, n): S holds the k singular values, largest first; U is
m x k and VH is k x n (``full_matrices``: m x m and n x n). LAPACK's gesdd on the host
(ops/lapack.py says why, on both places), so the signs of the singular vectors are
Paddle's.

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

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.in_python import in_python, like, several
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


# The kernels' math, one function each of host arrays and attributes (the kernels put the
# results on their place), also called from a compiled block (kernels/cpu/linalg.py says
# why); a gradient not written is None.
def svd_arrays(x, full_matrices):
    """(U, S, VH) in X's dtype."""
    u, s, vh = np.linalg.svd(L.host_matrices(x, "svd"), full_matrices=bool(full_matrices))
    return tuple(L.result(value, x.dtype) for value in (u, s, vh))


def _svd(ctx):
    L.set_results(ctx, SVD_SLOTS, svd_arrays(ctx.input("X"), ctx.attr("full_matrices")))


def svd_backward(x, u, s, vh, du, ds, dvh):
    """dX of the formula above, for a batch (float64 host arrays; U, VH and their
    gradients already cut to k columns / rows)."""
    v, dv = L.transpose(vh), L.transpose(dvh)
    m, n, k = x.shape[-2], x.shape[-1], s.shape[-1]
    with np.errstate(divide="ignore", invalid="ignore"):
        s2 = s * s
        gap = s2[..., None, :] - s2[..., :, None]            # s_j^2 - s_i^2
        gap[..., np.arange(k), np.arange(k)] = np.inf        # F's diagonal: 0
        f = 1.0 / gap
        j = f * (L.transpose(u) @ du)
        kk = f * (L.transpose(v) @ dv)
        inner = ((j + L.transpose(j)) * s[..., None, :] + s[..., :, None] * (kk + L.transpose(kk)))
        inner[..., np.arange(k), np.arange(k)] += ds
        dx = u @ inner @ vh
        inv_s = 1.0 / s
        if m > k:
            dx += (L.eye_like(x, m) - u @ L.transpose(u)) @ (du * inv_s[..., None, :]) @ vh
        if n > k:
            dx += (u * inv_s[..., None, :]) @ L.transpose(dv) @ (L.eye_like(x, n)
                                                                  - v @ L.transpose(v))
    return dx


def _svd_grad(ctx):
    factors = [ctx.input(slot) for slot in SVD_SLOTS]
    grads = [ctx.input_or_none(f"{slot}@GRAD") for slot in SVD_SLOTS]
    L.set_results(ctx, ("X@GRAD",), (svd_grad_arrays(ctx.input("X"), *factors, *grads),))


SVD_SLOTS = ("U", "S", "VH")


def svd_grad_arrays(x, u, s, vh, du, ds, dvh):
    xh = L.host_matrices(x, "svd_grad")
    u, s, vh = L.host_value(u), L.host_value(s), L.host_value(vh)
    du, ds, dvh = (L.host_gradient(g, "svd_grad", slot + "@GRAD", value)
                   for g, slot, value in zip((du, ds, dvh), SVD_SLOTS, (u, s, vh)))
    k = s.shape[-1]
    if np.any(du[..., k:]) or np.any(dvh[..., k:, :]):
        raise ValueError("svd_grad: with full_matrices, the columns of U (rows of VH) past "
                         "min(m, n) are any orthonormal completion, not a function of X: a "
                         "loss that reads them has no gradient (their gradients must be 0)")
    if u.shape[:-1] != xh.shape[:-1] or vh.shape[-1] != xh.shape[-1] or \
            k != min(xh.shape[-2:]):
        raise ValueError(f"svd_grad: U, S and VH must be svd's outputs for X; given X "
                         f"{list(xh.shape)}, U {list(u.shape)}, S {list(s.shape)}, VH "
                         f"{list(vh.shape)}")
    dx = svd_backward(xh, u[..., :k], s, vh[..., :k, :], du[..., :k], ds, dvh[..., :k, :])
    return L.result(dx, x.dtype)


def svd_grad_some_arrays(x, u, s, vh, du, ds, dvh, came):
    """svd_grad from numba code (lapack.gradient_reads)."""
    return svd_grad_arrays(x, u, s, vh, *L.written((du, ds, dvh), came))


svd_in_python = in_python(svd_arrays, several(like(0), like(0, -1), like(0)))
svd_grad_in_python = in_python(svd_grad_some_arrays, like(0))


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
