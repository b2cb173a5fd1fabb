"""The metric kernels: top-k accuracy and the bucketed ROC AUC (ops/metrics.py).

``accuracy``: ``indices`` (n, k) are each row's top-k classes, ``label`` (n,) its class;
a row is correct when its label is among its k indices (a label no index can equal,
such as 10**9, is simply never correct: Paddle's rule). ``accuracy_of`` is the op's whole
CPU kernel after its checks, which a compiled block calls too.

``auc``: the statistics are counts of positives and negatives per prediction bucket
(bucket ``int(p * num_thresholds)`` of the positive-class probability p in [0, 1]);
the op checked every p before these run, so the bucket is always in range. With
``slide_steps`` = 0 the counts are one set of ``num_thresholds + 1`` buckets that every
batch adds to; with ``slide_steps`` = s they are s rings of buckets (the last s batches),
their sum after them, and one last cell counting the batches (which ring is next):
a batch empties the oldest ring, takes it out of the sum, fills it, adds it back.
The AUC is the trapezoid area under the ROC curve traced from the highest bucket down,
over (positives * negatives); 0 when either is 0 (Paddle's). Serial loops: the
statistics are small and their order is the algorithm.
"""
import numpy as np
from numba import njit

from ..roc_area import roc_area


@njit(cache=True, fastmath=False, error_model="numpy")
def top_k_correct(indices, label):
    """How many rows of ``indices`` (n, k) hold their ``label`` (n,)."""
    correct = 0
    for i in range(indices.shape[0]):
        for j in range(indices.shape[1]):
            if indices[i, j] == label[i]:
                correct += 1
                break
    return correct


@njit(cache=True, fastmath=False, error_model="numpy")
def accuracy_of(indices, label):
    """accuracy's (Accuracy float32, Correct int32, Total int32), 0-d each, of ``indices``
    (n, k) and ``label`` (n labels, any shape). A negative label, or a label count other
    than n, raises (the op's kernel checks first and names the slot and value)."""
    flat = np.ascontiguousarray(label).reshape(label.size)
    n = indices.shape[0]
    if flat.size != n:
        raise ValueError("accuracy: Label does not hold one label per row")
    for i in range(n):
        if flat[i] < 0:
            raise ValueError("accuracy: a label is negative")
    correct = top_k_correct(np.ascontiguousarray(indices), flat) if n else 0
    accuracy = np.empty(1, np.float32)
    accuracy[0] = correct / n if n else 0.0       # the quotient in float64, then rounded
    return (accuracy.reshape(()), np.full(1, correct, np.int32).reshape(()),
            np.full(1, n, np.int32).reshape(()))


@njit(cache=True, fastmath=False, error_model="numpy")
def _count(positive, label, pos, neg, begin, scale):
    """Each row's bucket count in ``pos`` (label > 0) or ``neg`` (label == 0) from
    ``begin``; a negative label counts nowhere. ``scale``: num_thresholds in the
    probabilities' own type (Paddle multiplies in float32 for float32 inputs, and the
    product's rounding decides the bucket at a boundary)."""
    for i in range(positive.shape[0]):
        bucket = begin + np.int64(positive[i] * scale)
        if label[i] > 0:
            pos[bucket] += 1
        elif label[i] == 0:
            neg[bucket] += 1


@njit(cache=True, fastmath=False, error_model="numpy")
def auc_update(positive, label, pos, neg, num_thresholds, slide_steps, fake, scale):
    """Add a batch (``positive``: each row's probability of the positive class) to the
    statistics ``pos`` and ``neg`` (flat int64, updated in place) and return the AUC of
    what they now hold (``scale``: num_thresholds in positive's type). ``fake``
    (InsTagWeight[0] == 0): a batch that must not count; without slides nothing
    changes, with them its ring is emptied and filled but not added to the sum
    (Paddle's rule)."""
    buckets = num_thresholds + 1
    if slide_steps == 0:
        if not fake:
            _count(positive, label, pos, neg, 0, scale)
        return roc_area(pos, neg, 0, num_thresholds)
    counter = (slide_steps + 1) * buckets
    ring = (pos[counter] % slide_steps) * buckets
    total = slide_steps * buckets
    for i in range(buckets):
        pos[total + i] -= pos[ring + i]
        neg[total + i] -= neg[ring + i]
        pos[ring + i] = 0
        neg[ring + i] = 0
    _count(positive, label, pos, neg, ring, scale)
    if not fake:
        for i in range(buckets):
            pos[total + i] += pos[ring + i]
            neg[total + i] += neg[ring + i]
    area = roc_area(pos, neg, total, num_thresholds)
    pos[counter] += 1
    neg[counter] += 1
    return area


@njit(cache=True, fastmath=False, error_model="numpy")
def auc_of(predict, label, stat_pos, stat_neg, weight, num_thresholds, slide_steps, shape):
    """auc's (AUC, StatPosOut, StatNegOut) in a compiled block: the op's checks (one label
    a row; each positive probability in [0, 1], NaN refused; the counts in [0, 2**52]),
    then ``auc_update`` on copies of the statistics (``shape``: theirs, from the
    attributes); ``weight`` InsTagWeight or None (its first value 0: a fake batch). A
    failed check raises before anything is counted; the interpreter's rerun names it."""
    n = predict.shape[0]
    if (predict.shape[1] != 1 and predict.shape[1] != 2) or n != label.size:
        raise ValueError("auc: Predict must be [N, 1] or [N, 2] with one Label per row")
    positive = np.ascontiguousarray(predict[:, predict.shape[1] - 1])
    for i in range(n):
        if not (positive[i] >= 0 and positive[i] <= 1):
            raise ValueError("auc: a probability of Predict is outside [0, 1]")
    size = 1
    for d in shape:
        size *= d
    if stat_pos.size != size or stat_neg.size != size:
        raise ValueError("auc: StatPos or StatNeg does not hold the attributes' counts")
    pos = np.ascontiguousarray(stat_pos).reshape(size).copy()
    neg = np.ascontiguousarray(stat_neg).reshape(size).copy()
    for i in range(size):
        if pos[i] < 0 or pos[i] > 2**52 or neg[i] < 0 or neg[i] > 2**52:
            raise ValueError("auc: a count of StatPos or StatNeg is outside [0, 2**52]")
    fake = False
    if weight is not None:
        fake = np.ascontiguousarray(weight).reshape(weight.size)[0] == 0.0
    area = auc_update(positive, np.ascontiguousarray(label).reshape(label.size), pos, neg,
                      num_thresholds, slide_steps, fake, predict.dtype.type(num_thresholds))
    result = np.empty((), np.float64)
    result[()] = area
    return result, pos.reshape(shape), neg.reshape(shape)
