"""Triangular factorizations of batched matrices and what is read off them: ``cholesky``,
``lu``, ``lu_unpack``, ``determinant``, with their gradients (Fluid's slots and
attributes, as ``paddle.linalg.cholesky / lu / lu_unpack / det`` save them).

The last two dims are one matrix, any dims before them the batch. Float32 and float64
only (Paddle 2.6.2's kernels). The math is written once over the places' batches of
matrices (backends/): LAPACK on the CPU, one-thread-per-matrix numba.cuda kernels on CUDA.

- ``cholesky``: A = L L^T (or, ``upper``, A = U^T U), reading one triangle of A only. A
  matrix that is not positive definite is an error, as in Paddle.
- ``lu``: P A = L U with partial pivoting (``pivots``), packed into one matrix Out (L's
  unit diagonal not stored); Pivots are LAPACK's 1-based row swaps, Infos each matrix's
  LAPACK info (0, or the 1-based column of the first zero pivot: a singular matrix is not
  an error). Paddle 2.6.2's CPU kernel refuses ``pivots=False``; its GPU kernel and this op
  factor without row swaps then (Pivots 1..k: no swap).
- ``lu_unpack``: Pmat, L, U with A = Pmat L U, from lu's Out and Pivots.
- ``determinant``: det of each matrix (from its LU factors).

Gradients (``dL``, ``dU``: the parts of dOut that the factors' entries receive):

- cholesky: Phi = tril(L^T dL) with its diagonal halved, G = L^-T Phi L^-1, and, as Paddle
  differentiates with respect to a symmetric A, X@GRAD = (G + G^T) / 2.
- lu (A m x n, k = min(m, n); Murray's / PyTorch's formulas): for m <= n (U = [U1 U2])
  dA = P L^-T [tril(L^T dL - dU U^T, -1) U1^-T + dU1 | dU2]; for m > n (L = [L1; L2])
  dA = P [L1^-T triu(dU U^T - L^T dL) + tril(dL1, -1); dL2] U^-T.
- lu_unpack: L's strict lower triangle and U's upper one go back to where they were packed.
- determinant: det(A) A^-T times dOut; for a singular A (where A^-T does not exist) the
  cofactor matrix, which is the exact derivative. Paddle 2.6.2 instead gives zeros for the
  whole batch when any matrix of it is singular: a wrong gradient (central differences see
  the cofactors), not copied.
"""
from __future__ import annotations

import numpy as np

from ..backends import CPU, batch_of, place_of
from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import linalg as KL
from ..kernels.cpu.in_python import in_python, like, several
from ..kernels.lowered import Call
from . import arrays
from . import lapack as L
from .common import X, int_shape


def _fail_where(ok, message: str) -> None:
    """A ValueError naming the first matrix whose flag is 0."""
    bad = np.flatnonzero(np.asarray(ok) == 0)
    if bad.size:
        raise ValueError(message.format(int(bad[0])))


def _gradient(g, op_type, slot, like_shape, P, dtype):
    """The gradient ``g`` (of ``slot``) as a working batch, zeros where nobody wrote one
    (None)."""
    if g is None:
        return P.zero_matrices((batch_of(like_shape),) + tuple(like_shape[-2:]), dtype)
    if int_shape(g) != tuple(like_shape):
        raise ValueError(f"{op_type}: slot {slot}: the gradient must have the shape of "
                         f"its output; expected {list(like_shape)}, given {list(g.shape)}")
    return P.to_matrices(g)


# --- cholesky ---------------------------------------------------------------------------
def _cholesky_infer(ctx):
    shape = L.check_matrices(ctx, "cholesky", square=True)
    ctx.set_output("Out", shape, ctx.dtype("X"))


# Each op's math is one function of its arrays and attributes (``P``: the place's batches
# of matrices); the kernels call it with their place's, a compiled block with the CPU's
# from numba code (``*_in_python``, kernels/cpu/linalg.py says why).
def cholesky_arrays(x, upper, P=CPU):
    factor, ok = P.cholesky(P.to_matrices(x), upper)
    _fail_where(ok, "cholesky: slot X: matrix {} of X is not positive definite (the "
                    "Cholesky factorization needs a symmetric positive definite matrix)")
    return P.from_matrices(factor, int_shape(x), x.dtype)


def _cholesky(ctx):
    ctx.set_output("Out", cholesky_arrays(ctx.input("X"), ctx.attr("upper"), place_of(ctx)))


