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
device), with errors naming the slot, what was expected and what was given.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels import ctc as ctc_kernels
from . import arrays

FLOATS = ("float32", "float64")       # Paddle 2.6.2 registers warpctc for these
INTS = ("int32", "int64")


# --- shared by warpctc and warprnnt (ops/rnnt_loss.py) --------------------------------------
def require_types(ctx, slot: str, allowed: tuple, what: str) -> None:
    if dtypes.name(ctx.dtype(slot)) not in allowed:
        ctx.fail(f"{slot} needs {what}", slot=slot, expected=" or ".join(allowed),
                 given=ctx.describe_input(slot))


def require_rank(ctx, slot: str, rank: int, layout: str) -> list:
    shape = ctx.shape(slot)
    if len(shape) != rank:
        ctx.fail(f"{slot} is {layout}", slot=slot, expected=f"a rank-{rank} tensor",
                 given=ctx.describe_input(slot))
    return shape


def require_batch(ctx, slot: str, dim: int, batch: int, layout: str) -> None:
    """``slot``'s dim ``dim`` is the batch (when both are known at build time)."""
    size = ctx.shape(slot)[dim]
    if batch >= 0 and size >= 0 and size != batch:
        ctx.fail(f"{slot} needs one entry per sequence ({layout})", slot=slot,
                 expected=f"batch {batch} along dim {dim}", given=ctx.describe_input(slot))


def host_lengths(op: str, value, slot: str, batch: int, low: int, high: int,
                 what: str) -> np.ndarray:
    """The lengths of ``slot`` on the host (int64, one per sequence), each checked to be
    in [low, high]."""
    lengths = arrays.host(value).reshape(-1).astype(np.int64)
    if lengths.size != batch:
        raise ValueError(f"{op}: slot {slot}: expected {batch} lengths (one per sequence), "
                         f"given {lengths.size}")
    bad = np.flatnonzero((lengths < low) | (lengths > high))
    if bad.size:
        raise ValueError(f"{op}: slot {slot}: expected {low} <= {slot}[b] <= {high} "
                         f"({what}), given {slot}[{bad[0]}] = {lengths[bad[0]]}")
    return lengths


def check_labels(op: str, label, lengths: np.ndarray, classes: int, blank: int | None):
    """Every real symbol (``label[b, :lengths[b]]``) a class in [0, classes), and not
    ``blank`` when that is given; padding is not read, so not checked."""
    host = arrays.host(label)
    real = np.arange(host.shape[1])[None, :] < lengths[:, None]
    bad = real & ((host < 0) | (host >= classes))
    if blank is not None:
        bad |= real & (host == blank)
    if bad.any():
        b, i = (int(p[0]) for p in np.nonzero(bad))
        allowed = f"0 <= Label < {classes}" + (f", != blank {blank}" if blank is not None
                                               else "")
        raise check.IndexOutOfRange(
            f"{op}: slot {_label_slot(op)}: expected class indices ({allowed}), given "
            f"{_label_slot(op)}[{b}, {i}] = {int(host[b, i])}",
            slot=_label_slot(op), value=int(host[b, i]), position=(b, i), low=0,
            high=classes)


def _label_slot(op: str) -> str:
    return "Label" if op == "warpctc" else "label"


def on_place(like, array: np.ndarray):
    """``array`` where ``like`` lives (a device copy for a device ``like``)."""
    if arrays.on_device(like):
        from numba import cuda  # noqa: PLC0415 (numba.cuda on use)
        return cuda.to_device(np.ascontiguousarray(array))
    return array


def work(shape, like):
    """A float64 work array where ``like`` lives."""
    if arrays.on_device(like):
        from ..kernels.cuda.device import empty  # noqa: PLC0415
        return empty(tuple(shape), np.float64)
    return np.empty(tuple(shape), np.float64)


def scale_by_sequence(grad, dloss, lengths, norm_by_length: bool, batch_axis: int):
    """grad * dloss[b] (/ lengths[b]) for each sequence b along ``batch_axis`` of grad."""
    batch = int(grad.shape[batch_axis])
    inner = int(np.prod(grad.shape[batch_axis + 1:], dtype=np.int64))
    flat_dloss = arrays.astype(dloss, grad.dtype).reshape(-1)
    if int(flat_dloss.size) != batch:
        raise ValueError(f"expected one loss gradient per sequence ({batch}), given "
                         f"{int(flat_dloss.size)}")
    if arrays.on_device(grad):
        from ..kernels.cuda.device import empty, flat, launch_1d  # noqa: PLC0415
        out = empty(tuple(grad.shape), grad.dtype)
        if grad.size:
            blocks, threads = launch_1d(int(grad.size))
            ctc_kernels.scale_by_sequence_kernel[blocks, threads](
                flat(grad), flat_dloss, lengths, bool(norm_by_length), batch, inner,
                flat(out))
        return out
    out = np.empty(grad.shape, grad.dtype)
    ctc_kernels.scale_by_sequence(np.ascontiguousarray(grad).reshape(-1), flat_dloss,
                                  lengths, bool(norm_by_length), batch, inner,
                                  out.reshape(-1))
    return out


