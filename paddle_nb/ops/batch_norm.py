"""batch_norm and its gradient (Fluid's slots and attributes, as Paddle 2.6.2 saves them),
and the normalization the norm family shares (instance_norm, group_norm: group_norm.py).

Y = (X - mean) / sqrt(var + epsilon) * Scale + Bias per channel. In training the mean and
the (biased) variance are the batch's, over every axis but the channel's; the running
statistics move towards them, MeanOut = momentum * Mean + (1 - momentum) * batch mean
(VarianceOut likewise, with the biased variance, as Paddle does); SavedMean is the batch
mean and SavedVariance 1 / sqrt(var + epsilon), which the gradient reads. In test mode
(``is_test`` without ``trainable_statistics``) or with ``use_global_stats`` X is
normalized with Mean and Variance, which stay as they were.

In Paddle's programs MeanOut is the variable Mean and VarianceOut is Variance: the op
updates them in place in the scope. Here it stores new arrays in them, so an array a
user kept (a fetched or fed value) never changes behind them, and a failed run is undone.

The heavy part is kernels/{cpu,cuda}/norm.py over a 4-D view (P, G, K, S) of X (its
docstring); the per-channel vectors (a few values: running statistics, 1/sqrt) are numpy
on the host, where a device value costs one small copy.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.framework_pb2 import VarType
from ..core.grad_maker import Grad
from ..core.infer_shape import numel
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import norm as CPU_NORM
from ..kernels.lowered import Call
from . import arrays
from ..backends import CPU, CUDA
from .common import number_check

LAYOUTS = ("NCHW", "NHWC", "AnyLayout")     # AnyLayout: NCHW, as Paddle reads it
MAX_EPSILON = 1e-3                           # Paddle's own check on batch_norm's epsilon


def layout_check(value):
    if value not in LAYOUTS:
        return f"expected one of {', '.join(LAYOUTS)}"
    return None


# compared in float32, as Paddle does: 1e-3 stored as a FLOAT attribute passes
epsilon_check = number_check(lambda value: 0.0 <= value <= float(np.float32(MAX_EPSILON)),
                             f"expected 0 <= epsilon <= {MAX_EPSILON}, as Paddle checks")


# --- what the norm family shares ----------------------------------------------------------
def channels_last(ctx) -> bool:
    return ctx.attr("data_layout") == "NHWC"


def require_float(ctx, slot: str) -> None:
    """float32 or float64 elements (the kernels' loops; float16 has none here)."""
    for i, name in enumerate(ctx.input_names(slot)):
        code = ctx.dtype(slot, i)
        if code not in (VarType.FP32, VarType.FP64):
            ctx.fail(f"{ctx.op_def.type} computes in float32 or float64", slot=slot,
                     expected="float32 or float64 elements",
                     given=f"{name}: {dtypes.name(code)}")


def require_input(ctx, rank_low=2, rank_high=5) -> list[int]:
    """X is a float32/64 tensor of rank 2..5 with elements; its shape."""
    require_float(ctx, "X")
    xs = ctx.shape("X")
    if not rank_low <= len(xs) <= rank_high:
        ctx.fail(f"X must have rank {rank_low} to {rank_high}", slot="X",
                 expected=f"rank {rank_low}..{rank_high} ([N, C, ...])", given=f"{xs}")
    if 0 in xs:
        ctx.fail("X has no elements to normalize", slot="X",
                 expected="every dimension > 0", given=f"{xs}")
    return xs


def require_vector(ctx, slot: str, size: int, what: str) -> None:
    """An optional per-channel input is a float vector of ``size`` (-1: unknown)."""
    if not ctx.has_input(slot):
        return
    ctx.require_dtype(slot, "float")
    shape = ctx.shape(slot)
    if len(shape) != 1 or (size >= 0 and shape[0] >= 0 and shape[0] != size):
        ctx.fail(f"{slot} must hold one value per {what}", slot=slot,
                 expected=f"[{size}] ({what}s of X)", given=f"{shape}")


def inv_std(var, epsilon: float) -> np.ndarray:
    """1 / sqrt(var + epsilon) in float64 (host numpy; a negative variance gives NaN)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1.0 / np.sqrt(np.asarray(var, np.float64) + epsilon)


def affine(ctx, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """Scale and Bias on the host in float64 (ones and zeros where not given)."""
    scale = arrays.host(ctx.input("Scale")).astype(np.float64) if ctx.has_input("Scale") \
        else np.ones(channels)
    bias = arrays.host(ctx.input("Bias")).astype(np.float64) if ctx.has_input("Bias") \
        else np.zeros(channels)
    return scale.reshape(-1), bias.reshape(-1)


def to_place(ctx, array):
    return arrays.to_place(ctx.place, np.ascontiguousarray(array))


def normalize(place, ctx, x4, mean, inv, scale2, bias2, shape):
    """Y of ``shape`` (X's; x4 is its view) from float64 host vectors: mean, inv [G],
    scale2, bias2 [G, K]. On the CPU into the context's array (the kernel writes its
    view), which the fast path may hand out again on the next run."""
    vectors = [to_place(ctx, v) for v in (mean, inv, scale2, bias2)]
    if place.name != "cpu":
        return place.normalize(x4, *vectors).reshape(shape)
    y = ctx.out("Y", shape, x4.dtype)
    place.normalize(x4, *vectors, y.reshape(x4.shape))
    return y


def normalize_grad(place, ctx, x4, dy4, mean, inv, scale2, batch_stats, shape):
    """(dX of ``shape``, dScale2 and dBias2 on the host, float64 [G, K])."""
    vectors = [to_place(ctx, v) for v in (mean, inv, scale2)]
    if place.name != "cpu":
        dx, dscale, dbias = place.normalize_grad(x4, dy4, *vectors, bool(batch_stats))
        return dx.reshape(shape), arrays.host(dscale), arrays.host(dbias)
    dx = ctx.out("X@GRAD", shape, x4.dtype)
    _, dscale, dbias = place.normalize_grad(x4, dy4, *vectors, bool(batch_stats),
                                            dx.reshape(x4.shape))
    return dx, dscale, dbias


def contiguous(place, x):
    return np.ascontiguousarray(x) if place.name == "cpu" else x


def set_affine_grads(ctx, dscale, dbias) -> None:
    """Scale@GRAD and Bias@GRAD (each [C], in its input's dtype) where asked for."""
    for slot, value in (("Scale", dscale), ("Bias", dbias)):
        if ctx.has_output(slot + "@GRAD"):
            dtype = ctx.input(slot).dtype if ctx.has_input(slot) else ctx.input("X").dtype
            ctx.set_output(slot + "@GRAD", to_place(ctx, value.astype(dtype)))


# --- batch_norm ---------------------------------------------------------------------------
def _view(x, nhwc: bool) -> tuple[int, tuple]:
    """(C, the (P, G, K, S) view's shape) of X in its layout."""
    shape = tuple(int(d) for d in x.shape)
    if nhwc and len(shape) > 2:
        c = shape[-1]
        return c, (numel(shape[:-1]), c, 1, 1)
    c = shape[1]
    return c, (shape[0], c, 1, numel(shape[2:]))


def _global_stats(ctx) -> bool:
    """Normalize with the given Mean and Variance (Paddle's test_mode or use_global_stats)."""
    test_mode = ctx.attr("is_test") and not ctx.attr("trainable_statistics")
    return bool(test_mode or ctx.attr("use_global_stats"))


def _batch_norm_infer(ctx):
    xs = require_input(ctx)
    c = xs[-1] if channels_last(ctx) and len(xs) > 2 else xs[1]
    for slot in ("Scale", "Bias", "Mean", "Variance"):
        require_vector(ctx, slot, c, "channel")
    ctx.set_output("Y", xs, ctx.dtype("X"))
    for out, src in (("MeanOut", "Mean"), ("VarianceOut", "Variance"), ("SavedMean", "Mean"),
                     ("SavedVariance", "Variance")):
        if ctx.has_output(out):
            ctx.set_output(out, [c], ctx.dtype(src))


def _batch_norm(place):
    def run(ctx):
        x = contiguous(place, ctx.input("X"))
        c, view = _view(x, channels_last(ctx))
        x4 = x.reshape(view)
        eps = float(ctx.attr("epsilon"))
        scale, bias = affine(ctx, c)
        mean_in, var_in = ctx.input("Mean"), ctx.input("Variance")
        running_mean = arrays.host(mean_in).astype(np.float64).reshape(-1)
        running_var = arrays.host(var_in).astype(np.float64).reshape(-1)
        if _global_stats(ctx):
            mean, var = running_mean, running_var
            new_mean, new_var = running_mean, running_var           # unchanged
            saved_mean, saved_inv = np.zeros(c), np.zeros(c)      # not computed (Paddle: empty)
        else:
            momentum = float(ctx.attr("momentum"))      # MomentumTensor's, where given
            mean, var = (arrays.host(v) for v in place.norm_moments(x4))
            with np.errstate(all="ignore"):
                new_mean = momentum * running_mean + (1.0 - momentum) * mean
                new_var = momentum * running_var + (1.0 - momentum) * var
            saved_mean, saved_inv = mean, inv_std(var, eps)
        inv = inv_std(var, eps)
        y = normalize(place, ctx, x4, mean, inv, scale.reshape(c, 1), bias.reshape(c, 1),
                      tuple(int(d) for d in x.shape))
        ctx.set_output("Y", y)
        # new arrays, never the inputs': MeanOut is Mean's variable in Paddle's programs
        for slot, value, like in (("MeanOut", new_mean, mean_in), ("VarianceOut", new_var, var_in),
                                  ("SavedMean", saved_mean, mean_in),
                                  ("SavedVariance", saved_inv, var_in)):
            ctx.set_output(slot, to_place(ctx, np.array(value, dtype=like.dtype)))
    return run


def _batch_norm_grad(place):
    def run(ctx):
        x = contiguous(place, ctx.input("X"))
        dy = contiguous(place, ctx.input("Y@GRAD"))
        c, view = _view(x, channels_last(ctx))
        scale, _ = affine(ctx, c)
        if _global_stats(ctx):
            mean = arrays.host(ctx.input("MeanOut")).astype(np.float64).reshape(-1)
            inv = inv_std(arrays.host(ctx.input("VarianceOut")).reshape(-1),
                          float(ctx.attr("epsilon")))
        else:
            mean = arrays.host(ctx.input("SavedMean")).astype(np.float64).reshape(-1)
            inv = arrays.host(ctx.input("SavedVariance")).astype(np.float64).reshape(-1)
        if mean.size != c or inv.size != c:
            raise ValueError(f"batch_norm_grad: the saved statistics hold {mean.size} and "
                             f"{inv.size} values for the {c} channels of X")
        dx, dscale, dbias = normalize_grad(place, ctx, x.reshape(view), dy.reshape(view),
                                           mean, inv, scale.reshape(c, 1),
                                           not _global_stats(ctx), tuple(int(d) for d in x.shape))
        ctx.set_output("X@GRAD", dx)
        set_affine_grads(ctx, dscale.reshape(c), dbias.reshape(c))
    return run


def _batch_norm_grad_infer(ctx):
    """Y@GRAD has X's shape; the gradients have their variables' shapes."""
    xs = require_input(ctx)
    require_float(ctx, "Y@GRAD")
    ctx.require_gradient_fits("Y", want=xs)
    c = xs[-1] if channels_last(ctx) and len(xs) > 2 else xs[1]
    for slot in ("Scale", "Bias", "SavedMean", "SavedVariance", "MeanOut", "VarianceOut"):
        require_vector(ctx, slot, c, "channel")
    ctx.set_output("X@GRAD", xs, ctx.dtype("X"))
    for slot in ("Scale", "Bias"):
        if ctx.has_output(slot + "@GRAD") and ctx.has_input(slot):
            ctx.set_output(slot + "@GRAD", [c], ctx.dtype(slot))


# --- inside a compiled block (kernels/lowered.py): kernels/cpu/norm.batch_normalized(_grad),
# the CPU kernel's serial loops; a Scale or Bias not given is passed as X, flagged
FLOATS = (np.float32, np.float64)


def _lowered_batch_norm(grad: bool):
    def lowered(info):
        stats = ("MeanOut", "VarianceOut") if grad and _global_stats(info) else \
            ("SavedMean", "SavedVariance") if grad else ("Mean", "Variance")
        affine_slots = [s for s in ("Scale", "Bias") if info.has_input(s)]
        if info.dtype("X") not in FLOATS or not all(
                info.has_input(s) and info.dtype(s) in FLOATS for s in stats) or \
                any(info.dtype(s) not in FLOATS for s in affine_slots) or \
                (grad and info.dtype("Y@GRAD") != info.dtype("X")):
            return None
        xs, last = info.shape("X"), channels_last(info)
        if math.prod(xs) >= CPU_NORM.MIN_PARALLEL_NORM and xs[-1 if last else 1] > 1:
            # compiled code runs the serial loops (it cannot ask whether the cores are free)
            return "large: the interpreter splits it across the cores"
        scale, bias = (slot if info.has_input(slot) else "X" for slot in ("Scale", "Bias"))
        eps = float(info.attr("epsilon"))
        if grad:
            return Call(CPU_NORM.batch_normalized_grad, ("X", scale, bias, *stats, "Y@GRAD"),
                        ("X@GRAD", "Scale@GRAD", "Bias@GRAD"),
                        (scale != "X", _global_stats(info), eps, last))
        return Call(CPU_NORM.batch_normalized, ("X", scale, bias, *stats),
                    ("Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance"),
                    (scale != "X", bias != "X", _global_stats(info),
                     float(info.attr("momentum")), eps, last))
    return lowered


register(OpDef(
    "batch_norm",
    [Slot("X", "the input, [N, C, ...] (NCHW) or [N, ..., C] (NHWC)"),
     Slot("Scale", "the per-channel scale (gamma)", dispensable=True),
     Slot("Bias", "the per-channel bias (beta)", dispensable=True),
     Slot("Mean", "the running mean"),
     Slot("Variance", "the running variance"),
     Slot("MomentumTensor", "momentum as a 1-element tensor (wins over the attribute)",
          dispensable=True)],
    [Slot("Y", "the normalized X"),
     Slot("MeanOut", "the updated running mean (the variable Mean)"),
     Slot("VarianceOut", "the updated running variance (the variable Variance)"),
     Slot("SavedMean", "the batch mean, for the gradient", intermediate=True),
     Slot("SavedVariance", "the batch's 1 / sqrt(var + epsilon), for the gradient",
          intermediate=True),
     Slot("ReserveSpace", "cuDNN's workspace (unused here)", dispensable=True)],
    [Attr("is_test", A.BOOLEAN, False, "inference: normalize with Mean and Variance"),
     Attr("momentum", A.FLOAT, 0.9, "running = momentum * running + (1 - momentum) * batch"),
     Attr("epsilon", A.FLOAT, 1e-5, "added to the variance", check=epsilon_check),
     Attr("data_layout", A.STRING, "NCHW", "NCHW or NHWC: where the channel axis is",
          check=layout_check),
     Attr("use_global_stats", A.BOOLEAN, False, "normalize with Mean and Variance, also "
          "when training"),
     Attr("trainable_statistics", A.BOOLEAN, False, "batch statistics even when is_test")],
    comment="Y = (X - mean) / sqrt(var + epsilon) * Scale + Bias per channel; the batch's "
            "statistics when training (and the running ones updated), Mean and Variance "
            "in test mode.",
    infer_shape=_batch_norm_infer,
    kernels={"cpu": _batch_norm(CPU), "cuda": _batch_norm(CUDA)},
    lowered=_lowered_batch_norm(False),
    grad=Grad(reads=["X", "Scale", "Bias", "SavedMean", "SavedVariance", "MeanOut",
                     "VarianceOut", "ReserveSpace"],
              grads_of=["Y"], writes=["X", "Scale", "Bias"],
              kernel=_batch_norm_grad(CPU), cuda_kernel=_batch_norm_grad(CUDA),
              infer_shape=_batch_norm_grad_infer, lowered=_lowered_batch_norm(True)),
    reads_attr_tensors=("MomentumTensor",)))
