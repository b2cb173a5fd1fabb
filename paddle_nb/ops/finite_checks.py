"""isnan_v2, isinf_v2, isfinite_v2: which elements of X are NaN, infinite, or neither.

What ``paddle.isnan(x)``, ``paddle.isinf(x)`` and ``paddle.isfinite(x)`` save (Paddle
2.6.2): one X -> Out op, Out of X's shape and dtype bool, no attributes. They take float
and integer tensors (an integer is never NaN or infinite, so it is always finite), as
Paddle does; a bool X is refused, as Paddle's Python side refuses it. No gradient: the
result is a mask. (The v1 ops ``isnan``/``isinf``/``isfinite`` answer one bool for the
whole tensor; Paddle 2.6.2's public APIs no longer save them.)

Each test is one scalar function under ``@pointwise``, so both places run the same code:
NaN is the one value not equal to itself; the infinities are compared with ``math.inf``.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.framework_pb2 import VarType
from ..core.registry import NO_GRADIENT, OpDef, register
from ..kernels.lowered import Elementwise
from ..kernels.pointwise import pointwise
from .common import OUT, X
from ..backends import CPU, CUDA

# bool out of each number type (smaller ints and float16 are cast up by the CPU ufunc)
NUMBER_TO_BOOL = [f"boolean({t})" for t in ("int32", "int64", "float32", "float64")]


@pointwise(NUMBER_TO_BOOL)
def is_nan(x):
    return x != x                      # only NaN differs from itself


@pointwise(NUMBER_TO_BOOL)
def is_inf(x):
    return x == math.inf or x == -math.inf


@pointwise(NUMBER_TO_BOOL)
def is_finite(x):
    return x == x and x != math.inf and x != -math.inf


def _infer(ctx):
    ctx.require_dtype("X", "number")
    ctx.set_output("Out", ctx.shape("X"), VarType.BOOL)


def _mask_kernel(place, test):
    def run(ctx):
        x = ctx.input("X")
        ctx.set_output("Out", place.apply(test, x, out=ctx.out("Out", x.shape, np.bool_),
                                          out_dtype=np.bool_))
    run.__name__ = f"{place.name}_{test.__name__}"
    return run


def _lowered_mask(test):
    """In a compiled block: the same test, fused into its neighbours' loop (an X the ufunc
    would cast up, int8 or float16, stays in the interpreter: lowering.py checks it)."""
    return lambda info: Elementwise(test, ("X",))


for _type, _test, _what in (("isnan_v2", is_nan, "NaN"),
                            ("isinf_v2", is_inf, "+inf or -inf"),
                            ("isfinite_v2", is_finite, "neither NaN nor infinite")):
    register(OpDef(_type, [X], [OUT], [],
                   comment=f"Out = whether each element of X is {_what} (bool, X's shape).",
                   infer_shape=_infer,
                   kernels={"cpu": _mask_kernel(CPU, _test), "cuda": _mask_kernel(CUDA, _test)},
                   lowered=_lowered_mask(_test), grad=NO_GRADIENT))
