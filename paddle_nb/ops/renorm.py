"""renorm: each slice of X along ``axis`` scaled down so that its p-norm is at most
``max_norm``, and its gradient (the slots and attributes ``paddle.renorm(x, p, axis,
max_norm)`` saves in Paddle 2.6.2).

Slice i is every element whose index along ``axis`` is i. Its norm is n = (sum |x|^p)^(1/p);
where n > max_norm the slice is multiplied by s = max_norm / (n + 1e-7) (Paddle's small
term keeps the division finite), elsewhere left as it is. The gradient is the product
rule's: dX = s dOut + X ds/dX summed with dOut, where ds/dx_j = -max_norm / (n + 1e-7)^2 *
n^(1-p) |x_j|^(p-1) sign(x_j), for the slices that were scaled.

Written once over the places' primitives: @pointwise kernels for the elementwise parts and
``sum_axes`` (keeping dims) for the per-slice sums, so both places run the same code. As
Paddle's kernels, the sums are in X's dtype: a float32 slice holding 1e30 has an infinite
2-norm, and is scaled to zeros.

In a compiled block the op and its gradient are one njit function each (``_renormed``,
``_renormed_grad``): X's slices as the rows of a matrix (the axis moved first, as
``sum_axes`` moves it), the same scalar functions on each element and the same serial row
sum (reduce._row_sum_serial, which the interpreter's ``sum_axes`` runs), so the numbers are
the interpreter's bit for bit. From MIN_PARALLEL_SUM elements the interpreter splits its
row sums across the cores, and the op stays there.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu.lazy_ufunc import FLOAT_2, FLOAT_3
from ..kernels.cpu.reduce import MIN_PARALLEL_SUM, _row_sum_serial, rows_over, unmoved
from ..kernels.lowered import Call
from ..kernels.pointwise import pointwise
from . import arrays
from .common import OUT, X
from ..backends import CPU, CUDA

FLOAT_6 = ["float32(float32, float32, float32, float32, float32, float32)",
           "float64(float64, float64, float64, float64, float64, float64)"]
EPSILON = 1e-7                      # Paddle's, added to the norm before dividing by it


# --- the math ---------------------------------------------------------------------------
@pointwise(FLOAT_2, fastmath=False, params=1)
def renorm_abs_pow(x, p):
    return abs(x) ** p


@pointwise(FLOAT_3, fastmath=False, params=2)
def renorm_scale(power_sum, p, max_norm):
    norm = power_sum ** (1.0 / p)
    return max_norm / (norm + EPSILON) if norm > max_norm else 1.0   # (a NaN norm too)


@pointwise(FLOAT_2)
def renorm_times(x, y):
    return x * y


@pointwise(FLOAT_6, fastmath=False, params=2)
def renorm_grad(x, dout, power_sum, dot, p, max_norm):
    # dot: sum of dOut * X over x's slice
    norm = power_sum ** (1.0 / p)
    if not norm > max_norm:
        return dout
    scale = max_norm / (norm + EPSILON)
    if x == 0:
        return dout * scale
    d_norm = norm ** (1.0 - p) * abs(x) ** (p - 1.0) * (1.0 if x > 0 else -1.0)
    return dout * scale - dot * max_norm / ((norm + EPSILON) * (norm + EPSILON)) * d_norm


# --- in a compiled block (kernels/lowered.py) ---------------------------------------------
# the scalar functions, as njit code calls them (by global names)
_abs_pow, _scale, _times = renorm_abs_pow.scalar, renorm_scale.scalar, renorm_times.scalar
_grad = renorm_grad.scalar


@njit(cache=True, fastmath=False, error_model="numpy")
def _power_sums(rows, p):
    """sum |x|^p of each row (slice), as the interpreter's sum_axes adds them."""
    powered = np.empty_like(rows)
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            powered[i, j] = _abs_pow(rows[i, j], p)
    return _row_sum_serial(powered)


@njit(cache=True, fastmath=False, error_model="numpy")
def _renormed(x, order, inverse, p, max_norm):
    """Out: ``order`` puts the axis first; ``inverse`` is its inverse."""
    rows = rows_over(x, order, 1)
    sums = _power_sums(rows, p)
    out = np.empty_like(rows)
    for i in range(rows.shape[0]):
        scale = x.dtype.type(_scale(sums[i], p, max_norm))    # stored as the ufunc stores it
        for j in range(rows.shape[1]):
            out[i, j] = _times(rows[i, j], scale)
    return unmoved(out, x, order, inverse)


@njit(cache=True, fastmath=False, error_model="numpy")
def _renormed_grad(x, dout, order, inverse, p, max_norm):
    rows, d = rows_over(x, order, 1), rows_over(dout, order, 1)
    sums = _power_sums(rows, p)
    products = np.empty_like(rows)
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            products[i, j] = _times(d[i, j], rows[i, j])
    dots = _row_sum_serial(products)
    dx = np.empty_like(rows)
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            dx[i, j] = _grad(rows[i, j], d[i, j], sums[i], dots[i], p, max_norm)
    return unmoved(dx, x, order, inverse)


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
            return Call(_renormed_grad, ("X", "Out@GRAD"), ("X@GRAD",), consts)
        return Call(_renormed, ("X",), ("Out",), consts)
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
