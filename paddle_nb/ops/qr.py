"""qr: each matrix of X as Q R (Q's columns orthonormal, R upper triangular), and its
gradient (Fluid's slots and attribute, as ``paddle.linalg.qr`` saves them).

For an m x n matrix and k = min(m, n), ``mode`` says what comes out: ``reduced`` Q m x k
and R k x n, ``complete`` Q m x m and R m x n, ``r`` only R (k x n; Q is an empty tensor,
as in Paddle). Householder reflections on the host (LAPACK's geqrf and orgqr, ops/lapack.py
says why on both places), so R's diagonal may be negative, exactly as Paddle's.

The gradient (Paddle's ``qr_grad``; defined where Paddle defines it: ``reduced``, or
``complete`` with m <= n, where Q is square). For m >= n, with M = R dR^T - dQ^T Q and
copyltu(M) its lower triangle mirrored onto the upper one:

    dX = (dQ + Q copyltu(M)) R^-T

For m < n, X = [A | B] with A square: R = [R_A | Q^T B], so dB = Q dR_B, and A gets the
formula above with dQ + B dR_B^T in place of dQ and R_A, dR_A.
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

MODES = ("reduced", "complete", "r")


def _qr_infer(ctx):
    shape = L.check_matrices(ctx, "qr")
    batch, m, n = shape[:-2], shape[-2], shape[-1]
    k = min(m, n) if m >= 0 and n >= 0 else -1
    mode = ctx.attr("mode")
    if mode == "r":
        ctx.set_output("Q", [0], ctx.dtype("X"))
    else:
        ctx.set_output("Q", batch + [m, m if mode == "complete" else k], ctx.dtype("X"))
    ctx.set_output("R", batch + [m if mode == "complete" else k, n], ctx.dtype("X"))


# The kernels' math, one function each of host arrays and attributes (the kernels put the
# results on their place), also called from a compiled block (kernels/cpu/linalg.py says
# why); a gradient not written is None.
def qr_arrays(x, mode):
    """(Q, R) in X's dtype."""
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


def _qr(ctx):
    L.set_results(ctx, ("Q", "R"), qr_arrays(ctx.input("X"), ctx.attr("mode")))


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
    """dX of the formulas above (float64 host arrays)."""
    m, n = x.shape[-2:]
    if m >= n:
        return _square_backward(q, r, dq, dr)
    b, dr_b = x[..., m:], dr[..., m:]
    da = _square_backward(q, r[..., :m], dq + b @ L.transpose(dr_b), dr[..., :m])
    return np.concatenate([da, q @ dr_b], axis=-1)


def _qr_grad(ctx):
    dx = qr_grad_arrays(ctx.input("X"), ctx.input("Q"), ctx.input("R"),
                        ctx.input_or_none("Q@GRAD"), ctx.input_or_none("R@GRAD"),
                        ctx.attr("mode"))
    L.set_results(ctx, ("X@GRAD",), (dx,))


def qr_grad_arrays(x, q, r, dq, dr, mode):
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


def qr_q_and_r_arrays(x, mode):
    """qr from numba code, where Q is a batch of matrices (mode 'reduced' or 'complete')."""
    return qr_arrays(x, mode)


def qr_r_arrays(x):
    """qr from numba code with mode 'r': Q an empty vector."""
    return qr_arrays(x, "r")


def qr_grad_some_arrays(x, q, r, dq, dr, mode, came):
    """qr_grad from numba code (lapack.gradient_reads)."""
    return qr_grad_arrays(x, q, r, *L.written((dq, dr), came), mode)


qr_in_python = in_python(qr_q_and_r_arrays, several(like(0), like(0)))
qr_r_in_python = in_python(qr_r_arrays, several(like(0, ndim=1), like(0)))
qr_grad_in_python = in_python(qr_grad_some_arrays, like(0))


def _lowered_qr(info):
    mode = str(info.attr("mode"))
    if mode == "r":
        return Call(qr_r_in_python, ("X",), ("Q", "R"))
    return Call(qr_in_python, ("X",), ("Q", "R"), (mode,))


def _lowered_qr_grad(info):
    reads = L.gradient_reads(info, ("Q", "R"))
    if reads is None:
        return None
    return Call(qr_grad_in_python, ("X", "Q", "R") + reads[0], ("X@GRAD",),
                (str(info.attr("mode")), reads[1]))


register(OpDef(
    "qr", [X],
    [Slot("Q", "the orthonormal factor (empty with mode 'r')"),
     Slot("R", "the upper triangular factor")],
    [Attr("mode", A.STRING, "reduced", "'reduced', 'complete' or 'r' (R only)",
          check=L.one_of(MODES, "mode"))],
    comment="Q, R = the QR decomposition of each matrix of X (X = Q R).",
    infer_shape=_qr_infer, kernels={"cpu": _qr, "cuda": _qr}, lowered=_lowered_qr,
    grad=Grad(reads=["X", "Q", "R"], writes=["X"], kernel=_qr_grad, cuda_kernel=_qr_grad,
              lowered=_lowered_qr_grad)))
