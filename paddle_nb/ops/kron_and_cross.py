"""Two products made of elementwise ones: ``kron`` (the Kronecker product) and ``cross``
(the 3-vector cross product along an axis), and their gradients (Fluid's slots and
attributes, as ``paddle.kron`` and ``paddle.cross`` save them).

- kron: with both tensors padded to one rank by leading 1s, Out[i * Ys + j] = X[i] * Y[j]
  on every axis. Seen with the axes interleaved, X [a0, 1, a1, 1, ...] times
  Y [1, b0, 1, b1, ...] broadcasts to [a0, b0, a1, b1, ...], which is Out reshaped: one
  broadcast multiply. The gradient multiplies dOut (seen the same way) by the other
  operand and sums the other operand's axes away.
- cross: Out_i = X_(i+1) Y_(i+2) - X_(i+2) Y_(i+1) (indices mod 3) along ``dim``, whose
  size must be 3; the rotations are copies through index maps (the places'
  ``gather_maps``, as roll's). dX = Y x dOut and dY = dOut x X, the same product.
  ``dim`` 9 (Paddle's default, its marker for "not given") means the first axis of
  size 3, as in Paddle (so axis 9 itself cannot be named).

In a compiled block both are kernels/cpu/structured.py's loops: the same products (and
cross's one difference per element), kron's gradient sums added by reduce.py's serial row
sum (the interpreter's sum_axes; a product large enough for its prange twin stays in the
interpreter). cross's axis is found there from the run's shape, as a batch of 3 rows may
move ``dim`` 9's first axis of size 3.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core.infer_shape import dims_compatible
from ..core.registry import Attr
from ..kernels.cpu import structured as KS
from ..kernels.cpu.reduce import MIN_PARALLEL_SUM
from ..kernels.lowered import Call
from . import arrays
from .common import build_fail, int_shape, padded_shape, run_fail
from .matmul import declare_product
from .matrix_products import NUMBERS, require_types

DEFAULT_DIM = 9          # Paddle's "no dim given": the first axis of size 3


# --- kron ------------------------------------------------------------------------------------
def _kron_infer(ctx):
    require_types(ctx, ["X", "Y"], NUMBERS, "kron")
    xs, ys = ctx.shape("X"), ctx.shape("Y")
    rank = max(len(xs), len(ys))
    ctx.set_output("Out", [a * b if a >= 0 and b >= 0 else -1
                           for a, b in zip(padded_shape(xs, rank), padded_shape(ys, rank))],
                   ctx.dtype("X"))


def _interleaved(x, y):
    """(x as [a0, 1, a1, 1, ...], y as [1, b0, 1, b1, ...], the padded shapes)."""
    rank = max(x.ndim, y.ndim)
    xs, ys = padded_shape(int_shape(x), rank), padded_shape(int_shape(y), rank)
    x2 = x.reshape(tuple(d for a in xs for d in (a, 1)))
    y2 = y.reshape(tuple(d for b in ys for d in (1, b)))
    return x2, y2, xs, ys


def _kron(place):
    def run(ctx):
        x2, y2, xs, ys = _interleaved(ctx.input("X"), ctx.input("Y"))
        out = place.binary("elementwise_mul", x2, y2, None)
        ctx.set_output("Out", out.reshape(tuple(a * b for a, b in zip(xs, ys))))
    return run


def _kron_grad(place):
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        x2, y2, xs, ys = _interleaved(x, y)
        d = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape(
            tuple(d for a, b in zip(xs, ys) for d in (a, b)))
        rank = len(xs)
        if ctx.has_output("X@GRAD"):       # sum Y's axes (the odd ones) of dOut * Y
            dx = place.sum_axes(place.binary("elementwise_mul", d, y2, None),
                                list(range(1, 2 * rank, 2)), False)
            ctx.set_output("X@GRAD", dx.reshape(int_shape(x)))
        if ctx.has_output("Y@GRAD"):       # sum X's axes (the even ones) of dOut * X
            dy = place.sum_axes(place.binary("elementwise_mul", d, x2, None),
                                list(range(0, 2 * rank, 2)), False)
            ctx.set_output("Y@GRAD", dy.reshape(int_shape(y)))
    return run


def _same_numbers(info, grad: bool, allowed=NUMBERS) -> bool:
    """X, Y (and dOut) of one of ``allowed`` dtypes, all the same."""
    dtype = info.dtype("X")
    return dtype.name in allowed and info.dtype("Y") == dtype and \
        (not grad or info.dtype("Out@GRAD") == dtype)


def _lowered_kron(info):
    if not _same_numbers(info, False):
        return None
    return Call(KS.kron, ("X", "Y"), ("Out",), (max(info.ndim("X"), info.ndim("Y")),))


def _lowered_kron_grad(info):
    if not _same_numbers(info, True, ("float32", "float64")):     # (ints: numpy's sum)
        return None
    if math.prod(info.shape("Out@GRAD")) >= MIN_PARALLEL_SUM:
        # the interpreter's row sums take their prange twin from there (reduce.py)
        return "large: the interpreter splits it across the cores"
    return Call(KS.kron_grads, ("X", "Y", "Out@GRAD"), ("X@GRAD", "Y@GRAD"),
                (max(info.ndim("X"), info.ndim("Y")), info.has_output("X@GRAD"),
                 info.has_output("Y@GRAD")))


declare_product("kron", "Out = the Kronecker product of X and Y (padded to one rank by "
                        "leading 1s).", _kron_infer, _kron, _kron_grad,
                lowered=_lowered_kron, grad_lowered=_lowered_kron_grad)


# --- cross -----------------------------------------------------------------------------------
def _cross_axis(shape, dim: int, fail) -> int:
    """The axis the product is taken along (a size-3 axis), from ``dim``."""
    rank = len(shape)
    if dim == DEFAULT_DIM:
        for axis, d in enumerate(shape):
            if d == 3:
                return axis
        fail("with dim unset, X needs an axis of size 3", expected="an axis of size 3",
             given=f"X {list(shape)}")
    if not -rank <= dim < rank:
        fail(f"dim {dim} is out of range", expected=f"dim in [{-rank}, {rank - 1}] (or "
             f"{DEFAULT_DIM}: the first axis of size 3)", given=f"dim={dim} for X {list(shape)}")
    axis = dim % rank
    if shape[axis] not in (3, -1):
        fail("the cross product is taken along an axis of size 3",
             expected=f"X[{axis}] == 3", given=f"X {list(shape)}, dim={dim}")
    return axis


def _cross_infer(ctx):
    require_types(ctx, ["X", "Y"], NUMBERS, "cross")
    xs, ys = ctx.shape("X"), ctx.shape("Y")
    if len(xs) != len(ys) or not all(dims_compatible(a, b) for a, b in zip(xs, ys)):
        ctx.fail("X and Y must have the same shape", slot="Y", expected=str(xs),
                 given=ctx.describe_input("Y"))
    fail = build_fail(ctx, "X")
    if -1 not in xs:
        _cross_axis(xs, ctx.attr("dim"), fail)
    ctx.set_output("Out", xs, ctx.dtype("X"))


def _rotated(place, a, axis: int, by: int):
    """a with position i along ``axis`` (size 3) holding a's (i + by) mod 3."""
    maps = [np.arange(n, dtype=np.int64) for n in int_shape(a)]
    maps[axis] = (np.arange(3, dtype=np.int64) + by) % 3
    return place.gather_maps(a, maps)


