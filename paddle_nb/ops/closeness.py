"""Comparisons that answer for whole tensors, or with a tolerance: isclose, allclose,
equal_all, is_empty (the slots and attributes ``paddle.isclose``, ``paddle.allclose``,
``paddle.equal_all`` and ``paddle.is_empty`` save in Paddle 2.6.2).

- ``isclose(Input, Other)``: |x - y| <= atol + rtol |y| elementwise, as bool; equal
  infinities are close, NaN is close to NaN only with ``equal_nan``. As Paddle, the test
  is made in float64 and ``rtol`` / ``atol`` are *string* attributes (``"1e-05"``), or
  0-D tensors ``Rtol`` / ``Atol`` that stand for them (core/attr_tensors.py).
- ``allclose``: whether every element is close, a 0-D bool.
- ``equal_all(X, Y)``: whether X and Y have one shape and equal elements, a 0-D bool
  (tensors of different shapes are simply not equal, as in Paddle).
- ``is_empty(X)``: whether X has no elements, a 0-D bool.

The whole-tensor answers count the elements that fail (bool_reduce.py's ``zero_flag`` and
``sum_axes``) and ask whether none did, so both places run one piece of code.

In a compiled block isclose is ``is_close``'s loop (fused); allclose and equal_all are one
njit loop counting the elements whose scalar test (the same ``is_close`` / ``equal``
comparison) fails (kernels/cpu/closeness.py), and is_empty a test of X's size
(kernels/cpu/size.py): counts are exact, so the answers are the interpreter's. Out is a
0-D bool array on both paths (a ufunc of a 0-d count gives a numpy scalar, which
``_all_true`` turns back into an array).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core.framework_pb2 import VarType
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..kernels.cpu.closeness import all_close, all_equal
from ..kernels.cpu.size import has_no_elements
from ..kernels.lowered import Call, Elementwise
from ..kernels.pointwise import KERNELS
from . import arrays
from .bool_reduce import none_counted, zero_flag
from .common import numba_holds
from .elementwise import equal
from ..backends import CPU, CUDA

INPUT, OTHER = Slot("Input", "the values tested"), Slot("Other", "the values compared with")
RTOL = Slot("Rtol", "rtol as a 0-D float tensor (read at run time)", dispensable=True)
ATOL = Slot("Atol", "atol as a 0-D float tensor (read at run time)", dispensable=True)
BOOL_OUT = Slot("Out", "the answer, as bool")
is_close = KERNELS["is_close"]          # kernels/cpu/closeness.py


# --- attributes -------------------------------------------------------------------------
def _tolerance(name: str):
    def check(value) -> str | None:
        if not isinstance(value, str):
            return None
        try:
            number = float(value)
        except ValueError:
            return f"{name}={value!r} is not a number; expected a float written as a string"
        if not (number >= 0 and math.isfinite(number)):
            return f"{name}={value!r}; expected a finite tolerance >= 0"
        return None
    return check


def _tolerances(ctx) -> tuple[float, float]:
    """rtol and atol as floats (the string attributes, or the tensors' values)."""
    values = []
    for name in ("rtol", "atol"):
        value = float(ctx.attr(name))
        if not (value >= 0 and math.isfinite(value)):
            raise ValueError(f"{ctx.op.op.type}: {name}={value} given by a tensor; expected "
                             "a finite tolerance >= 0")
        values.append(value)
    return values[0], values[1]


# --- the ops ----------------------------------------------------------------------------
def _close_infer(whole: bool):
    def infer(ctx):
        ctx.require_dtype("Input", "float")
        ctx.require_same_dtype("Other", "Input")
        ctx.require_same_shape("Other", "Input")
        for slot in ("Rtol", "Atol"):
            if ctx.has_input(slot):
                ctx.require_dtype(slot, "float")
        ctx.set_output("Out", [] if whole else ctx.shape("Input"), VarType.BOOL)
    return infer


def _all_true(place, flags):
    """A 0-D bool: whether every one of ``flags`` (bool) is true."""
    misses = place.apply(zero_flag, flags, out=None, out_dtype=np.int64)
    count = place.sum_axes(misses, list(range(flags.ndim)), False)
    answer = place.apply(none_counted, count, out=None, out_dtype=np.bool_)
    return answer if arrays.on_device(answer) else np.asarray(answer)   # (not a scalar)


def make_close(place, whole: bool):
    def run(ctx):
        x, y = ctx.input("Input"), ctx.input("Other")
        if tuple(x.shape) != tuple(y.shape):
            raise ValueError(f"{ctx.op.op.type}: input slot Other: expected Input's shape "
                             f"{list(x.shape)}, given {list(y.shape)}")
        rtol, atol = _tolerances(ctx)
        flags = place.apply(is_close, x, y, rtol, atol, bool(ctx.attr("equal_nan")),
                            out=None, out_dtype=np.bool_)
        ctx.set_output("Out", _all_true(place, flags) if whole else flags)
    run.__name__ = f"{place.name}_{'allclose' if whole else 'isclose'}"
    return run


# --- in a compiled block (kernels/lowered.py) ---------------------------------------------
def _lowered_close(info):
    """isclose: the scalar test fused; allclose: its count (float32 or float64 operands of
    one shape, which the kernels accept)."""
    if info.shape("Input") != info.shape("Other") or \
            info.dtype("Input").name not in ("float32", "float64"):
        return None
    tolerances = (float(info.attr("rtol")), float(info.attr("atol")),
                  bool(info.attr("equal_nan")))
    if info.ndim("Out") == 0:
        return Call(all_close, ("Input", "Other"), ("Out",), tolerances)
    return Elementwise(is_close, ("Input", "Other"), "Out", tolerances)


def _lowered_equal_all(info):
    """X and Y of one rank and dtype (another rank: the answer is False, left to the
    interpreter, whose kernel says so without comparing)."""
    if info.ndim("X") != info.ndim("Y") or info.dtype("X") != info.dtype("Y") or \
            info.dtype("X").kind not in "biuf" or not numba_holds(info.dtype("X")):
        return None
    return Call(all_equal, ("X", "Y"), ("Out",))


for _type, _whole, _what in (("isclose", False, "whether each element of Input is close to "
                                                "Other's, as bool"),
                             ("allclose", True, "whether every element of Input is close to "
                                                "Other's (0-D bool)")):
    register(OpDef(
        _type, [INPUT, OTHER, RTOL, ATOL], [BOOL_OUT],
        [Attr("rtol", A.STRING, "1e-05", "the relative tolerance, a float as a string",
              check=_tolerance("rtol")),
         Attr("atol", A.STRING, "1e-08", "the absolute tolerance, a float as a string",
              check=_tolerance("atol")),
         Attr("equal_nan", A.BOOLEAN, False, "NaN is close to NaN")],
        comment=f"Out = {_what}: |Input - Other| <= atol + rtol * |Other|.",
        infer_shape=_close_infer(_whole),
        kernels={"cpu": make_close(CPU, _whole), "cuda": make_close(CUDA, _whole)},
        lowered=_lowered_close, grad=NO_GRADIENT,
        reads_attr_tensors=("Rtol", "Atol")))


def _equal_all_infer(ctx):
    ctx.require_dtype("X", "real")
    ctx.require_same_dtype("Y", "X")
    ctx.set_output("Out", [], VarType.BOOL)


def make_equal_all(place):
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        if tuple(x.shape) != tuple(y.shape):      # not equal, as Paddle answers
            ctx.set_output("Out", arrays.full((), False, np.bool_, like=x))
            return
        ctx.set_output("Out", _all_true(place, place.apply(equal, x, y, out=None,
                                                           out_dtype=np.bool_)))
    run.__name__ = f"{place.name}_equal_all"
    return run


register(OpDef("equal_all", [Slot("X", "a tensor"), Slot("Y", "the tensor compared")],
               [BOOL_OUT], [],
               comment="Out = whether X and Y have one shape and equal elements (0-D bool).",
               infer_shape=_equal_all_infer,
               kernels={"cpu": make_equal_all(CPU), "cuda": make_equal_all(CUDA)},
               lowered=_lowered_equal_all, grad=NO_GRADIENT))


def _is_empty_infer(ctx):
    ctx.set_output("Out", [], VarType.BOOL)


def _is_empty(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", arrays.full((), x.size == 0, np.bool_, like=x))


register(OpDef("is_empty", [Slot("X", "any tensor")], [BOOL_OUT], [],
               comment="Out = whether X has no elements (0-D bool).",
               infer_shape=_is_empty_infer,
               kernels={"cpu": _is_empty, "cuda": _is_empty},
               lowered=lambda info: Call(has_no_elements, ("X",), ("Out",)), grad=NO_GRADIENT))
