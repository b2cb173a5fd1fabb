"""clip_by_norm: the op ``ClipGradByNorm`` emits for each gradient (Fluid's slots).

Out = X * max_norm / ||X|| where ||X|| > max_norm, else X. Clipping by value is the
``clip`` op (ops/unary_math.py) and by the global norm a chain of ordinary ops
(squared_l2_norm, sum, sqrt, elementwise_max, elementwise_div, elementwise_mul), which
is how Paddle builds them too; pd.optimizer's clip.py appends them.

The scalar math is kernels/cpu/clipping.py's, which also holds the op's compiled form.
"""
from __future__ import annotations

import math

from ..core import attrs as A
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..kernels.cpu.clipping import clipped_to_norm, clipped_value
from ..kernels.lowered import Call
from ..kernels.pointwise import pointwise
from ..backends import CPU, CUDA


def sum_of_squares(place, a):
    """sum(a * a) as a [1] array on ``place``: the squared L2 norm."""
    squares = place.unary("square", a, 1.0, None)
    return place.sum_axes(squares, list(range(a.ndim)), False).reshape((1,))


@pointwise(["float32(float32, float32, float64)", "float64(float64, float64, float64)"],
           params=1, fastmath=False)
def clip_to_norm(x, squared_norm, max_norm):
    # the squared norm is a one-element operand, so on CUDA it is never copied to the host
    return clipped_value(x, squared_norm, max_norm)


def _clip_by_norm(place):
    def run(ctx):
        x = ctx.input("X")
        squared = sum_of_squares(place, x).reshape((1,) * x.ndim)
        ctx.set_output("Out", place.apply(clip_to_norm, x, squared, float(ctx.attr("max_norm")),
                                          out=None, out_dtype=x.dtype))
    return run


def _lowered(info):
    if info.dtype("X").name not in ("float32", "float64"):
        return None
    return Call(clipped_to_norm, ("X",), ("Out",), (float(info.attr("max_norm")),))


def _positive(v):
    ok = isinstance(v, (int, float)) and v > 0 and math.isfinite(v)
    return None if ok else f"{v!r} is not a number > 0"


def _infer(ctx):
    ctx.require_dtype("X", "float")
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


register(OpDef(
    "clip_by_norm", [Slot("X", "the tensor (a gradient)")],
    [Slot("Out", "X scaled down to L2 norm max_norm, if it was longer")],
    [Attr("max_norm", A.FLOAT, 1.0, "the largest L2 norm Out may have",
          check=_positive)],
    comment="Out = X * max_norm / ||X|| if ||X|| > max_norm, else X.",
    infer_shape=_infer,
    kernels={"cpu": _clip_by_norm(CPU), "cuda": _clip_by_norm(CUDA)}, lowered=_lowered,
    grad=NO_GRADIENT))
