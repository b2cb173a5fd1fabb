"""Metrics: accuracy and auc (Fluid's slots and attributes, as Paddle 2.6.2 saves
``paddle.metric.accuracy`` and ``paddle.static.auc``). Neither has a gradient.

``accuracy`` follows the ``top_k_v2`` that ``paddle.metric.accuracy(input, label, k)``
appends: Out and Indices are each row's k best scores and their classes, Label each
row's class. Accuracy (float32) = Correct / Total (int32), each a 0-d tensor as Paddle
2.6.2 fetches them. A label larger than every class is never correct (Paddle's rule); a
negative one is refused, as Paddle refuses it.

``auc`` is stateful: StatPos/StatNeg are persistable counts of positives and negatives
per prediction bucket that ``paddle.static.auc`` creates, and StatPosOut/StatNegOut are
the same variables, so every run adds its batch to what earlier runs counted (a
streaming AUC). ``paddle.static.auc`` appends two: one with ``slide_steps`` (the AUC of
the last few batches) and one with ``slide_steps=0`` (of every batch so far).
kernels/cpu/metrics.py says how the statistics are laid out; Predict's last column is
the positive class's probability and must lie in [0, 1] (checked first, as Paddle does).
In a compiled block auc is kernels/cpu/metrics.auc_of: those checks and the kernel's
auc_update on copies of the statistics.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..kernels.cpu import metrics as CPU_METRICS
from ..kernels.cuda import metrics as CUDA_METRICS
from ..kernels.lowered import Call
from . import arrays

INT32, INT64 = dtypes.to_code("int32"), dtypes.to_code("int64")
FLOAT32, FLOAT64 = dtypes.to_code("float32"), dtypes.to_code("float64")


def _fits(shape, want) -> bool:
    return len(shape) == len(want) and all(a < 0 or b < 0 or a == b
                                           for a, b in zip(shape, want))


def _one_label_per_row(ctx, rows: int):
    """Label holds one integer per row: [N] or [N, 1]."""
    ctx.require_dtype("Label", "int")
    ls = ctx.shape("Label")
    if not (_fits(ls, [rows]) or _fits(ls, [rows, 1])):
        ctx.fail("Label must hold one label per row", slot="Label",
                 expected=f"[{rows}] or [{rows}, 1]", given=ctx.describe_input("Label"))


def _flat_labels(label):
    return label.reshape((int(label.size),))


# --- accuracy --------------------------------------------------------------------------------
def _accuracy_infer(ctx):
    ctx.require_dtype("Out", "float")
    out = ctx.shape("Out")
    if len(out) != 2:
        ctx.fail("Out must be the top-k scores, one row per sample", slot="Out",
                 expected="[N, k]", given=ctx.describe_input("Out"))
    if ctx.dtype("Indices") != INT64 or not _fits(ctx.shape("Indices"), out):
        ctx.fail("Indices must be top_k_v2's int64 positions, of Out's shape", slot="Indices",
                 expected=f"int64 {out}", given=ctx.describe_input("Indices"))
    _one_label_per_row(ctx, out[0])
    ctx.set_output("Accuracy", [], FLOAT32)
    ctx.set_output("Correct", [], INT32)
    ctx.set_output("Total", [], INT32)


def _refuse_negative_labels(label):
    """Paddle refuses a negative label (a class is never negative); a larger one is
    allowed and never correct. Checked on the host (one small copy of the labels)."""
    host = arrays.host(label).reshape(-1)
    bad = np.flatnonzero(host < 0)
    if bad.size:
        raise ValueError(f"accuracy: input slot Label: expected class labels >= 0, given "
                         f"Label[{bad[0]}] = {host[bad[0]]} ({bad.size} negative)")


def _accuracy_cpu(ctx):
    indices, label = ctx.input("Indices"), _flat_labels(ctx.input("Label"))
    _refuse_negative_labels(label)
    accuracy, correct, total = CPU_METRICS.accuracy_of(indices, label)
    ctx.set_output("Accuracy", accuracy)
    ctx.set_output("Correct", correct)
    ctx.set_output("Total", total)


def _lowered_accuracy(info):
    """CPU_METRICS.accuracy_of, the CPU kernel's own loop (which refuses a negative label:
    the interpreter's rerun then names it)."""
    if info.dtype("Indices").name != "int64" or info.dtype("Label").kind not in "iu":
        return None
    return Call(CPU_METRICS.accuracy_of, ("Indices", "Label"), ("Accuracy", "Correct", "Total"))


