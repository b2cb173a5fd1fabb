"""logsumexp: log(sum(exp(X))) over axes (``paddle.logsumexp``; op type, slots and
attributes ``axis``/``keepdim``/``reduce_all`` as Paddle 2.6.2 saves them).

Computed stably, as max + log(sum(exp(X - max))): exp never overflows (the largest term is
exp(0) = 1) and the sum is at least 1, so log never sees 0 while a term is finite. Where
the max is infinite (an axis of all -inf, or one holding +inf) the shift would be inf - inf
= NaN, so the shift is 0 there and the result is the max itself (-inf or +inf), as the
formula's limit. An axis of no elements gives log(0) = -inf.

The axes are handled as reduce.py's ops handle theirs (``_normalize_dims``: an empty axis
list, or every axis, means all, as Paddle's reduce_all), and the array code is the places'
primitives (``fold_axes`` for the max, ``sum_axes``, ``apply`` of the @pointwise pieces,
which live in kernels/cpu/reduce.py), written once for both places. The gradient, as
Paddle's logsumexp_grad reading X, Out and dOut, is dX = dOut * exp(X - Out): softmax of X
over the axes, times dOut. In a compiled block, kernels/cpu/reduce.logsumexp_over and
logsumexp_over_grad run the same pieces in the same order.
"""
from __future__ import annotations

import math

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu import reduce as KR
from ..kernels.pointwise import KERNELS
from . import arrays
from .common import FLOAT_TYPES, OUT, X
from ..backends import CPU, CUDA
from .reduce import (_normalize_dims, _reduced_shape, attr_dims, reduced_form,
                     reduced_grad_form, require_axes)


def _dims(ctx, ndim: int) -> list:
    return _normalize_dims(ctx.attr("axis"), ndim, ctx.attr("reduce_all"))


def _infer(ctx):
    ctx.require_dtype("X", "float")
    xs, axis = ctx.shape("X"), ctx.attr("axis")
    require_axes(ctx, axis, len(xs), "axis", "axes", len(xs) - 1)
    dims = _normalize_dims(axis, len(xs), ctx.attr("reduce_all"))
    ctx.set_output("Out", _reduced_shape(xs, dims, ctx.attr("keepdim")), ctx.dtype("X"))


def _logsumexp(place):
    def run(ctx):
        x = ctx.input("X")
        dims = _dims(ctx, x.ndim)
        out_shape = tuple(_reduced_shape(x.shape, dims, ctx.attr("keepdim")))
        if x.size == 0:                        # a sum of no terms is 0: its log is -inf
            ctx.set_output("Out", arrays.full(out_shape, -math.inf, x.dtype, like=x))
            return
        m = place.fold_axes(x, dims, True, "max")             # kept dims: broadcasts on X
        terms = place.apply(KERNELS["logsumexp_shift"], x, m, out=None, out_dtype=x.dtype)
        total = place.sum_axes(terms, dims, True)
        out = place.apply(KERNELS["logsumexp_finish"], total, m, out=None, out_dtype=x.dtype)
        # (float16: the kernels compute in float32; Out is stored in X's dtype)
        ctx.set_output("Out", arrays.astype(out, x.dtype).reshape(out_shape))
    return run


def _logsumexp_grad(place):
    """dX = dOut * exp(X - Out), Out and dOut broadcast back over the reduced axes."""
    def run(ctx):
        x, out, dout = ctx.input("X"), ctx.input("Out"), ctx.input("Out@GRAD")
        dims = _dims(ctx, x.ndim)
        kept = tuple(1 if i in dims else d for i, d in enumerate(x.shape))
        dx = place.apply(KERNELS["logsumexp_grad"], x, out.reshape(kept),
                         arrays.astype(dout, x.dtype).reshape(kept), out=None,
                         out_dtype=x.dtype)
        ctx.set_output("X@GRAD", arrays.astype(dx, x.dtype))
    return run


def _lowered(grad: bool):
    """logsumexp's (``grad``: its gradient's) form: kernels/cpu/reduce.logsumexp_over or
    logsumexp_over_grad, for a float32/float64 X of rank >= 1."""
    def lowered(info):
        if info.dtype("X").name not in FLOAT_TYPES or info.ndim("X") == 0:
            return None
        dims = attr_dims(info, "axis")
        if grad:
            return reduced_grad_form(KR.logsumexp_over_grad, info, dims)
        return reduced_form(KR.logsumexp_over, info, dims, info.attr("keepdim"))
    return lowered


register(OpDef(
    "logsumexp", [X], [OUT],
    [Attr("axis", A.INTS, [0], "the axes to reduce (negative counts from the end; empty: "
                               "all)"),
     Attr("keepdim", A.BOOLEAN, False, "keep reduced axes as size 1"),
     Attr("reduce_all", A.BOOLEAN, False, "reduce every axis")],
    comment="Out = log(sum(exp(X))) over axis (computed as max + log(sum(exp(X - max)))).",
    infer_shape=_infer, kernels={"cpu": _logsumexp(CPU), "cuda": _logsumexp(CUDA)},
    lowered=_lowered(grad=False),
    grad=Grad(reads=["X", "Out"], kernel=_logsumexp_grad(CPU),
              cuda_kernel=_logsumexp_grad(CUDA), lowered=_lowered(grad=True))))
