"""Reductions: sum (of several tensors), mean, reduce_sum, reduce_mean, reduce_max,
reduce_min, reduce_prod, squared_l2_norm.

Reduced axes are moved last and flattened, so one numba kernel over ``(outer, inner)``
rows serves every axis choice. A full reduction gives a 0-d tensor, as Paddle 2.5+ does.
Each kernel is one function for both places (backends/).
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.framework_pb2 import VarType
from ..core.grad_maker import Grad, GradOp, grad_name
from ..core.registry import Attr, OpDef, Slot, register
from ..core.selected_rows import SelectedRows
from ..kernels.cpu import reduce as KR
from ..kernels.cpu.lazy_ufunc import FLOAT_2
from ..kernels.cuda import copy as CC
from ..kernels.cuda import elementwise as CE
from ..kernels.lowered import Call, Elementwise
from ..kernels.pointwise import KERNELS, pointwise
from . import arrays, selected_rows
from .common import FLOAT_TYPES, OUT, X, numba_holds, one_dtype
from ..backends import CPU, CUDA


def _normalize_dims(dims, rank, reduce_all):
    if reduce_all or not dims or len(dims) >= rank and rank > 0 and \
            sorted(d % rank for d in dims) == list(range(rank)):
        return list(range(rank))
    return sorted({d % rank for d in dims}) if rank else []


def _reduced_shape(shape, dims, keep_dim):
    if keep_dim:
        return [1 if i in dims else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in dims]


def require_axes(ctx, axes, rank: int, attr: str, noun: str, high: int) -> None:
    """Each of ``axes`` (attribute ``attr``) is an axis of X, of rank ``rank`` (a 0-d X
    has the one axis 0); the error says ``{noun} in [-rank, high]``."""
    bad = [d for d in axes if not -rank <= d < max(rank, 1)]
    if bad:
        ctx.fail(f"{attr} {bad} is out of range for a rank-{rank} X", slot="X",
                 expected=f"{noun} in [{-rank}, {high}]", given=f"{attr}={axes}")


def _reduce_infer(ctx):
    if ctx.op_def.type == "reduce_mean":
        ctx.require_dtype("X", "float")   # an integer mean would overflow or round
    xs = ctx.shape("X")
    dims = ctx.attr("dim")
    require_axes(ctx, dims, len(xs), "dim", "dims", len(xs) - 1)
    dims = _normalize_dims(dims, len(xs), ctx.attr("reduce_all"))
    dtype = ctx.dtype("X")
    if ctx.op_def.type == "reduce_sum":
        out_dtype = ctx.attr("out_dtype")
        if out_dtype >= 0 and dtypes.name(out_dtype) not in SUMMABLE:
            ctx.fail("reduce_sum sums in a number type", slot="X",
                     expected=f"out_dtype -1 or one of {', '.join(SUMMABLE)}",
                     given=f"out_dtype={out_dtype} ({dtypes.name(out_dtype)})")
        dtype = _sum_dtype(dtype, out_dtype)
    ctx.set_output("Out", _reduced_shape(xs, dims, ctx.attr("keep_dim")), dtype)


SUMMABLE = ("int32", "int64", "float32", "float64")   # out_dtype's choices here


def _sum_dtype(x_dtype: int, out_dtype: int) -> int:
    """reduce_sum's element type, as Paddle's: ``out_dtype`` where it is set (paddle.sum(x,
    dtype=...) and quantile's count of non-NaN values save it), else X's, but int64 for
    bools (the sum of bools counts the true ones)."""
    if out_dtype >= 0:
        return out_dtype
    return VarType.INT64 if x_dtype == VarType.BOOL else x_dtype


def _per_element(count: int) -> float:
    """The factor that turns a sum of ``count`` elements into their mean: NaN for none
    (the mean of nothing is undefined, as in numpy and Paddle), not a silent 0."""
    return 1.0 / count if count else float("nan")


def _reduce_kernel(place, mean: bool):
    def run(ctx):
        x = ctx.input("X")
        if not mean:                      # summed in out_dtype (bools: counted in int64)
            want = dtypes.to_numpy(_sum_dtype(dtypes.to_code(x.dtype), ctx.attr("out_dtype")))
            if x.dtype != want:
                x = arrays.astype(x, want)
        dims = _normalize_dims(ctx.attr("dim"), x.ndim, ctx.attr("reduce_all"))
        out = place.sum_axes(x, dims, ctx.attr("keep_dim"))
        if mean:
            count = int(np.prod([x.shape[d] for d in dims])) if dims else 1
            out = place.scale(out, _per_element(count))
        ctx.set_output("Out", out)
    return run


def _reduce_grad_kernel(place, mean: bool):
    """dX = dOut broadcast back over the reduced axes (divided by their size for a mean)."""
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        dims = _normalize_dims(ctx.attr("dim"), x.ndim, ctx.attr("reduce_all"))
        kept_shape = tuple(1 if i in dims else d for i, d in enumerate(x.shape))
        dx = place.broadcast_to(arrays.astype(dout, x.dtype).reshape(kept_shape),
                                tuple(x.shape))
        if mean:
            count = int(np.prod([x.shape[d] for d in dims])) if dims else 1
            dx = place.scale(dx, 1.0 / max(count, 1))
        ctx.set_output("X@GRAD", dx)
    return run


# --- in a compiled block (kernels/lowered.py): kernels/cpu/reduce.py ------------------------
def attr_dims(info, dims_attr: str = "dim") -> list[int]:
    """The axes of X an op reduces: its ``dims_attr`` (every axis with reduce_all, or
    where it names none or all of them), ascending."""
    return _normalize_dims([int(d) for d in info.attr(dims_attr)], info.ndim("X"),
                           info.attr("reduce_all"))


def reduced_layout(rank: int, dims: list[int]):
    """(order, inverse, kept) of the kernels/cpu/reduce.py reductions of a rank-``rank`` X
    (>= 1) over ``dims``: X's kept dims then its reduced ones, the inverse permutation, and
    how many dims are kept."""
    kept = [d for d in range(rank) if d not in dims]
    order = tuple(kept + list(dims))
    return order, tuple(order.index(d) for d in range(rank)), len(kept)


def reduced_form(fn, info, dims, keep_dim, extra=()):
    """Call ``fn(X, order, kept, keep_dim, out_rank, *extra)`` (folded_over, tested_over,
    ...) -> Out: X reduced over ``dims``."""
    order, _, kept = reduced_layout(info.ndim("X"), dims)
    keep_dim = bool(keep_dim)
    return Call(fn, ("X",), ("Out",),
                (order, kept, keep_dim, len(order) if keep_dim else kept, *extra))


def reduced_grad_form(fn, info, dims, extra=()):
    """Call ``fn(X, Out, dOut, order, inverse, kept, *extra)`` (folded_over_grad,
    shared_over_grad, ...) -> X@GRAD, for an Out reduced over ``dims``."""
    order, inverse, kept = reduced_layout(info.ndim("X"), dims)
    return Call(fn, ("X", "Out", "Out@GRAD"), ("X@GRAD",), (order, inverse, kept, *extra))


def _summed_dims(info):
    """(order, kept) for kernels/cpu/reduce.summed_over; None where the compiled form does
    not apply (not a float32/float64 X of rank >= 1, or a sum into another dtype)."""
    dtype, rank = info.dtype("X"), info.ndim("X")
    if dtype.name not in FLOAT_TYPES or rank == 0:
        return None
    if info.pop.op_def.type == "reduce_sum" and info.attr("out_dtype") >= 0 and \
            dtypes.to_numpy(info.attr("out_dtype")) != dtype:
        return None
    order, _, kept = reduced_layout(rank, attr_dims(info))
    return order, kept


def _lowered_reduce(mean: bool, grad: bool):
    """reduce_sum's (``mean``: reduce_mean's; ``grad``: their gradients') form:
    kernels/cpu/reduce.summed_over or summed_over_grad."""
    def lowered(info):
        split = _summed_dims(info)
        if split is None:
            return None
        order, kept = split
        if grad:
            inverse = tuple(order.index(d) for d in range(len(order)))
            return Call(KR.summed_over_grad, ("X", "Out@GRAD"), ("X@GRAD",),
                        (order, inverse, kept, mean))
        keep_dim = bool(info.attr("keep_dim"))
        return Call(KR.summed_over, ("X",), ("Out",),
                    (order, kept, keep_dim, len(order) if keep_dim else kept, mean))
    return lowered


_REDUCE_ATTRS = [
    Attr("dim", A.INTS, [0], "the axes to reduce (negative counts from the end)"),
    Attr("keep_dim", A.BOOLEAN, False, "keep reduced axes as size 1"),
    Attr("reduce_all", A.BOOLEAN, False, "reduce every axis"),
    Attr("in_dtype", A.INT, -1, "kept for Paddle compatibility", extra=True),
    Attr("out_dtype", A.INT, -1, "reduce_sum: the element type summed in and given (-1: X's, "
         "int64 for bools)", extra=True),
]
# The reductions whose dim may come as a tensor (reduce_all/_any in bool_reduce.py,
# reduce_amax/_amin in amax_amin.py): dim is LONGS there, and these slots give it at run
# time (core/attr_tensors.py).
AXIS_TENSOR_SLOTS = [
    Slot("AxisTensor", "dim as a 1-D int tensor (read at run time)", dispensable=True),
    Slot("AxisTensorList", "dim as one-element int tensors (read at run time)",
         dispensable=True, duplicable=True)]


def long_dim_reduce_infer(kind: str, out_dtype=None):
    """Shape inference of a reduce op with LONG_DIM_REDUCE_ATTRS (reduce_amax/_amin,
    reduce_all/_any): X's elements of ``kind``, Out in ``out_dtype`` (None: X's). Where dim
    comes from a tensor its axes are unknown until run time: Out has X's rank with -1 dims
    (keep_dim), or X's rank less one per axis the tensor holds."""
    def infer(ctx):
        ctx.require_dtype("X", kind)
        xs = ctx.shape("X")
        dtype = ctx.dtype("X") if out_dtype is None else out_dtype
        if ctx.attr_from_tensor("dim") and not ctx.attr("reduce_all"):
            unknown = ctx.int_list_attr("dim")          # one -1 per axis the tensor holds
            rank = len(xs) if ctx.attr("keep_dim") else max(len(xs) - len(unknown), 0)
            ctx.set_output("Out", [-1] * rank, dtype)
            return
        dims = [int(d) for d in ctx.attr("dim")]
        require_axes(ctx, dims, len(xs), "dim", "dims", max(len(xs) - 1, 0))
        dims = _normalize_dims(dims, len(xs), ctx.attr("reduce_all"))
        ctx.set_output("Out", _reduced_shape(xs, dims, ctx.attr("keep_dim")), dtype)
    return infer


