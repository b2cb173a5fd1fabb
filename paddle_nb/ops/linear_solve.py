"""Linear systems of batched matrices: ``solve``, ``triangular_solve``, ``cholesky_solve``
and their gradients (Fluid's slots and attributes, as ``paddle.linalg.solve /
triangular_solve / cholesky_solve`` save them).

- ``solve``: Out = X^-1 Y, X square (LU with partial pivoting); a Y of rank 1 is one
  right-hand side vector (Out then has X's batch and one dim), as in Paddle. A singular X
  is an error, as in Paddle.
- ``triangular_solve``: Out = op(X)^-1 Y with X triangular (``upper``), op(X) = X^T with
  ``transpose``, X's diagonal taken as ones with ``unitriangular``; only that triangle of
  X is read. A zero on the diagonal gives infinities (or NaN), not an error, as in Paddle.
- ``cholesky_solve``: Out = A^-1 X where Y is A's Cholesky factor (L with A = L L^T, or
  with ``upper`` U with A = U^T U); note the slots: X is the right-hand side, Y the factor.

The batch dims (all but the last two) of X and Y broadcast as numpy's do, so one matrix
can solve a batch of right-hand sides; the gradient of a broadcast operand is summed back
to its shape. Gradients (Out = A^-1 B, G = dOut): dB = A^-T G and dA = -dB Out^T,
restricted to the triangle the op read (triangular_solve), or, for a Cholesky factor L,
dL = tril((dA + dA^T) L) (U: triu(U (dA + dA^T))).

The math is written once over the places' batches of matrices (backends/: LAPACK and BLAS
on the CPU, one thread per matrix on CUDA); float32 and float64 only, as Paddle 2.6.2's
kernels.
"""
from __future__ import annotations

import numpy as np

from ..backends import place_of
from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from . import arrays
from . import lapack as L
from .common import broadcast_shapes, int_shape


class System:
    """The shapes of one op's system: A (a batch of square matrices) and B (right-hand
    sides, [.., n, k], or [n] for solve's vector), both broadcast to one batch."""

    def __init__(self, op_type: str, a_shape, b_shape, vector: bool):
        self.vector = vector
        self.a_shape, self.b_shape = tuple(a_shape), tuple(b_shape)
        b_matrix = self.b_shape + (1,) if vector else self.b_shape
        self.batch = tuple(np.broadcast_shapes(self.a_shape[:-2], b_matrix[:-2]))
        self.n, self.k = b_matrix[-2], b_matrix[-1]
        self.b_matrix = b_matrix
        self.out_shape = self.batch + ((self.n,) if vector else (self.n, self.k))

    def enter_a(self, P, a):
        return P.to_matrices(a, self.batch)

    def enter_b(self, P, b):
        return P.to_matrices(b.reshape(self.b_matrix) if self.vector else b, self.batch)

    def enter_out(self, P, out):
        return P.to_matrices(out.reshape(self.batch + (self.n, self.k)))

    def leave(self, P, value, dtype, operand_shape, matrix_shape):
        """A working gradient back to an operand of ``operand_shape`` (summed over the
        batch dims it was broadcast along)."""
        grad = P.from_matrices(value, self.batch + tuple(matrix_shape[-2:]), dtype)
        if operand_shape != tuple(matrix_shape):          # solve's vector right-hand side
            grad = grad.reshape(self.batch + tuple(operand_shape[-1:]))
        return arrays.unbroadcast(grad, operand_shape, operand_shape)

    def set_grads(self, ctx, P, a_slot: str, da, b_slot: str, db) -> None:
        """``a_slot@GRAD`` and ``b_slot@GRAD``, those the program asks for, from the working
        gradients of A and B: each in its operand's shape and dtype."""
        for slot, value, shape, matrix in ((a_slot, da, self.a_shape, self.a_shape),
                                           (b_slot, db, self.b_shape, self.b_matrix)):
            if ctx.has_output(f"{slot}@GRAD"):
                ctx.set_output(f"{slot}@GRAD", self.leave(P, value, ctx.input(slot).dtype,
                                                          shape, matrix))


