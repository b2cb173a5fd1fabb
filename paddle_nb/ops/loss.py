"""Losses: softmax_with_cross_entropy, cross_entropy and cross_entropy2 (Fluid's slots and
attributes).

Labels are class indices (int64, last dim 1) or, with ``soft_label``, distributions of
the logits' shape. The class axis is ``axis`` (default the last); rows are every other
position. Kernels move the class axis last and work on (rows, classes) matrices; each is
one function for both places (backends/: each place's rows, label checks and losses).
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import cross_entropy2 as KCE2
from ..kernels.cpu import loss as KL
from ..kernels.lowered import Call
from ..kernels.pointwise import KERNELS
from . import arrays
from .common import FLOAT_TYPES
from ..backends import CPU, CUDA


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


# --- in a compiled block (kernels/lowered.py): hard labels, the class axis last -----------
def _hard_labels_last(info, scores: str, same_dtype: tuple = ()) -> bool:
    """Does the op take float32/float64 ``scores`` (and ``same_dtype``'s slots of their
    dtype) with integer class indices along the last axis, through a softmax where it has
    one (what kernels/cpu/loss.py's compiled forms compute)?"""
    dtype, rank = info.dtype(scores), info.ndim(scores)
    has = info.pop.op_def.attr
    return (not info.attr("soft_label") and dtype.name in FLOAT_TYPES
            and info.dtype("Label").kind in "iu" and rank >= 1
            and all(info.dtype(s) == dtype for s in same_dtype)
            and (not has("axis") or info.attr("axis") % rank == rank - 1)
            and (not has("use_softmax") or info.attr("use_softmax")))


def _lowered_swce(info):
    if not (_hard_labels_last(info, "Logits") and info.has_output("Softmax")):
        return None
    return Call(KL.softmax_xent, ("Logits", "Label"), ("Softmax", "Loss"),
                (info.attr("ignore_index"),))


def _lowered_swce_grad(info):
    if not _hard_labels_last(info, "Softmax", ("Loss@GRAD",)):
        return None
    return Call(KL.softmax_xent_grad_of, ("Softmax", "Label", "Loss@GRAD"), ("Logits@GRAD",),
                (info.attr("ignore_index"),))


def _lowered_ce(info):
    if not _hard_labels_last(info, "X"):
        return None
    return Call(KL.xent, ("X", "Label"), ("Y",), (info.attr("ignore_index"),))


def _lowered_ce_grad(info):
    if not _hard_labels_last(info, "X", ("Y@GRAD",)):
        return None
    return Call(KL.xent_grad_of, ("X", "Label", "Y@GRAD"), ("X@GRAD",),
                (info.attr("ignore_index"),))


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
    lowered=_lowered_swce,
    grad=Grad(reads=["Label", "Softmax"], grads_of=["Loss"], writes=["Logits"],
              kernel=_swce_grad(CPU), cuda_kernel=_swce_grad(CUDA),
              infer_shape=_swce_grad_infer, lowered=_lowered_swce_grad)))


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
    lowered=_lowered_ce,
    grad=Grad(reads=["X", "Label"], grads_of=["Y"], writes=["X"], kernel=_ce_grad(CPU),
              cuda_kernel=_ce_grad(CUDA), lowered=_lowered_ce_grad)))


# --- cross_entropy2 (on probabilities, hard labels; what Paddle's layers emitted) ---------
# (its scalar math, tolerable_neg_log and match_grad, and its compiled loops:
# kernels/cpu/cross_entropy2.py)
def _ce2_infer(ctx):
    ctx.require_dtype("X", "float")
    ctx.require_dtype("Label", "int")
    xs, ls = ctx.require_rank("X", 1), ctx.shape("Label")
    if xs[-1] == 0:
        ctx.fail("the class axis has no classes", slot="X", expected="at least one class",
                 given=ctx.describe_input("X"))
    row = xs[:-1] + [1]
    if len(ls) != len(row) or any(a >= 0 and b >= 0 and a != b for a, b in zip(ls, row)):
        ctx.fail("Label must hold one class index per row (a last dim of 1)", slot="Label",
                 expected=str(row), given=ctx.describe_input("Label"))
    ctx.set_output("Y", row, ctx.dtype("X"))
    ctx.set_output("MatchX", row, ctx.dtype("X"))
    ctx.set_output("XShape", xs + [0], ctx.dtype("X"))      # X's dims, no data (Paddle's)


