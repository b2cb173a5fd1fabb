"""Losses: softmax_with_cross_entropy and cross_entropy (Fluid's slots and attributes).

Labels are class indices (int64, last dim 1) or, with ``soft_label``, distributions of
the logits' shape. The class axis is ``axis`` (default the last); rows are every other
position. Kernels move the class axis last and work on (rows, classes) matrices.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import loss as K
from ..kernels.cpu import reduce as RK


def _rows(a: np.ndarray, axis: int) -> np.ndarray:
    """``a`` with the class axis last, as a (rows, classes) matrix."""
    return np.ascontiguousarray(np.moveaxis(a, axis, -1)).reshape(-1, a.shape[axis])


def _unrows(m: np.ndarray, like_shape, axis: int) -> np.ndarray:
    moved = list(like_shape)
    moved.append(moved.pop(axis))
    return np.moveaxis(m.reshape(moved), -1, axis)


def _loss_shape(shape, axis):
    out = list(shape)
    out[axis] = 1
    return out


def _check_label(ctx, x_slot: str, label_slot: str, axis: int):
    xs, ls = ctx.shape(x_slot), ctx.shape(label_slot)
    if ctx.attr("soft_label"):
        expected = xs
    else:
        expected = _loss_shape(xs, axis)
    if len(ls) != len(xs) or any(a >= 0 and b >= 0 and a != b for a, b in zip(ls, expected)):
        kind = "soft labels of the input's shape" if ctx.attr("soft_label") else \
            "class indices with the class axis of size 1"
        ctx.fail(f"{label_slot} must hold {kind}", slot=label_slot, expected=str(expected),
                 given=ctx.describe_input(label_slot))


def _hard_labels(label: np.ndarray, axis: int) -> np.ndarray:
    return np.ascontiguousarray(np.moveaxis(label, axis, -1)).reshape(-1).astype(np.int64)


# --- softmax_with_cross_entropy -------------------------------------------------------------
def _swce_infer(ctx):
    xs = ctx.shape("Logits")
    axis = ctx.attr("axis") % len(xs)
    _check_label(ctx, "Logits", "Label", axis)
    ctx.set_output("Softmax", xs, ctx.dtype("Logits"))
    ctx.set_output("Loss", _loss_shape(xs, axis), ctx.dtype("Logits"))


def _swce(ctx):
    logits = ctx.input("Logits")
    axis = ctx.attr("axis") % logits.ndim
    rows = _rows(logits, axis)
    prob = rows if not ctx.attr("use_softmax") else RK.row_softmax(rows)
    label = ctx.input("Label")
    if ctx.attr("soft_label"):
        loss = -(_rows(label, axis) * np.log(prob)).sum(axis=1).astype(logits.dtype)
    else:
        loss = K.hard_label_loss(prob, _hard_labels(label, axis), ctx.attr("ignore_index"))
    ctx.set_output("Softmax", _unrows(prob, logits.shape, axis))
    ctx.set_output("Loss", _unrows(loss, _loss_shape(logits.shape, axis), axis))


def _swce_grad(ctx):
    softmax, dloss = ctx.input("Softmax"), ctx.input("Loss@GRAD")
    axis = ctx.attr("axis") % softmax.ndim
    prob = _rows(softmax, axis)
    d = np.ascontiguousarray(np.moveaxis(dloss, axis, -1)).reshape(-1).astype(prob.dtype)
    if ctx.attr("soft_label"):
        grad = (prob - _rows(ctx.input("Label"), axis)) * d[:, None]
    else:
        grad = K.softmax_xent_grad(prob, _hard_labels(ctx.input("Label"), axis), d,
                                   ctx.attr("ignore_index"))
    ctx.set_output("Logits@GRAD", _unrows(grad.astype(prob.dtype), softmax.shape, axis))


_CE_ATTRS = [Attr("soft_label", A.BOOLEAN, False, "Label is a distribution, not indices"),
             Attr("ignore_index", A.INT, -100, "rows with this label contribute 0")]

register(OpDef(
    "softmax_with_cross_entropy",
    [Slot("Logits", "unnormalised scores"), Slot("Label", "class indices or distributions")],
    [Slot("Softmax", "softmax(Logits) along axis", intermediate=True),
     Slot("Loss", "cross entropy per row")],
    _CE_ATTRS + [Attr("numeric_stable_mode", A.BOOLEAN, True, "subtract the max first"),
                 Attr("axis", A.INT, -1, "the class axis"),
                 Attr("use_softmax", A.BOOLEAN, True, "False: Logits are already "
                      "probabilities")],
    comment="Loss = -log(softmax(Logits)[Label]) per row (fused for stability).",
    infer_shape=_swce_infer, kernels={"cpu": _swce},
    grad=Grad(reads=["Label", "Softmax"], grads_of=["Loss"], writes=["Logits"],
              kernel=_swce_grad)))


# --- cross_entropy (on probabilities) -------------------------------------------------------
def _ce_infer(ctx):
    xs = ctx.shape("X")
    _check_label(ctx, "X", "Label", len(xs) - 1)
    ctx.set_output("Y", _loss_shape(xs, len(xs) - 1), ctx.dtype("X"))


def _ce(ctx):
    x = ctx.input("X")
    prob = _rows(x, x.ndim - 1)
    if ctx.attr("soft_label"):
        loss = -(_rows(ctx.input("Label"), x.ndim - 1) * np.log(prob)).sum(axis=1)
    else:
        loss = K.hard_label_loss(prob, _hard_labels(ctx.input("Label"), x.ndim - 1),
                                 ctx.attr("ignore_index"))
    ctx.set_output("Y", loss.astype(x.dtype).reshape(_loss_shape(x.shape, x.ndim - 1)))


def _ce_grad(ctx):
    x, dy = ctx.input("X"), ctx.input("Y@GRAD")
    prob = _rows(x, x.ndim - 1)
    d = dy.reshape(-1).astype(prob.dtype)
    if ctx.attr("soft_label"):
        grad = -_rows(ctx.input("Label"), x.ndim - 1) / prob * d[:, None]
    else:
        grad = K.xent_grad(prob, _hard_labels(ctx.input("Label"), x.ndim - 1), d,
                           ctx.attr("ignore_index"))
    ctx.set_output("X@GRAD", grad.astype(x.dtype).reshape(x.shape))


register(OpDef(
    "cross_entropy", [Slot("X", "probabilities (rows sum to 1)"),
                      Slot("Label", "class indices or distributions")],
    [Slot("Y", "cross entropy per row")], _CE_ATTRS,
    comment="Y = -log(X[Label]) per row (X holds probabilities).",
    infer_shape=_ce_infer, kernels={"cpu": _ce},
    grad=Grad(reads=["X", "Label"], grads_of=["Y"], writes=["X"], kernel=_ce_grad)))
