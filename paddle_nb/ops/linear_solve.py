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

from ..backends import CPU, place_of
from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import linalg as KL
from ..kernels.cpu.in_python import in_python, like, several
from ..kernels.lowered import Call
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

    def grads(self, P, da, db, dtype):
        """(dA, dB) from the working gradients of A and B: each in its operand's shape and
        ``dtype`` (both operands have one)."""
        return (self.leave(P, da, dtype, self.a_shape, self.a_shape),
                self.leave(P, db, dtype, self.b_shape, self.b_matrix))


def _set_grads(ctx, grads, slots) -> None:
    """The gradients the program asks for, of (dA, dB) in ``slots`` (A's, B's)."""
    for slot, value in zip(slots, grads):
        if ctx.has_output(f"{slot}@GRAD"):
            ctx.set_output(f"{slot}@GRAD", value)


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


# Each op's math is one function of its arrays and attributes (``P``: the place's batches
# of matrices); the kernels call it with their place's, a compiled block with the CPU's
# from numba code (``*_in_python``: kernels/cpu/linalg.py says why). A gradient function
# gives both operands' gradients; the kernel sets those the program asks for.
# --- solve --------------------------------------------------------------------------------
def _solve_system(x, y) -> System:
    return System("solve", int_shape(x), int_shape(y), y.ndim == 1)


def solve_arrays(x, y, P=CPU):
    s = _solve_system(x, y)
    out, ok = P.lu_solve(s.enter_a(P, x), s.enter_b(P, y))
    _singular(ok, "solve", "X")
    return P.from_matrices(out, s.out_shape, x.dtype)


def _solve(ctx):
    ctx.set_output("Out", solve_arrays(ctx.input("X"), ctx.input("Y"), place_of(ctx)))


def solve_grad_arrays(x, y, out, dout, P=CPU):
    """(dX, dY)."""
    s = _solve_system(x, y)
    a, out_m = s.enter_a(P, x), s.enter_out(P, out)
    dout = s.enter_out(P, _incoming(dout, out, s, "solve_grad"))
    db, ok = P.lu_solve(P.transpose_each(a), dout)                  # A^-T dOut
    _singular(ok, "solve_grad", "X")
    return s.grads(P, P.negate(P.batch_product(db, out_m, tb=True)), db, x.dtype)


def _solve_grad(ctx):
    _set_grads(ctx, solve_grad_arrays(*_grad_inputs(ctx), place_of(ctx)), ("X", "Y"))


def _grad_inputs(ctx):
    """X, Y, Out and Out@GRAD (None where nobody wrote one): what the gradients read."""
    return (ctx.input("X"), ctx.input("Y"), ctx.input("Out"), ctx.input_or_none("Out@GRAD"))


def _incoming(g, out, s: System, op_type: str):
    """Out@GRAD ``g``, checked against Out's shape (zeros where nobody wrote one)."""
    if g is None:
        return arrays.zeros_like(out)
    if int_shape(g) != s.out_shape:
        raise ValueError(f"{op_type}: slot Out@GRAD: expected Out's shape "
                         f"{list(s.out_shape)}, given {list(g.shape)}")
    return g


def _lowered_system(fn):
    """The form of a forward op: ``fn(X, Y, *attributes)`` gives Out."""
    def lowered(info, *consts):
        return Call(fn, ("X", "Y"), ("Out",), consts)
    return lowered


def _lowered_system_grad(fn):
    """The form of a gradient op: ``fn(X, Y, Out, Out@GRAD, *attributes)`` gives both
    operands' gradients (a slot the program does not ask for is dropped)."""
    def lowered(info, *consts):
        if not info.has_input("Out@GRAD"):
            return None
        return Call(fn, ("X", "Y", "Out", "Out@GRAD"), ("X@GRAD", "Y@GRAD"), consts)
    return lowered


def _flags(lowered, *names):
    """``lowered(info, *its boolean attributes named names)``."""
    return lambda info: lowered(info, *(bool(info.attr(n)) for n in names))


solve_in_python = in_python(solve_arrays, KL.broadcast_solution(vector_ok=True))
solve_grad_in_python = in_python(solve_grad_arrays, several(like(0), like(1)))


register(OpDef(
    "solve", [Slot("X", "the square matrices A"),
              Slot("Y", "the right-hand sides B ([.., n, k], or one vector [n])")],
    [Slot("Out", "A^-1 B")], [],
    comment="Out = X^-1 Y: the solution of each linear system X Out = Y.",
    infer_shape=_system_infer("solve", "X", "Y", vector_ok=True),
    kernels={"cpu": _solve, "cuda": _solve}, lowered=_lowered_system(solve_in_python),
    grad=Grad(reads=["X", "Y", "Out"], writes=["X", "Y"], kernel=_solve_grad,
              cuda_kernel=_solve_grad, lowered=_lowered_system_grad(solve_grad_in_python))))


# --- triangular_solve ---------------------------------------------------------------------
TRIANGULAR_FLAGS = ("upper", "transpose", "unitriangular")


def _triangular_flags(ctx):
    return tuple(ctx.attr(name) for name in TRIANGULAR_FLAGS)


def triangular_solve_arrays(x, y, upper, trans, unit, P=CPU):
    s = System("triangular_solve", int_shape(x), int_shape(y), False)
    out = P.triangular_solve(s.enter_a(P, x), s.enter_b(P, y), upper, trans, unit)
    return P.from_matrices(out, s.out_shape, x.dtype)