def _check_system(ctx, op_type: str, a_slot: str, b_slot: str, vector_ok: bool) -> None:
    """Shape inference for A in ``a_slot`` and B in ``b_slot``: Out's shape."""
    a = L.check_matrices(ctx, op_type, slot=a_slot, square=True)
    b = list(ctx.shape(b_slot))
    if dtypes.name(ctx.dtype(b_slot)) != dtypes.name(ctx.dtype(a_slot)):
        ctx.fail(f"{op_type} needs both inputs of one dtype", slot=b_slot,
                 expected=dtypes.name(ctx.dtype(a_slot)), given=ctx.describe_input(b_slot))
    vector = vector_ok and len(b) == 1
    if len(b) < (1 if vector_ok else 2):
        ctx.fail(f"{op_type} needs a matrix (or a batch) of right-hand sides", slot=b_slot,
                 expected="rank >= 2" + (" (or a vector)" if vector_ok else ""),
                 given=ctx.describe_input(b_slot))
    bm = b + [1] if vector else b
    n = a[-1]
    if n >= 0 and bm[-2] >= 0 and n != bm[-2]:
        ctx.fail(f"{op_type} needs as many rows of right-hand sides as the matrix has",
                 slot=b_slot, expected=f"{n} rows", given=ctx.describe_input(b_slot))
    ab, bb = a[:-2], bm[:-2]
    rank = max(len(ab), len(bb))
    batch = broadcast_shapes([1] * (rank - len(ab)) + ab, [1] * (rank - len(bb)) + bb)
    if batch is None:
        ctx.fail(f"{op_type}: the batch dims of {a_slot} and {b_slot} must broadcast",
                 slot=b_slot, expected=f"batch dims broadcastable with {ab}",
                 given=ctx.describe_input(b_slot))
    ctx.set_output("Out", batch + ([bm[-2]] if vector else bm[-2:]), ctx.dtype(a_slot))


def _system_infer(op_type: str, a_slot: str, b_slot: str, vector_ok: bool):
    """The shape inference of an op solving A (in ``a_slot``) for B (in ``b_slot``)."""
    def infer(ctx):
        _check_system(ctx, op_type, a_slot, b_slot, vector_ok)
    return infer


def _singular(ok, op_type: str, slot: str) -> None:
    bad = np.flatnonzero(np.asarray(ok) == 0)
    if bad.size:
        raise ValueError(f"{op_type}: slot {slot}: matrix {int(bad[0])} of the batch is "
                         f"singular (a zero pivot): the system has no unique solution")


# --- solve --------------------------------------------------------------------------------
def _solve_system(ctx) -> System:
    return System("solve", int_shape(ctx.input("X")), int_shape(ctx.input("Y")),
                  ctx.input("Y").ndim == 1)


def _solve(ctx):
    P, x, y = place_of(ctx), ctx.input("X"), ctx.input("Y")
    s = _solve_system(ctx)
    out, ok = P.lu_solve(s.enter_a(P, x), s.enter_b(P, y))
    _singular(ok, "solve", "X")
    ctx.set_output("Out", P.from_matrices(out, s.out_shape, x.dtype))


def _solve_grad(ctx):
    P, x = place_of(ctx), ctx.input("X")
    s = _solve_system(ctx)
    a, out = s.enter_a(P, x), s.enter_out(P, ctx.input("Out"))
    dout = s.enter_out(P, _incoming(ctx, s))
    db, ok = P.lu_solve(P.transpose_each(a), dout)                  # A^-T dOut
    _singular(ok, "solve_grad", "X")
    s.set_grads(ctx, P, "X", P.negate(P.batch_product(db, out, tb=True)), "Y", db)


def _incoming(ctx, s: System):
    """Out@GRAD, checked against Out's shape (zeros where nobody wrote one)."""
    g = ctx.input_or_none("Out@GRAD")
    if g is None:
        return arrays.zeros_like(ctx.input("Out"))
    if int_shape(g) != s.out_shape:
        raise ValueError(f"{ctx.op.op.type}: slot Out@GRAD: expected Out's shape "
                         f"{list(s.out_shape)}, given {list(g.shape)}")
    return g


register(OpDef(
    "solve", [Slot("X", "the square matrices A"),
              Slot("Y", "the right-hand sides B ([.., n, k], or one vector [n])")],
    [Slot("Out", "A^-1 B")], [],
    comment="Out = X^-1 Y: the solution of each linear system X Out = Y.",
    infer_shape=_system_infer("solve", "X", "Y", vector_ok=True),
    kernels={"cpu": _solve, "cuda": _solve},
    grad=Grad(reads=["X", "Y", "Out"], writes=["X", "Y"], kernel=_solve_grad,
              cuda_kernel=_solve_grad)))


# --- triangular_solve ---------------------------------------------------------------------
def _triangular_flags(ctx):
    return ctx.attr("upper"), ctx.attr("transpose"), ctx.attr("unitriangular")


def _triangular_solve(ctx):
    P, x, y = place_of(ctx), ctx.input("X"), ctx.input("Y")
    s = System("triangular_solve", int_shape(x), int_shape(y), False)
    out = P.triangular_solve(s.enter_a(P, x), s.enter_b(P, y), *_triangular_flags(ctx))
    ctx.set_output("Out", P.from_matrices(out, s.out_shape, x.dtype))


