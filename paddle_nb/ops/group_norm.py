"""instance_norm and group_norm and their gradients (Fluid's slots and attributes, as Paddle
2.6.2 saves them): batch_norm's normalization (ops/batch_norm.py, kernels/*/norm.py) over
other groups of X, always with the batch's own statistics.

- instance_norm: each sample's channel alone, over its H*W values (the view
  (1, N*C, 1, H*W)); SavedMean and SavedVariance ([N*C]) are the mean and
  1 / sqrt(var + epsilon), as batch_norm saves them.
- group_norm: each sample's group of C / groups channels together (the view
  (1, N*groups, C/groups, H*W), each channel keeping its own scale and bias); Mean and
  Variance ([N, groups]) are the mean and the (biased) variance itself, as Paddle saves
  them. NHWC is moved to NCHW first (a copy) so that one view serves both layouts.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.infer_shape import numel
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import norm as CPU_NORM
from ..kernels.lowered import Call
from . import arrays
from .batch_norm import (FLOATS, affine, channels_last, contiguous, epsilon_check, inv_std,
                         layout_check, normalize, normalize_grad, require_float, require_input,
                         require_vector, set_affine_grads, to_place)
from .common import in_unit_interval, int_shape
from ..backends import CPU, CUDA

IN_SLOTS = [Slot("X", "the input, [N, C, ...]"),
            Slot("Scale", "the per-channel scale (gamma)", dispensable=True),
            Slot("Bias", "the per-channel bias (beta)", dispensable=True)]


def _grad_shapes(ctx, xs, c):
    require_float(ctx, "Y@GRAD")
    ctx.require_gradient_fits("Y", want=xs)
    ctx.set_output("X@GRAD", xs, ctx.dtype("X"))
    for slot in ("Scale", "Bias"):
        if ctx.has_output(slot + "@GRAD"):
            ctx.set_output(slot + "@GRAD", [c], ctx.dtype(slot) if ctx.has_input(slot)
                           else ctx.dtype("X"))


# --- instance_norm --------------------------------------------------------------------------
def _instance_view(x):
    n, c = int_shape(x)[:2]
    return n, c, (1, n * c, 1, numel(int_shape(x)[2:]))


def _instance_norm_infer(ctx):
    xs = require_input(ctx)
    for slot in ("Scale", "Bias"):
        require_vector(ctx, slot, xs[1], "channel")
    ctx.set_output("Y", xs, ctx.dtype("X"))
    nc = xs[0] * xs[1] if xs[0] >= 0 and xs[1] >= 0 else -1
    for slot in ("SavedMean", "SavedVariance"):
        if ctx.has_output(slot):
            ctx.set_output(slot, [nc], ctx.dtype("X"))


def _instance_norm(place):
    def run(ctx):
        x = contiguous(place, ctx.input("X"))
        n, c, view = _instance_view(x)
        x4 = x.reshape(view)
        scale, bias = affine(ctx, c)
        mean, var = (arrays.host(v) for v in place.norm_moments(x4))
        inv = inv_std(var, float(ctx.attr("epsilon")))
        y = normalize(place, ctx, x4, mean, inv, np.tile(scale, n).reshape(-1, 1),
                      np.tile(bias, n).reshape(-1, 1), int_shape(x))
        ctx.set_output("Y", y)
        ctx.set_output("SavedMean", to_place(ctx, mean.astype(x.dtype)))
        ctx.set_output("SavedVariance", to_place(ctx, inv.astype(x.dtype)))
    return run


def _instance_norm_grad(place):
    def run(ctx):
        x = contiguous(place, ctx.input("X"))
        n, c, view = _instance_view(x)
        scale, _ = affine(ctx, c)
        mean = arrays.host(ctx.input("SavedMean")).astype(np.float64).reshape(-1)
        inv = arrays.host(ctx.input("SavedVariance")).astype(np.float64).reshape(-1)
        if mean.size != n * c or inv.size != n * c:
            raise ValueError(f"instance_norm_grad: the saved statistics hold {mean.size} and "
                             f"{inv.size} values for the {n * c} instances of X")
        dy = contiguous(place, ctx.input("Y@GRAD"))
        dx, dscale, dbias = normalize_grad(place, ctx, x.reshape(view), dy.reshape(view), mean,
                                           inv, np.tile(scale, n).reshape(-1, 1), True,
                                           int_shape(x))
        ctx.set_output("X@GRAD", dx)
        set_affine_grads(ctx, dscale.reshape(n, c).sum(0), dbias.reshape(n, c).sum(0))
    return run


def _instance_norm_grad_infer(ctx):
    xs = require_input(ctx)
    require_vector(ctx, "Scale", xs[1], "channel")
    _grad_shapes(ctx, xs, xs[1])


# --- inside a compiled block (kernels/lowered.py): kernels/cpu/norm.py's
# instance_normalized / group_normalized (and _grad), the CPU kernels' serial loops; a Scale
# or Bias not given is passed as X, flagged
def _lowered_norm(op_type: str, grad: bool):
    stats = {"instance_norm": ("SavedMean", "SavedVariance"),
             "group_norm": ("Mean", "Variance")}[op_type]

    def lowered(info):
        xs = info.shape("X")
        group_norm = op_type == "group_norm"
        last = group_norm and channels_last(info) and len(xs) > 2
        channels = _channels(info, xs) if group_norm else xs[1]
        floats = all(info.dtype(s) in FLOATS for s in ("X", "Scale", "Bias", *stats)
                     if info.has_input(s))            # (the statistics: the gradient's)
        if not floats or (grad and info.dtype("Y@GRAD") != info.dtype("X")) or \
                (last and len(xs) != 4) or (grad and channels == 1):
            # (C = 1: the op sums Scale's gradient over the samples pairwise, numpy's way)
            return None
        if math.prod(xs) >= CPU_NORM.MIN_PARALLEL_NORM and xs[0] * (
                info.attr("groups") if group_norm else channels) > 1:
            # compiled code runs the serial loops (it cannot ask whether the cores are free)
            return "large: the interpreter splits it across the cores"
        scale, bias = (s if info.has_input(s) else "X" for s in ("Scale", "Bias"))
        eps = float(info.attr("epsilon"))
        if not group_norm:
            if grad:
                return Call(CPU_NORM.instance_normalized_grad,
                            ("X", scale, bias, *stats, "Y@GRAD"),
                            ("X@GRAD", "Scale@GRAD", "Bias@GRAD"), (scale != "X",))
            return Call(CPU_NORM.instance_normalized, ("X", scale, bias), ("Y", *stats),
                        (scale != "X", bias != "X", eps))
        groups = info.attr("groups")
        if grad:
            return Call(CPU_NORM.group_normalized_grad, ("X", scale, bias, *stats, "Y@GRAD"),
                        ("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
                        (scale != "X", groups, eps, last))
        return Call(CPU_NORM.group_normalized, ("X", scale, bias), ("Y", *stats),
                    (scale != "X", bias != "X", groups, eps, last))
    return lowered


register(OpDef(
    "instance_norm", IN_SLOTS,
    [Slot("Y", "the normalized X"),
     Slot("SavedMean", "each instance's mean, [N*C]", intermediate=True),
     Slot("SavedVariance", "each instance's 1 / sqrt(var + epsilon), [N*C]",
          intermediate=True)],
    [Attr("epsilon", A.FLOAT, 1e-5, "added to the variance", check=epsilon_check)],
    comment="Y = (X - mean) / sqrt(var + epsilon) * Scale + Bias, with the mean and "
            "variance of each sample's channel over its H*W values.",
    infer_shape=_instance_norm_infer,
    kernels={"cpu": _instance_norm(CPU), "cuda": _instance_norm(CUDA)},
    lowered=_lowered_norm("instance_norm", grad=False),
    grad=Grad(reads=["X", "Scale", "SavedMean", "SavedVariance"], grads_of=["Y"],
              writes=["X", "Scale", "Bias"], kernel=_instance_norm_grad(CPU),
              cuda_kernel=_instance_norm_grad(CUDA), infer_shape=_instance_norm_grad_infer,
              lowered=_lowered_norm("instance_norm", grad=True))))


# --- group_norm --------------------------------------------------------------------------------
def _channels(ctx, xs) -> int:
    return xs[-1] if channels_last(ctx) else xs[1]


def _check_groups(ctx, xs) -> int:
    c, groups = _channels(ctx, xs), ctx.attr("groups")
    if not isinstance(groups, int) or groups < 1 or (c >= 0 and (groups > c or c % groups)):
        ctx.fail(f"groups={groups!r} must divide the {c} channels of X", slot="X",
                 expected="1 <= groups <= C, C % groups == 0",
                 given=f"X {xs}, groups={groups!r}")
    for slot in ("Scale", "Bias"):
        require_vector(ctx, slot, c, "channel")
    return groups


def _group_norm_infer(ctx):
    xs = require_input(ctx)
    groups = _check_groups(ctx, xs)
    ctx.set_output("Y", xs, ctx.dtype("X"))
    for slot in ("Mean", "Variance"):
        if ctx.has_output(slot):
            ctx.set_output(slot, [xs[0], groups], ctx.dtype("X"))


def _to_nchw(ctx, x):
    """X with its channels at axis 1 (NHWC moved, a copy), and the permutation back."""
    if not channels_last(ctx) or x.ndim == 2:
        return x, None
    perm = [0, x.ndim - 1] + list(range(1, x.ndim - 1))
    back = [0] + list(range(2, x.ndim)) + [1]
    return arrays.transpose(x, perm), back


def _group_view(x, groups):
    n, c = int_shape(x)[:2]
    return n, c, (1, n * groups, c // groups, numel(int_shape(x)[2:]))


def _group_affine(ctx, c, n, groups):
    scale, bias = affine(ctx, c)
    return (np.tile(scale.reshape(groups, c // groups), (n, 1)),
            np.tile(bias.reshape(groups, c // groups), (n, 1)))


def _group_norm(place):
    def run(ctx):
        x, back = _to_nchw(ctx, ctx.input("X"))
        x = contiguous(place, x)
        groups = ctx.attr("groups")
        n, c, view = _group_view(x, groups)
        x4 = x.reshape(view)
        mean, var = (arrays.host(v) for v in place.norm_moments(x4))
        scale2, bias2 = _group_affine(ctx, c, n, groups)
        y = normalize(place, ctx, x4, mean, inv_std(var, float(ctx.attr("epsilon"))), scale2,
                      bias2, int_shape(x))
        ctx.set_output("Y", y if back is None else arrays.transpose(y, back))
        ctx.set_output("Mean", to_place(ctx, mean.reshape(n, groups).astype(x.dtype)))
        ctx.set_output("Variance", to_place(ctx, var.reshape(n, groups).astype(x.dtype)))
    return run


def _group_norm_grad(place):
    def run(ctx):
        x, back = _to_nchw(ctx, ctx.input("X"))
        dy, _ = _to_nchw(ctx, ctx.input("Y@GRAD"))
        x, dy = contiguous(place, x), contiguous(place, dy)
        groups = ctx.attr("groups")
        n, c, view = _group_view(x, groups)
        mean = arrays.host(ctx.input("Mean")).astype(np.float64).reshape(-1)
        var = arrays.host(ctx.input("Variance")).astype(np.float64).reshape(-1)
        if mean.size != n * groups or var.size != n * groups:
            raise ValueError(f"group_norm_grad: Mean and Variance hold {mean.size} and "
                             f"{var.size} values for the {n * groups} groups of X")
        scale2, _ = _group_affine(ctx, c, n, groups)
        dx, dscale, dbias = normalize_grad(place, ctx, x.reshape(view), dy.reshape(view), mean,
                                           inv_std(var, float(ctx.attr("epsilon"))), scale2,
                                           True, int_shape(x))
        ctx.set_output("X@GRAD", dx if back is None else arrays.transpose(dx, back))
        set_affine_grads(ctx, dscale.reshape(n, c).sum(0), dbias.reshape(n, c).sum(0))
    return run


def _group_norm_grad_infer(ctx):
    xs = require_input(ctx)
    _check_groups(ctx, xs)
    _grad_shapes(ctx, xs, _channels(ctx, xs))


register(OpDef(
    "group_norm", IN_SLOTS,
    [Slot("Y", "the normalized X"),
     Slot("Mean", "each sample's group mean, [N, groups]", intermediate=True),
     Slot("Variance", "each sample's group variance, [N, groups]", intermediate=True)],
    [Attr("epsilon", A.FLOAT, 1e-5, "added to the variance",
          check=in_unit_interval("expected 0 <= epsilon <= 1, as Paddle checks")),
     Attr("groups", A.INT, 1, "how many groups the channels are split into"),
     Attr("data_layout", A.STRING, "NCHW", "NCHW or NHWC: where the channel axis is",
          check=layout_check)],
    comment="Y = (X - mean) / sqrt(var + epsilon) * Scale + Bias, with the mean and "
            "variance of each sample's group of C / groups channels.",
    infer_shape=_group_norm_infer,
    kernels={"cpu": _group_norm(CPU), "cuda": _group_norm(CUDA)},
    lowered=_lowered_norm("group_norm", grad=False),
    grad=Grad(reads=["X", "Scale", "Bias", "Y", "Mean", "Variance"], grads_of=["Y"],
              writes=["X", "Scale", "Bias"], kernel=_group_norm_grad(CPU),
              cuda_kernel=_group_norm_grad(CUDA), infer_shape=_group_norm_grad_infer,
              lowered=_lowered_norm("group_norm", grad=True))))
