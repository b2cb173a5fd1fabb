"""Binary elementwise ops with Fluid's ``axis`` broadcasting.

``elementwise_add(X, Y, axis)``: Y's dims line up with X's starting at ``axis`` (``-1``:
at the end), so X [N, C, H, W] + Y [C] uses ``axis=1``. Then numpy broadcasting applies,
so a [1]-shaped Y adds a scalar. Comparisons and logical ops follow the same rule and give
bool. The math of each is one scalar function under ``@pointwise`` (kernels/pointwise.py),
which makes its CPU ufunc (and ``prange`` twin) and its CUDA kernel; the op kernels and
the gradients are written once over the places' ``binary`` and ``apply``.
"""
from __future__ import annotations

import ast
import math

import numpy as np

from ..core import attrs as A
from ..core.framework_pb2 import VarType
from ..core.grad_maker import Grad
from ..core.registry import Attr, NO_GRADIENT, OpDef, Slot, register
from ..core.limits import check_tensor_size
from ..kernels.cpu.lazy_ufunc import (COMPARE_2, FLOAT_2, FLOAT_3, INT_2, INT_AND_FLOAT_1,
                                      INT_AND_FLOAT_2)
from ..kernels.cpu.broadcast_sum import operand_gradient, summed_to_operand
from ..kernels.lowered import Call, Elementwise
from ..kernels.pointwise import pointwise
from . import arrays
from .common import FLOAT_TYPES, OUT, X, Y, aligned_y_shape, broadcast_read, broadcast_shapes
from ..backends import CPU, CUDA
from ..backends.shared import binary_kernel_for

AXIS = Attr("axis", A.INT, -1, "where Y's dims line up with X's (-1: at the end)")

# Elements from which the CPU runs the prange twin (2 threads; memory-bound loops): the
# first measured power of 2 where it took <= ~0.8x the serial loop's time.
MIN_PARALLEL = 65_536       # add float32: measured crossover ~32k elements


# --- the math -------------------------------------------------------------------------------
@pointwise(INT_AND_FLOAT_2, MIN_PARALLEL, fastmath=True)
def add(x, y):
    return x + y


@pointwise(INT_AND_FLOAT_2, MIN_PARALLEL, fastmath=True)
def sub(x, y):
    return x - y


@pointwise(INT_AND_FLOAT_2, MIN_PARALLEL, fastmath=True)
def mul(x, y):
    return x * y


# fastmath=False, said explicitly: "arcp" may round x / y as x * (1/y)
@pointwise(FLOAT_2, MIN_PARALLEL, fastmath=False)
def div(x, y):
    return x / y


@pointwise(INT_2)
def trunc_div(x, y):   # integer elementwise_div rounds toward zero, as Paddle's C++ does
    q = abs(x) // abs(y) if y != 0 else 0
    return q if (x >= 0) == (y >= 0) else -q


@pointwise(INT_AND_FLOAT_1, fastmath=True)
def neg(x):
    return -x


# elementwise_max / _min as Paddle computes them (a NaN in X gives Y), and their gradients:
# dOut goes to X where X wins, to Y elsewhere (ties go to Y), as Paddle's kernels do
@pointwise(INT_AND_FLOAT_2, MIN_PARALLEL)
def maximum(x, y):
    return x if x > y else y


@pointwise(INT_AND_FLOAT_2, MIN_PARALLEL)
def minimum(x, y):
    return x if x < y else y


@pointwise(FLOAT_3, MIN_PARALLEL)
def maximum_grad_x(x, y, dout):
    return dout if x > y else dout * 0


@pointwise(FLOAT_3, MIN_PARALLEL)
def maximum_grad_y(x, y, dout):
    return dout * 0 if x > y else dout


@pointwise(FLOAT_3, MIN_PARALLEL)
def minimum_grad_x(x, y, dout):
    return dout if x < y else dout * 0


@pointwise(FLOAT_3, MIN_PARALLEL)
def minimum_grad_y(x, y, dout):
    return dout * 0 if x < y else dout


@pointwise(FLOAT_2, MIN_PARALLEL, fastmath=False)
def power(x, y):
    # a negative base to a fractional power is NaN, as numpy's (Python's would go complex)
    if -math.inf < x < 0 and math.isfinite(y) and y % 1.0 != 0.0:
        return math.nan
    return x ** y