def cross_product(place, a, b, axis: int):
    """a x b along ``axis``: a_(i+1) b_(i+2) - a_(i+2) b_(i+1)."""
    mul = lambda u, v: place.binary("elementwise_mul", u, v, None)   # noqa: E731
    return place.binary("elementwise_sub",
                        mul(_rotated(place, a, axis, 1), _rotated(place, b, axis, 2)),
                        mul(_rotated(place, a, axis, 2), _rotated(place, b, axis, 1)), None)


def _checked_axis(ctx, op_type: str) -> int:
    x, y = ctx.input("X"), ctx.input("Y")
    if int_shape(x) != int_shape(y):
        raise ValueError(f"{op_type}: slot Y: X and Y must have the same shape; expected "
                         f"{list(int_shape(x))}, given {list(int_shape(y))}")
    return _cross_axis(int_shape(x), ctx.attr("dim"), run_fail(op_type, "X"))


def _cross(place):
    def run(ctx):
        axis = _checked_axis(ctx, "cross")
        ctx.set_output("Out", cross_product(place, ctx.input("X"), ctx.input("Y"), axis))
    return run


def _cross_grad(place):
    def run(ctx):
        axis = _checked_axis(ctx, "cross_grad")
        x, y = ctx.input("X"), ctx.input("Y")
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape(int_shape(x))
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", cross_product(place, y, dout, axis))
        if ctx.has_output("Y@GRAD"):
            ctx.set_output("Y@GRAD", cross_product(place, dout, x, axis))
    return run


def _lowered_cross(info):
    if not _same_numbers(info, False) or info.ndim("X") == 0:
        return None
    return Call(KS.cross, ("X", "Y"), ("Out",), (info.attr("dim"), DEFAULT_DIM))


def _lowered_cross_grad(info):
    if not _same_numbers(info, True) or info.ndim("X") == 0:
        return None
    return Call(KS.cross_grads, ("X", "Y", "Out@GRAD"), ("X@GRAD", "Y@GRAD"),
                (info.attr("dim"), DEFAULT_DIM, info.has_output("X@GRAD"),
                 info.has_output("Y@GRAD")))


declare_product("cross", "Out = X x Y, the cross product of 3-vectors along dim.",
                _cross_infer, _cross, _cross_grad,
                lowered=_lowered_cross, grad_lowered=_lowered_cross_grad,
                attrs=[Attr("dim", A.INT, DEFAULT_DIM, f"the axis (of size 3) the product is "
                            f"taken along; {DEFAULT_DIM}: the first axis of size 3")])
