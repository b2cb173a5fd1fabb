"""dropout and its gradient (Fluid's slots and attributes, as Paddle 2.6.2 saves them).

Training: each element is dropped (Mask 0, Out 0) with probability p = dropout_prob and
kept (Mask 1) otherwise; a kept element is X ("downgrade_in_infer") or X / (1 - p)
("upscale_in_train", so the expected value is X; p = 1 drops everything). Test mode
(``is_test``): nothing is dropped; Out = X * (1 - p) for downgrade_in_infer (the
expected value of training's Out), X for upscale_in_train; Mask is all ones there (Paddle
leaves it unwritten). Mask is uint8, as Paddle saves it. dX = dOut * Mask times the same
factor (dOut, or dOut * (1 - p), in test mode).

The mask is a counter-based hash of (seed, element index) (kernels/cpu/random.py), the
same function on both places, so one seed gives one mask on the CPU and on CUDA. The seed
is the Seed input's value when given, else the ``seed`` attribute with ``fix_seed``, else a
new one every run (so each step drops other elements).
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.framework_pb2 import VarType
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import random as rk
from ..kernels.cpu.dropout import dropout_trained
from ..kernels.cpu.fill import copied, filled_like
from ..kernels.cuda import random as crk
from ..kernels.lowered import Call, Elementwise
from ..kernels.pointwise import KERNELS
from ..kernels.update import times
from . import arrays
from .batch_norm import require_float
from ..backends import CPU, CUDA
from .common import FLOAT_TYPES, in_unit_interval

IMPLEMENTATIONS = ("downgrade_in_infer", "upscale_in_train")
# the element math (kernels/cpu/dropout.py): the kept elements, and the gradient
dropout_kept, dropout_masked_grad = KERNELS["dropout_kept"], KERNELS["dropout_masked_grad"]


def _implementation_check(value):
    if value not in IMPLEMENTATIONS:
        return f"expected one of {', '.join(IMPLEMENTATIONS)}"
    return None


def _factors(ctx, t) -> tuple:
    """(mul, div) in X's type t: a kept element (and its gradient) is X * mul / div, as
    Paddle computes it: X / (1 - p) (upscale_in_train), X * (1 - p) (downgrade_in_infer at
    test time), with 1 - p rounded to float32 first (Paddle's ``1.0f - dropout_prob``)."""
    keep = t(np.float32(1.0) - np.float32(ctx.attr("dropout_prob")))
    upscale = ctx.attr("dropout_implementation") == "upscale_in_train"
    if ctx.attr("is_test"):
        return (t(1), t(1)) if upscale else (keep, t(1))
    if upscale and keep > 0:
        return t(1), keep
    return t(1), t(1)   # (p = 1: Mask is all zeros, so Out and dX are 0 * X and 0 * dOut)


def _seed(ctx) -> int:
    if ctx.has_input("Seed") or ctx.attr("fix_seed"):   # (ctx.attr: the Seed tensor's value)
        return int(ctx.attr("seed"))
    return rk.fresh_seed()      # a new mask every run (numpy's generator)


def _dropout(place):
    def run(ctx):
        x = ctx.input("X")
        shape = tuple(int(d) for d in x.shape)
        t = x.dtype.type
        if ctx.attr("is_test"):
            mask = arrays.full(shape, 1, np.uint8, like=x)
        elif place.name == "cpu":
            mask = rk.dropout_mask(int(np.prod(shape)), _seed(ctx) & (2**64 - 1),
                                   float(ctx.attr("dropout_prob"))).reshape(shape)
        else:
            mask = crk.dropout_mask(shape, _seed(ctx) & (2**64 - 1),
                                    float(ctx.attr("dropout_prob")))
        ctx.set_output("Out", place.apply(dropout_kept, x, mask, *_factors(ctx, t), out=None,
                                          out_dtype=x.dtype))
        ctx.set_output("Mask", mask)
    return run


def _dropout_grad(place):
    def run(ctx):
        mask, dout = ctx.input("Mask"), ctx.input("Out@GRAD")
        t = dout.dtype.type
        if ctx.attr("is_test"):                 # Mask is not read in test mode (Paddle's)
            mask = arrays.full(tuple(int(d) for d in dout.shape), 1, np.uint8, like=dout)
        ctx.set_output("X@GRAD", place.apply(dropout_masked_grad, dout, mask, *_factors(ctx, t),
                                             out=None, out_dtype=dout.dtype))
    return run


# --- in a compiled block (kernels/lowered.py) ----------------------------------------------------
# Training: kernels/cpu/dropout.dropout_trained draws the mask of the seed _seed gives (a
# fresh seed from numpy's generator, in object mode, at the op's point of the run), and the
# gradient is dropout_masked_grad's loop. Test mode: with the mask all ones, X * mul / div is
# X (upscale_in_train) or X * (1 - p) exactly: a copy, or kernels/update.times. (A Seed
# input is an attribute given by a tensor: the compiler keeps such an op interpreted.)
def _lowered_dropout(grad: bool):
    def lowered(info):
        slot, out = ("Out@GRAD", "X@GRAD") if grad else ("X", "Out")
        dtype = info.dtype(slot)
        if dtype.name not in FLOAT_TYPES:
            return None
        mul, div = _factors(info, dtype.type)
        if not info.attr("is_test"):
            if grad:
                return Elementwise(dropout_masked_grad, ("Out@GRAD", "Mask"), "X@GRAD",
                                   (mul, div))
            fixed = bool(info.attr("fix_seed"))
            seed = np.uint64(int(info.attr("seed")) & (2**64 - 1)) if fixed else np.uint64(0)
            return Call(dropout_trained, ("X",), ("Out", "Mask"),
                        (fixed, seed, float(info.attr("dropout_prob")), mul, div))
        scaled = Call(copied, (slot,), (out,)) if mul == 1 and div == 1 else \
            Call(times, (slot,), (out,), (float(mul),))      # (div is 1 here)
        if grad or not info.has_output("Mask"):
            return scaled
        return scaled, Call(filled_like, ("X",), ("Mask",), (np.uint8(1),))
    return lowered


def _dropout_infer(ctx):
    require_float(ctx, "X")
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))
    if ctx.has_output("Mask"):
        ctx.set_output("Mask", ctx.shape("X"), "uint8")