def _cholesky_grad(ctx):
    ctx.set_output("X@GRAD", cholesky_grad_arrays(ctx.input("Out"), ctx.input_or_none("Out@GRAD"),
                                                  ctx.attr("upper"), place_of(ctx)))


def cholesky_grad_arrays(out, dout, upper, P=CPU):
    shape = int_shape(out)
    lower = P.to_matrices(out)
    dlower = _gradient(dout, "cholesky_grad", "Out@GRAD", shape, P, out.dtype)
    if upper:                                   # U = L^T: the same math on the transposes
        lower, dlower = P.transpose_each(lower), P.transpose_each(dlower)
    dlower = P.triangle(dlower, lower=True, diag=1.0)      # Out's upper part is constant
    phi = P.triangle(P.batch_product(lower, dlower, ta=True), lower=True, diag=0.5)
    half = P.triangular_solve(lower, phi, False, True, False)              # L^-T Phi
    g = P.transpose_each(P.triangular_solve(lower, P.transpose_each(half), False, True,
                                            False))
    return P.from_matrices(P.combine(g, P.transpose_each(g), 0.5, 0.5), shape, out.dtype)


cholesky_in_python = in_python(cholesky_arrays, like(0))
cholesky_grad_in_python = in_python(cholesky_grad_arrays, like(0))


def _lowered_cholesky(info):
    return Call(cholesky_in_python, ("X",), ("Out",), (bool(info.attr("upper")),))


def _lowered_cholesky_grad(info):
    if not info.has_input("Out@GRAD"):
        return None
    return Call(cholesky_grad_in_python, ("Out", "Out@GRAD"), ("X@GRAD",),
                (bool(info.attr("upper")),))


register(OpDef(
    "cholesky", [X], [Slot("Out", "the triangular factor")],
    [Attr("upper", A.BOOLEAN, False, "give U (A = U^T U, reading A's upper triangle) "
                                     "instead of L (A = L L^T, its lower triangle)")],
    comment="The Cholesky factor of each symmetric positive definite matrix of X.",
    infer_shape=_cholesky_infer, kernels={"cpu": _cholesky, "cuda": _cholesky},
    lowered=_lowered_cholesky,
    grad=Grad(reads=["Out"], writes=["X"], kernel=_cholesky_grad,
              cuda_kernel=_cholesky_grad, lowered=_lowered_cholesky_grad)))


# --- lu -----------------------------------------------------------------------------------
def _lu_infer(ctx):
    shape = L.check_matrices(ctx, "lu")
    batch, m, n = shape[:-2], shape[-2], shape[-1]
    k = min(m, n) if m >= 0 and n >= 0 else -1
    ctx.set_output("Out", shape, ctx.dtype("X"))
    ctx.set_output("Pivots", batch + [k], "int32")
    # Paddle's Infos has one entry per matrix, and [1] for a single matrix
    ctx.set_output("Infos", batch if batch else [1], "int32")


def lu_arrays(x, pivots, P=CPU):
    """(Out, Pivots, Infos)."""
    shape = int_shape(x)
    packed, piv, info = P.lu(P.to_matrices(x), pivots)
    k = min(shape[-2], shape[-1])
    return (P.from_matrices(packed, shape, x.dtype),
            P.from_matrices(piv, shape[:-2] + (k,), np.int32),
            P.from_matrices(info, shape[:-2] if len(shape) > 2 else (1,), np.int32))


def _lu(ctx):
    for slot, value in zip(("Out", "Pivots", "Infos"),
                           lu_arrays(ctx.input("X"), ctx.attr("pivots"), place_of(ctx))):
        ctx.set_output(slot, value)


def _unpacked(op_type, P, packed, piv, shape):
    """(Pmat, L, U) working batches of lu's packed factors; Pivots checked."""
    pmat, lower, upper, ok = P.unpack_lu(packed, piv, True, True)
    _fail_where(ok, f"{op_type}: slot Pivots: the pivots of matrix {{}} must lie in "
                    f"1..{shape[-2]} (1-based row numbers, as lu gives them)")
    return pmat, lower, upper


