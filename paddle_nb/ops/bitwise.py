"""bitwise_and, bitwise_or, bitwise_xor, bitwise_not: bit by bit, on integers and bools.

What ``paddle.bitwise_and(x, y)`` (``_or``, ``_xor``) and ``paddle.bitwise_not(x)`` save
(Paddle 2.6.2): slots X (and Y), Out of X's dtype, no attributes. X and Y are bool or
integer tensors of one dtype, broadcast as numpy does (shapes lined up from the end). On
bool tensors the ops are the logical ones; ``paddle.nanmean`` uses ``bitwise_not`` on
``isnan``'s bool mask. No gradient (integer and bool results).

Each op is one scalar function under ``@pointwise``. ``~x`` is the two's complement on
integers, but on a bool it would be Python's ``~True == -2`` (true again once cast), so a
bool X takes ``logical_not``'s kernel instead.
"""
from __future__ import annotations

import numpy as np

from ..core.registry import NO_GRADIENT, OpDef, register
from ..kernels.lowered import Elementwise
from ..kernels.pointwise import pointwise
from . import arrays
from .common import OUT, X, Y
from .elementwise import logical_not, numpy_broadcast_shape_of
from ..backends import CPU, CUDA

_INTS = ("uint8", "int8", "int16", "int32", "int64")
_SAME_2 = [f"{t}({t}, {t})" for t in ("boolean",) + _INTS]


@pointwise(_SAME_2)
def bitwise_and(x, y):
    return x & y


@pointwise(_SAME_2)
def bitwise_or(x, y):
    return x | y


@pointwise(_SAME_2)
def bitwise_xor(x, y):
    return x ^ y


@pointwise([f"{t}({t})" for t in _INTS])
def bitwise_not_int(x):
    return ~x


# --- the ops ----------------------------------------------------------------------------
def _binary_infer(ctx):
    """numpy broadcasting (shapes lined up from the end); X and Y of one int/bool dtype."""
    ctx.require_dtype("X", "integer or bool")
    if ctx.dtype("X") != ctx.dtype("Y"):
        ctx.fail("X and Y have different dtypes", slot="Y", expected="Y of X's dtype",
                 given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
    ctx.set_output("Out", numpy_broadcast_shape_of(ctx), ctx.dtype("X"))


def _binary(place, kernel):
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        shape = arrays.broadcast_shape(tuple(x.shape), tuple(y.shape))
        ctx.set_output("Out", place.apply(kernel, x, y, out=ctx.out("Out", shape, x.dtype),
                                          out_dtype=x.dtype))
    run.__name__ = f"{place.name}_{kernel.__name__}"
    return run


def _lowered_binary(kernel):
    """In a compiled block (kernels/lowered.py): the same scalar function, fused into its
    neighbours' loop (operands lined up from the end, as numpy's)."""
    return lambda info: Elementwise(kernel, ("X", "Y"))


for _kernel, _formula in ((bitwise_and, "X & Y"), (bitwise_or, "X | Y"),
                          (bitwise_xor, "X ^ Y")):
    register(OpDef(_kernel.__name__, [X, Y], [OUT], [],
                   comment=f"Out = {_formula} bit by bit (bool or integer; numpy broadcasting).",
                   infer_shape=_binary_infer,
                   kernels={"cpu": _binary(CPU, _kernel), "cuda": _binary(CUDA, _kernel)},
                   lowered=_lowered_binary(_kernel), grad=NO_GRADIENT))


def _not_infer(ctx):
    ctx.require_dtype("X", "integer or bool")
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _not_kernel(dtype):
    """bool X: logical_not (``~`` on a bool would be Python's ~True == -2)."""
    return logical_not if dtype == np.bool_ else bitwise_not_int


def _not(place):
    def run(ctx):
        x = ctx.input("X")
        kernel = _not_kernel(x.dtype)
        ctx.set_output("Out", place.apply(kernel, x, out=ctx.out("Out", x.shape, x.dtype),
                                          out_dtype=x.dtype))
    run.__name__ = f"{place.name}_bitwise_not"
    return run


register(OpDef("bitwise_not", [X], [OUT], [],
               comment="Out = ~X bit by bit (on bool: not X).", infer_shape=_not_infer,
               kernels={"cpu": _not(CPU), "cuda": _not(CUDA)},
               lowered=lambda info: Elementwise(_not_kernel(info.dtype("X")), ("X",)),
               grad=NO_GRADIENT))