def _accuracy_cuda(ctx):
    indices, label = ctx.input("Indices"), _flat_labels(ctx.input("Label"))
    _refuse_negative_labels(label)
    accuracy, correct, total = CUDA_METRICS.accuracy(indices, label)
    ctx.set_output("Accuracy", accuracy.reshape(()))
    ctx.set_output("Correct", correct.reshape(()))
    ctx.set_output("Total", total.reshape(()))


register(OpDef(
    "accuracy",
    [Slot("Out", "the top-k scores of each row (top_k_v2's Out), [N, k]"),
     Slot("Indices", "their classes (top_k_v2's Indices, int64), [N, k]"),
     Slot("Label", "each row's class, [N] or [N, 1]")],
    [Slot("Accuracy", "Correct / Total (float32, 0-d)"),
     Slot("Correct", "rows whose label is among their k classes (int32, 0-d)"),
     Slot("Total", "rows (int32, 0-d)")], [],
    comment="Accuracy = the share of rows whose Label is among their top-k Indices.",
    infer_shape=_accuracy_infer, kernels={"cpu": _accuracy_cpu, "cuda": _accuracy_cuda},
    lowered=_lowered_accuracy, grad=NO_GRADIENT))


# --- auc ---------------------------------------------------------------------------------------
def _stat_shape(num_thresholds: int, slide_steps: int) -> list:
    """Paddle's shape of the statistics: one row of buckets, or the rings, their sum and
    the batch counter, flat."""
    buckets = num_thresholds + 1
    return [(1 + slide_steps) * buckets + 1] if slide_steps else [1, buckets]


def _auc_attrs(values: dict) -> str | None:
    if values["curve"] != "ROC":
        return (f"curve={values['curve']!r} is not supported: Paddle's auc kernel computes "
                f"the ROC curve's area whatever curve says (use 'ROC')")
    if values["num_thresholds"] < 1:
        return f"num_thresholds must be at least 1, given {values['num_thresholds']}"
    if values["slide_steps"] < 0:
        return f"slide_steps must be 0 or more, given {values['slide_steps']}"
    return None


def _auc_infer(ctx):
    problem = _auc_attrs({name: ctx.attr(name) for name in
                          ("curve", "num_thresholds", "slide_steps")})
    if problem:
        ctx.fail(problem, slot="Predict", expected="curve='ROC', num_thresholds >= 1, "
                 "slide_steps >= 0", given=problem)
    ctx.require_dtype("Predict", "float")
    ps = ctx.shape("Predict")
    if len(ps) != 2 or ps[1] not in (-1, 1, 2):
        ctx.fail("Predict must hold each row's probabilities of [negative,] positive",
                 slot="Predict", expected="[N, 1] or [N, 2]",
                 given=ctx.describe_input("Predict"))
    _one_label_per_row(ctx, ps[0])
    stat = _stat_shape(ctx.attr("num_thresholds"), ctx.attr("slide_steps"))
    size = stat[0] * stat[-1] if len(stat) == 2 else stat[0]
    for slot in ("StatPos", "StatNeg"):
        s = ctx.shape(slot)
        known = all(d >= 0 for d in s)
        if ctx.dtype(slot) != INT64 or (known and int(np.prod(s, dtype=np.int64)) != size):
            ctx.fail(f"{slot} must hold the int64 counts paddle.static.auc creates for "
                     f"these attributes", slot=slot, expected=f"int64 {stat}",
                     given=ctx.describe_input(slot))
    if ctx.has_input("InsTagWeight"):
        ctx.require_dtype("InsTagWeight", "float")
    ctx.set_output("AUC", [], FLOAT64)
    ctx.set_output("StatPosOut", stat, INT64)
    ctx.set_output("StatNegOut", stat, INT64)


def _check_predict(predict):
    """Each row's positive probability (the last column) must be in [0, 1] (NaN is
    not), or its bucket would be outside the statistics: refused before anything is
    counted, as Paddle refuses it."""
    host = arrays.host(predict)
    last = host[:, host.shape[1] - 1]
    bad = np.flatnonzero(~((last >= 0) & (last <= 1)))
    if bad.size:
        raise ValueError(f"auc: input slot Predict: expected probabilities in [0, 1], "
                         f"given Predict[{bad[0]}, {host.shape[1] - 1}] = "
                         f"{float(last[bad[0]])} ({bad.size} outside)")


def _is_fake(ctx) -> bool:
    """InsTagWeight[0] == 0 marks a batch that must not count (Paddle's rule)."""
    weight = ctx.input("InsTagWeight")
    return weight is not None and float(arrays.host_scalar(weight)) == 0.0