LONG_DIM_REDUCE_ATTRS = [Attr("dim", A.LONGS, [0], "the axes to reduce (negative counts from "
                              "the end)")] + _REDUCE_ATTRS[1:3] + [
    Attr("in_dtype", A.INT, -1, "kept for Paddle compatibility", extra=True),
    Attr("out_dtype", A.INT, -1, "kept for Paddle compatibility", extra=True)]

for _mean in (False, True):
    register(OpDef(f"reduce_{'mean' if _mean else 'sum'}", [X], [OUT], _REDUCE_ATTRS,
                   comment=f"Out = {'mean' if _mean else 'sum'} of X over dim.",
                   infer_shape=_reduce_infer,
                   kernels={"cpu": _reduce_kernel(CPU, _mean), "cuda": _reduce_kernel(CUDA, _mean)},
                   lowered=_lowered_reduce(_mean, grad=False),
                   grad=Grad(reads=["X"], kernel=_reduce_grad_kernel(CPU, _mean),
                             cuda_kernel=_reduce_grad_kernel(CUDA, _mean),
                             lowered=_lowered_reduce(_mean, grad=True))))


# --- reduce_max, reduce_min, reduce_prod --------------------------------------------------
# (their gradients' scalar math, picked_grad and prod_grad, is in kernels/cpu/reduce.py, whose
# compiled forms call it too)
def _fold_kernel(place, fold: str):
    def run(ctx):
        x = ctx.input("X")
        dims = _normalize_dims(ctx.attr("dim"), x.ndim, ctx.attr("reduce_all"))
        empty = [d for d in dims if x.shape[d] == 0]
        if empty:                  # numpy would raise from deep inside; say what it is
            raise ValueError(f"reduce_{fold}: X {list(x.shape)} has no elements along dim "
                             f"{empty}: a {fold} of nothing is undefined")
        ctx.set_output("Out", place.fold_axes(x, dims, ctx.attr("keep_dim"), fold))
    return run