def lu_backward(P, pmat, lower, upper, dlower, dupper, m: int, n: int):
    """dA of A = P L U (working batches; dlower m x k, dupper k x n)."""
    if m <= n:                                   # wide or square: U = [U1 | U2]
        g = P.combine(P.batch_product(lower, dlower, ta=True),
                      P.batch_product(dupper, upper, tb=True), 1.0, -1.0)
        g = P.triangle(g, lower=True, diag=0.0)
        u1, du1, du2 = upper, dupper, None
        if n > m:
            u1, _ = P.split(upper, [m, n - m], axis=2)
            du1, du2 = P.split(dupper, [m, n - m], axis=2)
        # g U1^-T as (U1^-1 g^T)^T
        g = P.transpose_each(P.triangular_solve(u1, P.transpose_each(g), True, False,
                                                False))
        g = P.combine(g, du1, 1.0, 1.0)
        if du2 is not None:
            g = P.concat([g, du2], axis=2)
        g = P.triangular_solve(lower, g, False, True, True)          # L^-T (unit)
    else:                                        # tall: L = [L1; L2]
        g = P.combine(P.batch_product(dupper, upper, tb=True),
                      P.batch_product(lower, dlower, ta=True), 1.0, -1.0)
        g = P.triangle(g, lower=False, diag=1.0)
        l1, _ = P.split(lower, [n, m - n], axis=1)
        dl1, dl2 = P.split(dlower, [n, m - n], axis=1)
        g = P.triangular_solve(l1, g, False, True, True)             # L1^-T (unit)
        g = P.combine(g, P.triangle(dl1, lower=True, diag=0.0), 1.0, 1.0)
        g = P.concat([g, dl2], axis=1)
        g = P.transpose_each(P.triangular_solve(upper, P.transpose_each(g), True, False,
                                                False))
    return P.batch_product(pmat, g)


def _lu_grad(ctx):
    ctx.set_output("X@GRAD", lu_grad_arrays(ctx.input("X"), ctx.input("Out"),
                                            ctx.input("Pivots"),
                                            ctx.input_or_none("Out@GRAD"), place_of(ctx)))


def lu_grad_arrays(x, out, pivots, dout, P=CPU):
    shape = int_shape(x)
    if int_shape(out) != shape:
        raise ValueError(f"lu_grad: slot Out: expected lu's factors of X, shape "
                         f"{list(shape)}; given {list(out.shape)}")
    m, n = shape[-2:]
    pmat, lower, upper = _unpacked("lu_grad", P, P.to_matrices(out), pivots, shape)
    dout = _gradient(dout, "lu_grad", "Out@GRAD", shape, P, x.dtype)
    k = min(m, n)
    # the packed dOut: its strict lower part is dL's, the rest dU's
    dlower, dupper = P.triangle(dout, lower=True, diag=0.0), P.triangle(dout, False, 1.0)
    if n > k:
        dlower, _ = P.split(dlower, [k, n - k], axis=2)
    if m > k:
        dupper, _ = P.split(dupper, [k, m - k], axis=1)
    dx = lu_backward(P, pmat, lower, upper, dlower, dupper, m, n)
    return P.from_matrices(dx, shape, x.dtype)


lu_in_python = in_python(lu_arrays, several(like(0), like(0, -1, np.int32),
                                              KL.batch_count(0)))
lu_grad_in_python = in_python(lu_grad_arrays, like(0))


def _lowered_lu(info):
    return Call(lu_in_python, ("X",), ("Out", "Pivots", "Infos"),
                (bool(info.attr("pivots")),))


def _lowered_lu_grad(info):
    if not info.has_input("Out@GRAD"):
        return None
    return Call(lu_grad_in_python, ("X", "Out", "Pivots", "Out@GRAD"), ("X@GRAD",))


register(OpDef(
    "lu", [X],
    [Slot("Out", "L and U packed in one matrix (L's unit diagonal not stored)"),
     Slot("Pivots", "the 1-based row swaps of partial pivoting (int32)"),
     Slot("Infos", "per matrix: 0, or the 1-based column of the first zero pivot")],
    [Attr("pivots", A.BOOLEAN, True, "partial pivoting (row swaps)")],
    comment="The LU factorization of each matrix of X: P X = L U.",
    infer_shape=_lu_infer, kernels={"cpu": _lu, "cuda": _lu}, lowered=_lowered_lu,
    grad=Grad(reads=["X", "Out", "Pivots"], grads_of=["Out"], writes=["X"],
              kernel=_lu_grad, cuda_kernel=_lu_grad, lowered=_lowered_lu_grad)))


