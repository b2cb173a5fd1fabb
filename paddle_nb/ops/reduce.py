"""Reductions: sum (of several tensors), mean, reduce_sum, reduce_mean, and softmax.

Reduced axes are moved last and flattened, so one numba kernel over ``(outer, inner)``
rows serves every axis choice. A full reduction gives a 0-d tensor, as Paddle 2.5+ does.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad, GradOp, grad_name
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import elementwise as EK
from ..kernels.cpu import reduce as K
from ..kernels.cuda import copy as CC
from ..kernels.cuda import elementwise as CE
from ..kernels.cuda import reduce as CR
from .common import OUT, X, same_shape_as_x


def _normalize_dims(dims, rank, reduce_all):
    if reduce_all or not dims or len(dims) >= rank and rank > 0 and \
            sorted(d % rank for d in dims) == list(range(rank)):
        return list(range(rank))
    return sorted({d % rank for d in dims}) if rank else []


def _reduced_shape(shape, dims, keep_dim):
    if keep_dim:
        return [1 if i in dims else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in dims]


def _reduce_infer(ctx):
    if ctx.op_def.type == "reduce_mean":
        ctx.require_dtype("X", "float")   # an integer mean would overflow or round
    xs = ctx.shape("X")
    dims = ctx.attr("dim")
    bad = [d for d in dims if not -len(xs) <= d < max(len(xs), 1)]
    if bad:
        ctx.fail(f"dim {bad} is out of range for a rank-{len(xs)} X", slot="X",
                 expected=f"dims in [{-len(xs)}, {len(xs) - 1}]", given=f"dim={dims}")
    dims = _normalize_dims(dims, len(xs), ctx.attr("reduce_all"))
    ctx.set_output("Out", _reduced_shape(xs, dims, ctx.attr("keep_dim")), ctx.dtype("X"))


def reduce_sum_array(x: np.ndarray, dims: list[int], keep_dim: bool) -> np.ndarray:
    """Sum over ``dims`` with the numba row kernel (float types) or numpy."""
    kept = [i for i in range(x.ndim) if i not in dims]
    out_shape = _reduced_shape(list(x.shape), dims, keep_dim)
    if x.dtype.type not in (np.float32, np.float64) or x.size == 0:
        return np.asarray(x.sum(axis=tuple(dims), keepdims=keep_dim)).astype(x.dtype)
    moved = np.ascontiguousarray(np.transpose(x, kept + dims))
    outer = int(np.prod([x.shape[i] for i in kept])) if kept else 1
    rows = moved.reshape(outer, -1)
    return K.row_sum(rows).reshape(out_shape)


def _per_element(count: int) -> float:
    """The factor that turns a sum of ``count`` elements into their mean: NaN for none
    (the mean of nothing is undefined, as in numpy and Paddle), not a silent 0."""
    return 1.0 / count if count else float("nan")


def _reduce_kernel(mean: bool):
    def run(ctx):
        x = ctx.input("X")
        dims = _normalize_dims(ctx.attr("dim"), x.ndim, ctx.attr("reduce_all"))
        out = reduce_sum_array(x, dims, ctx.attr("keep_dim"))
        if mean:
            count = int(np.prod([x.shape[d] for d in dims])) if dims else 1
            out = np.asarray(out * _per_element(count), dtype=x.dtype)  # 0-d stays an array
        ctx.set_output("Out", out)
    return run


def _reduce_grad_kernel(mean: bool):
    """dX = dOut broadcast back over the reduced axes (divided by their size for a mean)."""
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        dims = _normalize_dims(ctx.attr("dim"), x.ndim, ctx.attr("reduce_all"))
        kept_shape = [1 if i in dims else d for i, d in enumerate(x.shape)]
        dx = np.broadcast_to(np.reshape(dout, kept_shape), x.shape).astype(x.dtype)
        if mean:
            count = int(np.prod([x.shape[d] for d in dims])) if dims else 1
            dx = (dx / max(count, 1)).astype(x.dtype)
        ctx.set_output("X@GRAD", np.asarray(dx, order="C"))
    return run


def _cuda_reduce_kernel(mean: bool):
    def run(ctx):
        x = ctx.input("X")
        dims = _normalize_dims(ctx.attr("dim"), x.ndim, ctx.attr("reduce_all"))
        out = CR.sum_axes(x, dims, ctx.attr("keep_dim"))
        if mean:
            count = int(np.prod([x.shape[d] for d in dims])) if dims else 1
            out = CE.unary("scale_then_bias", out, a=_per_element(count))
        ctx.set_output("Out", out)
    return run


def _cuda_reduce_grad_kernel(mean: bool):
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        dims = _normalize_dims(ctx.attr("dim"), x.ndim, ctx.attr("reduce_all"))
        kept_shape = tuple(1 if i in dims else d for i, d in enumerate(x.shape))
        if dout.dtype != x.dtype:
            dout = CC.astype(dout, x.dtype)
        dx = CC.broadcast_to(dout.reshape(kept_shape), x.shape)
        if mean:
            count = int(np.prod([x.shape[d] for d in dims])) if dims else 1
            dx = CE.unary("scale_then_bias", dx, a=1.0 / max(count, 1))
        ctx.set_output("X@GRAD", dx)
    return run


_REDUCE_ATTRS = [
    Attr("dim", A.INTS, [0], "the axes to reduce (negative counts from the end)"),
    Attr("keep_dim", A.BOOLEAN, False, "keep reduced axes as size 1"),
    Attr("reduce_all", A.BOOLEAN, False, "reduce every axis"),
    Attr("in_dtype", A.INT, -1, "kept for Paddle compatibility", extra=True),
    Attr("out_dtype", A.INT, -1, "kept for Paddle compatibility", extra=True),
]
register(OpDef("reduce_sum", [X], [OUT], _REDUCE_ATTRS, comment="Out = sum of X over dim.",
               infer_shape=_reduce_infer, kernels={"cpu": _reduce_kernel(mean=False),
                                                   "cuda": _cuda_reduce_kernel(mean=False)},
               grad=Grad(reads=["X"], kernel=_reduce_grad_kernel(mean=False),
                         cuda_kernel=_cuda_reduce_grad_kernel(mean=False))))
register(OpDef("reduce_mean", [X], [OUT], _REDUCE_ATTRS, comment="Out = mean of X over dim.",
               infer_shape=_reduce_infer, kernels={"cpu": _reduce_kernel(mean=True),
                                                   "cuda": _cuda_reduce_kernel(mean=True)},
               grad=Grad(reads=["X"], kernel=_reduce_grad_kernel(mean=True),
                         cuda_kernel=_cuda_reduce_grad_kernel(mean=True))))


def _mean(ctx):
    x = ctx.input("X")
    total = reduce_sum_array(x, list(range(x.ndim)), False)
    ctx.set_output("Out", np.asarray(total * _per_element(x.size), dtype=x.dtype))


def _mean_grad(ctx):
    x, dout = ctx.input("X"), ctx.input("Out@GRAD")
    ctx.set_output("X@GRAD", np.full(x.shape, np.ravel(dout)[0] / max(x.size, 1), x.dtype))


def _cuda_mean(ctx):
    x = ctx.input("X")
    total = CR.sum_axes(x, list(range(x.ndim)), False)
    ctx.set_output("Out", CE.unary("scale_then_bias", total, a=_per_element(x.size)))


def _cuda_mean_grad(ctx):
    """dX = dOut / size everywhere: dOut (one value) broadcast, then scaled."""
    x, dout = ctx.input("X"), ctx.input("Out@GRAD")
    one = dout.reshape((1,) * x.ndim) if x.ndim else dout.reshape(())
    if one.dtype != x.dtype:
        one = CC.astype(one, x.dtype)
    dx = CC.broadcast_to(one, x.shape)
    ctx.set_output("X@GRAD", CE.unary("scale_then_bias", dx, a=1.0 / max(x.size, 1)))


def _mean_infer(ctx):
    ctx.require_dtype("X", "float")       # as Paddle: an integer mean would overflow or round
    ctx.set_output("Out", [], ctx.dtype("X"))


register(OpDef("mean", [X], [OUT], [], comment="Out = the mean of all elements of X (0-d).",
               infer_shape=_mean_infer,
               kernels={"cpu": _mean, "cuda": _cuda_mean},
               grad=Grad(reads=["X"], kernel=_mean_grad, cuda_kernel=_cuda_mean_grad)))


# --- sum of several tensors ---------------------------------------------------------------
def _sum_infer(ctx):
    shapes = ctx.shapes("X")
    first = shapes[0]
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != len(first) or any(a >= 0 and b >= 0 and a != b for a, b in zip(s, first)):
            ctx.fail("every input of sum must have the same shape", slot="X",
                     expected=f"{first} (like {ctx.input_names('X')[0]})",
                     given=f"{s} ({ctx.input_names('X')[i]})")
        if ctx.dtype("X", i) != ctx.dtype("X"):      # no silent promotion or truncation
            ctx.fail("every input of sum must have the same element type", slot="X",
                     expected=ctx.describe_input("X"), given=ctx.describe_input("X", i))
    ctx.set_output("Out", first, ctx.dtype("X"))


def _sum(ctx):
    xs = ctx.inputs("X")
    out = np.array(xs[0], copy=True)
    for x in xs[1:]:
        EK.add(out, x, out=out)
    ctx.set_output("Out", out)


def _cuda_sum(ctx):
    xs = ctx.inputs("X")
    out = CC.copy(xs[0])
    for x in xs[1:]:
        out = CE.binary("add", out, x)
    ctx.set_output("Out", out)


def _sum_grad(op, no_grad):
    """Each input's gradient is Out's gradient: one scale(1.0) op per input, as Fluid."""
    dout = grad_name(op.output("Out")[0])
    return [GradOp("scale", {"X": [dout]}, {"Out": [grad_name(x)]}, {"scale": 1.0})
            for x in op.input("X") if x not in no_grad]


register(OpDef("sum", [Slot("X", "the tensors to add", duplicable=True)], [OUT], [],
               comment="Out = X[0] + X[1] + ... (how repeated gradients are added up).",
               infer_shape=_sum_infer, kernels={"cpu": _sum, "cuda": _cuda_sum},
               grad=_sum_grad, grad_plumbing=True))


# --- softmax ---------------------------------------------------------------------------------
def _softmax(ctx):
    x = ctx.input("X")
    if x.ndim == 0:                  # one value: its softmax is 1
        ctx.set_output("Out", np.ones_like(x))
        return
    axis = ctx.attr("axis") % x.ndim
    moved = np.ascontiguousarray(np.moveaxis(x, axis, -1))
    # the row count spelled out: reshape(-1, 0) of an empty X cannot infer the -1
    rows = moved.reshape(int(np.prod(moved.shape[:-1])), moved.shape[-1])
    out = K.row_softmax(rows).reshape(moved.shape)
    ctx.set_output("Out", np.moveaxis(out, -1, axis))


def _softmax_infer(ctx):
    ctx.require_dtype("X", "float")
    xs, axis = ctx.shape("X"), ctx.attr("axis")
    if xs and not -len(xs) <= axis < len(xs):
        ctx.fail(f"axis {axis} is out of range for a rank-{len(xs)} X", slot="X",
                 expected=f"axis in [{-len(xs)}, {len(xs) - 1}]", given=f"axis={axis}")
    same_shape_as_x(ctx)


def _softmax_grad(ctx):
    """dX = Out * (dOut - sum(dOut * Out, axis))."""
    out, dout = ctx.input("Out"), ctx.input("Out@GRAD")
    axis = ctx.attr("axis") % max(out.ndim, 1)
    inner = (dout * out).sum(axis=axis, keepdims=True)
    ctx.set_output("X@GRAD", (out * (dout - inner)).astype(out.dtype))


def _cuda_softmax(ctx):
    x = ctx.input("X")
    if x.ndim == 0:
        ctx.set_output("Out", CC.fill((), 1, x.dtype))
        return
    axis = ctx.attr("axis") % x.ndim
    last = axis == x.ndim - 1
    perm = [d for d in range(x.ndim) if d != axis] + [axis]
    moved = x if last else CC.transpose(x, perm)
    cols = int(moved.shape[moved.ndim - 1])
    out = CR.row_softmax(moved, moved.size // cols if cols else 0, cols)
    ctx.set_output("Out", out if last else CC.transpose(out, list(np.argsort(perm))))


def _cuda_softmax_grad(ctx):
    out, dout = ctx.input("Out"), ctx.input("Out@GRAD")
    if out.ndim == 0:
        ctx.set_output("X@GRAD", CC.zeros_like(out))
        return
    axis = ctx.attr("axis") % out.ndim
    last = axis == out.ndim - 1
    perm = [d for d in range(out.ndim) if d != axis] + [axis]
    o, d = (out, dout) if last else (CC.transpose(out, perm), CC.transpose(dout, perm))
    cols = int(o.shape[o.ndim - 1])
    dx = CR.softmax_grad_rows(o, d, o.size // cols if cols else 0, cols)
    ctx.set_output("X@GRAD", dx if last else CC.transpose(dx, list(np.argsort(perm))))


register(OpDef(
    "softmax", [X], [OUT],
    [Attr("axis", A.INT, -1, "the axis that sums to 1"),
     Attr("data_format", A.STRING, "AnyLayout", "kept for Paddle compatibility", extra=True),
     Attr("is_test", A.BOOLEAN, False, "inference mode (no effect here)", extra=True)],
    comment="Out = exp(X - max) / sum(exp(X - max)) along axis.",
    infer_shape=_softmax_infer, kernels={"cpu": _softmax, "cuda": _cuda_softmax},
    grad=Grad(reads=["Out"], kernel=_softmax_grad, cuda_kernel=_cuda_softmax_grad),
    activation=True))
