"""Small pieces the op declarations share: slots, element-type and attribute checks, shape
helpers, and the two ``fail``s of a rule checked at build time and again at run time."""
from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.framework_pb2 import VarType
from ..core.registry import Slot
from ..core.infer_shape import dims_compatible

X = Slot("X", "the input tensor")
Y = Slot("Y", "the second input tensor")
OUT = Slot("Out", "the result")


# the element types most of Paddle's float kernels are registered for
FLOAT_TYPES = ("float32", "float64")
# the element types an op's ``dtype`` attribute may choose for its index outputs
# (unique's Index, cummax's indices), as Paddle's kernels accept them
INDEX_TYPES = {VarType.INT32: np.int32, VarType.INT64: np.int64}


def require_element_type(ctx, slot: str, allowed, message: str,
                         expected: str = "one of those") -> None:
    """``slot``'s element type is one of ``allowed`` (dtype names); ``message`` says which
    the op takes and why."""
    if dtypes.name(ctx.dtype(slot)) not in allowed:
        ctx.fail(message, slot=slot, expected=expected, given=ctx.describe_input(slot))


def require_index_dtype(ctx, op_type: str, outputs: str, slot: str) -> None:
    """The ``dtype`` attribute names an element type of INDEX_TYPES, that of ``outputs``."""
    if ctx.attr("dtype") not in INDEX_TYPES:
        ctx.fail(f"{op_type}: dtype names {outputs} element type", slot=slot,
                 expected=f"int32 ({VarType.INT32}) or int64 ({VarType.INT64})",
                 given=f"dtype={ctx.attr('dtype')}")


def attr_tensor_slots(tensor: str, tensors: str, what: str) -> list:
    """The two inputs that may give an attribute's value at run time in its place
    (core/attr_tensors.py): ``tensor``, one tensor holding it, and ``tensors``, one
    1-element tensor per entry."""
    return [Slot(tensor, f"{what} as a tensor", dispensable=True),
            Slot(tensors, f"{what} as 1-element tensors", dispensable=True, duplicable=True)]


def number_check(ok, message: str):
    """An ``Attr(check=...)`` that refuses a number for which ``ok(value)`` is false (NaN
    fails every comparison, so it is refused too) with ``message``, where ``{value}`` stands
    for it. A value of another type is left to the attribute's type check, which says what
    is wrong with it."""
    def check(value):
        if isinstance(value, (int, float)) and not ok(value):
            return message.format(value=value)
        return None
    return check


def in_unit_interval(message: str):
    """``number_check`` of a number in [0, 1] (a probability, a slope)."""
    return number_check(lambda value: 0.0 <= value <= 1.0, message)


def same_shape_as_x(ctx) -> None:
    """Out has X's shape and dtype (unary elementwise ops)."""
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def int_shape(value) -> tuple[int, ...]:
    """A tensor's shape as a tuple of Python ints (numpy and the device arrays may give
    their own integer types)."""
    return tuple(int(d) for d in value.shape)


def padded_shape(shape, rank: int) -> list:
    """``shape`` with 1s in front up to ``rank`` dims: how numpy lines up the shapes it
    broadcasts (from the last dim)."""
    return [1] * (rank - len(shape)) + list(shape)


def aligned_y_shape(x_rank: int, y_shape, axis: int) -> list[int]:
    """Fluid's elementwise broadcast: Y's dims line up with X's starting at ``axis``
    (``-1``: aligned to the end); Y's trailing 1s may be dropped first."""
    y_shape = list(y_shape)
    if axis == -1 or axis is None:
        axis = x_rank - len(y_shape)
    while len(y_shape) > 1 and y_shape[-1] == 1 and axis + len(y_shape) > x_rank:
        y_shape.pop()
    return [1] * axis + y_shape + [1] * (x_rank - axis - len(y_shape))


