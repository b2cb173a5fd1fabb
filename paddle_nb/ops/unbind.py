"""unbind: X cut into its slices along ``axis``, that axis dropped from each (Fluid's slots
and attributes, as ``paddle.unbind`` saves them).

It is unstack under another name and without ``num`` (the outputs are counted by the
op's Out list). Paddle has no unbind_grad: its gradient maker emits a ``stack`` of the
slices' gradients along the same axis, and so does this one (a slice whose gradient nobody
wrote is a zero tensor first: core/backward.py's ``fill_zeros_like``).
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import GradOp, grad_name
from ..core.registry import Attr, OpDef, Slot, register
from . import arrays
from .common import X, axis_in_range, build_fail, run_fail
from .stack import lowered_slices, set_slice_outputs


def _unbind_infer(ctx):
    xs, fail = ctx.shape("X"), build_fail(ctx, "X")
    axis = axis_in_range(len(xs), ctx.attr("axis"), "axis", fail)
    n = len(ctx.output_names("Out"))
    if xs[axis] >= 0 and xs[axis] != n:
        fail("unbind makes one output per slice along axis",
             expected=f"{xs[axis]} outputs", given=f"{n} outputs")
    set_slice_outputs(ctx, "Out", xs, axis)


def _unbind(ctx):
    x, fail = ctx.input("X"), run_fail("unbind", "X")
    axis = axis_in_range(x.ndim, int(ctx.attr("axis")), "axis", fail)
    n = int(x.shape[axis])
    outputs = len(ctx.op.outputs.get("Out") or [])
    if n != outputs:
        fail("unbind makes one output per slice along axis", expected=f"{outputs} slices",
             given=f"{n}")
    piece = tuple(int(d) for i, d in enumerate(x.shape) if i != axis)
    ctx.set_outputs("Out", [p.reshape(piece) for p in arrays.split(x, [1] * n, axis)])


def _unbind_grad(op, no_grad):
    """dX = the slices' gradients stacked back along axis (Paddle's maker does the same)."""
    if op.input("X")[0] in no_grad:
        return []
    douts = [grad_name(n) for n in op.output("Out")]
    return [GradOp("stack", {"X": douts}, {"Y": [grad_name(op.input("X")[0])]},
                   {"axis": op.attr("axis")}, consumes=frozenset(douts))]


register(OpDef(
    "unbind", [X], [Slot("Out", "the slices", duplicable=True)],
    [Attr("axis", A.INT, 0, "the axis to cut along")],
    comment="Out = X's slices along axis, that axis dropped.", infer_shape=_unbind_infer,
    kernels={"cpu": _unbind, "cuda": _unbind}, lowered=lowered_slices("X", "Out"),
    grad=_unbind_grad))