def _ce2(place):
    """MatchX = X[Label] per row (0 where ignored); Y = -log(MatchX) (0 where ignored).
    Y is picked from -log of every X (so an ignored row, whose MatchX is 0, gives 0, not
    1e20): one more log per class, and no per-row branch in any kernel."""
    def run(ctx):
        x, ignore = ctx.input("X"), ctx.attr("ignore_index")
        classes = int(x.shape[x.ndim - 1])
        prob = place.rows(x, x.ndim - 1)
        labels = place.hard_labels(ctx.input("Label"), classes, ignore).reshape((-1, 1))
        row_shape = tuple(int(d) for d in x.shape[:x.ndim - 1]) + (1,)
        losses = place.apply(KERNELS["tolerable_neg_log"], prob, out=None, out_dtype=x.dtype)
        ctx.set_output("Y", place.take_along_rows(losses, labels, ignore).reshape(row_shape))
        ctx.set_output("MatchX",
                       place.take_along_rows(prob, labels, ignore).reshape(row_shape))
        ctx.set_output("XShape", arrays.empty(tuple(x.shape) + (0,), x.dtype, like=x))
    return run


def _ce2_grad(place):
    """dX = -dY / MatchX at each row's label (0 elsewhere and in ignored rows)."""
    def run(ctx):
        match, dy = ctx.input("MatchX"), ctx.input("Y@GRAD")
        shape = tuple(int(d) for d in ctx.input("XShape").shape)[:-1]
        classes = shape[len(shape) - 1]
        ignore = ctx.attr("ignore_index")
        labels = place.hard_labels(ctx.input("Label"), classes, ignore).reshape((-1, 1))
        d = place.apply(KERNELS["match_grad"], match, arrays.astype(dy, match.dtype), out=None,
                        out_dtype=match.dtype)
        dx = place.put_along_rows(classes, labels, d.reshape((-1, 1)), ignore)
        ctx.set_output("X@GRAD", dx.reshape(shape))
    return run


def _ce2_grad_infer(ctx):
    """X's shape is XShape's without its last (0) dim; Label, MatchX and dY have X's with
    a last dim of 1."""
    xshape = ctx.require_rank("XShape", 2)
    if xshape[-1] not in (0, -1):
        ctx.fail("XShape holds X's dims and a last dim of 0", slot="XShape",
                 expected="X's shape + [0]", given=ctx.describe_input("XShape"))
    xs = xshape[:-1]
    row = xs[:-1] + [1]
    ctx.require_dtype("MatchX", "float")
    for slot in ("MatchX", "Label"):
        got = ctx.shape(slot)
        if len(got) != len(row) or any(a >= 0 and b >= 0 and a != b for a, b in zip(got, row)):
            ctx.fail(f"{slot} must have one value per row of X", slot=slot,
                     expected=str(row), given=ctx.describe_input(slot))
    if ctx.has_value("Y@GRAD"):
        ctx.require_gradient_fits("Y", want=row)
    ctx.set_output("X@GRAD", xs, ctx.dtype("MatchX"))


# in a compiled block: kernels/cpu/cross_entropy2.py's loops, for float X (and MatchX and
# dY of its dtype: the kernel casts another dY first) with integer labels
def _lowered_ce2(info):
    if info.dtype("X").name not in FLOAT_TYPES or info.dtype("Label").kind not in "iu" or \
            info.ndim("X") < 1:
        return None
    return Call(KCE2.picked_neg_log, ("X", "Label"), ("Y", "MatchX", "XShape"),
                (info.attr("ignore_index"),))


def _lowered_ce2_grad(info):
    dtype = info.dtype("MatchX")
    if dtype.name not in FLOAT_TYPES or info.dtype("Y@GRAD") != dtype or \
            info.dtype("Label").kind not in "iu" or info.ndim("XShape") < 2:
        return None
    return Call(KCE2.put_match_grad, ("MatchX", "Label", "Y@GRAD", "XShape"), ("X@GRAD",),
                (info.attr("ignore_index"),))


register(OpDef(
    "cross_entropy2", [Slot("X", "probabilities (rows sum to 1)"),
                       Slot("Label", "class indices, a last dim of 1")],
    [Slot("Y", "cross entropy per row"),
     Slot("MatchX", "X at each row's label, kept for the gradient", intermediate=True),
     Slot("XShape", "X's dims + [0] (no data), kept for the gradient", intermediate=True)],
    [Attr("ignore_index", A.INT, -100, "rows with this label contribute 0")],
    comment="Y = -log(X[Label]) per row (X holds probabilities; 1e20 for a probability "
            "of 0, as Paddle).",
    infer_shape=_ce2_infer, kernels={"cpu": _ce2(CPU), "cuda": _ce2(CUDA)},
    lowered=_lowered_ce2,
    grad=Grad(reads=["Label", "MatchX", "XShape"], grads_of=["Y"], writes=["X"],
              kernel=_ce2_grad(CPU), cuda_kernel=_ce2_grad(CUDA),
              infer_shape=_ce2_grad_infer, grad_type="cross_entropy_grad2",
              lowered=_lowered_ce2_grad)))
