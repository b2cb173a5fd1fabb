"""eig and eigvals: the eigenvalues (and eig's eigenvectors) of each square matrix of X, in
general complex (Fluid's slots, as ``paddle.linalg.eig`` and ``paddle.linalg.eigvals``
save them).

A real matrix has complex eigenvalues in conjugate pairs, so the outputs are complex:
complex64 for float32 X, complex128 for float64. LAPACK's geev on the host, on both
places, as Paddle 2.6.2 computes them (its eig and eigvals run on the CPU's LAPACK even
for a GPU tensor; ops/lapack.py; the math: kernels/cpu/eigen.py). The eigenvalues come in
geev's order and each eigenvector column has norm 1, with geev's phase; eigvals asks geev
for no vectors, which may order the eigenvalues differently from eig (Paddle's do too). No
gradient: Paddle's eig_grad takes complex gradients, which this package's backward does
not make.
"""
from __future__ import annotations

from ..core import dtypes
from ..core.registry import OpDef, Slot, register
from ..kernels.cpu.eigen import (COMPLEX_OF, eig_arrays, eig_in_python, eigvals_arrays,
                                 eigvals_in_python)
from ..kernels.lowered import Call
from . import lapack as L
from .common import OUT, X


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


# The math: kernels/cpu/eigen.py (host arrays in, host results out), which a compiled block
# calls too (``*_in_python``)
def _eig(ctx):
    L.set_results(ctx, ("Eigenvalues", "Eigenvectors"), eig_arrays(L.host(ctx.input("X"))))


def _eigvals(ctx):
    L.set_results(ctx, ("Out",), (eigvals_arrays(L.host(ctx.input("X"))),))


register(OpDef(
    "eig", [X],
    [Slot("Eigenvalues", "the eigenvalues (complex)"),
     Slot("Eigenvectors", "the eigenvectors, one per column, norm 1 (complex)")], [],
    comment="Eigenvalues, Eigenvectors = the eigendecomposition of each square matrix of X "
            "(complex).",
    infer_shape=_eig_infer("eig"), kernels={"cpu": _eig, "cuda": _eig},
    lowered=lambda info: Call(eig_in_python, ("X",), ("Eigenvalues", "Eigenvectors"))))

register(OpDef(
    "eigvals", [X], [OUT], [],
    comment="Out = the eigenvalues of each square matrix of X (complex).",
    infer_shape=_eig_infer("eigvals"), kernels={"cpu": _eigvals, "cuda": _eigvals},
    lowered=lambda info: Call(eigvals_in_python, ("X",), ("Out",))))