def _triangular_solve(ctx):
    ctx.set_output("Out", triangular_solve_arrays(ctx.input("X"), ctx.input("Y"),
                                                  *_triangular_flags(ctx), place_of(ctx)))


def _triangular_solve_grad(ctx):
    _set_grads(ctx, triangular_solve_grad_arrays(*_grad_inputs(ctx), *_triangular_flags(ctx),
                                                 place_of(ctx)), ("X", "Y"))


def triangular_solve_grad_arrays(x, y, out, dout, upper, trans, unit, P=CPU):
    """(dX, dY)."""
    s = System("triangular_solve", int_shape(x), int_shape(y), False)
    t, dout = s.enter_a(P, x), s.enter_out(P, _incoming(dout, out, s, "triangular_solve_grad"))
    out = s.enter_out(P, out)
    db = P.triangular_solve(t, dout, upper, not trans, unit)
    # the gradient with respect to op(X) is -dB Out^T; X's is its transpose with trans,
    # kept in the triangle that was read (not the diagonal if it was taken as ones)
    full = P.batch_product(out, db, tb=True) if trans else P.batch_product(db, out, tb=True)
    dt = P.triangle(full, lower=not upper, diag=0.0 if unit else 1.0, scale=-1.0)
    return s.grads(P, dt, db, x.dtype)


triangular_solve_in_python = in_python(triangular_solve_arrays,
                                       KL.broadcast_solution(vector_ok=False))
triangular_solve_grad_in_python = in_python(triangular_solve_grad_arrays,
                                            several(like(0), like(1)))


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
    lowered=_flags(_lowered_system(triangular_solve_in_python), *TRIANGULAR_FLAGS),
    grad=Grad(reads=["X", "Y", "Out"], writes=["X", "Y"], kernel=_triangular_solve_grad,
              cuda_kernel=_triangular_solve_grad,
              lowered=_flags(_lowered_system_grad(triangular_solve_grad_in_python),
                             *TRIANGULAR_FLAGS))))


# --- cholesky_solve -----------------------------------------------------------------------
def _with_factor(P, factor, rhs, upper: bool):
    """A^-1 rhs for A = L L^T (factor L) or, upper, A = U^T U (factor U)."""
    z = P.triangular_solve(factor, rhs, upper, upper, False)
    return P.triangular_solve(factor, z, upper, not upper, False)


def _cholesky_system(x, y) -> System:
    # A is the factor in Y, the right-hand sides are X
    return System("cholesky_solve", int_shape(y), int_shape(x), False)


def cholesky_solve_arrays(x, y, upper, P=CPU):
    s = _cholesky_system(x, y)
    out = _with_factor(P, s.enter_a(P, y), s.enter_b(P, x), upper)
    return P.from_matrices(out, s.out_shape, x.dtype)


def _cholesky_solve(ctx):
    ctx.set_output("Out", cholesky_solve_arrays(ctx.input("X"), ctx.input("Y"),
                                                ctx.attr("upper"), place_of(ctx)))


def _cholesky_solve_grad(ctx):
    _set_grads(ctx, cholesky_solve_grad_arrays(*_grad_inputs(ctx), ctx.attr("upper"),
                                               place_of(ctx)), ("X", "Y"))


def cholesky_solve_grad_arrays(x, y, out, dout, upper, P=CPU):
    """(dX, dY): X holds the right-hand sides, Y the factor."""
    s = _cholesky_system(x, y)
    dout = s.enter_out(P, _incoming(dout, out, s, "cholesky_solve_grad"))
    factor, out = s.enter_a(P, y), s.enter_out(P, out)
    db = _with_factor(P, factor, dout, upper)                         # A^-1 dOut
    # dA = -dB Out^T; A's symmetric part reaches the factor: dL = tril((dA + dA^T) L)
    sym = P.negate(P.combine(P.batch_product(db, out, tb=True),
                             P.batch_product(out, db, tb=True), 1.0, 1.0))
    read = P.triangle(factor, lower=not upper, diag=1.0)      # the triangle Y gave
    dfactor = P.batch_product(read, sym) if upper else P.batch_product(sym, read)
    dfactor = P.triangle(dfactor, lower=not upper, diag=1.0)
    dy, dx = s.grads(P, dfactor, db, x.dtype)
    return dx, dy


cholesky_solve_in_python = in_python(cholesky_solve_arrays,
                                     KL.broadcast_solution(vector_ok=False))
cholesky_solve_grad_in_python = in_python(cholesky_solve_grad_arrays,
                                          several(like(0), like(1)))


register(OpDef(
    "cholesky_solve", [Slot("X", "the right-hand sides B [.., n, k]"),
                       Slot("Y", "the Cholesky factor of A (L, or U with upper)")],
    [Slot("Out", "A^-1 B")],
    [Attr("upper", A.BOOLEAN, False, "Y is U with A = U^T U (else L with A = L L^T)")],
    comment="Out = A^-1 X, A given by its Cholesky factor Y.",
    infer_shape=_system_infer("cholesky_solve", "Y", "X", vector_ok=False),
    kernels={"cpu": _cholesky_solve, "cuda": _cholesky_solve},
    lowered=_flags(_lowered_system(cholesky_solve_in_python), "upper"),
    grad=Grad(reads=["X", "Y", "Out"], writes=["X", "Y"], kernel=_cholesky_solve_grad,
              cuda_kernel=_cholesky_solve_grad,
              lowered=_flags(_lowered_system_grad(cholesky_solve_grad_in_python), "upper"))))