def _dropout_grad_infer(ctx):
    """Out@GRAD is a float tensor of Mask's shape (the forward Out's)."""
    require_float(ctx, "Out@GRAD")
    if ctx.dtype("Mask") != VarType.UINT8:
        ctx.fail("Mask must be the uint8 mask dropout wrote", slot="Mask",
                 expected="uint8 elements", given=dtypes.name(ctx.dtype("Mask")))
    ctx.require_gradient_fits("Out", want=ctx.shape("Mask"))
    ctx.set_output("X@GRAD", ctx.shape("Mask"), ctx.dtype("Out@GRAD"))


register(OpDef(
    "dropout",
    [Slot("X", "the input"),
     Slot("Seed", "the seed as a 1-element int tensor (wins over the attributes)",
          dispensable=True)],
    [Slot("Out", "X with the dropped elements zeroed (and the kept ones scaled)"),
     Slot("Mask", "uint8: 1 where the element was kept, 0 where dropped",
          intermediate=True)],
    [Attr("dropout_prob", A.FLOAT, 0.5, "the probability of dropping an element",
          check=in_unit_interval("expected 0 <= dropout_prob <= 1")),
     Attr("is_test", A.BOOLEAN, False, "inference: drop nothing"),
     Attr("dropout_implementation", A.STRING, "downgrade_in_infer",
          "downgrade_in_infer (scale by 1 - p at test time) or upscale_in_train (divide "
          "kept elements by 1 - p when training)", check=_implementation_check),
     Attr("fix_seed", A.BOOLEAN, False, "use the seed attribute (the same mask every run)",
          extra=True),
     Attr("seed", A.INT, 0, "the seed used with fix_seed", extra=True)],
    comment="Out = X * Mask (/ (1 - p) for upscale_in_train), each element dropped with "
            "probability dropout_prob when training; X * (1 - p) or X in test mode.",
    infer_shape=_dropout_infer,
    kernels={"cpu": _dropout(CPU), "cuda": _dropout(CUDA)}, lowered=_lowered_dropout(False),
    grad=Grad(reads=["Mask"], grads_of=["Out"], writes=["X"], kernel=_dropout_grad(CPU),
              cuda_kernel=_dropout_grad(CUDA), infer_shape=_dropout_grad_infer,
              lowered=_lowered_dropout(True)),
    reads_attr_tensors=("Seed",)))