# --- warpctc ----------------------------------------------------------------------------------
def _warpctc_infer(ctx):
    for slot in ("LogitsLength", "LabelLength"):
        if not ctx.has_input(slot):
            ctx.fail(f"{slot} is needed: only padded sequences are supported (Paddle's "
                     f"LoD form is not)", slot=slot, expected="an int tensor [B]",
                     given="nothing")
    require_types(ctx, "Logits", FLOATS, "float32 or float64 scores")
    require_types(ctx, "Label", INTS, "int class indices")
    for slot in ("LogitsLength", "LabelLength"):
        require_types(ctx, slot, INTS, "int lengths")
        require_rank(ctx, slot, 1, "[B]")
    ls = require_rank(ctx, "Logits", 3, "[max_T, B, classes]")
    require_rank(ctx, "Label", 2, "[B, max_L]")
    batch = ls[1]
    require_batch(ctx, "Label", 0, batch, "[B, max_L]")
    require_batch(ctx, "LogitsLength", 0, batch, "[B]")
    require_batch(ctx, "LabelLength", 0, batch, "[B]")
    blank = ctx.attr("blank")
    if blank < 0 or (ls[2] >= 0 and blank >= ls[2]):
        ctx.fail("blank must be one of the classes", slot="Logits",
                 expected=f"0 <= blank < {ls[2]}", given=f"blank={blank}")
    ctx.set_output("Loss", [batch, 1], ctx.dtype("Logits"))
    ctx.set_output("WarpCTCGrad", list(ls), ctx.dtype("Logits"))


def _warpctc(ctx):
    logits, label = ctx.input("Logits"), ctx.input("Label")
    max_t, batch, classes = (int(d) for d in logits.shape)
    if label.ndim != 2 or int(label.shape[0]) != batch:
        raise ValueError(f"warpctc: slot Label: expected [{batch}, max_L], given "
                         f"{list(label.shape)}")
    blank = int(ctx.attr("blank"))
    if not 0 <= blank < classes:
        raise ValueError(f"warpctc: attribute blank: expected 0 <= blank < {classes}, given "
                         f"{blank}")
    max_l = int(label.shape[1])
    steps = host_lengths("warpctc", ctx.input("LogitsLength"), "LogitsLength", batch, 0,
                         max_t, "steps of Logits")
    lengths = host_lengths("warpctc", ctx.input("LabelLength"), "LabelLength", batch, 0,
                           max_l, "symbols of Label")
    check_labels("warpctc", label, lengths, classes, blank)
    logp = work((batch, max_t, classes), logits)
    alpha = work((batch, max_t, 2 * max_l + 1), logits)
    beta = work((batch, max_t, 2 * max_l + 1), logits)
    steps_here, lengths_here = on_place(logits, steps), on_place(logits, lengths)
    if arrays.on_device(logits):
        from ..kernels.cuda.device import empty, launch_1d  # noqa: PLC0415
        grad, loss = empty((max_t, batch, classes), logits.dtype), empty((batch,),
                                                                       logits.dtype)
        if batch:
            blocks, threads = launch_1d(batch)
            ctc_kernels.ctc_kernel[blocks, threads](logits, label, steps_here, lengths_here,
                                                    blank, logp, alpha, beta, grad, loss)
    else:
        grad = np.empty((max_t, batch, classes), logits.dtype)
        loss = np.empty((batch,), logits.dtype)
        ctc_kernels.ctc_batch(np.ascontiguousarray(logits), np.ascontiguousarray(label),
                              steps, lengths, blank, logp, alpha, beta, grad, loss)
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
    grad=Grad(reads=["Logits", "LogitsLength", "WarpCTCGrad"], grads_of=["Loss"],
              writes=["Logits"], kernel=_warpctc_grad, cuda_kernel=_warpctc_grad,
              infer_shape=_warpctc_grad_infer)))
