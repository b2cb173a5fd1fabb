"""nce: the noise-contrastive estimation loss (Gutmann and Hyvarinen), Fluid's slots and
attributes as ``paddle.static.nn.nce`` saves them in Paddle 2.6.2 (Input, Label, Weight,
Bias, SampleWeight, CustomDistProbs, CustomDistAlias, CustomDistAliasProbs -> Cost,
SampleLogits, SampleLabels).

Instead of a softmax over all ``num_total_classes``, each sample is scored against its
true classes (Label's columns) and ``num_neg_samples`` negative classes drawn from a
noise distribution (``sampler``: 0 uniform, 1 log-uniform, 2 the custom distribution the
three CustomDist inputs give as an alias table; or the fixed ``custom_neg_classes``):

    o_k  = sigmoid(Weight[k] . Input + Bias[k])          (SampleLogits)
    b_k  = num_neg_samples * P_noise(k)
    Cost = SampleWeight * (-sum_true log(o / (o + b)) - sum_neg log(b / (o + b)))

SampleLabels holds the classes scored (true first). The draws are this package's
counter-based ones (kernels/cpu/nce.py), so the same ``seed`` draws the same negatives on
both places (seed 0: ops/sampling.py's op_seed); Paddle's own generator cannot be matched
value for value, only in distribution. Without ``custom_neg_classes`` the values are
random, so the coverage table compares their shapes only.

nce_grad (Paddle's): with o the kept SampleLogits, dCost/dz is -b (1 - o) / (o + b) for a
true class and o (1 - o) / (o + b) for a negative, times the sample's dCost and weight;
dInput, dWeight and dBias follow through z = Weight[k] . Input + Bias[k]. Weight's
gradient is dense here also with ``is_sparse`` (Paddle's is then a SelectedRows).

In a compiled block both ops are kernels/cpu/nce.py's loops after the same checks
(nce_loss, nce_loss_grad), where the draws are known when the block is compiled: a
``seed`` attribute (the same counter-based draws), or custom_neg_classes (none); with
seed 0 each run draws a new seed, and the op stays in the interpreter.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import nce as CPU_NCE
from ..kernels.cuda import nce as CUDA_NCE
from ..kernels.lowered import Call
from . import arrays
from .hierarchical_sigmoid import FLOATS, host_weight_grads, require_int64, set_weight_grads
from ..backends import CPU, CUDA
from .sampling import attr_seed

SAMPLERS = {0: "uniform", 1: "log_uniform", 2: "custom_dist"}
CUSTOM_DIST = ("CustomDistProbs", "CustomDistAlias", "CustomDistAliasProbs")


def _check_attrs(values: dict) -> str | None:
    classes, neg = values.get("num_total_classes"), values.get("num_neg_samples")
    if isinstance(classes, int) and classes < 1:
        return f"num_total_classes={classes}; expected at least 1"
    if isinstance(neg, int) and neg < 0:
        return f"num_neg_samples={neg}; expected 0 or more"
    if values.get("sampler") not in (None, *SAMPLERS):
        return f"sampler={values.get('sampler')}; expected 0 (uniform), 1 (log_uniform) or 2"
    custom = list(values.get("custom_neg_classes") or [])
    if custom and isinstance(neg, int) and len(custom) != neg:
        return (f"custom_neg_classes={custom} must name num_neg_samples={neg} classes, "
                f"given {len(custom)}")
    if custom and isinstance(classes, int) and not all(0 <= c < classes for c in custom):
        return f"custom_neg_classes={custom}; expected classes in [0, {classes})"
    return None


def _infer(ctx):
    problem = _check_attrs({name: ctx.attr(name) for name in (
        "num_total_classes", "num_neg_samples", "sampler", "custom_neg_classes")})
    if problem:
        ctx.fail(problem, slot="Input", expected="valid nce attributes", given=problem)
    for slot in ("Input", "Weight"):
        if dtypes.name(ctx.dtype(slot)) not in FLOATS:
            ctx.fail("nce needs float32 or float64 values (Paddle's kernels)", slot=slot,
                     expected="float32 or float64", given=ctx.describe_input(slot))
    ctx.require_same_dtype("Weight", "Input")
    xs, ws, ls = ctx.shape("Input"), ctx.shape("Weight"), ctx.shape("Label")
    classes = ctx.attr("num_total_classes")
    if len(xs) != 2:
        ctx.fail("Input is [batch, dim]", slot="Input", expected="a 2-D tensor",
                 given=ctx.describe_input("Input"))
    if len(ws) != 2 or (ws[0] >= 0 and ws[0] != classes) or \
            (ws[1] >= 0 and xs[1] >= 0 and ws[1] != xs[1]):
        ctx.fail("Weight holds one row per class over Input's features", slot="Weight",
                 expected=f"[{classes}, {xs[1]}]", given=ctx.describe_input("Weight"))
    require_int64(ctx, "Label")
    if len(ls) != 2 or (ls[0] >= 0 and xs[0] >= 0 and ls[0] != xs[0]) or ls[1] < 1:
        ctx.fail("Label holds the true classes of each sample", slot="Label",
                 expected=f"[{xs[0]}, true classes]", given=ctx.describe_input("Label"))
    for slot, want in (("Bias", [[classes, 1], [classes]]),
                       ("SampleWeight", [[xs[0], 1], [xs[0]]])):
        if ctx.has_input(slot):
            ctx.require_same_dtype(slot, "Input")
            if ctx.shape(slot) not in want and -1 not in ctx.shape(slot):
                ctx.fail(f"{slot} must be {want[0]}", slot=slot, expected=str(want[0]),
                         given=ctx.describe_input(slot))
    if ctx.attr("sampler") == 2 and not ctx.attr("custom_neg_classes"):
        for slot in CUSTOM_DIST:
            if not ctx.has_input(slot) or ctx.shape(slot) not in ([classes], [classes, 1]):
                ctx.fail("sampler 2 (custom_dist) reads the alias table: one value per "
                         "class", slot=slot, expected=f"[{classes}]",
                         given=ctx.describe_input(slot) if ctx.has_input(slot) else "none")
        ctx.require_dtype("CustomDistProbs", "float")
        ctx.require_dtype("CustomDistAliasProbs", "float")
        ctx.require_dtype("CustomDistAlias", "int")
    cols = ls[1] + ctx.attr("num_neg_samples")
    ctx.set_output("Cost", [xs[0], 1], ctx.dtype("Input"))
    ctx.set_output("SampleLogits", [xs[0], cols], ctx.dtype("Input"))
    ctx.set_output("SampleLabels", [xs[0], cols], dtypes.to_code(np.int64))


def _flat(value, dtype=None):
    if value is None:
        return None
    flat = value.reshape((int(value.size),))
    return flat if dtype is None or flat.dtype == dtype else flat.astype(dtype)


def _nce(place):
    def run(ctx):
        x, label, w = ctx.input("Input"), ctx.input("Label"), ctx.input("Weight")
        classes = int(w.shape[0])
        check.indices(label, classes, slot="Label", what="class",
                      counted=f"num_total_classes={classes}")
        sampler, num_neg = int(ctx.attr("sampler")), int(ctx.attr("num_neg_samples"))
        custom_neg = np.asarray(ctx.attr("custom_neg_classes") or [], np.int64)
        dist = [ctx.input_or_none(s) for s in CUSTOM_DIST]
        if sampler == 2 and not custom_neg.size:
            check.indices(dist[1], classes, slot="CustomDistAlias", what="class", ignore=-1,
                          counted=f"num_total_classes={classes}", ignored_as="-1",
                          ignored_means="to keep the drawn class")
        probs, alias, alias_probs = (_flat(dist[0], np.float64), _flat(dist[1], np.int64),
                                     _flat(dist[2], np.float64))
        bias, weight = _flat(ctx.input_or_none("Bias")), _flat(ctx.input_or_none("SampleWeight"))
        seed = attr_seed(ctx)
        if place is CPU:
            n, cols = int(x.shape[0]), int(label.shape[1]) + num_neg
            cost, logits = ctx.out("Cost", (n, 1), x.dtype), ctx.out("SampleLogits",
                                                                    (n, cols), x.dtype)
            labels = ctx.out("SampleLabels", (n, cols), np.int64)
            stand_in = np.zeros(1, x.dtype)
            CPU_NCE.nce(np.ascontiguousarray(x), np.ascontiguousarray(label),
                        np.ascontiguousarray(w),
                        stand_in if bias is None else np.ascontiguousarray(bias),
                        bias is not None,
                        stand_in if weight is None else np.ascontiguousarray(weight),
                        weight is not None,
                        np.zeros(1) if probs is None else probs,
                        np.zeros(1, np.int64) if alias is None else alias,
                        np.zeros(1) if alias_probs is None else alias_probs,
                        custom_neg, sampler, num_neg, np.uint64(seed), logits, labels, cost)
        else:
            cost, logits, labels = CUDA_NCE.nce(x, label, w, bias, weight, probs, alias,
                                                   alias_probs, custom_neg, sampler,
                                                   num_neg, seed)
        ctx.set_output("Cost", cost)
        ctx.set_output("SampleLogits", logits)
        ctx.set_output("SampleLabels", labels)
    return run


def _nce_grad(place):
    """dInput, dWeight and dBias from what the forward kept (SampleLogits: each scored
    class's sigmoid; SampleLabels: which classes) and dCost; the noise probabilities are
    the forward's (sampler, CustomDistProbs)."""
    def run(ctx):
        x, w = ctx.input("Input"), ctx.input("Weight")
        logits, labels = ctx.input("SampleLogits"), ctx.input("SampleLabels")
        n, num_neg = int(x.shape[0]), int(ctx.attr("num_neg_samples"))
        num_true = int(ctx.input("Label").shape[1])
        if tuple(int(d) for d in logits.shape) != (n, num_true + num_neg) or \
                tuple(int(d) for d in labels.shape) != tuple(int(d) for d in logits.shape):
            raise ValueError(f"nce_grad: slots SampleLogits and SampleLabels: expected "
                             f"{[n, num_true + num_neg]} (the forward's), given "
                             f"{list(logits.shape)} and {list(labels.shape)}")
        check.indices(labels, int(w.shape[0]), slot="SampleLabels", what="class",
                      counted=f"num_total_classes={int(w.shape[0])}")
        dcost = arrays.astype(ctx.input("Cost@GRAD"), x.dtype).reshape((n,))
        weight = _flat(ctx.input_or_none("SampleWeight"))
        probs = _flat(ctx.input_or_none("CustomDistProbs"), np.float64)
        sampler = int(ctx.attr("sampler"))
        if place is CPU:
            dx, dw, dbias = host_weight_grads(x, w)
            CPU_NCE.nce_grad(np.ascontiguousarray(x), np.ascontiguousarray(w),
                             np.zeros(1, x.dtype) if weight is None else weight,
                             weight is not None, np.zeros(1) if probs is None else probs,
                             sampler, num_neg, num_true, np.ascontiguousarray(logits),
                             np.ascontiguousarray(labels), np.ascontiguousarray(dcost),
                             dx, dw, dbias)
        else:
            dx, dw, dbias = CUDA_NCE.nce_grad(x, w, weight, probs, sampler, num_neg,
                                                 num_true, logits, labels, dcost)
        set_weight_grads(ctx, "Input", "Weight", dx, dw, dbias)
    return run


# --- in a compiled block (kernels/lowered.py): kernels/cpu/nce.py's loops, after the checks --
def _stand_in(info, slot: str, kind: str) -> tuple[str, bool]:
    """(the slot to read for ``slot``, whether the op has it): an absent float slot is read
    from Input, an int one from Label, and flagged absent (kernels/cpu/nce.py says why)."""
    if info.has_input(slot):
        return slot, True
    return ("Label" if kind == "int" else "Input"), False


def _same_floats(info, slots) -> bool:
    """float32/float64 Input, with ``slots`` (those the op has) of its dtype (the kernels
    read Bias and SampleWeight uncast), int64 Label."""
    dtype = info.dtype("Input")
    return dtype.name in FLOATS and info.dtype("Label").name == "int64" and \
        all(info.dtype(s) == dtype for s in slots if info.has_input(s))


def _lowered_nce(info):
    """kernels/cpu/nce.nce_loss where the draws are known: a ``seed`` attribute, or the
    fixed custom_neg_classes (no draws at all)."""
    if not _same_floats(info, ("Weight", "Bias", "SampleWeight")):
        return None
    custom_neg = tuple(int(c) for c in info.attr("custom_neg_classes") or ())
    if not info.attr("seed") and not custom_neg:
        return ("draws its negatives with a seed picked each run (op_seed): give the op a "
                "seed attribute")
    reads, present = zip(*[_stand_in(info, slot, kind) for slot, kind in (
        ("Bias", "float"), ("SampleWeight", "float"), ("CustomDistProbs", "float"),
        ("CustomDistAlias", "int"), ("CustomDistAliasProbs", "float"))])
    seed = int(info.attr("seed")) & (2**63 - 1)
    return Call(CPU_NCE.nce_loss, ("Input", "Label", "Weight", *reads),
                ("Cost", "SampleLogits", "SampleLabels"),
                (*present, (0, *custom_neg), len(custom_neg), int(info.attr("sampler")),
                 int(info.attr("num_neg_samples")), np.uint64(seed)))


def _lowered_nce_grad(info):
    """kernels/cpu/nce.nce_loss_grad (without a Bias: nce_loss_grad_unbiased), for a
    Cost@GRAD and SampleLogits of Input's dtype."""
    if not _same_floats(info, ("Weight", "Bias", "SampleWeight", "SampleLogits",
                               "Cost@GRAD")) or info.dtype("SampleLabels").name != "int64":
        return None
    reads, present = zip(*[_stand_in(info, slot, "float")
                           for slot in ("SampleWeight", "CustomDistProbs")])
    operands = (*reads, "SampleLogits", "SampleLabels", "Cost@GRAD")
    consts = (*present, int(info.attr("sampler")), int(info.attr("num_neg_samples")))
    writes = ("Input@GRAD", "Weight@GRAD", "Bias@GRAD")
    if info.has_input("Bias"):
        return Call(CPU_NCE.nce_loss_grad, ("Input", "Label", "Weight", "Bias", *operands),
                    writes, consts)
    return Call(CPU_NCE.nce_loss_grad_unbiased, ("Input", "Label", "Weight", *operands),
                writes, consts)


register(OpDef(
    "nce",
    [Slot("Input", "the features, [batch, dim]"),
     Slot("Label", "the true classes of each sample, int64 [batch, true classes]"),
     Slot("Weight", "one row per class, [num_total_classes, dim]"),
     Slot("Bias", "one bias per class, [num_total_classes, 1]", dispensable=True),
     Slot("SampleWeight", "a weight per sample, [batch, 1] (default 1)", dispensable=True),
     Slot("CustomDistProbs", "sampler 2: the probability of each class", dispensable=True),
     Slot("CustomDistAlias", "sampler 2: each class's alias (Walker's alias table)",
          dispensable=True),
     Slot("CustomDistAliasProbs", "sampler 2: the probability of keeping each class",
          dispensable=True)],
    [Slot("Cost", "the loss of each sample, [batch, 1]"),
     Slot("SampleLogits", "sigmoid of each scored class's logit, [batch, true + neg]",
          intermediate=True),
     Slot("SampleLabels", "the classes scored: the true ones, then the negatives",
          intermediate=True)],
    [Attr("num_total_classes", A.INT, 1, "how many classes (rows of Weight)"),
     Attr("num_neg_samples", A.INT, 10, "negative classes drawn per sample"),
     Attr("sampler", A.INT, 0, "the noise distribution: 0 uniform, 1 log_uniform, "
                               "2 custom_dist"),
     Attr("seed", A.INT, 0, "random seed; 0 = op_seed's"),
     Attr("is_sparse", A.BOOLEAN, False, "Paddle: Weight's gradient as SelectedRows (dense "
                                         "here)"),
     Attr("custom_neg_classes", A.INTS, [], "fixed negative classes instead of draws"),
     Attr("remote_prefetch", A.BOOLEAN, False, "kept for Paddle compatibility", extra=True),
     Attr("is_test", A.BOOLEAN, False, "kept for Paddle compatibility", extra=True),
     Attr("trainer_id", A.INT, 0, "kept for Paddle compatibility", extra=True),
     Attr("height_sections", A.LONGS, [], "kept for Paddle compatibility", extra=True),
     Attr("epmap", A.STRINGS, [], "kept for Paddle compatibility", extra=True),
     Attr("table_names", A.STRINGS, [], "kept for Paddle compatibility", extra=True)],
    comment="Cost = -sum_true log(o / (o + b)) - sum_neg log(b / (o + b)), o = sigmoid("
            "Weight[k] . Input + Bias[k]), b = num_neg_samples * P_noise(k).",
    infer_shape=_infer, kernels={"cpu": _nce(CPU), "cuda": _nce(CUDA)},
    lowered=_lowered_nce,
    grad=Grad(reads=["Input", "Label", "Weight", "Bias", "SampleWeight", *CUSTOM_DIST,
                     "SampleLogits", "SampleLabels"],
              grads_of=["Cost"], writes=["Input", "Weight", "Bias"],
              kernel=_nce_grad(CPU), cuda_kernel=_nce_grad(CUDA), lowered=_lowered_nce_grad),
    check_attrs=_check_attrs))