@pointwise(FLOAT_3, MIN_PARALLEL, fastmath=False)
def power_grad_x(x, y, dout):
    if -math.inf < x < 0 and math.isfinite(y) and y % 1.0 != 0.0:
        return math.nan
    return dout * y * x ** (y - 1)


@pointwise(FLOAT_3, MIN_PARALLEL, fastmath=False)
def power_grad_y(x, y, dout):
    if x > 0:
        return dout * x ** y * math.log(x)
    return math.nan                       # where log(x) is not a finite number


# Python's (and Paddle's) integer and float division rounding down, and its remainder
# (the sign of Y). Integer Y is checked for zeros first (_check_divisor).
@pointwise(INT_AND_FLOAT_2)
def floor_div(x, y):
    return x // y


@pointwise(INT_AND_FLOAT_2)
def remainder(x, y):
    return x % y


@pointwise(COMPARE_2)
def greater_than(x, y):
    return x > y


@pointwise(COMPARE_2)
def less_than(x, y):
    return x < y


@pointwise(COMPARE_2)
def greater_equal(x, y):
    return x >= y


@pointwise(COMPARE_2)
def less_equal(x, y):
    return x <= y


@pointwise(COMPARE_2)
def equal(x, y):
    return x == y


@pointwise(COMPARE_2)
def not_equal(x, y):
    return x != y


# Paddle's logical ops take bool, integer and float tensors alike and read each element as
# C++'s bool(x) (nonzero, NaN included, is true): paddle.logical_and(x, y) on float32 x and
# y is a common call. So they have a loop for each of those dtypes, as the comparisons do.
LOGICAL_1 = [f"boolean({t})" for t in ("boolean", "int32", "int64", "float32", "float64")]
LOGICAL_2 = COMPARE_2


@pointwise(LOGICAL_2)
def logical_and(x, y):
    return x != 0 and y != 0


@pointwise(LOGICAL_2)
def logical_or(x, y):
    return x != 0 or y != 0


@pointwise(LOGICAL_2)
def logical_xor(x, y):
    return (x != 0) != (y != 0)


@pointwise(LOGICAL_1)
def logical_not(x):
    return x == 0


# where: Out = X where Condition holds, else Y; dOut goes back the way each element came
_SELECT = [f"{t}(boolean, {t}, {t})" for t in ("boolean", "int32", "int64", "float32",
                                               "float64")]
_ROUTE = [f"{t}(boolean, {t})" for t in ("float32", "float64")]


@pointwise(_SELECT)
def select(condition, x, y):
    return x if condition else y


@pointwise(_ROUTE)
def select_grad_x(condition, dout):
    return dout if condition else dout * 0


@pointwise(_ROUTE)
def select_grad_y(condition, dout):
    return dout * 0 if condition else dout


# --- the ops --------------------------------------------------------------------------------