def broadcast_read(shape, loop_shape, axis: int) -> tuple | None:
    """How a loop over ``loop_shape`` (an elementwise op's output) reads an operand of
    ``shape`` lined up by Fluid's ``axis`` rule: ``("flat",)`` (the loop's own shape),
    ``("one",)`` (one element), ``("run", lo, hi)`` (the loop's dims ``[lo, hi)``, read at
    ``(i // post) % n``: a bias, a channel scale) or None (another broadcast: numpy's,
    growing both operands). The block compiler's fused loops and the lowered gradients of
    the elementwise ops read operands this way."""
    rank = len(loop_shape)
    if len(shape) > rank:
        return None
    padded = tuple(shape) if len(shape) == rank else tuple(aligned_y_shape(rank, shape, axis))
    if len(padded) != rank:
        return None
    if padded == tuple(loop_shape) and len(shape) == rank:
        return ("flat",)
    if math.prod(padded) == 1:
        return ("one",)
    big = [d for d in range(rank) if padded[d] != 1]
    lo, hi = big[0], big[-1] + 1
    if all(padded[d] == loop_shape[d] for d in range(lo, hi)):
        return ("run", lo, hi)
    return None


def broadcast_shapes(a, b) -> list[int] | None:
    """Numpy broadcasting of declared shapes (-1 = unknown); None if they cannot fit."""
    out = []
    for da, db in zip(a, b):
        if da == 1:
            out.append(db)
        elif db == 1:
            out.append(da)
        elif dims_compatible(da, db):
            out.append(da if da >= 0 else db)
        else:
            return None
    return out


def numba_holds(dtype) -> bool:
    """Does numba have arrays of ``dtype`` (all numbers but float16)? What the compiled
    forms of the ops (kernels/lowered.py) can pass around."""
    return dtype.kind in "biuc" or dtype.name in FLOAT_TYPES


def one_dtype(info, slot: str):
    """The dtype of every array of a duplicable slot (a compiled form's OpInfo), or None
    where they differ."""
    dtype = info.dtype(slot)
    count = len(info.pop.in_ix[slot])
    return dtype if all(info.dtype(slot, i) == dtype for i in range(count)) else None


def dtype_to_numpy(code_or_name):
    return dtypes.to_numpy(dtypes.to_code(code_or_name))


def dtype_code_check(kinds: str = "biufc", minus_one: bool = False):
    """An ``Attr(check=...)`` for a ``dtype`` attribute: a VarType code of an element type
    (whose numpy kind letter is in ``kinds``; ``-1`` too where it means "X's type"). A code
    such as -1 or 2**31 would otherwise reach the kernel as a bare TypeError."""

    def check(value):
        if minus_one and value == -1:
            return None
        try:
            kind = dtypes.to_numpy(dtypes.to_code(value)).kind
        except TypeError:
            kind = None
        if kind is None or kind not in kinds:
            allowed = [n for c, n in sorted(dtypes._NAMES.items())
                       if c in dtypes._TO_NUMPY and dtypes._TO_NUMPY[c].kind in kinds]
            codes = ", ".join(f"{dtypes.to_code(n)} ({n})" for n in allowed)
            return (f"{value!r} is not a data type code this op makes; expected one of "
                    f"{codes}" + (" or -1 (X's type)" if minus_one else ""))
        return None
    return check


# --- a rule checked twice: on declared shapes at build time, on the values at run time -----
# Such a rule (an axis in range, a window that fits) is written once, as a function that
# calls ``fail(message, expected=None, given=None)`` where its input breaks it; shape
# inference passes it build_fail's, the kernel (which sees the real values, or values a
# tensor gave) run_fail's.
def build_fail(ctx, slot: str | None = None):
    """``fail`` at build time: ``ctx.fail`` (the op, its block and the user's line) naming
    ``slot``."""
    def fail(msg, expected=None, given=None):
        ctx.fail(msg, slot=slot, expected=expected, given=given)
    return fail


def run_fail(op_type: str, slot: str | None = None):
    """``fail`` at run time: a ValueError "op_type: slot S: message; expected E, given G"
    (the slot, expected and given where there are)."""
    where = f"{op_type}: slot {slot}: " if slot else f"{op_type}: "

    def fail(msg, expected=None, given=None):
        raise ValueError(where + msg + (f"; expected {expected}" if expected else "")
                         + (f", given {given}" if given else ""))
    return fail


def axis_in_range(rank: int, axis: int, name: str, fail, holder: str = "a rank-{rank} X") -> int:
    """``axis`` (attribute ``name``) as an axis of a tensor of rank ``rank``, in [0, rank);
    ``fail`` (build_fail's or run_fail's) where it is outside [-rank, rank). ``holder``
    names the tensor in the error."""
    if not -rank <= axis < rank:
        fail(f"{name} {axis} is out of range", expected=f"{name} in [{-rank}, {rank - 1}]",
             given=f"{name}={axis} for " + holder.format(rank=rank))
    return axis % rank
