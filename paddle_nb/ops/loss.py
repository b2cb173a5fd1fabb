"""Losses: softmax_with_cross_entropy and cross_entropy (Fluid's slots and attributes).

Labels are class indices (int64, last dim 1) or, with ``soft_label``, distributions of
the logits' shape. The class axis is ``axis`` (default the last); rows are every other
position. Kernels move the class axis last and work on (rows, classes) matrices; each is
one function for both places (ops/places.py: each place's rows, label checks and losses).
"""
from __future__ import annotations


from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from .places import CPU, CUDA


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


def _swce(place):
    def run(ctx):
        logits = ctx.input("Logits")
        axis = ctx.attr("axis") % logits.ndim
        rows = place.rows(logits, axis)
        prob = rows if not ctx.attr("use_softmax") else place.row_softmax(rows)
        label = ctx.input("Label")
        if ctx.attr("soft_label"):
            loss = place.soft_label_loss(prob, place.rows(label, axis))
        else:
            loss = place.hard_label_loss(prob, place.hard_labels(label, prob.shape[1],
                                                                 ctx.attr("ignore_index")),
                                         ctx.attr("ignore_index"))
        ctx.set_output("Softmax", place.unrows(prob, logits.shape, axis))
        # the loss's class axis has size 1: moving it is a reshape
        ctx.set_output("Loss", loss.reshape(tuple(_loss_shape(logits.shape, axis))))
    return run


def _grad_rows(place, ctx, prob, label, axis: int, d, through_softmax: bool):
    """dLoss/d(scores) for (rows, classes) ``prob``, each row's loss gradient ``d``:
    through the softmax, (prob - label) * d; of the probabilities themselves (cross_entropy,
    and softmax_with_cross_entropy with use_softmax=False), -label / prob * d. Rows whose
    hard label is ``ignore_index`` get 0."""
    if ctx.attr("soft_label"):
        rows = place.rows(label, axis)
        if through_softmax:
            return place.soft_softmax_xent_grad(prob, rows, d)
        return place.soft_xent_grad(prob, rows, d)
    ignore = ctx.attr("ignore_index")
    labels = place.hard_labels(label, prob.shape[1], ignore)
    if through_softmax:
        return place.softmax_xent_grad(prob, labels, d, ignore)
    return place.xent_grad(prob, labels, d, ignore)


def _swce_grad(place):
    def run(ctx):
        softmax, dloss = ctx.input("Softmax"), ctx.input("Loss@GRAD")
        axis = ctx.attr("axis") % softmax.ndim
        prob = place.rows(softmax, axis)
        grad = _grad_rows(place, ctx, prob, ctx.input("Label"), axis,
                          place.per_row(dloss, prob.dtype), ctx.attr("use_softmax"))
        ctx.set_output("Logits@GRAD", place.unrows(grad, softmax.shape, axis))
    return run


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
    infer_shape=_swce_infer, kernels={"cpu": _swce(CPU), "cuda": _swce(CUDA)},
    grad=Grad(reads=["Label", "Softmax"], grads_of=["Loss"], writes=["Logits"],
              kernel=_swce_grad(CPU), cuda_kernel=_swce_grad(CUDA),
              infer_shape=_swce_grad_infer)))


# --- cross_entropy (on probabilities) -------------------------------------------------------
def _ce_infer(ctx):
    xs = ctx.require_rank("X", 1)
    _check_label(ctx, "X", "Label", len(xs) - 1)
    ctx.set_output("Y", _loss_shape(xs, len(xs) - 1), ctx.dtype("X"))


def _ce(place):
    def run(ctx):
        x = ctx.input("X")
        prob = place.rows(x, x.ndim - 1)
        if ctx.attr("soft_label"):
            loss = place.soft_label_loss(prob, place.rows(ctx.input("Label"), x.ndim - 1))
        else:
            labels = place.hard_labels(ctx.input("Label"), prob.shape[1],
                                       ctx.attr("ignore_index"))
            loss = place.hard_label_loss(prob, labels, ctx.attr("ignore_index"))
        ctx.set_output("Y", loss.reshape(tuple(_loss_shape(x.shape, x.ndim - 1))))
    return run


def _ce_grad(place):
    def run(ctx):
        x, dy = ctx.input("X"), ctx.input("Y@GRAD")
        prob = place.rows(x, x.ndim - 1)
        grad = _grad_rows(place, ctx, prob, ctx.input("Label"), x.ndim - 1,
                          place.per_row(dy, prob.dtype), through_softmax=False)
        ctx.set_output("X@GRAD", grad.reshape(tuple(x.shape)))
    return run


register(OpDef(
    "cross_entropy", [Slot("X", "probabilities (rows sum to 1)"),
                      Slot("Label", "class indices or distributions")],
    [Slot("Y", "cross entropy per row")], _CE_ATTRS,
    comment="Y = -log(X[Label]) per row (X holds probabilities).",
    infer_shape=_ce_infer, kernels={"cpu": _ce(CPU), "cuda": _ce(CUDA)},
    grad=Grad(reads=["X", "Label"], grads_of=["Y"], writes=["X"], kernel=_ce_grad(CPU),
              cuda_kernel=_ce_grad(CUDA))))
