"""p_norm: the vector p-norm of X along an axis (or of all of X), and its gradient
(Fluid's slots and attributes, as ``paddle.norm`` / ``paddle.linalg.norm`` save them).

Out = (sum |X|^p)^(1/p) for a general p (a sum of @pointwise terms, then a @pointwise
root), max |X| for p = inf, min |X| for -inf, and the count of nonzeros for p = 0, each
in X's dtype as Paddle computes it. The gradient is Paddle's formula, epsilon included:
|X|^(p-1) sign(X) / (Out^(p-1) + epsilon) * dOut, so where it divides 0 by 0 (p < 1 at a
zero of X) it gives NaN as Paddle does; for +-inf dOut goes to each element whose |X|
is the result (ties too), and for p = 0 the gradient is 0.
"""
from __future__ import annotations

import math

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu import vector_norms as KN
from ..kernels.pointwise import KERNELS
from . import arrays
from .common import FLOAT_TYPES, OUT, X, int_shape
from .indices import _axis_in
from ..backends import CPU, CUDA
from .reduce import reduced_form, reduced_grad_form

MAX_EPSILON = 1e-6
# (the @pointwise math, abs_pow, nonzero, p_norm_grad and p_norm_extreme_grad, lives in
# kernels/cpu/reduce.py, whose compiled forms call it too)


def _small_epsilon(value):
    """epsilon only keeps the gradient finite where the norm is 0 (Paddle's API always
    passes 1e-12): a larger one would bias every gradient, so it is refused."""
    if not 0 <= value <= MAX_EPSILON:
        return f"expected 0 <= epsilon <= {MAX_EPSILON} (it only guards a zero norm)"
    return None


def _dims(ctx, rank: int) -> list[int]:
    """The reduced axes: all with asvector (and for a 0-d X, none), else axis."""
    if ctx.attr("asvector") or rank == 0:
        return list(range(rank))
    return [ctx.attr("axis") % rank]


def _p_norm_infer(ctx):
    ctx.require_dtype("X", "float")
    if dtypes.name(ctx.dtype("X")) not in ("float32", "float64"):   # its kernels' loops
        ctx.fail("p_norm takes float32 or float64 elements (Paddle's CPU kernels)",
                 slot="X", expected="float32 or float64", given=ctx.describe_input("X"))
    xs = ctx.shape("X")
    if not ctx.attr("asvector") and xs:
        _axis_in(ctx, ctx.attr("axis"), len(xs))
    dims = _dims(ctx, len(xs))
    keep = ctx.attr("keepdim")
    ctx.set_output("Out", [1 if i in dims else d for i, d in enumerate(xs)] if keep
                   else [d for i, d in enumerate(xs) if i not in dims], ctx.dtype("X"))


def norm_over(place, v, p: float, dims: list, keep: bool, dtype):
    """The p-norm of ``v`` over ``dims``, in ``dtype``: the nonzeros counted for p = 0, the
    largest (smallest) |v| for inf (-inf), else (sum |v|^p)^(1/p). p_norm's, and dist's on
    X - Y."""
    if p == 0:
        flags = place.apply(KERNELS["nonzero"], v, out=None, out_dtype=dtype)
        return place.sum_axes(flags, dims, keep)
    if math.isinf(p):
        magnitude = place.apply(KERNELS["abs"], v, out=None, out_dtype=dtype)
        return place.fold_axes(magnitude, dims, keep, "max" if p > 0 else "min")
    t = dtype.type
    terms = place.apply(KERNELS["abs_pow"], v, t(p), out=None, out_dtype=dtype)
    total = place.sum_axes(terms, dims, keep)
    # (into an array made here: numpy's ufunc gives a 0-d total a scalar, not a tensor)
    return place.apply(KERNELS["pow"], total, t(1.0 / p),
                       out=arrays.empty(total.shape, dtype, like=total), out_dtype=dtype)


def norm_grad_over(place, v, norm, dout, p: float, epsilon: float, dtype):
    """d norm_over / d v times dOut (``norm`` and ``dout`` shaped to broadcast on v): 0 for
    p = 0, dOut to the elements that are the result for +-inf, else Paddle's formula with
    ``epsilon`` in the denominator."""
    if p == 0:
        return place.full(int_shape(v), 0, dtype)
    if math.isinf(p):
        return place.apply(KERNELS["p_norm_extreme_grad"], v, norm, dout, out=None, out_dtype=dtype)
    t = dtype.type
    return place.apply(KERNELS["p_norm_grad"], v, norm, dout, t(p), t(epsilon), out=None,
                       out_dtype=dtype)


def _p_norm(place):
    def run(ctx):
        x, p = ctx.input("X"), ctx.attr("porder")
        dims = _dims(ctx, x.ndim)
        if math.isinf(p):
            empty = [d for d in dims if x.shape[d] == 0]
            if empty:
                raise ValueError(f"p_norm: X {list(x.shape)} has no elements along axis "
                                 f"{empty}: the {'max' if p > 0 else 'min'} of nothing is "
                                 "undefined")
        ctx.set_output("Out", norm_over(place, x, p, dims, ctx.attr("keepdim"), x.dtype))
    return run


def _p_norm_grad_kernel(place):
    def run(ctx):
        x, out, dout = ctx.input("X"), ctx.input("Out"), ctx.input("Out@GRAD")
        dims = _dims(ctx, x.ndim)
        kept = tuple(1 if i in dims else int(d) for i, d in enumerate(x.shape))
        norm, dy = out.reshape(kept), arrays.astype(dout, x.dtype).reshape(kept)
        ctx.set_output("X@GRAD", norm_grad_over(place, x, norm, dy, ctx.attr("porder"),
                                                ctx.attr("epsilon"), x.dtype))
    return run


def _lowered(grad: bool):
    """p_norm's (``grad``: its gradient's) form: kernels/cpu/reduce.p_norm_over or
    p_norm_over_grad, for an X of rank >= 1."""
    def lowered(info):
        rank = info.ndim("X")
        if info.dtype("X").name not in FLOAT_TYPES or rank == 0:
            return None
        dims = list(range(rank)) if info.attr("asvector") else [info.attr("axis") % rank]
        p = float(info.attr("porder"))
        if grad:
            return reduced_grad_form(KN.p_norm_over_grad, info, dims,
                                     (p, float(info.attr("epsilon"))))
        return reduced_form(KN.p_norm_over, info, dims, info.attr("keepdim"), (p,))
    return lowered


register(OpDef(
    "p_norm", [X], [OUT],
    [Attr("porder", A.FLOAT, 2.0, "p: 2, 1, inf, -inf, 0 (nonzeros) or any other"),
     Attr("axis", A.INT, -1, "the axis reduced (unless asvector)"),
     Attr("epsilon", A.FLOAT, 1e-12, "added to the gradient's denominator",
          check=_small_epsilon),
     Attr("keepdim", A.BOOLEAN, False, "keep reduced axes as size 1"),
     Attr("asvector", A.BOOLEAN, False, "the norm of all of X as one vector")],
    comment="Out = (sum |X|^p)^(1/p) along axis (max |X| for p = inf, min for -inf, the "
            "count of nonzeros for 0).",
    infer_shape=_p_norm_infer, kernels={"cpu": _p_norm(CPU), "cuda": _p_norm(CUDA)},
    lowered=_lowered(grad=False),
    grad=Grad(reads=["X", "Out"], kernel=_p_norm_grad_kernel(CPU),
              cuda_kernel=_p_norm_grad_kernel(CUDA), lowered=_lowered(grad=True))))
