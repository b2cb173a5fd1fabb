"""qr: each matrix of X as Q R (Q's columns orthonormal, R upper triangular), and its
gradient (Fluid's slots and attribute, as ``paddle.linalg.qr`` saves them).

For an m x n matrix and k = min(m, n), ``mode`` says what comes out: ``reduced`` Q m x k
and R k x n, ``complete`` Q m x m and R m x n, ``r`` only R (k x n; Q is an empty tensor,
as in Paddle). Householder reflections on the host (LAPACK's geqrf and orgqr, ops/lapack.py
says why on both places; the math: kernels/cpu/qr.py), so R's diagonal may be negative,
exactly as Paddle's.

The gradient (Paddle's ``qr_grad``; defined where Paddle defines it: ``reduced``, or
``complete`` with m <= n, where Q is square). For m >= n, with M = R dR^T - dQ^T Q and
copyltu(M) its lower triangle mirrored onto the upper one:

    dX = (dQ + Q copyltu(M)) R^-T

For m < n, X = [A | B] with A square: R = [R_A | Q^T B], so dB = Q dR_B, and A gets the
formula above with dQ + B dR_B^T in place of dQ and R_A, dR_A.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.qr import (qr_arrays, qr_grad_arrays, qr_grad_in_python, qr_in_python,
                              qr_r_in_python)
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


# The math: kernels/cpu/qr.py (host arrays in, host results out; a gradient not written is
# None), which a compiled block calls too (``*_in_python``)
def _qr(ctx):
    L.set_results(ctx, ("Q", "R"), qr_arrays(L.host(ctx.input("X")), ctx.attr("mode")))


def _qr_grad(ctx):
    dx = qr_grad_arrays(L.host(ctx.input("X")), L.host(ctx.input("Q")), L.host(ctx.input("R")),
                        L.host(ctx.input_or_none("Q@GRAD")), L.host(ctx.input_or_none("R@GRAD")),
                        ctx.attr("mode"))
    L.set_results(ctx, ("X@GRAD",), (dx,))


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