def _triangular_solve_grad(ctx):
    P, x, y = place_of(ctx), ctx.input("X"), ctx.input("Y")
    upper, trans, unit = _triangular_flags(ctx)
    s = System("triangular_solve", int_shape(x), int_shape(y), False)
    t, out = s.enter_a(P, x), s.enter_out(P, ctx.input("Out"))
    db = P.triangular_solve(t, s.enter_out(P, _incoming(ctx, s)), upper, not trans, unit)
    # the gradient with respect to op(X) is -dB Out^T; X's is its transpose with trans,
    # kept in the triangle that was read (not the diagonal if it was taken as ones)
    full = P.batch_product(out, db, tb=True) if trans else P.batch_product(db, out, tb=True)
    dt = P.triangle(full, lower=not upper, diag=0.0 if unit else 1.0, scale=-1.0)
    s.set_grads(ctx, P, "X", dt, "Y", db)


register(OpDef(
    "triangular_solve", [Slot("X", "the triangular matrices"),
                         Slot("Y", "the right-hand sides [.., n, k]")],
    [Slot("Out", "op(X)^-1 Y")],
    [Attr("upper", A.BOOLEAN, True, "X is upper triangular (else lower)"),
     Attr("transpose", A.BOOLEAN, False, "solve with X^T"),
     Attr("unitriangular", A.BOOLEAN, False, "take X's diagonal as ones")],
    comment="Out = op(X)^-1 Y for triangular X, by substitution.",
    infer_shape=_system_infer("triangular_solve", "X", "Y", vector_ok=False),
    kernels={"cpu": _triangular_solve, "cuda": _triangular_solve},
    grad=Grad(reads=["X", "Y", "Out"], writes=["X", "Y"], kernel=_triangular_solve_grad,
              cuda_kernel=_triangular_solve_grad)))


# --- cholesky_solve -----------------------------------------------------------------------
def _with_factor(P, factor, rhs, upper: bool):
    """A^-1 rhs for A = L L^T (factor L) or, upper, A = U^T U (factor U)."""
    z = P.triangular_solve(factor, rhs, upper, upper, False)
    return P.triangular_solve(factor, z, upper, not upper, False)


def _cholesky_system(ctx) -> System:
    # A is the factor in Y, the right-hand sides are X
    return System("cholesky_solve", int_shape(ctx.input("Y")), int_shape(ctx.input("X")), False)


def _cholesky_solve(ctx):
    P, x, y = place_of(ctx), ctx.input("X"), ctx.input("Y")
    s = _cholesky_system(ctx)
    out = _with_factor(P, s.enter_a(P, y), s.enter_b(P, x), ctx.attr("upper"))
    ctx.set_output("Out", P.from_matrices(out, s.out_shape, x.dtype))


def _cholesky_solve_grad(ctx):
    P, y = place_of(ctx), ctx.input("Y")
    upper = ctx.attr("upper")
    s = _cholesky_system(ctx)
    factor, out = s.enter_a(P, y), s.enter_out(P, ctx.input("Out"))
    db = _with_factor(P, factor, s.enter_out(P, _incoming(ctx, s)), upper)   # A^-1 dOut
    # dA = -dB Out^T; A's symmetric part reaches the factor: dL = tril((dA + dA^T) L)
    sym = P.negate(P.combine(P.batch_product(db, out, tb=True),
                             P.batch_product(out, db, tb=True), 1.0, 1.0))
    read = P.triangle(factor, lower=not upper, diag=1.0)      # the triangle Y gave
    dfactor = P.batch_product(read, sym) if upper else P.batch_product(sym, read)
    dfactor = P.triangle(dfactor, lower=not upper, diag=1.0)
    s.set_grads(ctx, P, "Y", dfactor, "X", db)


register(OpDef(
    "cholesky_solve", [Slot("X", "the right-hand sides B [.., n, k]"),
                       Slot("Y", "the Cholesky factor of A (L, or U with upper)")],
    [Slot("Out", "A^-1 B")],
    [Attr("upper", A.BOOLEAN, False, "Y is U with A = U^T U (else L with A = L L^T)")],
    comment="Out = A^-1 X, A given by its Cholesky factor Y.",
    infer_shape=_system_infer("cholesky_solve", "Y", "X", vector_ok=False),
    kernels={"cpu": _cholesky_solve, "cuda": _cholesky_solve},
    grad=Grad(reads=["X", "Y", "Out"], writes=["X", "Y"], kernel=_cholesky_solve_grad,
              cuda_kernel=_cholesky_solve_grad)))
