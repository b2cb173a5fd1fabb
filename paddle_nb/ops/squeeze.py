"""reshape2's relatives: squeeze2, unsqueeze2, flatten_contiguous_range, and shape.

The first three only give X's elements a new shape, computed from their attributes, so each
is one function ``(X's dims, attributes, fail) -> Out's dims`` declared with ``reshape_like``:
the kernel is a reshape on either place, ``XShape`` records X's dims (Fluid's ``[0] +
X.dims``), and the gradient is reshape2's (dX = dOut with X's dims), as in Paddle.
``shape`` writes X's dims as an int32 tensor and has no gradient.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.framework_pb2 import VarType
from ..core.grad_maker import Grad
from ..core.infer_shape import numel
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..kernels.cpu import layout as KL
from ..kernels.lowered import Call
from . import arrays
from .common import OUT, X, attr_tensor_slots, build_fail, run_fail
from .shape import (XSHAPE, _reshape_grad, _set_xshape, _write_xshape, lowered_reshape,
                    lowered_reshape_grad)


def _axis(axis: int, rank: int, fail, what: str) -> int:
    """``axis`` in [-rank, rank) as a position, or a shape error naming it."""
    if not -rank <= axis < rank:
        fail(f"{what} {axis} is outside X's dims", expected=f"axes in [{-rank}, {rank})",
             given=f"{axis} for a rank-{rank} X")
    return axis % rank


def squeezed(x_shape, attrs, fail):
    """Paddle's squeeze: the listed axes (all of them when none are) are dropped where
    their size is 1; a listed axis of another size is kept, as Paddle keeps it."""
    axes = attrs.get("axes") or []
    if not axes:
        return [d for d in x_shape if d != 1]
    drop = {_axis(a, len(x_shape), fail, "axis") for a in axes}
    return [d for i, d in enumerate(x_shape) if not (i in drop and d == 1)]


def unsqueezed(x_shape, attrs, fail):
    """Paddle's unsqueeze: a 1 is inserted at each axis in turn, an axis counted in the
    shape as it is so far (a negative one from its end, + 1)."""
    out = list(x_shape)
    for a in attrs.get("axes") or []:
        rank = len(out) + 1
        out.insert(_axis(a, rank, fail, "axis"), 1)
    return out


def flattened(x_shape, attrs, fail):
    """Dims start_axis..stop_axis (inclusive) become one dim of their product."""
    rank = max(len(x_shape), 1)
    start = _axis(attrs.get("start_axis", 1), rank, fail, "start_axis")
    stop = _axis(attrs.get("stop_axis", 1), rank, fail, "stop_axis")
    if start > stop:
        fail("start_axis must not come after stop_axis",
             given=f"start_axis={attrs.get('start_axis')}, stop_axis={attrs.get('stop_axis')}")
    if not x_shape:
        return [1]
    middle = numel(x_shape[start:stop + 1])
    return list(x_shape[:start]) + [middle] + list(x_shape[stop + 1:])


def _attrs_of(ctx, names) -> dict:
    return {name: ctx.attr(name) for name in names}


def reshape_like(op_type: str, out_shape, attrs: list, comment: str, inputs=()):
    """Declare ``op_type`` (X -> Out, XShape) whose Out is X reshaped to
    ``out_shape(X's dims, attributes, fail)``, and its gradient (reshape2's)."""
    names = [a.name for a in attrs]
    tensors = tuple(slot.name for slot in inputs)     # attribute tensors: read as attrs

    def infer(ctx):
        fail = build_fail(ctx, "X")
        if ctx.attr_from_tensor("axes"):     # unsqueeze2's, known when it runs: one more
            rank = len(ctx.shape("X")) + len(ctx.int_list_attr("axes"))   # dim per axis
            ctx.set_output("Out", [-1] * rank, ctx.dtype("X"))
        else:
            ctx.set_output("Out", out_shape(ctx.shape("X"), _attrs_of(ctx, names), fail),
                           ctx.dtype("X"))
        _set_xshape(ctx)

    def run(ctx):
        x = ctx.input("X")
        fail = run_fail(op_type)
        shape = out_shape(list(x.shape), _attrs_of(ctx, names), fail)
        ctx.set_output("Out", arrays.copy(x).reshape(tuple(shape)))
        _write_xshape(ctx, x)

    def grad_infer(ctx):
        xs = ctx.shape("XShape")[1:]
        if ctx.has_value("Out@GRAD"):
            fail = build_fail(ctx, "Out@GRAD")
            ctx.require_gradient_fits("Out", want=out_shape(xs, _attrs_of(ctx, names), fail))
        ctx.set_output("X@GRAD", xs, ctx.dtype("Out@GRAD"))

    register(OpDef(op_type, [X, *inputs], [OUT, XSHAPE], attrs, comment=comment,
                   infer_shape=infer, kernels={"cpu": run, "cuda": run},
                   lowered=lowered_reshape,
                   grad=Grad(reads=["XShape", *tensors], grads_of=["Out"], writes=["X"],
                             kernel=_reshape_grad, cuda_kernel=_reshape_grad,
                             infer_shape=grad_infer, lowered=lowered_reshape_grad),
                   reads_attr_tensors=tensors))


reshape_like("squeeze2", squeezed,
             [Attr("axes", A.INTS, [], "the axes of size 1 to drop (none: every one)")],
             "Out = X without the listed dims of size 1.")
reshape_like("unsqueeze2", unsqueezed,
             [Attr("axes", A.INTS, [], "where to insert dims of size 1, in turn")],
             "Out = X with dims of size 1 inserted.",
             inputs=attr_tensor_slots("AxesTensor", "AxesTensorList", "axes"))
reshape_like("flatten_contiguous_range", flattened,
             [Attr("start_axis", A.INT, 1, "the first dim to merge"),
              Attr("stop_axis", A.INT, 1, "the last dim to merge (inclusive)")],
             "Out = X with dims start_axis..stop_axis merged into one.")


# --- shape ------------------------------------------------------------------------------------
def _shape_infer(ctx):
    ctx.set_output("Out", [len(ctx.shape("Input"))], VarType.INT32)


def _shape(ctx):
    value = ctx.input("Input")
    dims = np.asarray(value.shape, np.int32)
    ctx.set_output("Out", arrays.to_place(ctx.place, dims))


register(OpDef("shape", [Slot("Input", "any tensor")], [OUT], [],
               comment="Out = Input's dims, as an int32 tensor.",
               infer_shape=_shape_infer, kernels={"cpu": _shape, "cuda": _shape},
               lowered=lambda info: Call(KL.dims_of, ("Input",), ("Out",)),
               grad=NO_GRADIENT))
