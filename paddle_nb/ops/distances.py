"""Norms over several axes and distances: ``frobenius_norm`` and ``dist``, and their
gradients (Fluid's slots and attributes, as ``paddle.linalg.norm(x, 'fro')`` and
``paddle.dist`` save them).

- frobenius_norm: Out = sqrt(sum X^2) over ``dim`` (every axis with ``reduce_all``, or
  where ``dim`` is empty or names them all, as Paddle recomputes it); dX = dOut * X / Out
  (Paddle's formula: NaN where the norm is 0).
- dist: the p-norm of X - Y (broadcast against each other) as one vector, a 0-d Out. It
  is p_norm's math on the difference (ops/p_norm.py's @pointwise terms, epsilon 1e-12 in the
  gradient as Paddle's dist_grad passes it); dY is -dX, each summed back to its operand's
  shape.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu import vector_norms as KN
from ..kernels.lowered import Call
from ..kernels.pointwise import KERNELS
from . import arrays
from .common import (FLOAT_TYPES, OUT, X, Y, broadcast_shapes, build_fail, int_shape,
                     padded_shape, run_fail)
from .matrix_products import FLOATS, require_types
from .p_norm import norm_grad_over, norm_over
from ..backends import CPU, CUDA
from .reduce import attr_dims, reduced_form, reduced_grad_form

DIST_EPSILON = 1e-12      # what Paddle's dist_grad passes to p_norm's gradient


# --- frobenius_norm --------------------------------------------------------------------------
def _reduced_axes(dims, reduce_all: bool, rank: int, fail) -> list[int]:
    """The axes summed: all of them with reduce_all, an empty dim or every axis named."""
    for d in dims:
        if not -max(rank, 1) <= d < max(rank, 1):
            fail(f"dim {d} is out of range", expected=f"dims in [{-rank}, {rank - 1}]",
                 given=f"dim={list(dims)} for a rank-{rank} X")
    axes = sorted({d % rank for d in dims}) if rank else []
    if len(axes) != len(dims):
        fail("an axis is named twice", expected="distinct axes", given=f"dim={list(dims)}")
    if reduce_all or not dims or len(axes) == rank:
        return list(range(rank))
    return axes


def _kept_shape(shape, axes, keep: bool) -> list:
    return [1 if i in axes else d for i, d in enumerate(shape)] if keep \
        else [d for i, d in enumerate(shape) if i not in axes]


def _frobenius_infer(ctx):
    require_types(ctx, ["X"], FLOATS, "frobenius_norm")
    xs = ctx.shape("X")
    fail = build_fail(ctx, "X")
    axes = _reduced_axes(list(ctx.attr("dim") or []), ctx.attr("reduce_all"), len(xs), fail)
    ctx.set_output("Out", _kept_shape(xs, axes, ctx.attr("keep_dim")), ctx.dtype("X"))


def _axes(ctx, x, op_type) -> list[int]:
    return _reduced_axes(list(ctx.attr("dim") or []), ctx.attr("reduce_all"), x.ndim,
                         run_fail(op_type, "X"))


def _frobenius_norm(place):
    def run(ctx):
        x = ctx.input("X")
        axes = _axes(ctx, x, "frobenius_norm")
        squares = place.binary("elementwise_mul", x, x, None)
        total = place.sum_axes(squares, axes, ctx.attr("keep_dim"))
        # (into an array made here: numpy's ufunc gives a 0-d total a scalar, not a tensor)
        ctx.set_output("Out", place.apply(KERNELS["sqrt"], total,
                                          out=arrays.empty(total.shape, x.dtype, like=total),
                                          out_dtype=x.dtype))
    return run


def _frobenius_norm_grad(place):
    """dX = X * dOut / Out, Out and dOut seen with the reduced axes kept as 1s."""
    def run(ctx):
        x = ctx.input("X")
        kept = tuple(_kept_shape(int_shape(x), _axes(ctx, x, "frobenius_norm_grad"), True))
        out = ctx.input("Out").reshape(kept)
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape(kept)
        scaled = place.binary("elementwise_mul", x, dout, None)
        ctx.set_output("X@GRAD", place.binary("elementwise_div", scaled, out, None))
    return run


def _lowered_frobenius(grad: bool):
    """frobenius_norm's (``grad``: its gradient's) form: kernels/cpu/reduce.frobenius_over
    or frobenius_over_grad, for a float32/float64 X of rank >= 1."""
    def lowered(info):
        rank = info.ndim("X")
        if info.dtype("X").name not in FLOAT_TYPES or rank == 0:
            return None
        axes = attr_dims(info)        # (the axes _reduced_axes gives for a dim it checked)
        if grad:
            return reduced_grad_form(KN.frobenius_over_grad, info, axes)
        return reduced_form(KN.frobenius_over, info, axes, info.attr("keep_dim"))
    return lowered


register(OpDef(
    "frobenius_norm", [X], [OUT],
    [Attr("dim", A.INTS, [], "the axes reduced (empty: all)"),
     Attr("keep_dim", A.BOOLEAN, False, "keep reduced axes as size 1"),
     Attr("reduce_all", A.BOOLEAN, False, "reduce every axis"),
     Attr("in_dtype", A.INT, -1, "Paddle's, unused (-1)", extra=True),
     Attr("out_dtype", A.INT, -1, "Paddle's, unused (-1)", extra=True)],
    comment="Out = sqrt(sum X^2) over dim (all axes with reduce_all).",
    infer_shape=_frobenius_infer,
    kernels={"cpu": _frobenius_norm(CPU), "cuda": _frobenius_norm(CUDA)},
    lowered=_lowered_frobenius(grad=False),
    grad=Grad(reads=["X", "Out"], writes=["X"], kernel=_frobenius_norm_grad(CPU),
              cuda_kernel=_frobenius_norm_grad(CUDA), lowered=_lowered_frobenius(grad=True))))


# --- dist ------------------------------------------------------------------------------------
def _dist_infer(ctx):
    require_types(ctx, ["X", "Y"], FLOATS, "dist")
    xs, ys = ctx.shape("X"), ctx.shape("Y")
    rank = max(len(xs), len(ys))
    if broadcast_shapes(padded_shape(xs, rank), padded_shape(ys, rank)) is None:
        ctx.fail("X and Y must broadcast against each other", slot="Y",
                 expected=f"a shape that broadcasts with X's {xs}", given=ctx.describe_input("Y"))
    ctx.set_output("Out", [], ctx.dtype("X"))


def _difference(place, ctx, op_type: str):
    x, y = ctx.input("X"), ctx.input("Y")
    try:
        arrays.broadcast_shape(int_shape(x), int_shape(y))
    except ValueError:
        raise ValueError(f"{op_type}: slot Y: X and Y must broadcast against each other; "
                         f"expected a shape that broadcasts with {list(int_shape(x))}, given "
                         f"{list(int_shape(y))}") from None
    return x, y, place.binary("elementwise_sub", x, y, None)


def _dist(place):
    def run(ctx):
        x, _, d = _difference(place, ctx, "dist")
        if int(d.size) == 0:
            out = place.full((), 0, x.dtype)
        else:
            out = norm_over(place, d, ctx.attr("p"), list(range(d.ndim)), False, x.dtype)
        ctx.set_output("Out", out.reshape(()))
    return run


def _dist_grad(place):
    def run(ctx):
        x, y, d = _difference(place, ctx, "dist_grad")
        ones = (1,) * d.ndim
        norm = ctx.input("Out").reshape(ones)
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape(ones)
        if int(d.size) == 0:
            g = place.full(int_shape(d), 0, x.dtype)
        else:
            g = norm_grad_over(place, d, norm, dout, ctx.attr("p"), DIST_EPSILON, x.dtype)
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", arrays.unbroadcast(g, int_shape(x), int_shape(x)))
        if ctx.has_output("Y@GRAD"):
            ctx.set_output("Y@GRAD", arrays.unbroadcast(place.scale(g, -1.0), int_shape(y),
                                                        int_shape(y)))
    return run


def _lowered_dist(grad: bool):
    """dist's (``grad``: its gradient's) form: kernels/cpu/reduce.dist_of or dist_grad, for
    float32/float64 X and Y of one shape (a broadcast gradient is summed back by numpy:
    that stays in the interpreter)."""
    def lowered(info):
        dtype = info.dtype("X")
        if dtype.name not in FLOAT_TYPES or info.dtype("Y") != dtype or \
                info.shape("X") != info.shape("Y"):
            return None
        p = float(info.attr("p"))
        if grad:
            return Call(KN.dist_grad, ("X", "Y", "Out", "Out@GRAD"), ("X@GRAD", "Y@GRAD"),
                        (p, DIST_EPSILON))
        return Call(KN.dist_of, ("X", "Y"), ("Out",), (p,))
    return lowered


register(OpDef(
    "dist", [X, Y], [OUT],
    [Attr("p", A.FLOAT, 2.0, "the norm's p: 2, 1, inf, -inf, 0 (nonzeros) or any other")],
    comment="Out = ||X - Y||_p (X and Y broadcast; 0-d): (sum |X - Y|^p)^(1/p), max |X - Y| "
            "for inf, min for -inf, the count of nonzeros for 0.",
    infer_shape=_dist_infer, kernels={"cpu": _dist(CPU), "cuda": _dist(CUDA)},
    lowered=_lowered_dist(grad=False),
    grad=Grad(reads=["X", "Y", "Out"], writes=["X", "Y"], kernel=_dist_grad(CPU),
              cuda_kernel=_dist_grad(CUDA), lowered=_lowered_dist(grad=True))))
