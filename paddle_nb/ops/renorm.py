"""renorm: each slice of X along ``axis`` scaled down so that its p-norm is at most
``max_norm``, and its gradient (the slots and attributes ``paddle.renorm(x, p, axis,
max_norm)`` saves in Paddle 2.6.2).

Slice i is every element whose index along ``axis`` is i. Its norm is n = (sum |x|^p)^(1/p);
where n > max_norm the slice is multiplied by s = max_norm / (n + 1e-7) (Paddle's small
term keeps the division finite), elsewhere left as it is. The gradient is the product
rule's: dX = s dOut + X ds/dX summed with dOut, where ds/dx_j = -max_norm / (n + 1e-7)^2 *
n^(1-p) |x_j|^(p-1) sign(x_j), for the slices that were scaled.

Written once over the places' primitives: @pointwise kernels for the elementwise parts
(kernels/cpu/renorm.py) and ``sum_axes`` (keeping dims) for the per-slice sums, so both
places run the same code. As Paddle's kernels, the sums are in X's dtype: a float32 slice
holding 1e30 has an infinite 2-norm, and is scaled to zeros.

In a compiled block the op and its gradient are one njit function each
(kernels/cpu/renorm.py's ``renormed``, ``renormed_grad``: the same scalar functions and the
same serial row sum as the interpreter's, so the numbers are its bit for bit). From
MIN_PARALLEL_SUM elements the interpreter splits its row sums across the cores, and the op
stays there.
"""
from __future__ import annotations

import math

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu.reduce import MIN_PARALLEL_SUM
from ..kernels.cpu.renorm import renormed, renormed_grad
from ..kernels.lowered import Call
from ..kernels.pointwise import KERNELS
from . import arrays
from .common import OUT, X
from ..backends import CPU, CUDA

renorm_abs_pow, renorm_scale, renorm_times, renorm_grad = (
    KERNELS[name] for name in ("renorm_abs_pow", "renorm_scale", "renorm_times", "renorm_grad"))


# --- in a compiled block (kernels/lowered.py) ---------------------------------------------
def _lowered(grad: bool):
    def lowered(info):
        dtype = info.dtype("X")
        if dtype.name not in ("float32", "float64") or (
                grad and (info.dtype("Out@GRAD") != dtype
                          or info.shape("Out@GRAD") != info.shape("X"))):
            return None
        if math.prod(info.shape("X")) >= MIN_PARALLEL_SUM:
            return "large: the interpreter splits its row sums across the cores"
        rank = info.ndim("X")
        axis = info.attr("axis") % rank
        order = tuple([axis] + [d for d in range(rank) if d != axis])
        consts = (order, tuple(order.index(d) for d in range(rank)),
                  dtype.type(info.attr("p")), dtype.type(info.attr("max_norm")))
        if grad:
            return Call(renormed_grad, ("X", "Out@GRAD"), ("X@GRAD",), consts)
        return Call(renormed, ("X",), ("Out",), consts)
    return lowered


# --- the op -----------------------------------------------------------------------------
def _p_positive(p) -> str | None:
    if isinstance(p, float) and not (p > 0 and math.isfinite(p)):
        return f"p={p} is not a norm's order; expected a finite p > 0"
    return None


def _max_norm_ok(value) -> str | None:
    if isinstance(value, float) and not value >= 0:
        return f"max_norm={value}; expected a norm bound >= 0"
    return None


def _infer(ctx):
    ctx.require_dtype("X", "float")
    rank = len(ctx.shape("X"))
    if not rank:
        ctx.fail("renorm needs X of rank 1 or more (slices along an axis)", slot="X",
                 expected="rank >= 1", given=ctx.describe_input("X"))
    ctx.require_range("axis", ctx.attr("axis"), -rank, rank, slot="X")
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _other_axes(ctx, x) -> list[int]:
    axis = ctx.attr("axis") % x.ndim
    return [d for d in range(x.ndim) if d != axis]


def _params(ctx, dtype):
    return dtype.type(ctx.attr("p")), dtype.type(ctx.attr("max_norm"))


def make(place):
    def run(ctx):
        x = ctx.input("X")
        p, max_norm = _params(ctx, x.dtype)
        power_sum = place.sum_axes(place.apply(renorm_abs_pow, x, p, out=None, out_dtype=x.dtype),
                                   _other_axes(ctx, x), True)
        scale = place.apply(renorm_scale, power_sum, p, max_norm, out=None, out_dtype=x.dtype)
        ctx.set_output("Out", place.apply(renorm_times, x, scale, out=ctx.out("Out", x.shape,
                                                                       x.dtype),
                                          out_dtype=x.dtype))
    run.__name__ = f"{place.name}_renorm"
    return run


def make_grad(place):
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        dout = arrays.astype(dout, x.dtype)
        p, max_norm = _params(ctx, x.dtype)
        others = _other_axes(ctx, x)
        power_sum = place.sum_axes(place.apply(renorm_abs_pow, x, p, out=None, out_dtype=x.dtype),
                                   others, True)
        dot = place.sum_axes(place.apply(renorm_times, dout, x, out=None, out_dtype=x.dtype),
                             others, True)
        ctx.set_output("X@GRAD", place.apply(renorm_grad, x, dout, power_sum, dot, p,
                                             max_norm, out=None, out_dtype=x.dtype))
    run.__name__ = f"{place.name}_renorm_grad"
    return run


register(OpDef(
    "renorm", [X], [OUT],
    [Attr("p", A.FLOAT, 2.0, "the order of the norm (> 0)", check=_p_positive),
     Attr("axis", A.INT, 0, "the axis whose slices are renormed (negative: from the end)"),
     Attr("max_norm", A.FLOAT, 1.0, "the largest norm a slice keeps", check=_max_norm_ok),
     Attr("use_cudnn", A.BOOLEAN, False, "kept for Paddle compatibility", extra=True)],
    comment="Out = X with each slice along axis scaled to a p-norm of at most max_norm.",
    infer_shape=_infer, kernels={"cpu": make(CPU), "cuda": make(CUDA)}, lowered=_lowered(False),
    grad=Grad(reads=["X"], kernel=make_grad(CPU), cuda_kernel=make_grad(CUDA),
              lowered=_lowered(True))))
