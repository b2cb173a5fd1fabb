"""warprnnt: the RNN-T (transducer) loss of padded sequences, and its gradient (Fluid's
slots and attributes, as ``F.rnnt_loss`` and ``nn.RNNTLoss`` save them in Paddle 2.6.2,
which runs warp-transducer).

input [B, max_T, max_U + 1, V] holds, for each step t and number of symbols emitted u,
the log probabilities of the V outputs (blank among them). Paddle 2.6.2's CPU kernel uses
them as they are (it applies no log-softmax: normalize them first, as F.log_softmax
does, for a true probability), and so does this op. label [B, max_U] holds each
sequence's symbols; input_lengths / label_lengths [B] how many steps and symbols are
real. loss[b] = -log P(label[b] | input[b]), summed over every path through the
(T, U + 1) lattice that ends with a blank at (T - 1, U).

The forward also writes warprnntgrad (d loss[b] / d input, zero off the lattice), which
the gradient op scales by loss@GRAD[b]. With ``fastemit_lambda`` > 0 (F.rnnt_loss's
default is 0.001) the symbol transitions' part of that gradient is scaled by
1 + lambda (FastEmit, which favours emitting early): it is then not the loss's exact
gradient, by design; the loss value is unchanged.

The recursions are kernels/rnnt.py: numba ``njit`` on the CPU, one ``cuda.jit`` thread
per sequence on the device. Labels and lengths are checked first, with
sequence_loss_common.py's helpers. In a compiled block both ops are
kernels/cpu/sequence_losses.py's loops (the same checks, then the kernel's batch loop).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import rnnt as rnnt_kernels
from ..kernels.cpu import sequence_losses as KSL
from ..kernels.lowered import Call
from .sequence_loss_common import (FLOATS, check_labels, host_blank, host_lengths, on_place,
                                   lowered_operands, lowered_stored_gradient, require_batch,
                                   require_blank, require_inputs, require_rank, require_types,
                                   run_per_sequence, scale_by_sequence, stored_gradient, work)


def _fastemit_ok(value) -> str | None:
    if isinstance(value, float) and not (value >= 0 and math.isfinite(value)):
        return f"fastemit_lambda={value}; expected a finite number >= 0"
    return None


def _warprnnt_infer(ctx):
    xs = require_inputs(ctx, "input", "log probabilities", 4, "[B, max_T, max_U + 1, V]",
                        "label", "[B, max_U]", ("input_lengths", "label_lengths"))
    batch = xs[0]
    for slot in ("label", "input_lengths", "label_lengths"):
        require_batch(ctx, slot, 0, batch, "one row per sequence")
    require_blank(ctx, "input", xs[3], "V outputs")
    ctx.set_output("loss", [batch], ctx.dtype("input"))
    ctx.set_output("warprnntgrad", list(xs), ctx.dtype("input"))


def _warprnnt(ctx):
    acts, label = ctx.input("input"), ctx.input("label")
    batch, max_t, max_u1, classes = (int(d) for d in acts.shape)
    blank = host_blank("warprnnt", ctx, label, "label", "max_U", batch, classes)
    steps = host_lengths("warprnnt", ctx.input("input_lengths"), "input_lengths", batch, 1,
                         max_t, "steps of input, at least 1")
    most = min(int(label.shape[1]), max_u1 - 1)
    lengths = host_lengths("warprnnt", ctx.input("label_lengths"), "label_lengths", batch,
                           0, most, "symbols of label, below input's dim 2")
    check_labels("warprnnt", label, lengths, classes, None)
    alpha = work((batch, max_t, max_u1), acts)
    beta = work((batch, max_t, max_u1), acts)
    fastemit = float(ctx.attr("fastemit_lambda"))
    grad, loss = run_per_sequence(rnnt_kernels.rnnt_batch, rnnt_kernels.rnnt_kernel, acts,
                                  label, steps, lengths, (blank, fastemit, alpha, beta),
                                  acts.shape)
    ctx.set_output("loss", loss)
    ctx.set_output("warprnntgrad", grad)


def _warprnnt_grad_infer(ctx):
    require_types(ctx, "warprnntgrad", FLOATS, "float32 or float64 values")
    require_rank(ctx, "warprnntgrad", 4, "[B, max_T, max_U + 1, V]")
    if ctx.has_value("loss@GRAD"):
        ctx.require_gradient_fits("loss", want=[ctx.shape("warprnntgrad")[0]])
    ctx.set_output("input@GRAD", ctx.shape("warprnntgrad"), ctx.dtype("warprnntgrad"))


def _warprnnt_grad(ctx):
    grad = ctx.input("warprnntgrad")
    ones = on_place(grad, np.ones(int(grad.shape[0]), np.float64))
    ctx.set_output("input@GRAD", scale_by_sequence(grad, ctx.input("loss@GRAD"), ones,
                                                   False, 0))


def _lowered_warprnnt(info):
    """kernels/cpu/sequence_losses.rnnt_loss: the checks, then the kernel's batch loop."""
    if not lowered_operands(info, "input", "label", ("input_lengths", "label_lengths")):
        return None
    return Call(KSL.rnnt_loss, ("input", "label", "input_lengths", "label_lengths"),
                ("loss", "warprnntgrad"),
                (int(info.attr("blank")), float(info.attr("fastemit_lambda"))))


register(OpDef(
    "warprnnt",
    [Slot("input", "log probabilities [B, max_T, max_U + 1, V] (used as given)"),
     Slot("label", "each sequence's symbols [B, max_U]"),
     Slot("input_lengths", "the real steps of each sequence [B]"),
     Slot("label_lengths", "the real symbols of each label [B]")],
    [Slot("loss", "-log P(label | input) of each sequence [B]"),
     Slot("warprnntgrad", "d loss[b] / d input, for the gradient op", intermediate=True)],
    [Attr("blank", A.INT, 0, "the blank output"),
     Attr("fastemit_lambda", A.FLOAT, 0.001, "FastEmit: the symbol transitions' gradient "
          "is scaled by 1 + lambda", check=_fastemit_ok)],
    comment="loss[b] = -log sum over the RNN-T lattice's paths for label[b] of "
            "exp(sum of input along the path).",
    infer_shape=_warprnnt_infer, kernels={"cpu": _warprnnt, "cuda": _warprnnt},
    lowered=_lowered_warprnnt,
    grad=stored_gradient("input", "input_lengths", "warprnntgrad", "loss", _warprnnt_grad,
                         _warprnnt_grad_infer,
                         lowered_stored_gradient(KSL.rnnt_loss_grad, "input", "warprnntgrad",
                                                 "loss"))))
