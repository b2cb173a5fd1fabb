"""reduce_amax, reduce_amin: the largest / smallest element of X over ``dim``, as
``paddle.amax(x, axis, keepdim)`` and ``paddle.amin`` save them (Paddle 2.6.2).

The values are reduce_max's and reduce_min's; what differs is the gradient. Where several
elements tie for the result, reduce_max gives each of them all of dOut, while amax splits
dOut evenly among them (Paddle's amax_grad: dOut * (X == Out) / the number of ties), so
the gradient sums to dOut as a subgradient should.

Their slots are the newer reduce ops': ``dim`` a list of int64, and ``dim`` may also come
from a tensor (``AxisTensor``, 1-D, or ``AxisTensorList``, one one-element tensor per axis:
core/attr_tensors.py), so the kernels read ``ctx.attr("dim")``. Written once over the
places' primitives: ``fold_axes`` for the values; for the gradient ``apply`` of two
@pointwise kernels around ``sum_axes`` (which counts the ties).
"""
from __future__ import annotations

from ..core.grad_maker import Grad
from ..core.registry import OpDef, register
from ..kernels.cpu.lazy_ufunc import FLOAT_2
from ..kernels.cpu import reduce as KR
from ..kernels.pointwise import KERNELS, pointwise
from . import arrays
from .common import OUT, X
from ..backends import CPU, CUDA
from .reduce import (AXIS_TENSOR_SLOTS, LONG_DIM_REDUCE_ATTRS, _normalize_dims,
                     long_dim_reduce_infer, lowered_fold)


# --- the math (shared_grad: kernels/cpu/reduce.py, whose compiled form calls it too) ------
@pointwise(FLOAT_2)
def is_tie(x, out):
    return 1.0 if x == out else 0.0


# --- the ops ----------------------------------------------------------------------------
def _dims(ctx, x) -> list[int]:
    dims = [int(d) for d in ctx.attr("dim")]
    bad = [d for d in dims if not -x.ndim <= d < max(x.ndim, 1)]
    if bad:                     # a dim from a tensor is first seen here
        raise ValueError(f"{ctx.op.op.type}: dim {bad} is out of range for X "
                         f"{list(x.shape)}: expected dims in [{-x.ndim}, {max(x.ndim - 1, 0)}]")
    return _normalize_dims(dims, x.ndim, ctx.attr("reduce_all"))


def make(place, fold: str):
    def run(ctx):
        x = ctx.input("X")
        dims = _dims(ctx, x)
        empty = [d for d in dims if x.shape[d] == 0]
        if empty:
            raise ValueError(f"reduce_a{fold}: X {list(x.shape)} has no elements along dim "
                             f"{empty}: a {fold} of nothing is undefined")
        ctx.set_output("Out", place.fold_axes(x, dims, ctx.attr("keep_dim"), fold))
    run.__name__ = f"{place.name}_reduce_a{fold}"
    return run


def make_grad(place):
    """dX = dOut / ties where X equals Out (its reduced row's result), else 0."""
    def run(ctx):
        x, out, dout = ctx.input("X"), ctx.input("Out"), ctx.input("Out@GRAD")
        dims = _dims(ctx, x)
        kept = tuple(1 if i in dims else d for i, d in enumerate(x.shape))
        out = out.reshape(kept)
        ties = place.sum_axes(place.apply(is_tie, x, out, out=None, out_dtype=x.dtype),
                              dims, True)
        ctx.set_output("X@GRAD", place.apply(KERNELS["shared_grad"], x, out,
                                             arrays.astype(dout, x.dtype).reshape(kept), ties,
                                             out=None, out_dtype=x.dtype))
    return run


for _fold in ("max", "min"):
    register(OpDef(
        f"reduce_a{_fold}",
        [X, *AXIS_TENSOR_SLOTS], [OUT], LONG_DIM_REDUCE_ATTRS,
        comment=f"Out = the {_fold} of X over dim; its gradient is shared evenly by ties.",
        infer_shape=long_dim_reduce_infer("number"),
        kernels={"cpu": make(CPU, _fold), "cuda": make(CUDA, _fold)},
        lowered=lowered_fold(_fold),   # (in a compiled block: kernels/cpu/reduce.py)
        grad=Grad(reads=["X", "Out", "AxisTensor", "AxisTensorList"], writes=["X"],
                  kernel=make_grad(CPU), cuda_kernel=make_grad(CUDA),
                  lowered=lowered_fold(_fold, KR.shared_over_grad)),
        reads_attr_tensors=("AxisTensor", "AxisTensorList")))
