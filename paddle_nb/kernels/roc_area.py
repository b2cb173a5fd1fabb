"""The area under the ROC curve of bucketed counts, written once for both places: the
CPU's auc kernel (kernels/cpu/metrics.py, inside ``njit``) and the device's
(kernels/cuda/metrics.py, inside ``cuda.jit``) call it, as ``register_jitable`` lets
both compilers take the same function."""
from __future__ import annotations

from numba.extending import register_jitable


@register_jitable
def roc_area(pos, neg, begin, num_thresholds):
    """The ROC AUC of the buckets ``begin .. begin + num_thresholds`` (positives ``pos``,
    negatives ``neg``), by the trapezoid rule from the highest threshold down, as
    Paddle's auc kernel sums it; 0 while one class has no rows."""
    area, tot_pos, tot_neg = 0.0, 0.0, 0.0
    for idx in range(begin + num_thresholds, begin - 1, -1):
        prev_pos, prev_neg = tot_pos, tot_neg
        tot_pos += pos[idx]
        tot_neg += neg[idx]
        area += abs(tot_neg - prev_neg) * (tot_pos + prev_pos) / 2.0
    if tot_pos > 0.0 and tot_neg > 0.0:
        area = area / tot_pos / tot_neg
    return area
