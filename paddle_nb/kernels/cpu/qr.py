"""The QR decomposition on the host's LAPACK (geqrf and orgqr; ops/qr.py says what the op
is) and its gradient: one function each of host arrays and attributes, which the op's
kernels call (and put the results on their place) and a compiled block calls through
``*_in_python`` (linalg.py says why).

The gradient is Paddle's ``qr_grad`` (ops/qr.py has the formulas, for m >= n and m < n).
"""
from __future__ import annotations

import numpy as np

from . import linalg as L
from .in_python import in_python, like, several


def qr_arrays(x, mode):
    """(Q, R) in X's dtype (Q an empty vector with mode 'r')."""
    a = L.host_matrices(x, "qr")
    if a.size == 0:                      # numpy's LAPACK call refuses empty matrices
        m, n = a.shape[-2:]
        rows = m if mode == "complete" else min(m, n)
        q = np.broadcast_to(np.eye(m, rows), a.shape[:-2] + (m, rows))
        r = np.zeros(a.shape[:-2] + (rows, n))
    else:
        q, r = np.linalg.qr(a, mode="complete" if mode == "complete" else "reduced")
    if mode == "r":
        q = np.zeros((0,))
    return L.result(q, x.dtype), L.result(r, x.dtype)


def _square_backward(q, r, dq, dr):
    """dA for A = Q R with R square (the m >= n formula)."""
    m = r @ L.transpose(dr) - L.transpose(dq) @ q
    lower = np.tril(m, -1)
    mirrored = lower + L.transpose(lower) + np.tril(np.triu(m))     # + M's diagonal
    b = dq + q @ mirrored
    # b R^-T, as the solution Y of R Y^T = b^T (R upper triangular)
    with np.errstate(divide="ignore", invalid="ignore"):
        return L.transpose(np.linalg.solve(r, L.transpose(b))) if r.size else b


def qr_backward(x, q, r, dq, dr):
    """dX of ops/qr.py's formulas (float64 arrays)."""
    m, n = x.shape[-2:]
    if m >= n:
        return _square_backward(q, r, dq, dr)
    b, dr_b = x[..., m:], dr[..., m:]
    da = _square_backward(q, r[..., :m], dq + b @ L.transpose(dr_b), dr[..., :m])
    return np.concatenate([da, q @ dr_b], axis=-1)


def qr_grad_arrays(x, q, r, dq, dr, mode):
    """X@GRAD (dq, dr: None where no gradient was written)."""
    xh = L.host_matrices(x, "qr_grad")
    m, n = xh.shape[-2:]
    if mode == "r" or (mode == "complete" and m > n):
        raise ValueError(f"qr_grad: the gradient of qr is defined for mode 'reduced', or "
                         f"'complete' with rows <= columns (as in Paddle); given mode "
                         f"{mode!r} and {m} x {n} matrices")
    q, r = L.host_value(q), L.host_value(r)
    k = min(m, n)
    if q.shape != xh.shape[:-1] + (k,) or r.shape != xh.shape[:-2] + (k, n):
        raise ValueError(f"qr_grad: Q and R must be qr's outputs for X; given X "
                         f"{list(xh.shape)}, Q {list(q.shape)}, R {list(r.shape)}")
    dq, dr = (L.host_gradient(dq, "qr_grad", "Q@GRAD", q),
              L.host_gradient(dr, "qr_grad", "R@GRAD", r))
    if not np.all(np.abs(np.diagonal(r[..., :k], axis1=-2, axis2=-1)) > 0):
        raise ValueError("qr_grad: the gradient of qr needs X's leading columns of full "
                         "rank (R's diagonal without zeros)")
    dx = qr_backward(xh, q, r, dq, dr)
    return L.result(dx, x.dtype)


# --- from numba code --------------------------------------------------------------------
def qr_q_and_r_arrays(x, mode):
    """qr from numba code, where Q is a batch of matrices (mode 'reduced' or 'complete')."""
    return qr_arrays(x, mode)


def qr_r_arrays(x):
    """qr from numba code with mode 'r': Q an empty vector."""
    return qr_arrays(x, "r")


def qr_grad_some_arrays(x, q, r, dq, dr, mode, came):
    """qr_grad from numba code (every gradient slot read: ``came`` says which were)."""
    return qr_grad_arrays(x, q, r, *L.written((dq, dr), came), mode)


qr_in_python = in_python(qr_q_and_r_arrays, several(like(0), like(0)))
qr_r_in_python = in_python(qr_r_arrays, several(like(0, ndim=1), like(0)))
qr_grad_in_python = in_python(qr_grad_some_arrays, like(0))