def _fold_grad_kernel(place, kernel):
    """dX = kernel(X, Out, dOut), Out and dOut broadcast back over the reduced axes."""
    def run(ctx):
        x, out, dout = ctx.input("X"), ctx.input("Out"), ctx.input("Out@GRAD")
        dims = _normalize_dims(ctx.attr("dim"), x.ndim, ctx.attr("reduce_all"))
        kept = tuple(1 if i in dims else d for i, d in enumerate(x.shape))
        ctx.set_output("X@GRAD", place.apply(kernel, x, out.reshape(kept),
                                             arrays.astype(dout, x.dtype).reshape(kept),
                                             out=None, out_dtype=x.dtype))
    return run


def lowered_fold(fold: str, grad_fn=None, grad_extra=()):
    """The form of a ``fold`` ("max", "min", "prod") over ``dim`` (reduce_max, ...,
    reduce_amax, reduce_amin): kernels/cpu/reduce.folded_over, or where ``grad_fn`` is
    given, its gradient's, ``grad_fn(X, Out, dOut, order, inverse, kept, *grad_extra)``;
    for an X of rank >= 1 (float32/float64; the values also int32/int64)."""
    def lowered(info):
        dtype = info.dtype("X")
        if info.ndim("X") == 0 or not (dtype.name in FLOAT_TYPES or grad_fn is None
                                       and dtype.name in ("int32", "int64")):
            return None
        if grad_fn is not None:
            return reduced_grad_form(grad_fn, info, attr_dims(info), grad_extra)
        return reduced_form(KR.folded_over, info, attr_dims(info), info.attr("keep_dim"),
                            (fold,))
    return lowered


