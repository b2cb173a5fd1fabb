"""eig and eigvals: the eigenvalues (and eig's eigenvectors) of each square matrix of X, in
general complex (Fluid's slots, as ``paddle.linalg.eig`` and ``paddle.linalg.eigvals``
save them).

A real matrix has complex eigenvalues in conjugate pairs, so the outputs are complex:
complex64 for float32 X, complex128 for float64. LAPACK's geev on the host, on both
places, as Paddle 2.6.2 computes them (its eig and eigvals run on the CPU's LAPACK even for
a GPU tensor; ops/lapack.py). The eigenvalues come in geev's order and each eigenvector
column has norm 1, with geev's phase; eigvals asks geev for no vectors, which may order
the eigenvalues differently from eig (Paddle's do too). No gradient: Paddle's eig_grad
takes complex gradients, which this package's backward does not make.
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.registry import OpDef, Slot, register
from . import lapack as L
from .common import OUT, X

COMPLEX_OF = {"float32": np.complex64, "float64": np.complex128}


def _eig_infer(op_type):
    def infer(ctx):
        shape = L.check_matrices(ctx, op_type, square=True)
        out = dtypes.to_code(COMPLEX_OF[dtypes.name(ctx.dtype("X"))])
        if op_type == "eig":
            ctx.set_output("Eigenvalues", shape[:-1], out)
            ctx.set_output("Eigenvectors", shape, out)
        else:
            ctx.set_output("Out", shape[:-1], out)
    return infer


def _solved(ctx, op_type: str, vectors: bool):
    x = ctx.input("X")
    a = L.host_matrices(x, op_type, square=True)
    if a.shape[-1] == 0:                 # numpy's LAPACK call refuses empty matrices
        return np.zeros(a.shape[:-1], np.complex128), a.astype(np.complex128)
    if vectors:
        return np.linalg.eig(a)
    return np.linalg.eigvals(a), None


def _eig(ctx):
    w, v = _solved(ctx, "eig", vectors=True)
    out = COMPLEX_OF[np.dtype(ctx.input("X").dtype).name]
    ctx.set_output("Eigenvalues", L.to_place(ctx, w, out))
    ctx.set_output("Eigenvectors", L.to_place(ctx, v, out))


def _eigvals(ctx):
    w, _ = _solved(ctx, "eigvals", vectors=False)
    ctx.set_output("Out", L.to_place(ctx, w, COMPLEX_OF[np.dtype(ctx.input("X").dtype).name]))


register(OpDef(
    "eig", [X],
    [Slot("Eigenvalues", "the eigenvalues (complex)"),
     Slot("Eigenvectors", "the eigenvectors, one per column, norm 1 (complex)")], [],
    comment="Eigenvalues, Eigenvectors = the eigendecomposition of each square matrix of X "
            "(complex).",
    infer_shape=_eig_infer("eig"), kernels={"cpu": _eig, "cuda": _eig}))

register(OpDef(
    "eigvals", [X], [OUT], [],
    comment="Out = the eigenvalues of each square matrix of X (complex).",
    infer_shape=_eig_infer("eigvals"), kernels={"cpu": _eigvals, "cuda": _eigvals}))