# --- lu_unpack ----------------------------------------------------------------------------
def _lu_unpack_infer(ctx):
    shape = L.check_matrices(ctx, "lu_unpack")
    batch, m, n = shape[:-2], shape[-2], shape[-1]
    k = min(m, n) if m >= 0 and n >= 0 else -1
    if dtypes.name(ctx.dtype("Pivots")) != "int32":
        ctx.fail("lu_unpack needs int32 pivots (what lu gives)", slot="Pivots",
                 expected="int32", given=ctx.describe_input("Pivots"))
    piv = list(ctx.shape("Pivots"))
    if len(piv) != len(batch) + 1 or (k >= 0 and piv[-1] >= 0 and piv[-1] != k):
        ctx.fail("lu_unpack needs one pivot per column of L for each matrix of X",
                 slot="Pivots", expected=batch + [k], given=ctx.describe_input("Pivots"))
    dtype = ctx.dtype("X")
    ctx.set_output("Pmat", batch + [m, m] if ctx.attr("unpack_pivots") else [0], dtype)
    data = ctx.attr("unpack_ludata")
    ctx.set_output("L", batch + [m, k] if data else [0], dtype)
    ctx.set_output("U", batch + [k, n] if data else [0], dtype)


def lu_unpack_arrays(x, piv, ludata, pivots, P=CPU):
    """(Pmat, L, U), each an empty vector where not asked for (on the host: the kernel
    puts them on its place)."""
    shape = int_shape(x)
    batch, (m, n) = shape[:-2], shape[-2:]
    k = min(m, n)
    if int_shape(piv) != batch + (k,):
        raise ValueError(f"lu_unpack: slot Pivots: expected shape {list(batch + (k,))} "
                         f"(one pivot per column of L), given {list(piv.shape)}")
    pmat, lower, upper, ok = P.unpack_lu(P.to_matrices(x), piv, ludata, pivots)
    _fail_where(ok, f"lu_unpack: slot Pivots: the pivots of matrix {{}} must lie in "
                    f"1..{m} (1-based row numbers, as lu gives them)")
    empty = np.zeros((0,), x.dtype)
    return (P.from_matrices(pmat, batch + (m, m), x.dtype) if pivots else empty,
            P.from_matrices(lower, batch + (m, k), x.dtype) if ludata else empty,
            P.from_matrices(upper, batch + (k, n), x.dtype) if ludata else empty)


def _lu_unpack(ctx):
    made = lu_unpack_arrays(ctx.input("X"), ctx.input("Pivots"), ctx.attr("unpack_ludata"),
                            ctx.attr("unpack_pivots"), place_of(ctx))
    for slot, value in zip(("Pmat", "L", "U"), made):
        ctx.set_output(slot, arrays.to_place(ctx.place, value) if value.size == 0 and
                       value.ndim == 1 else value)


def _lu_unpack_grad(ctx):
    ctx.set_output("X@GRAD", lu_unpack_grad_arrays(
        ctx.input("X"), ctx.input_or_none("L@GRAD"), ctx.input_or_none("U@GRAD"),
        ctx.attr("unpack_ludata"), place_of(ctx)))


def lu_unpack_grad_arrays(x, dl, du, ludata, P=CPU):
    shape = int_shape(x)
    batch, (m, n) = shape[:-2], shape[-2:]
    k = min(m, n)
    if not ludata:                           # L and U were not made: nothing flows back
        zeros = P.zero_matrices((batch_of(shape), m, n), x.dtype)
        return P.from_matrices(zeros, shape, x.dtype)
    dlower = P.triangle(_gradient(dl, "lu_unpack_grad", "L@GRAD", batch + (m, k), P,
                                  x.dtype), True, 0.0)
    dupper = P.triangle(_gradient(du, "lu_unpack_grad", "U@GRAD", batch + (k, n), P,
                                  x.dtype), False, 1.0)
    b = batch_of(shape)
    if n > k:       # wide: L is m x m, U m x n
        dlower = P.concat([dlower, P.zero_matrices((b, m, n - k), x.dtype)], axis=2)
    if m > k:       # tall: L is m x n, U n x n
        dupper = P.concat([dupper, P.zero_matrices((b, m - k, n), x.dtype)], axis=1)
    return P.from_matrices(P.combine(dlower, dupper, 1.0, 1.0), shape, x.dtype)


def lu_unpack_both_grad_arrays(x, dl, du):
    """lu_unpack_grad from numba code, where L@GRAD and U@GRAD both came."""
    return lu_unpack_grad_arrays(x, dl, du, True)


lu_unpack_in_python = in_python(lu_unpack_arrays, several(like(0), like(0), like(0)))
lu_unpack_grad_in_python = in_python(lu_unpack_both_grad_arrays, like(0))


def _lowered_lu_unpack(info):
    """Both parts unpacked (an empty vector for a part not asked for has another rank)."""
    if not (info.attr("unpack_ludata") and info.attr("unpack_pivots")):
        return None
    return Call(lu_unpack_in_python, ("X", "Pivots"), ("Pmat", "L", "U"), (True, True))


