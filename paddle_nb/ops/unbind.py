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
from .common import X


def _axis(rank: int, axis: int, fail) -> int:
    if not -rank <= axis < rank:
        fail(f"axis {axis} is out of range", expected=f"axis in [{-rank}, {rank - 1}]",
             given=f"axis={axis} for a rank-{rank} X")
    return axis % rank


def _unbind_infer(ctx):
    xs = ctx.shape("X")

    def fail(msg, expected=None, given=None):
        ctx.fail(msg, slot="X", expected=expected, given=given)
    axis = _axis(len(xs), ctx.attr("axis"), fail)
    n = len(ctx.output_names("Out"))
    if xs[axis] >= 0 and xs[axis] != n:
        fail("unbind makes one output per slice along axis",
             expected=f"{xs[axis]} outputs", given=f"{n} outputs")
    piece = [d for i, d in enumerate(xs) if i != axis]
    for i in range(n):
        ctx.set_output("Out", piece, ctx.dtype("X"), i=i)


def _unbind(ctx):
    x = ctx.input("X")
    rank = x.ndim

    def fail(msg, expected=None, given=None):
        raise ValueError(f"unbind: slot X: {msg}; expected {expected}, given {given}")
    axis = _axis(rank, int(ctx.attr("axis")), fail)
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
    kernels={"cpu": _unbind, "cuda": _unbind}, grad=_unbind_grad))
