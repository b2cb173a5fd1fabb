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
from ..kernels.cpu import linalg as KL
from ..kernels.cpu.in_python import in_python, several
from ..kernels.lowered import Call
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


def _solved(x, op_type: str, vectors: bool):
    a = L.host_matrices(x, op_type, square=True)
    if a.shape[-1] == 0:                 # numpy's LAPACK call refuses empty matrices
        return np.zeros(a.shape[:-1], np.complex128), a.astype(np.complex128)
    if vectors:
        return np.linalg.eig(a)
    return np.linalg.eigvals(a), None


# The kernels' math, one function each (on the host: the kernels put the results on their
# place), also called from a compiled block (kernels/cpu/linalg.py says why)
def _complex(value, x):
    return L.result(value, COMPLEX_OF[np.dtype(x.dtype).name])


def eig_arrays(x):
    """(Eigenvalues, Eigenvectors)."""
    w, v = _solved(x, "eig", vectors=True)
    return _complex(w, x), _complex(v, x)


def eigvals_arrays(x):
    return _complex(_solved(x, "eigvals", vectors=False)[0], x)


def _eig(ctx):
    L.set_results(ctx, ("Eigenvalues", "Eigenvectors"), eig_arrays(ctx.input("X")))


def _eigvals(ctx):
    L.set_results(ctx, ("Out",), (eigvals_arrays(ctx.input("X")),))


eig_in_python = in_python(eig_arrays, several(KL.complex_array(0, -1),
                                                KL.complex_array(0)))
eigvals_in_python = in_python(eigvals_arrays, KL.complex_array(0, -1))


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
