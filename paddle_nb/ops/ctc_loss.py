"""warpctc: the connectionist temporal classification (CTC) loss of padded sequences, and
its gradient (Fluid's slots and attributes, as ``F.ctc_loss`` and ``nn.CTCLoss`` save
them in Paddle 2.6.2, which runs Baidu's warp-ctc).

Logits [max_T, B, C] are unnormalized scores: the op applies the softmax over the C
classes itself. Label [B, max_L] holds each sequence's symbols (class indices, never the
``blank`` class); LogitsLength [B] and LabelLength [B] say how many steps and symbols of
each are real (the rest is padding, never read). Loss[b, 0] = -log P(Label[b] | Logits),
summed over every alignment of the label to the steps (blanks in between, symbols
repeated). Where no alignment fits (the label plus one blank per repeated symbol is longer
than the steps) warp-ctc answers 0 with a zero gradient, and so does this op (the true
value, -log 0, would be inf: Paddle's answer is kept so its programs give its numbers).

The forward also writes WarpCTCGrad, d Loss[b] / d Logits (softmax minus the posterior of
each class, zero on padded steps), which the gradient op scales by Loss@GRAD[b] (and by
1 / LogitsLength[b] under ``norm_by_times``), as Paddle's warpctc_grad does.

The recursions are kernels/ctc.py: numba ``njit`` on the CPU, one ``cuda.jit`` thread per
sequence on the device. Labels and lengths are checked first (one small host copy on the
device), with errors naming the slot, what was expected and what was given. In a compiled
block both ops are kernels/cpu/sequence_losses.py's loops (the same checks, then the
kernels' batch loops).
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import ctc as ctc_kernels
from ..kernels.cpu import sequence_losses as KSL
from ..kernels.lowered import Call
from .sequence_loss_common import (FLOATS, INTS, check_labels, host_blank, host_lengths, on_place,
                                   lowered_operands, lowered_stored_gradient, require_batch,
                                   require_blank, require_inputs, require_rank, require_types,
                                   run_per_sequence, scale_by_sequence, stored_gradient, work)


def _warpctc_infer(ctx):
    for slot in ("LogitsLength", "LabelLength"):
        if not ctx.has_input(slot):
            ctx.fail(f"{slot} is needed: only padded sequences are supported (Paddle's "
                     f"LoD form is not)", slot=slot, expected="an int tensor [B]",
                     given="nothing")
    ls = require_inputs(ctx, "Logits", "scores", 3, "[max_T, B, classes]", "Label",
                        "[B, max_L]", ("LogitsLength", "LabelLength"))
    batch = ls[1]
    require_batch(ctx, "Label", 0, batch, "[B, max_L]")
    require_batch(ctx, "LogitsLength", 0, batch, "[B]")
    require_batch(ctx, "LabelLength", 0, batch, "[B]")
    require_blank(ctx, "Logits", ls[2], "classes")
    ctx.set_output("Loss", [batch, 1], ctx.dtype("Logits"))
    ctx.set_output("WarpCTCGrad", list(ls), ctx.dtype("Logits"))


def _warpctc(ctx):
    logits, label = ctx.input("Logits"), ctx.input("Label")
    max_t, batch, classes = (int(d) for d in logits.shape)
    blank = host_blank("warpctc", ctx, label, "Label", "max_L", batch, classes)
    max_l = int(label.shape[1])
    steps = host_lengths("warpctc", ctx.input("LogitsLength"), "LogitsLength", batch, 0,
                         max_t, "steps of Logits")
    lengths = host_lengths("warpctc", ctx.input("LabelLength"), "LabelLength", batch, 0,
                           max_l, "symbols of Label")
    check_labels("warpctc", label, lengths, classes, blank)
    logp = work((batch, max_t, classes), logits)
    alpha = work((batch, max_t, 2 * max_l + 1), logits)
    beta = work((batch, max_t, 2 * max_l + 1), logits)
    grad, loss = run_per_sequence(ctc_kernels.ctc_batch, ctc_kernels.ctc_kernel, logits,
                                  label, steps, lengths, (blank, logp, alpha, beta),
                                  (max_t, batch, classes))
    ctx.set_output("Loss", loss.reshape((batch, 1)))
    ctx.set_output("WarpCTCGrad", grad)


def _warpctc_grad_infer(ctx):
    require_types(ctx, "WarpCTCGrad", FLOATS, "float32 or float64 values")
    require_rank(ctx, "WarpCTCGrad", 3, "[max_T, B, classes]")
    require_types(ctx, "LogitsLength", INTS, "int lengths")
    if ctx.has_value("Loss@GRAD"):
        ctx.require_gradient_fits("Loss", want=[ctx.shape("WarpCTCGrad")[1], 1])
    ctx.set_output("Logits@GRAD", ctx.shape("WarpCTCGrad"), ctx.dtype("WarpCTCGrad"))


def _warpctc_grad(ctx):
    grad = ctx.input("WarpCTCGrad")
    batch = int(grad.shape[1])
    steps = host_lengths("warpctc_grad", ctx.input("LogitsLength"), "LogitsLength", batch,
                         0, int(grad.shape[0]), "steps of Logits")
    norm = bool(ctx.attr("norm_by_times"))
    # a sequence of no steps has a zero gradient: dividing it by 1 keeps it 0, not NaN
    divisor = np.maximum(steps, 1).astype(np.float64)
    ctx.set_output("Logits@GRAD", scale_by_sequence(grad, ctx.input("Loss@GRAD"),
                                                    on_place(grad, divisor), norm, 1))


def _lowered_warpctc(info):
    """kernels/cpu/sequence_losses.ctc_loss: the checks, then the kernel's batch loop."""
    if not lowered_operands(info, "Logits", "Label", ("LogitsLength", "LabelLength")):
        return None
    return Call(KSL.ctc_loss, ("Logits", "Label", "LogitsLength", "LabelLength"),
                ("WarpCTCGrad", "Loss"), (int(info.attr("blank")),))


register(OpDef(
    "warpctc",
    [Slot("Logits", "unnormalized scores [max_T, B, classes] (softmax applied here)"),
     Slot("Label", "each sequence's symbols [B, max_L] (class indices, not blank)"),
     Slot("LogitsLength", "the real steps of each sequence [B]", dispensable=True),
     Slot("LabelLength", "the real symbols of each label [B]", dispensable=True)],
    [Slot("WarpCTCGrad", "d Loss[b] / d Logits, for the gradient op", intermediate=True),
     Slot("Loss", "-log P(Label | Logits) of each sequence [B, 1]")],
    [Attr("blank", A.INT, 0, "the blank class"),
     Attr("norm_by_times", A.BOOLEAN, False, "the gradient op divides each sequence's "
          "gradient by its number of steps")],
    comment="Loss[b] = -log sum over CTC alignments of Label[b] of prod_t "
            "softmax(Logits[t, b])[path_t].",
    infer_shape=_warpctc_infer, kernels={"cpu": _warpctc, "cuda": _warpctc},
    lowered=_lowered_warpctc,
    grad=stored_gradient("Logits", "LogitsLength", "WarpCTCGrad", "Loss", _warpctc_grad,
                         _warpctc_grad_infer,
                         lowered_stored_gradient(KSL.ctc_loss_grad, "Logits", "WarpCTCGrad",
                                                 "Loss", ("LogitsLength",),
                                                 ("norm_by_times",)))))