for _fold, _grad in (("max", KERNELS["picked_grad"]), ("min", KERNELS["picked_grad"]),
                     ("prod", KERNELS["prod_grad"])):
    register(OpDef(f"reduce_{_fold}", [X], [OUT], _REDUCE_ATTRS,
                   comment=f"Out = the {_fold} of X over dim.", infer_shape=_reduce_infer,
                   kernels={"cpu": _fold_kernel(CPU, _fold), "cuda": _fold_kernel(CUDA, _fold)},
                   lowered=lowered_fold(_fold),
                   grad=Grad(reads=["X", "Out"], kernel=_fold_grad_kernel(CPU, _grad),
                             cuda_kernel=_fold_grad_kernel(CUDA, _grad),
                             lowered=lowered_fold(_fold, KR.folded_over_grad, (_fold,)))))


def _mean(place):
    def run(ctx):
        x = ctx.input("X")
        total = place.sum_axes(x, list(range(x.ndim)), False)
        ctx.set_output("Out", place.scale(total, _per_element(x.size)))
    return run


def _mean_grad(ctx):
    x, dout = ctx.input("X"), ctx.input("Out@GRAD")
    ctx.set_output("X@GRAD", np.full(x.shape, np.ravel(dout)[0] / max(x.size, 1), x.dtype))


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


def _float_x(fn, reads=("X",), writes=("Out",)):
    """The lowered form ``fn`` of ``reads`` for a float32/float64 X (else None)."""
    return lambda info: Call(fn, reads, writes) \
        if info.dtype("X").name in FLOAT_TYPES else None


