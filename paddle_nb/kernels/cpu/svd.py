"""The singular value decomposition on the host's LAPACK (gesdd; ops/svd.py says what the
op is) and its gradient: one function each of host arrays and attributes, which the op's
kernels call (and put the results on their place) and a compiled block calls through
``*_in_python`` (linalg.py says why).

The gradient is Paddle's ``svd_grad``, for distinct, non-zero singular values (ops/svd.py
has the formula).
"""
from __future__ import annotations

import numpy as np

from . import linalg as L
from .in_python import in_python, like, several

SVD_SLOTS = ("U", "S", "VH")


def svd_arrays(x, full_matrices):
    """(U, S, VH) in X's dtype."""
    u, s, vh = np.linalg.svd(L.host_matrices(x, "svd"), full_matrices=bool(full_matrices))
    return tuple(L.result(value, x.dtype) for value in (u, s, vh))


def svd_backward(x, u, s, vh, du, ds, dvh):
    """dX of ops/svd.py's formula, for a batch (float64 arrays; U, VH and their gradients
    already cut to k columns / rows)."""
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


def svd_grad_arrays(x, u, s, vh, du, ds, dvh):
    """X@GRAD (du, ds, dvh: None where no gradient was written)."""
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
    """svd_grad from numba code (every gradient slot read: ``came`` says which were)."""
    return svd_grad_arrays(x, u, s, vh, *L.written((du, ds, dvh), came))


# --- from numba code --------------------------------------------------------------------
svd_in_python = in_python(svd_arrays, several(like(0), like(0, -1), like(0)))
svd_grad_in_python = in_python(svd_grad_some_arrays, like(0))
