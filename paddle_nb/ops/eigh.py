"""eigh and eigvalsh: the eigenvalues (ascending) and eigenvectors of each symmetric matrix
of X, and their gradients (Fluid's slots and attributes, as ``paddle.linalg.eigh`` and
``paddle.linalg.eigvalsh`` save them).

Only one triangle of X is read: ``UPLO`` 'L' the lower (the default), 'U' the upper; the
other is taken to mirror it. LAPACK's syevd on the host (ops/lapack.py says why on both
places; the math: kernels/cpu/eigen.py), so the eigenvectors' signs are Paddle's.
eigvalsh has the same two outputs: its Eigenvectors are what its gradient reads.

The gradients are with respect to a symmetric X, as Paddle's are: the derivative along a
symmetric change of X, split evenly between X_ij and X_ji. (Central differences of single
entries see only the triangle UPLO names, so tests/test_spectral_ops.py checks these
gradients along symmetric directions.) With W the eigenvalues, V the eigenvectors and
F_ij = 1 / (w_j - w_i) off the diagonal, 0 on it:

    eigvalsh:  dX = V diag(dW) V^T
    eigh:      dX = sym(V (diag(dW) + F o (V^T dV)) V^T),   sym(A) = (A + A^T) / 2
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.eigen import (eigh_arrays, eigh_grad_arrays, eigh_grad_in_python,
                                 eigh_in_python, eigvalsh_grad_arrays,
                                 eigvalsh_grad_in_python)
from ..kernels.lowered import Call
from . import lapack as L
from .common import X

UPLOS = ("L", "U")
EIGENVALUES = Slot("Eigenvalues", "the eigenvalues of each matrix, ascending")
EIGENVECTORS = Slot("Eigenvectors", "the eigenvectors, one per column, in the eigenvalues' "
                                    "order")
UPLO = Attr("UPLO", A.STRING, "L", "the triangle read: 'L' lower, 'U' upper",
            check=L.one_of(UPLOS, "UPLO"))


def _eigh_infer(op_type):
    def infer(ctx):
        shape = L.check_matrices(ctx, op_type, square=True)
        ctx.set_output("Eigenvalues", shape[:-1], ctx.dtype("X"))
        ctx.set_output("Eigenvectors", shape, ctx.dtype("X"))
    return infer


# The math: kernels/cpu/eigen.py (host arrays in, host results out; a gradient not written
# is None), which a compiled block calls too (``*_in_python``)
def _eigh(op_type):
    def run(ctx):
        L.set_results(ctx, ("Eigenvalues", "Eigenvectors"),
                      eigh_arrays(L.host(ctx.input("X")), ctx.attr("UPLO"), op_type))
    return run


def _eigvalsh_grad(ctx):
    dx = eigvalsh_grad_arrays(L.host(ctx.input("Eigenvectors")),
                              L.host(ctx.input_or_none("Eigenvalues@GRAD")))
    L.set_results(ctx, ("X@GRAD",), (dx,))


def _eigh_grad(ctx):
    dx = eigh_grad_arrays(L.host(ctx.input("Eigenvalues")), L.host(ctx.input("Eigenvectors")),
                          L.host(ctx.input_or_none("Eigenvalues@GRAD")),
                          L.host(ctx.input_or_none("Eigenvectors@GRAD")))
    L.set_results(ctx, ("X@GRAD",), (dx,))


def _lowered_eigh(op_type):
    def lowered(info):
        return Call(eigh_in_python, ("X",), ("Eigenvalues", "Eigenvectors"),
                    (str(info.attr("UPLO")), op_type))
    return lowered


def _lowered_eigvalsh_grad(info):
    if not info.has_input("Eigenvalues@GRAD"):
        return None
    return Call(eigvalsh_grad_in_python, ("Eigenvectors", "Eigenvalues@GRAD"), ("X@GRAD",))


def _lowered_eigh_grad(info):
    reads = L.gradient_reads(info, ("Eigenvalues", "Eigenvectors"))
    if reads is None:
        return None
    return Call(eigh_grad_in_python, ("Eigenvalues", "Eigenvectors") + reads[0], ("X@GRAD",),
                (reads[1],))


def _grad_infer(ctx):
    """X@GRAD has the eigenvectors' shape (the grad op does not read X)."""
    ctx.set_output("X@GRAD", ctx.shape("Eigenvectors"), ctx.dtype("Eigenvectors"))


register(OpDef(
    "eigh", [X], [EIGENVALUES, EIGENVECTORS], [UPLO],
    comment="Eigenvalues, Eigenvectors = the eigendecomposition of each symmetric matrix "
            "of X (one triangle read).",
    infer_shape=_eigh_infer("eigh"), kernels={"cpu": _eigh("eigh"), "cuda": _eigh("eigh")},
    lowered=_lowered_eigh("eigh"),
    grad=Grad(reads=["Eigenvalues", "Eigenvectors"], writes=["X"], kernel=_eigh_grad,
              cuda_kernel=_eigh_grad, infer_shape=_grad_infer, lowered=_lowered_eigh_grad)))

register(OpDef(
    "eigvalsh", [X], [EIGENVALUES, EIGENVECTORS],
    [UPLO, Attr("is_test", A.BOOLEAN, False, "no gradient will be taken (Paddle then "
                                              "skips the eigenvectors)")],
    comment="Eigenvalues = the eigenvalues of each symmetric matrix of X, ascending "
            "(Eigenvectors: what the gradient reads).",
    infer_shape=_eigh_infer("eigvalsh"),
    kernels={"cpu": _eigh("eigvalsh"), "cuda": _eigh("eigvalsh")},
    lowered=_lowered_eigh("eigvalsh"),
    grad=Grad(reads=["Eigenvectors"], grads_of=["Eigenvalues"], writes=["X"],
              kernel=_eigvalsh_grad, cuda_kernel=_eigvalsh_grad, infer_shape=_grad_infer,
              lowered=_lowered_eigvalsh_grad)))