def broadcast_shape_of(ctx) -> list[int]:
    """The shape X and Y broadcast to under Fluid's ``axis`` rule (a shape inference
    error if they cannot)."""
    xs, ys, axis = ctx.shape("X"), ctx.shape("Y"), ctx.attr("axis")
    if len(ys) > len(xs):      # Paddle 2 also broadcasts a smaller X into Y
        xs, ys = ys, xs
    if axis not in (-1, None) and not 0 <= axis <= len(xs) - len(ys):
        ctx.fail(f"axis={axis} does not fit a rank-{len(ys)} Y into a rank-{len(xs)} X",
                 slot="Y", expected=f"axis in [0, {len(xs) - len(ys)}] or -1",
                 given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
    out = broadcast_shapes(xs, aligned_y_shape(len(xs), ys, axis))
    if out is None:
        ctx.fail("X and Y cannot be broadcast together", slot="Y",
                 expected=f"Y's dims equal to X's (or 1) from axis {axis}",
                 given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
    return out


def broadcast_infer(out_dtype=None):
    def infer(ctx):
        out = broadcast_shape_of(ctx)
        if out_dtype is None:       # arithmetic: its kernels have int and float loops only
            # (a bool X + Y is refused here, clearly, not a numpy casting error in the
            # kernel); elementwise_mul of bools is their logical and, as in Paddle
            kind = "real" if ctx.op_def.type == "elementwise_mul" else "number"
            ctx.require_dtype("X", kind)
            ctx.require_dtype("Y", kind)
        if out_dtype is None and ctx.dtype("X") != ctx.dtype("Y"):
            ctx.fail("X and Y have different dtypes", slot="Y",
                     expected="Y of X's dtype", given=f"X {ctx.describe_input('X')}, "
                     f"Y {ctx.describe_input('Y')}")
        ctx.set_output("Out", out, out_dtype if out_dtype is not None else ctx.dtype("X"))
    return infer


def _float_broadcast(ctx):
    """elementwise_pow: floats (an integer power could overflow or need a fraction)."""
    ctx.require_dtype("X", "float")
    broadcast_infer()(ctx)


def broadcast_operands(x: np.ndarray, y: np.ndarray, axis: int):
    """X and Y reshaped so that numpy broadcasting does what Fluid's ``axis`` says."""
    if y.ndim > x.ndim:
        return x.reshape(aligned_y_shape(y.ndim, x.shape, axis)), y
    if y.ndim < x.ndim or axis not in (-1, None):
        return x, y.reshape(aligned_y_shape(x.ndim, y.shape, axis))
    return x, y


def _check_divisor(y, op_type: str):
    """An integer Y with a 0 in it would divide by zero (Paddle refuses too)."""
    if y.dtype.kind not in "iu":
        return
    host = arrays.host(y)
    zeros = np.flatnonzero(host.reshape(-1) == 0)
    if zeros.size:
        where = tuple(int(i) for i in np.unravel_index(zeros[0], host.shape))
        raise ZeroDivisionError(
            f"{op_type}: input slot Y: integer division by zero: expected no 0 in an "
            f"integer Y, given Y[{', '.join(map(str, where))}] = 0 "
            f"({zeros.size} zero(s) in Y {list(host.shape)})")


def _binary_kernel(place, op_type: str, out_dtype=None, divides: bool = False):
    """Out = op(X, Y) with Fluid's ``axis`` reshape, then numpy broadcasting."""
    def run(ctx):
        axis = ctx.op.attrs.get("axis", -1)      # logical_and/or have no axis
        x, y = broadcast_operands(ctx.input("X"), ctx.input("Y"), axis)
        if divides:
            _check_divisor(y, op_type)
        shape = arrays.broadcast_shape(x.shape, y.shape)
        dtype = out_dtype or x.dtype
        if shape != x.shape and shape != y.shape:      # broadcasting both ways grows
            check_tensor_size(shape, np.dtype(dtype), op_type)
        kernel_type = op_type
        if op_type == "elementwise_mul" and x.dtype == np.bool_:
            kernel_type = "logical_and"                # bool * bool, as Paddle's
        ctx.set_output("Out", place.binary(kernel_type, x, y, ctx.out("Out", shape, dtype),
                                           out_dtype))
    run.__name__ = f"{place.name}_{op_type}"
    return run


# --- gradients ---------------------------------------------------------------------------
# (dX, dY) of each op at the broadcast shape, as expressions of the elements x, y and d
# (dOut) calling @pointwise kernels by name: the one statement of each gradient's math.
# The interpreter evaluates one on arrays, each call a kernel over the place
# (_on_arrays); a compiled block, element by element in one loop
# (kernels/cpu/broadcast_sum.operand_gradient). Both then sum it back to the operand.
_GRAD_FORMULAS = {
    "elementwise_add": ("d", "d"),
    "elementwise_sub": ("d", "neg(d)"),
    "elementwise_mul": ("mul(d, y)", "mul(d, x)"),
    "elementwise_div": ("div(d, y)", "neg(div(mul(d, x), mul(y, y)))"),
    "elementwise_max": ("maximum_grad_x(x, y, d)", "maximum_grad_y(x, y, d)"),
    "elementwise_min": ("minimum_grad_x(x, y, d)", "minimum_grad_y(x, y, d)"),
    "elementwise_pow": ("power_grad_x(x, y, d)", "power_grad_y(x, y, d)"),
}
_GRAD_KERNELS = (mul, div, neg, maximum_grad_x, maximum_grad_y, minimum_grad_x,
                 minimum_grad_y, power_grad_x, power_grad_y)


def _on_arrays(place, formula: str):
    """``formula`` as a function of the arrays (x, y, d) on ``place``: each kernel it
    names applied over whole arrays. The expression is walked as a syntax tree of names
    and calls (no eval: ops/ is on the loading paths, tests/test_hostile_programs.py)."""
    kernels = {k.__name__: k for k in _GRAD_KERNELS}
    tree = ast.parse(formula, mode="eval").body

    def value(node, operands):
        if isinstance(node, ast.Name):
            return operands[node.id]
        return place.apply(kernels[node.func.id], *(value(a, operands) for a in node.args),
                           out=None)
    return lambda x, y, d: value(tree, {"x": x, "y": y, "d": d})


def _binary_grad(place, op_type: str):
    """X@GRAD and Y@GRAD of Out = f(X, Y): _GRAD_FORMULAS' expressions at the broadcast
    shape, then summed back to each operand."""
    dx_of, dy_of = (_on_arrays(place, f) for f in _GRAD_FORMULAS[op_type])

    def run(ctx):
        x0, y0 = ctx.input("X"), ctx.input("Y")
        x, y = broadcast_operands(x0, y0, ctx.attr("axis"))
        dout = ctx.input("Out@GRAD")
        if ctx.has_output("X@GRAD"):
            dx = arrays.unbroadcast(dx_of(x, y, dout), x.shape, x0.shape)
            ctx.set_output("X@GRAD", arrays.astype(dx, x0.dtype))
        if ctx.has_output("Y@GRAD"):
            dy = arrays.unbroadcast(dy_of(x, y, dout), y.shape, y0.shape)
            ctx.set_output("Y@GRAD", arrays.astype(dy, y0.dtype))
    return run


# --- in a compiled block (kernels/lowered.py) ------------------------------------------
def _lowered_binary(op_type: str):
    """The op's scalar function, fused into its neighbours' loop (an integer Y of a
    division stays in the interpreter, which checks it for zeros)."""
    def lowered(info):
        dtype = info.dtype("X")
        if op_type in ("elementwise_floordiv", "elementwise_mod") and dtype.kind in "iu":
            return None
        kernel_type = op_type
        if op_type == "elementwise_mul" and dtype == np.bool_:
            kernel_type = "logical_and"
        return Elementwise(binary_kernel_for(kernel_type, dtype), ("X", "Y"),
                           axis=info.attr("axis") if info.pop.op_def.attr("axis") else -1)
    return lowered


def _covered_dims(info, slot: str) -> tuple | None:
    """The dims ``(lo, hi)`` of Out that operand ``slot`` covers as the loop reads it
    (ops/common.broadcast_read: all of them, none for one element, a run), or None where
    it broadcasts another way."""
    out_shape = info.shape("Out@GRAD")
    read = broadcast_read(info.shape(slot), out_shape, info.attr("axis"))
    if read is None:
        return None
    return {"flat": (0, len(out_shape)), "one": (0, 0)}.get(read[0], read[1:])


def _lowered_sum_grad(negate_y: bool):
    """elementwise_add's and _sub's gradients: dOut (negated for sub's Y) summed back to
    each operand (kernels/cpu/broadcast_sum.py)."""
    def lowered(info):
        calls = []
        for slot, negate in (("X", False), ("Y", negate_y)):
            if not info.has_output(slot + "@GRAD"):
                continue
            dims = _covered_dims(info, slot)
            if dims is None or info.dtype(slot) != info.dtype("Out@GRAD"):
                return None
            calls.append(Call(summed_to_operand, ("Out@GRAD", slot), (slot + "@GRAD",),
                              (*dims, negate)))
        return tuple(calls)
    return lowered


def _lowered_formula_grad(op_type: str):
    """The gradients of _GRAD_FORMULAS' ops, for float X, Y and dOut of one dtype:
    kernels/cpu/broadcast_sum.operand_gradient, one Call per gradient asked for."""
    fns = {slot: operand_gradient(f"{op_type}_d{slot.lower()}", formula, _GRAD_KERNELS)
           for slot, formula in zip(("X", "Y"), _GRAD_FORMULAS[op_type])}

    def lowered(info):
        dtype = info.dtype("Out@GRAD")
        if dtype.name not in FLOAT_TYPES or info.dtype("X") != dtype or \
                info.dtype("Y") != dtype:
            return None
        dims = {slot: _covered_dims(info, slot) for slot in ("X", "Y")}
        if None in dims.values():
            return None
        return tuple(Call(fns[slot], ("X", "Y", "Out@GRAD", slot), (slot + "@GRAD",),
                          (*dims["X"], *dims["Y"], *dims[slot]))
                     for slot in ("X", "Y") if info.has_output(slot + "@GRAD"))
    return lowered


_LOWERED_GRADS = {"elementwise_add": _lowered_sum_grad(False),
                  "elementwise_sub": _lowered_sum_grad(True),
                  **{t: _lowered_formula_grad(t) for t in _GRAD_FORMULAS
                     if t not in ("elementwise_add", "elementwise_sub")}}

for _type, _formula in (("elementwise_add", "X + Y"), ("elementwise_sub", "X - Y"),
                        ("elementwise_mul", "X * Y"), ("elementwise_div", "X / Y"),
                        ("elementwise_max", "max(X, Y)"), ("elementwise_min", "min(X, Y)"),
                        ("elementwise_pow", "X ** Y")):
    register(OpDef(_type, [X, Y], [OUT], [AXIS], comment=f"Out = {_formula}, with Y broadcast "
                   "into X from `axis`.",
                   infer_shape=_float_broadcast if _type == "elementwise_pow" else
                   broadcast_infer(),
                   kernels={"cpu": _binary_kernel(CPU, _type),
                            "cuda": _binary_kernel(CUDA, _type)},
                   lowered=_lowered_binary(_type),
                   grad=Grad(reads=["X", "Y"], kernel=_binary_grad(CPU, _type),
                             cuda_kernel=_binary_grad(CUDA, _type),
                             lowered=_LOWERED_GRADS.get(_type))))

for _type, _formula in (("elementwise_floordiv", "floor(X / Y)"),
                        ("elementwise_mod", "X - floor(X / Y) * Y (the sign of Y)")):
    register(OpDef(_type, [X, Y], [OUT], [AXIS], comment=f"Out = {_formula}, with Y broadcast "
                   "into X from `axis`; no gradient, as in Paddle.",
                   infer_shape=broadcast_infer(),
                   kernels={"cpu": _binary_kernel(CPU, _type, divides=True),
                            "cuda": _binary_kernel(CUDA, _type, divides=True)},
                   lowered=_lowered_binary(_type),
                   grad=NO_GRADIENT))

for _type, _formula in (("greater_than", "X > Y"), ("less_than", "X < Y"),
                        ("greater_equal", "X >= Y"), ("less_equal", "X <= Y"),
                        ("equal", "X == Y"), ("not_equal", "X != Y")):
    register(OpDef(_type, [X, Y], [OUT],
                   [AXIS, Attr("force_cpu", A.BOOLEAN, False, "keep Out on the CPU", extra=True)],
                   comment=f"Out = {_formula} elementwise, as bool.",
                   infer_shape=broadcast_infer(VarType.BOOL),
                   kernels={"cpu": _binary_kernel(CPU, _type, np.bool_),
                            "cuda": _binary_kernel(CUDA, _type, np.bool_)}, grad=NO_GRADIENT,
                   lowered=_lowered_binary(_type),
                   out_dtype="bool"))


def numpy_broadcast_shape_of(ctx) -> list[int]:
    """The shape X and Y broadcast to under numpy's rule (shapes lined up from the end),
    as Paddle's logical and bitwise ops broadcast (a shape inference error if they
    cannot)."""
    xs, ys = ctx.shape("X"), ctx.shape("Y")
    rank = max(len(xs), len(ys))
    out = broadcast_shapes([1] * (rank - len(xs)) + xs, [1] * (rank - len(ys)) + ys)
    if out is None:
        ctx.fail("X and Y cannot be broadcast together", slot="Y",
                 given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
    return out


def _logical_infer(ctx):
    """numpy broadcasting, bool result; X and Y bool or numbers, as Paddle's logical ops
    take."""
    ctx.require_dtype("X", "real")
    ctx.require_dtype("Y", "real")
    ctx.set_output("Out", numpy_broadcast_shape_of(ctx), VarType.BOOL)


for _type, _formula in (("logical_and", "X and Y"), ("logical_or", "X or Y"),
                        ("logical_xor", "X xor Y")):
    register(OpDef(_type, [X, Y], [OUT], [],
                   comment=f"Out = {_formula} elementwise (bool; a number is true where nonzero).",
                   infer_shape=_logical_infer,
                   kernels={"cpu": _binary_kernel(CPU, _type, np.bool_),
                            "cuda": _binary_kernel(CUDA, _type, np.bool_)},
                   lowered=_lowered_binary(_type), grad=NO_GRADIENT))


def _logical_not_infer(ctx):
    ctx.require_dtype("X", "real")
    ctx.set_output("Out", ctx.shape("X"), VarType.BOOL)


def _logical_not_kernel(place):
    def run(ctx):
        x = ctx.input("X")
        ctx.set_output("Out", place.apply(logical_not, x, out=ctx.out("Out", x.shape, np.bool_),
                                          out_dtype=np.bool_))
    return run


register(OpDef("logical_not", [X], [OUT], [],
               comment="Out = not X elementwise (bool; a number is true where nonzero).",
               infer_shape=_logical_not_infer,
               kernels={"cpu": _logical_not_kernel(CPU), "cuda": _logical_not_kernel(CUDA)},
               lowered=lambda info: Elementwise(logical_not, ("X",)), grad=NO_GRADIENT))


# --- where ------------------------------------------------------------------------------------
def _where_infer(ctx):
    """Condition is bool; X and Y share its shape and one dtype (Paddle's where op; its
    Python side broadcasts them first)."""
    ctx.require_dtype("Condition", "bool")
    cs = ctx.shape("Condition")
    for slot in ("X", "Y"):
        s = ctx.shape(slot)
        if len(s) != len(cs) or any(a >= 0 and b >= 0 and a != b for a, b in zip(s, cs)):
            ctx.fail(f"{slot} must have Condition's shape", slot=slot, expected=str(cs),
                     given=ctx.describe_input(slot))
    if ctx.dtype("X") != ctx.dtype("Y"):
        ctx.fail("X and Y have different dtypes", slot="Y", expected="Y of X's dtype",
                 given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _where(place):
    def run(ctx):
        c, x, y = ctx.input("Condition"), ctx.input("X"), ctx.input("Y")
        ctx.set_output("Out", place.apply(select, c, x, y, out=ctx.out("Out", x.shape, x.dtype),
                                          out_dtype=x.dtype))
    return run


def _where_grad(place):
    def run(ctx):
        c, dout = ctx.input("Condition"), ctx.input("Out@GRAD")
        for slot, kernel in (("X", select_grad_x), ("Y", select_grad_y)):
            if ctx.has_output(slot + "@GRAD"):
                ctx.set_output(slot + "@GRAD", place.apply(kernel, c, dout, out=None,
                                                           out_dtype=dout.dtype))
    return run


# In a compiled block: select fused as any elementwise op; each gradient a Call of
# broadcast_sum.operand_gradient around select_grad_x / _y (x there is the Condition's
# element; every operand has Out's shape, so nothing is summed).
_WHERE_GRADS = {slot: operand_gradient(f"where_d{slot.lower()}", f"{kernel.__name__}(x, d)",
                                       (kernel,))
                for slot, kernel in (("X", select_grad_x), ("Y", select_grad_y))}


def _lowered_where_grad(info):
    dtype, rank = info.dtype("Out@GRAD"), info.ndim("Out@GRAD")
    if dtype.name not in FLOAT_TYPES or info.dtype("X") != dtype:
        return None
    return tuple(Call(_WHERE_GRADS[slot], ("Condition", "Condition", "Out@GRAD", slot),
                      (slot + "@GRAD",), (0, rank) * 3)
                 for slot in ("X", "Y") if info.has_output(slot + "@GRAD")) or None


register(OpDef("where", [Slot("Condition", "where to take X"), X, Y], [OUT], [],
               comment="Out = X where Condition, else Y, elementwise.",
               infer_shape=_where_infer,
               kernels={"cpu": _where(CPU), "cuda": _where(CUDA)},
               lowered=lambda info: Elementwise(select, ("Condition", "X", "Y")),
               grad=Grad(reads=["Condition", "X", "Y"], writes=["X", "Y"],
                         kernel=_where_grad(CPU),
                         cuda_kernel=_where_grad(CUDA), lowered=_lowered_where_grad)))