def _check_counts(pos, neg) -> None:
    """The statistics are counts: a negative one (a damaged or hand-edited program) would
    make the area meaningless, and their sums overflow near 2**62; refused before any
    counting (one small host copy on the device)."""
    for slot, counts in (("StatPos", pos), ("StatNeg", neg)):
        values = arrays.host(counts)
        if values.size and (values.min() < 0 or values.max() > 2**52):
            raise ValueError(f"auc: input slot {slot}: expected counts in [0, 2**52], "
                             f"given values in [{values.min()}, {values.max()}]")


def _auc(place: str):
    def run(ctx):
        predict, label = ctx.input("Predict"), _flat_labels(ctx.input("Label"))
        if int(predict.shape[1]) not in (1, 2) or int(predict.shape[0]) != int(label.size):
            raise ValueError(f"auc: Predict {tuple(predict.shape)} must be [N, 1] or [N, 2] "
                             f"with one Label per row, given {int(label.size)} labels")
        _check_predict(predict)
        nt, slides = ctx.attr("num_thresholds"), ctx.attr("slide_steps")
        shape = tuple(_stat_shape(nt, slides))
        # new arrays (StatPosOut is StatPos's variable in Paddle's programs: the values
        # read are kept until these replace them, so a failed run changes nothing)
        pos = arrays.copy(ctx.input("StatPos")).reshape((int(np.prod(shape)),))
        neg = arrays.copy(ctx.input("StatNeg")).reshape((int(np.prod(shape)),))
        _check_counts(pos, neg)
        if place == "cpu":
            area = CPU_METRICS.auc_update(
                np.ascontiguousarray(predict[:, predict.shape[1] - 1]),
                np.ascontiguousarray(label), pos, neg, nt, slides, _is_fake(ctx),
                predict.dtype.type(nt))
            ctx.set_output("AUC", np.array(area, np.float64))
        else:
            area = CUDA_METRICS.auc_update(predict, label, pos, neg, nt, slides, _is_fake(ctx))
            ctx.set_output("AUC", area.reshape(()))
        ctx.set_output("StatPosOut", pos.reshape(shape))
        ctx.set_output("StatNegOut", neg.reshape(shape))
    return run


def _lowered_auc(info):
    """CPU_METRICS.auc_of: the kernel's checks and its auc_update loop, on copies of the
    statistics (a float Predict, integer labels, int64 counts)."""
    if info.dtype("Predict").name not in ("float32", "float64") or \
            info.dtype("Label").kind not in "iu" or info.dtype("StatPos").name != "int64" or \
            info.dtype("StatNeg").name != "int64":
        return None
    nt, slides = info.attr("num_thresholds"), info.attr("slide_steps")
    consts = (nt, slides, tuple(_stat_shape(nt, slides)))
    if info.has_input("InsTagWeight"):
        return Call(CPU_METRICS.auc_of, ("Predict", "Label", "StatPos", "StatNeg",
                                         "InsTagWeight"), ("AUC", "StatPosOut", "StatNegOut"),
                    consts)
    return Call(CPU_METRICS.auc_of, ("Predict", "Label", "StatPos", "StatNeg"),
                ("AUC", "StatPosOut", "StatNegOut"), (None, *consts))


register(OpDef(
    "auc",
    [Slot("Predict", "each row's probabilities, the positive class's last: [N, 1] or "
                     "[N, 2]"),
     Slot("Label", "each row's label (> 0 positive, 0 negative, < 0 not counted)"),
     Slot("StatPos", "counts of positives per bucket (int64, persistable)"),
     Slot("StatNeg", "counts of negatives per bucket (int64, persistable)"),
     Slot("InsTagWeight", "one float: 0 marks a batch that must not count",
          dispensable=True)],
    [Slot("AUC", "the area under the ROC curve of the counts (float64, 0-d)"),
     Slot("StatPosOut", "StatPos with this batch counted (StatPos's variable)"),
     Slot("StatNegOut", "StatNeg with this batch counted (StatNeg's variable)")],
    [Attr("curve", A.STRING, "ROC", "the curve whose area is computed (only ROC)"),
     Attr("num_thresholds", A.INT, (2 << 12) - 1,
          "buckets - 1: a probability p counts in bucket int(p * num_thresholds)"),
     Attr("slide_steps", A.INT, 1, "the AUC of the last slide_steps batches (0: of all "
          "batches so far)")],
    comment="AUC = the ROC area of StatPos/StatNeg after adding this batch's counts per "
            "probability bucket (a streaming AUC: StatPosOut is StatPos's variable).",
    infer_shape=_auc_infer, kernels={"cpu": _auc("cpu"), "cuda": _auc("cuda")},
    grad=NO_GRADIENT, check_attrs=_auc_attrs, lowered=_lowered_auc))