def _lowered_lu_unpack_grad(info):
    if not (info.attr("unpack_ludata") and info.has_input("L@GRAD")
            and info.has_input("U@GRAD")):
        return None
    return Call(lu_unpack_grad_in_python, ("X", "L@GRAD", "U@GRAD"), ("X@GRAD",))


register(OpDef(
    "lu_unpack", [Slot("X", "lu's packed factors"), Slot("Pivots", "lu's pivots (int32)")],
    [Slot("Pmat", "the permutation matrix (empty unless unpack_pivots)"),
     Slot("L", "the unit lower triangular factor (empty unless unpack_ludata)"),
     Slot("U", "the upper triangular factor (empty unless unpack_ludata)")],
    [Attr("unpack_ludata", A.BOOLEAN, True, "give L and U"),
     Attr("unpack_pivots", A.BOOLEAN, True, "give Pmat")],
    comment="Pmat, L, U with A = Pmat L U, from lu's Out and Pivots.",
    infer_shape=_lu_unpack_infer, kernels={"cpu": _lu_unpack, "cuda": _lu_unpack},
    lowered=_lowered_lu_unpack,
    grad=Grad(reads=["X", "Pivots", "L", "U", "Pmat"], grads_of=["L", "U"], writes=["X"],
              kernel=_lu_unpack_grad, cuda_kernel=_lu_unpack_grad,
              lowered=_lowered_lu_unpack_grad)))


# --- determinant --------------------------------------------------------------------------
INPUT = Slot("Input", "a batch of square matrices")


def _determinant_infer(ctx):
    shape = L.check_matrices(ctx, "determinant", slot="Input", square=True)
    ctx.set_output("Out", shape[:-2], ctx.dtype("Input"))


def determinant_arrays(x, P=CPU):
    shape = int_shape(x)
    return P.from_matrices(P.determinant(P.to_matrices(x)), shape[:-2], x.dtype)


def _determinant(ctx):
    ctx.set_output("Out", determinant_arrays(ctx.input("Input"), place_of(ctx)))


def _determinant_grad(ctx):
    ctx.set_output("Input@GRAD", determinant_grad_arrays(
        ctx.input("Input"), ctx.input("Out"), ctx.input_or_none("Out@GRAD"), place_of(ctx)))


def determinant_grad_arrays(x, out, dout, P=CPU):
    shape = int_shape(x)
    a, n = P.to_matrices(x), shape[-1]
    det = P.to_matrices(out.reshape((batch_of(shape), 1, 1)))
    if dout is None or n == 0:
        return P.from_matrices(P.zero_matrices(a.shape, x.dtype), shape, x.dtype)
    if int_shape(dout) != shape[:-2]:
        raise ValueError(f"determinant_grad: slot Out@GRAD: expected shape "
                         f"{list(shape[:-2])} (one value per matrix), given "
                         f"{list(dout.shape)}")
    # det(A) A^-T = (A^-1)^T scaled; a singular A has no inverse: its cofactors instead
    inverse_t, ok = P.lu_solve(P.transpose_each(a), P.identities(a.shape[0], n, a))
    grad = P.scale_each(inverse_t, det.reshape(a.shape[0]))
    if not np.all(ok):
        grad = P.where_batch(ok == 1, grad, P.cofactors(a))
    grad = P.scale_each(grad, P.to_matrices(dout.reshape((a.shape[0], 1, 1)))
                        .reshape(a.shape[0]))
    return P.from_matrices(grad, shape, x.dtype)


determinant_in_python = in_python(determinant_arrays, like(0, -2))
determinant_grad_in_python = in_python(determinant_grad_arrays, like(0))


def _lowered_determinant_grad(info):
    if not info.has_input("Out@GRAD"):
        return None
    return Call(determinant_grad_in_python, ("Input", "Out", "Out@GRAD"), ("Input@GRAD",))


register(OpDef(
    "determinant", [INPUT], [Slot("Out", "det of each matrix (the batch's shape)")], [],
    comment="The determinant of each square matrix of Input.",
    infer_shape=_determinant_infer, kernels={"cpu": _determinant, "cuda": _determinant},
    lowered=lambda info: Call(determinant_in_python, ("Input",), ("Out",)),
    grad=Grad(reads=["Input", "Out"], writes=["Input"], kernel=_determinant_grad,
              cuda_kernel=_determinant_grad, lowered=_lowered_determinant_grad)))
