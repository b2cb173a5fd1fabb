"""maxout: the max of each group of ``groups`` neighbouring channels (``F.maxout``,
``nn.Maxout``; op type, slots and attributes ``groups``/``axis`` as Paddle 2.6.2 saves
them).

X is 4-D, NCHW (axis 1) or NHWC (axis -1 or 3). Output channel c is the max of input
channels c*groups ... c*groups + groups - 1, so X viewed with the channel axis split in
two, (C / groups, groups), is reduced over the second: one ``fold_axes`` max. The
gradient, as Paddle's maxout_grad (reading X, Out and dOut), sends each dOut to the FIRST
input of its group equal to the max (one element even where several tie): the group axis
is moved last (``rows``), its first maximum found (``arg_extreme``) and dOut put there
(``put_along_rows``). The same primitives run on both places.

In a compiled block both are kernels/cpu/structured.py's loops (maxout, maxout_grad): the
same max (a NaN wins, as np.max) and the same first maximum (np.argmax's), bit for bit.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu import structured as KS
from ..kernels.lowered import Call
from .common import OUT, X
from ..backends import CPU, CUDA


def _channel_axis(axis: int) -> int:
    return 1 if axis == 1 else 3                  # -1 and 3: the last axis (NHWC)


def _infer(ctx):
    ctx.require_dtype("X", "float")
    xs = ctx.shape("X")
    if len(xs) != 4:
        ctx.fail("maxout takes a 4-D X (NCHW or NHWC)", slot="X", expected="rank 4",
                 given=ctx.describe_input("X"))
    axis, groups = ctx.attr("axis"), ctx.attr("groups")
    if axis not in (1, -1, 3):
        ctx.fail("axis names the channel axis: 1 (NCHW), or -1 or 3 (NHWC)", slot="X",
                 expected="axis in (1, -1, 3)", given=f"axis={axis}")
    channels = xs[_channel_axis(axis)]
    if not isinstance(groups, int) or groups < 1 or channels >= 0 and channels % groups:
        ctx.fail("groups must be positive and divide the channel count", slot="X",
                 expected=f"a divisor of {channels}", given=f"groups={groups}")
    out = list(xs)
    out[_channel_axis(axis)] = channels // groups if channels >= 0 else -1
    ctx.set_output("Out", out, ctx.dtype("X"))


def _grouped(x, axis: int, groups: int):
    """x with its channel axis split into (C / groups, groups); the groups axis's index."""
    c = _channel_axis(axis)
    shape = tuple(int(d) for d in x.shape)
    return x.reshape(shape[:c] + (shape[c] // groups, groups) + shape[c + 1:]), c + 1


def _maxout(place):
    def run(ctx):
        x = ctx.input("X")
        grouped, g_axis = _grouped(x, ctx.attr("axis"), ctx.attr("groups"))
        ctx.set_output("Out", place.fold_axes(grouped, [g_axis], False, "max"))
    return run


def _maxout_grad(place):
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        groups = ctx.attr("groups")
        grouped, g_axis = _grouped(x, ctx.attr("axis"), groups)
        rows = place.rows(grouped, g_axis)                          # (outputs, groups)
        first_max = place.arg_extreme(rows, 1, True, np.int64).reshape(-1, 1)
        kept = tuple(1 if i == g_axis else d for i, d in enumerate(grouped.shape))
        dout_rows = place.rows(dout.reshape(kept), g_axis)          # (outputs, 1)
        dx = place.put_along_rows(groups, first_max, dout_rows)
        ctx.set_output("X@GRAD", place.unrows(dx, grouped.shape, g_axis).reshape(x.shape))
    return run


def _lowered(grad: bool):
    def lowered(info):
        dtype = info.dtype("X")
        if dtype.name not in ("float32", "float64") or info.ndim("X") != 4 or \
                (grad and info.dtype("Out@GRAD") != dtype):
            return None
        consts = (_channel_axis(info.attr("axis")), info.attr("groups"))
        if grad:
            return Call(KS.maxout_grad, ("X", "Out@GRAD"), ("X@GRAD",), consts)
        return Call(KS.maxout, ("X",), ("Out",), consts)
    return lowered


register(OpDef(
    "maxout", [X], [OUT],
    [Attr("groups", A.INT, None, "channels per group (divides the channel count)"),
     Attr("axis", A.INT, 1, "the channel axis: 1 (NCHW), -1 or 3 (NHWC)")],
    comment="Out[.., c, ..] = max of X's channels c*groups ... (c+1)*groups - 1.",
    infer_shape=_infer, kernels={"cpu": _maxout(CPU), "cuda": _maxout(CUDA)},
    lowered=_lowered(False),
    grad=Grad(reads=["X", "Out"], kernel=_maxout_grad(CPU),
              cuda_kernel=_maxout_grad(CUDA), lowered=_lowered(True))))
