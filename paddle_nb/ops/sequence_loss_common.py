"""What the per-sequence losses warpctc (ops/ctc_loss.py) and warprnnt (ops/rnnt_loss.py)
share: the build-time checks of their padded sequences (dtypes, ranks, one row per
sequence, lengths, the blank class), the same checks at run time on the host values, the
run of a recursion kernel (one CUDA thread per sequence on the device, numba's batch loop
on the CPU), and the gradient op's scaling of each sequence's d loss / d scores by its
loss@GRAD.
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.grad_maker import Grad
from ..kernels import check
from ..kernels import ctc as ctc_kernels
from ..kernels.cuda import device
from ..kernels.lowered import Call
from . import arrays

FLOATS = ("float32", "float64")       # Paddle 2.6.2 registers warpctc and warprnnt for these
INTS = ("int32", "int64")


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
        return device.to_device(np.ascontiguousarray(array))
    return array


def work(shape, like):
    """A float64 work array where ``like`` lives."""
    if arrays.on_device(like):
        return device.empty(tuple(shape), np.float64)
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
        out = device.empty(tuple(grad.shape), grad.dtype)
        device.launch(ctc_kernels.scale_by_sequence_kernel, int(grad.size),
                      device.flat(grad), flat_dloss, lengths, bool(norm_by_length), batch,
                      inner, device.flat(out))
        return out
    out = np.empty(grad.shape, grad.dtype)
    ctc_kernels.scale_by_sequence(np.ascontiguousarray(grad).reshape(-1), flat_dloss,
                                  lengths, bool(norm_by_length), batch, inner,
                                  out.reshape(-1))
    return out


def require_lengths(ctx, slots) -> None:
    """Each of ``slots`` holds one int length per sequence ([B])."""
    for slot in slots:
        require_types(ctx, slot, INTS, "int lengths")
        require_rank(ctx, slot, 1, "[B]")


def require_inputs(ctx, scores: str, what: str, rank: int, layout: str, label: str,
                   label_layout: str, lengths: tuple) -> list:
    """``scores`` float32 or float64 ``what`` of ``layout``, ``label`` int class indices
    [B, max_L], each of ``lengths`` int lengths [B]; returns scores' shape."""
    require_types(ctx, scores, FLOATS, f"float32 or float64 {what}")
    require_types(ctx, label, INTS, "int class indices")
    require_lengths(ctx, lengths)
    shape = require_rank(ctx, scores, rank, layout)
    require_rank(ctx, label, 2, label_layout)
    return shape


def require_blank(ctx, slot: str, classes: int, what: str) -> None:
    """The ``blank`` attribute names one of ``slot``'s ``classes`` (when that is known)."""
    blank = ctx.attr("blank")
    if blank < 0 or (classes >= 0 and blank >= classes):
        ctx.fail(f"blank must be one of the {what}", slot=slot,
                 expected=f"0 <= blank < {classes}", given=f"blank={blank}")


def host_blank(op: str, ctx, label, label_slot: str, label_layout: str, batch: int,
               classes: int) -> int:
    """At run time: ``label`` has one row per sequence, and the ``blank`` attribute is one
    of the ``classes``; returns blank."""
    if label.ndim != 2 or int(label.shape[0]) != batch:
        raise ValueError(f"{op}: slot {label_slot}: expected [{batch}, {label_layout}], "
                         f"given {list(label.shape)}")
    blank = int(ctx.attr("blank"))
    if not 0 <= blank < classes:
        raise ValueError(f"{op}: attribute blank: expected 0 <= blank < {classes}, given "
                         f"{blank}")
    return blank


def run_per_sequence(cpu_kernel, cuda_kernel, scores, label, steps: np.ndarray,
                     lengths: np.ndarray, middle: tuple, grad_shape: tuple):
    """(grad, loss) of a recursion kernel called as ``kernel(scores, label, steps, lengths,
    *middle, grad, loss)``: one CUDA thread per sequence where ``scores`` is on the device
    (``steps``/``lengths``, host arrays, copied there), numba's batch loop on the CPU.
    grad has ``grad_shape``, loss one value per sequence, both in ``scores``' dtype."""
    batch = int(steps.size)
    if arrays.on_device(scores):
        steps_here, lengths_here = on_place(scores, steps), on_place(scores, lengths)
        grad = device.empty(tuple(grad_shape), scores.dtype)
        loss = device.empty((batch,), scores.dtype)
        device.launch(cuda_kernel, batch, scores, label, steps_here, lengths_here, *middle,
                      grad, loss)
        return grad, loss
    grad = np.empty(tuple(grad_shape), scores.dtype)
    loss = np.empty((batch,), scores.dtype)
    cpu_kernel(np.ascontiguousarray(scores), np.ascontiguousarray(label), steps, lengths,
               *middle, grad, loss)
    return grad, loss


def stored_gradient(scores: str, steps: str, stored: str, loss: str, kernel, infer,
                    lowered=None) -> Grad:
    """The gradient op of a loss whose forward stored d loss / d scores in ``stored``:
    ``kernel`` (both places) scales it by each sequence's loss@GRAD; ``lowered``: its form
    in a compiled block (lowered_stored_gradient)."""
    return Grad(reads=[scores, steps, stored], grads_of=[loss], writes=[scores],
                kernel=kernel, cuda_kernel=kernel, infer_shape=infer, lowered=lowered)


# --- in a compiled block (kernels/lowered.py): kernels/cpu/sequence_losses.py --------------
def lowered_operands(info, scores: str, label: str, lengths: tuple) -> bool:
    """float32/float64 scores, integer labels and lengths (what the kernels take)."""
    return info.dtype(scores).name in FLOATS and info.dtype(label).kind in "iu" and \
        all(info.has_input(s) and info.dtype(s).kind in "iu" for s in lengths)


def lowered_stored_gradient(fn, scores: str, stored: str, loss: str, reads=(), attrs=()):
    """The form of a stored_gradient op: ``fn(stored, *reads, dLoss, *attrs' values)`` ->
    dScores, for a dLoss of the stored gradient's dtype (the kernel casts another first)."""
    def lowered(info):
        dtype = info.dtype(stored)
        if dtype.name not in FLOATS or info.dtype(f"{loss}@GRAD") != dtype or \
                any(info.dtype(s).kind not in "iu" for s in reads):
            return None
        return Call(fn, (stored, *reads, f"{loss}@GRAD"), (f"{scores}@GRAD",),
                    tuple(bool(info.attr(a)) for a in attrs))
    return lowered
