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
from ..kernels import check
from ..kernels.cpu import loss as K
from ..kernels.cpu import reduce as RK
from ..kernels.cuda import copy as CC
from ..kernels.cuda import loss as CL
from ..kernels.cuda import reduce as CR


def _rows(a: np.ndarray, axis: int) -> np.ndarray:
    """``a`` with the class axis last, as a (rows, classes) matrix."""
    rows = a.size // a.shape[axis] if a.shape[axis] else 0      # -1 cannot be inferred at 0
    return np.ascontiguousarray(np.moveaxis(a, axis, -1)).reshape(rows, a.shape[axis])


def _unrows(m: np.ndarray, like_shape, axis: int) -> np.ndarray:
    moved = list(like_shape)
    moved.append(moved.pop(axis))
    return np.moveaxis(m.reshape(moved), -1, axis)


def _loss_shape(shape, axis):
    out = list(shape)
    out[axis] = 1
    return out


def _check_label(ctx, x_slot: str, label_slot: str, axis: int):
    """Float scores; labels are integer class indices (hard) or float distributions of
    the scores' shape (soft): a bool or float "index" would be read as something else."""
    ctx.require_dtype(x_slot, "float")
    ctx.require_dtype(label_slot, "float" if ctx.attr("soft_label") else "int")
    xs, ls = ctx.shape(x_slot), ctx.shape(label_slot)
    if xs[axis] == 0:
        ctx.fail("the class axis has no classes", slot=x_slot, expected="at least one class",
                 given=ctx.describe_input(x_slot))
    if ctx.attr("soft_label"):
        expected = xs
    else:
        expected = _loss_shape(xs, axis)
    if len(ls) != len(xs) or any(a >= 0 and b >= 0 and a != b for a, b in zip(ls, expected)):
        kind = "soft labels of the input's shape" if ctx.attr("soft_label") else \
            "class indices with the class axis of size 1"
        ctx.fail(f"{label_slot} must hold {kind}", slot=label_slot, expected=str(expected),
                 given=ctx.describe_input(label_slot))


def _hard_labels(ctx, label, axis: int, classes: int) -> np.ndarray:
    """The class indices, one per row, each checked to be a class (or ignore_index)."""
    flat = np.ascontiguousarray(np.moveaxis(label, axis, -1)).reshape(-1)
    check.indices(flat, classes, slot="Label", what="class index", shape=label.shape,
                  ignore=ctx.attr("ignore_index"), counted=f"{classes} classes")
    return flat.astype(np.int64, copy=False)


# --- the same on the device: transposes are copies (kernels/cuda/copy.py) ---------------------
def _cuda_rows(a, axis: int):
    """``a`` (a device array) with the class axis last, as a (rows, classes) matrix."""
    if axis != a.ndim - 1:
        a = CC.transpose(a, [d for d in range(a.ndim) if d != axis] + [axis])
    classes = a.shape[a.ndim - 1]
    return a.reshape((a.size // classes if classes else 0, classes))


def _cuda_unrows(m, like_shape, axis: int):
    moved = [d for i, d in enumerate(like_shape) if i != axis] + [like_shape[axis]]
    m = m.reshape(tuple(moved))
    if axis == len(like_shape) - 1:
        return m
    perm = list(range(len(like_shape) - 1))
    perm.insert(axis, len(like_shape) - 1)
    return CC.transpose(m, perm)


def _cuda_hard_labels(ctx, label, classes: int):
    """As _hard_labels, on the device (the check runs there; one number comes back)."""
    check.indices(label, classes, slot="Label", what="class index",
                  ignore=ctx.attr("ignore_index"), counted=f"{classes} classes")
    return _cuda_per_row(label, np.int64)


def _cuda_per_row(a, dtype):
    """A tensor with a size-1 class axis (hard labels, per-row losses) as one value per row:
    moving a size-1 axis does not reorder elements, so a reshape is enough."""
    flat = a.reshape((a.size,))
    return flat if flat.dtype == dtype else CC.astype(flat, dtype)


# --- softmax_with_cross_entropy -------------------------------------------------------------
def _swce_infer(ctx):
    xs = ctx.require_rank("Logits", 1)
    axis = ctx.require_range("axis", ctx.attr("axis"), -len(xs), len(xs)) % len(xs)
    _check_label(ctx, "Logits", "Label", axis)
    ctx.set_output("Softmax", xs, ctx.dtype("Logits"))
    ctx.set_output("Loss", _loss_shape(xs, axis), ctx.dtype("Logits"))


def _swce_grad_infer(ctx):
    """dLoss has the loss's shape (Softmax's with the class axis 1); dLogits Softmax's."""
    ss = ctx.require_rank("Softmax", 1)
    axis = ctx.require_range("axis", ctx.attr("axis"), -len(ss), len(ss)) % len(ss)
    if ctx.has_value("Loss@GRAD"):
        ctx.require_gradient_fits("Loss", want=_loss_shape(ss, axis))
    ctx.set_output("Logits@GRAD", ss, ctx.dtype("Softmax"))


def _swce(ctx):
    logits = ctx.input("Logits")
    axis = ctx.attr("axis") % logits.ndim
    rows = _rows(logits, axis)
    prob = rows if not ctx.attr("use_softmax") else RK.row_softmax(rows)
    label = ctx.input("Label")
    if ctx.attr("soft_label"):
        loss = -(_rows(label, axis) * np.log(prob)).sum(axis=1).astype(logits.dtype)
    else:
        loss = K.hard_label_loss(prob, _hard_labels(ctx, label, axis, prob.shape[1]),
                                 ctx.attr("ignore_index"))
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
        grad = K.softmax_xent_grad(prob, _hard_labels(ctx, ctx.input("Label"), axis,
                                                      prob.shape[1]),
                                   d, ctx.attr("ignore_index"))
    ctx.set_output("Logits@GRAD", _unrows(grad.astype(prob.dtype), softmax.shape, axis))


def _cuda_swce(ctx):
    logits = ctx.input("Logits")
    axis = ctx.attr("axis") % logits.ndim
    rows = _cuda_rows(logits, axis)
    prob = rows if not ctx.attr("use_softmax") else CR.row_softmax(rows, *rows.shape)
    label = ctx.input("Label")
    if ctx.attr("soft_label"):
        loss = CL.soft_label_loss(prob, _cuda_rows(label, axis))
    else:
        loss = CL.hard_label_loss(prob, _cuda_hard_labels(ctx, label, prob.shape[1]),
                                  ctx.attr("ignore_index"))
    ctx.set_output("Softmax", _cuda_unrows(prob, logits.shape, axis))
    ctx.set_output("Loss", loss.reshape(tuple(_loss_shape(logits.shape, axis))))


def _cuda_swce_grad(ctx):
    softmax, dloss = ctx.input("Softmax"), ctx.input("Loss@GRAD")
    axis = ctx.attr("axis") % softmax.ndim
    prob = _cuda_rows(softmax, axis)
    d = _cuda_per_row(dloss, prob.dtype)
    if ctx.attr("soft_label"):
        grad = CL.soft_softmax_xent_grad(prob, _cuda_rows(ctx.input("Label"), axis), d)
    else:
        grad = CL.softmax_xent_grad(prob, _cuda_hard_labels(ctx, ctx.input("Label"),
                                                            prob.shape[1]),
                                    d, ctx.attr("ignore_index"))
    ctx.set_output("Logits@GRAD", _cuda_unrows(grad, softmax.shape, axis))


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
    infer_shape=_swce_infer, kernels={"cpu": _swce, "cuda": _cuda_swce},
    grad=Grad(reads=["Label", "Softmax"], grads_of=["Loss"], writes=["Logits"],
              kernel=_swce_grad,
              cuda_kernel=_cuda_swce_grad, infer_shape=_swce_grad_infer)))