register(OpDef("mean", [X], [OUT], [], comment="Out = the mean of all elements of X (0-d).",
               infer_shape=_mean_infer,
               kernels={"cpu": _mean(CPU), "cuda": _mean(CUDA)},
               lowered=_float_x(KR.mean_of_all),
               grad=Grad(reads=["X"], kernel=_mean_grad, cuda_kernel=_cuda_mean_grad,
                         lowered=_float_x(KR.mean_of_all_grad, ("X", "Out@GRAD"),
                                          ("X@GRAD",)))))


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


def _sum(place):
    def run(ctx):
        xs = ctx.inputs("X")
        if any(x.__class__ is SelectedRows for x in xs):    # sparse gradients
            return selected_rows.sum_kernel(ctx, place, xs)
        out = place.copy(xs[0])
        for x in xs[1:]:
            out = place.binary("elementwise_add", out, x, out)     # in place on the CPU
        ctx.set_output("Out", out)
    return run


def _sum_grad(op, no_grad):
    """Each input's gradient is Out's gradient: one scale(1.0) op per input, as Fluid."""
    dout = grad_name(op.output("Out")[0])
    return [GradOp("scale", {"X": [dout]}, {"Out": [grad_name(x)]}, {"scale": 1.0})
            for x in op.input("X") if x not in no_grad]


def _lowered_sum(info):
    """kernels/cpu/reduce.added_up, for dense inputs of one number dtype numba holds."""
    dtype = one_dtype(info, "X")
    if dtype is None or dtype.kind not in "iuf" or not numba_holds(dtype):
        return None
    return Call(KR.added_up, ("X",), ("Out",))


register(OpDef("sum", [Slot("X", "the tensors to add", duplicable=True)], [OUT], [],
               comment="Out = X[0] + X[1] + ... (how repeated gradients are added up; "
                       "SelectedRows only: a SelectedRows of each row once, else dense).",
               infer_shape=_sum_infer, kernels={"cpu": _sum(CPU), "cuda": _sum(CUDA)},
               lowered=_lowered_sum, grad=_sum_grad, grad_plumbing=True, selected_rows=("X",)))


# --- squared_l2_norm --------------------------------------------------------------------------
@pointwise(FLOAT_2)
def squared_l2_norm_grad(x, dout):
    return 2 * x * dout


def _squared_l2_norm(place):
    def run(ctx):
        x = ctx.input("X")
        squares = place.unary("square", x, 1.0, None)       # (float16: in float32)
        total = place.sum_axes(squares, list(range(x.ndim)), False).reshape((1,))
        ctx.set_output("Out", arrays.astype(total, x.dtype))
    return run


def _squared_l2_norm_grad(place):
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        one = arrays.astype(dout, x.dtype).reshape((1,) * x.ndim)
        ctx.set_output("X@GRAD", place.apply(squared_l2_norm_grad, x, one, out=None,
                                             out_dtype=x.dtype))
    return run


def _squared_l2_norm_infer(ctx):
    ctx.require_dtype("X", "float")
    ctx.set_output("Out", [1], ctx.dtype("X"))


def _lowered_squared_l2_norm_grad(info):
    """squared_l2_norm_grad as one fused loop: dOut (shape [1]) is read as one element."""
    if info.dtype("X").name not in FLOAT_TYPES or info.ndim("X") == 0:
        return None
    return Elementwise(squared_l2_norm_grad, ("X", "Out@GRAD"), "X@GRAD")


register(OpDef("squared_l2_norm", [X], [OUT], [],
               comment="Out = sum(X * X), shape [1] (what gradient clipping by norm reads).",
               infer_shape=_squared_l2_norm_infer,
               kernels={"cpu": _squared_l2_norm(CPU), "cuda": _squared_l2_norm(CUDA)},
               lowered=_float_x(KR.squared_l2_norm),
               grad=Grad(reads=["X"], kernel=_squared_l2_norm_grad(CPU),
                         cuda_kernel=_squared_l2_norm_grad(CUDA),
                         lowered=_lowered_squared_l2_norm_grad)))
