"""row_conv (the lookahead convolution of Deep Speech 2) and its gradient (Fluid's slots,
as ``static.nn.row_conv`` saves them).

Each feature d of each time step t mixes the next F steps of that same feature:
Out[b, t, d] = sum over i < F (while t + i < T) of X[b, t + i, d] * Filter[i, d], with
Filter [F, D] (F = future_context_size + 1). X is [B, T, D], a batch of equal-length
sequences, or [T, D], one sequence (Paddle's LoD form with a single sequence: LoD is not
modelled here, so a 2-D X is never cut into several). The kernels are
kernels/cpu/row_conv.py and kernels/cuda/row_conv.py; in a compiled block the CPU's
loops are called from there (row_conv_of and its _grads_of), bit for bit.
"""
from __future__ import annotations

import numpy as np

from ..core.grad_maker import Grad
from ..core.registry import OpDef, Slot, register
from ..kernels.cpu import row_conv as KR
from ..kernels.cuda import row_conv as CR
from ..kernels.lowered import Call
from . import arrays
from .batch_norm import require_float


def _infer(ctx):
    require_float(ctx, "X")
    require_float(ctx, "Filter")
    ctx.require_same_dtype("Filter", "X")
    x, f = ctx.shape("X"), ctx.shape("Filter")
    if len(x) not in (2, 3):
        ctx.fail("row_conv takes sequences [B, T, D] (or one sequence [T, D])", slot="X",
                 expected="rank 2 or 3", given=ctx.describe_input("X"))
    if len(f) != 2 or (f[1] >= 0 and x[-1] >= 0 and f[1] != x[-1]):
        ctx.fail("Filter holds one weight per future step and feature", slot="Filter",
                 expected=f"[F, {x[-1]}]", given=ctx.describe_input("Filter"))
    ctx.set_output("Out", x, ctx.dtype("X"))


def _as_batch(x):
    return x.reshape((1,) + tuple(int(d) for d in x.shape)) if len(x.shape) == 2 else x


def _check(x, w):
    if len(w.shape) != 2 or int(w.shape[1]) != int(tuple(x.shape)[len(x.shape) - 1]):
        raise ValueError(f"row_conv: Filter {list(w.shape)} does not fit X {list(x.shape)}")


def _row_conv(ctx):
    x, w = ctx.input("X"), ctx.input("Filter")
    _check(x, w)
    xb = _as_batch(x)
    if arrays.on_device(x):
        out = CR.row_conv(xb, w)
    else:
        out = np.empty(xb.shape, x.dtype)
        KR.row_conv(xb, w, out)
    ctx.set_output("Out", out.reshape(tuple(int(d) for d in x.shape)))


def _row_conv_grad(ctx):
    x, w = ctx.input("X"), ctx.input("Filter")
    _check(x, w)
    xb = _as_batch(x)
    dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape(tuple(xb.shape))
    device = arrays.on_device(x)
    if ctx.has_output("X@GRAD"):
        if device:
            dx = CR.row_conv_dx(dout, w)
        else:
            dx = np.empty(xb.shape, x.dtype)
            KR.row_conv_dx(np.ascontiguousarray(dout), w, dx)
        ctx.set_output("X@GRAD", dx.reshape(tuple(int(d) for d in x.shape)))
    if ctx.has_output("Filter@GRAD"):
        if device:
            dw = CR.row_conv_dfilter(xb, dout, w.shape)
        else:
            dw = np.empty(w.shape, w.dtype)
            KR.row_conv_dfilter(xb, np.ascontiguousarray(dout), dw)
        ctx.set_output("Filter@GRAD", dw)


def _lowered(grad: bool):
    def lowered(info):
        dtype = info.dtype("X")
        if dtype.name not in ("float32", "float64") or info.dtype("Filter") != dtype or \
                info.ndim("X") not in (2, 3) or info.ndim("Filter") != 2 or \
                (grad and info.dtype("Out@GRAD") != dtype):
            return None
        if grad:
            return Call(KR.row_conv_grads_of, ("X", "Filter", "Out@GRAD"),
                        ("X@GRAD", "Filter@GRAD"),
                        (info.has_output("X@GRAD"), info.has_output("Filter@GRAD")))
        return Call(KR.row_conv_of, ("X", "Filter"), ("Out",))
    return lowered


register(OpDef(
    "row_conv",
    [Slot("X", "sequences [B, T, D] (or one sequence [T, D])"),
     Slot("Filter", "[F, D]: the weight of each of the next F steps, per feature")],
    [Slot("Out", "X's shape: each step mixed with the F - 1 steps after it")], [],
    comment="Out[b, t, d] = sum over i < F of X[b, t + i, d] * Filter[i, d] (steps past "
            "the end count 0).",
    infer_shape=_infer, kernels={"cpu": _row_conv, "cuda": _row_conv},
    lowered=_lowered(False),
    grad=Grad(reads=["X", "Filter"], writes=["X", "Filter"], kernel=_row_conv_grad,
              cuda_kernel=_row_conv_grad, lowered=_lowered(True))))