# --- cross_entropy (on probabilities) -------------------------------------------------------
def _ce_infer(ctx):
    xs = ctx.require_rank("X", 1)
    _check_label(ctx, "X", "Label", len(xs) - 1)
    ctx.set_output("Y", _loss_shape(xs, len(xs) - 1), ctx.dtype("X"))


def _ce(ctx):
    x = ctx.input("X")
    prob = _rows(x, x.ndim - 1)
    if ctx.attr("soft_label"):
        loss = -(_rows(ctx.input("Label"), x.ndim - 1) * np.log(prob)).sum(axis=1)
    else:
        loss = K.hard_label_loss(prob, _hard_labels(ctx, ctx.input("Label"), x.ndim - 1,
                                                    prob.shape[1]),
                                 ctx.attr("ignore_index"))
    ctx.set_output("Y", loss.astype(x.dtype).reshape(_loss_shape(x.shape, x.ndim - 1)))


def _ce_grad(ctx):
    x, dy = ctx.input("X"), ctx.input("Y@GRAD")
    prob = _rows(x, x.ndim - 1)
    d = dy.reshape(-1).astype(prob.dtype)
    if ctx.attr("soft_label"):
        grad = -_rows(ctx.input("Label"), x.ndim - 1) / prob * d[:, None]
    else:
        grad = K.xent_grad(prob, _hard_labels(ctx, ctx.input("Label"), x.ndim - 1,
                                              prob.shape[1]),
                           d, ctx.attr("ignore_index"))
    ctx.set_output("X@GRAD", grad.astype(x.dtype).reshape(x.shape))


def _cuda_ce(ctx):
    x = ctx.input("X")
    prob = _cuda_rows(x, x.ndim - 1)
    if ctx.attr("soft_label"):
        loss = CL.soft_label_loss(prob, _cuda_rows(ctx.input("Label"), x.ndim - 1))
    else:
        loss = CL.hard_label_loss(prob, _cuda_hard_labels(ctx, ctx.input("Label"),
                                                          prob.shape[1]),
                                  ctx.attr("ignore_index"))
    ctx.set_output("Y", loss.reshape(tuple(_loss_shape(x.shape, x.ndim - 1))))


def _cuda_ce_grad(ctx):
    x, dy = ctx.input("X"), ctx.input("Y@GRAD")
    prob = _cuda_rows(x, x.ndim - 1)
    d = _cuda_per_row(dy, prob.dtype)
    if ctx.attr("soft_label"):
        grad = CL.soft_xent_grad(prob, _cuda_rows(ctx.input("Label"), x.ndim - 1), d)
    else:
        grad = CL.xent_grad(prob, _cuda_hard_labels(ctx, ctx.input("Label"), prob.shape[1]),
                            d, ctx.attr("ignore_index"))
    ctx.set_output("X@GRAD", grad.reshape(x.shape))


register(OpDef(
    "cross_entropy", [Slot("X", "probabilities (rows sum to 1)"),
                      Slot("Label", "class indices or distributions")],
    [Slot("Y", "cross entropy per row")], _CE_ATTRS,
    comment="Y = -log(X[Label]) per row (X holds probabilities).",
    infer_shape=_ce_infer, kernels={"cpu": _ce, "cuda": _cuda_ce},
    grad=Grad(reads=["X", "Label"], grads_of=["Y"], writes=["X"], kernel=_ce_grad,
              cuda_kernel=_cuda_ce_grad)))
