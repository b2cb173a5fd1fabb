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
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.infer_shape import dims_compatible
from ..core.registry import Attr, OpDef, register
from . import arrays
from .common import OUT, X, Y
from .matrix_products import NUMBERS, require_types
from .places import CPU, CUDA

DEFAULT_DIM = 9          # Paddle's "no dim given": the first axis of size 3


def _shape(a) -> tuple:
    return tuple(int(d) for d in a.shape)


# --- kron ------------------------------------------------------------------------------------
def _padded(shape, rank: int) -> list:
    return [1] * (rank - len(shape)) + list(shape)


def _kron_infer(ctx):
    require_types(ctx, ["X", "Y"], NUMBERS, "kron")
    xs, ys = ctx.shape("X"), ctx.shape("Y")
    rank = max(len(xs), len(ys))
    ctx.set_output("Out", [a * b if a >= 0 and b >= 0 else -1
                           for a, b in zip(_padded(xs, rank), _padded(ys, rank))],
                   ctx.dtype("X"))


def _interleaved(x, y):
    """(x as [a0, 1, a1, 1, ...], y as [1, b0, 1, b1, ...], the padded shapes)."""
    rank = max(x.ndim, y.ndim)
    xs, ys = _padded(_shape(x), rank), _padded(_shape(y), rank)
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
            ctx.set_output("X@GRAD", dx.reshape(_shape(x)))
        if ctx.has_output("Y@GRAD"):       # sum X's axes (the even ones) of dOut * X
            dy = place.sum_axes(place.binary("elementwise_mul", d, x2, None),
                                list(range(0, 2 * rank, 2)), False)
            ctx.set_output("Y@GRAD", dy.reshape(_shape(y)))
    return run


register(OpDef(
    "kron", [X, Y], [OUT], [],
    comment="Out = the Kronecker product of X and Y (padded to one rank by leading 1s).",
    infer_shape=_kron_infer, kernels={"cpu": _kron(CPU), "cuda": _kron(CUDA)},
    grad=Grad(reads=["X", "Y"], kernel=_kron_grad(CPU), cuda_kernel=_kron_grad(CUDA))))


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

    def fail(msg, expected=None, given=None):
        ctx.fail(msg, slot="X", expected=expected, given=given)
    if -1 not in xs:
        _cross_axis(xs, ctx.attr("dim"), fail)
    ctx.set_output("Out", xs, ctx.dtype("X"))


def _runtime_fail(op_type):
    def fail(msg, expected=None, given=None):
        raise ValueError(f"{op_type}: slot X: {msg}" + (f"; expected {expected}" if expected
                                                        else "") + (f", given {given}"
                                                                    if given else ""))
    return fail


def _rotated(place, a, axis: int, by: int):
    """a with position i along ``axis`` (size 3) holding a's (i + by) mod 3."""
    maps = [np.arange(n, dtype=np.int64) for n in _shape(a)]
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
    if _shape(x) != _shape(y):
        raise ValueError(f"{op_type}: slot Y: X and Y must have the same shape; expected "
                         f"{list(_shape(x))}, given {list(_shape(y))}")
    return _cross_axis(_shape(x), ctx.attr("dim"), _runtime_fail(op_type))


def _cross(place):
    def run(ctx):
        axis = _checked_axis(ctx, "cross")
        ctx.set_output("Out", cross_product(place, ctx.input("X"), ctx.input("Y"), axis))
    return run


def _cross_grad(place):
    def run(ctx):
        axis = _checked_axis(ctx, "cross_grad")
        x, y = ctx.input("X"), ctx.input("Y")
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape(_shape(x))
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", cross_product(place, y, dout, axis))
        if ctx.has_output("Y@GRAD"):
            ctx.set_output("Y@GRAD", cross_product(place, dout, x, axis))
    return run


register(OpDef(
    "cross", [X, Y], [OUT],
    [Attr("dim", A.INT, DEFAULT_DIM, f"the axis (of size 3) the product is taken along; "
          f"{DEFAULT_DIM}: the first axis of size 3")],
    comment="Out = X x Y, the cross product of 3-vectors along dim.",
    infer_shape=_cross_infer, kernels={"cpu": _cross(CPU), "cuda": _cross(CUDA)},
    grad=Grad(reads=["X", "Y"], kernel=_cross_grad(CPU), cuda_kernel=_cross_grad(CUDA))))
