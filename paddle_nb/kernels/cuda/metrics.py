"""The metric kernels on the device, as kernels/cpu/metrics.py says (read it first).

``accuracy``: one thread per row tests its label against its k indices and adds 1 to
the correct count (an atomic add on one int32); one thread then writes the ratio.

``auc``: three launches over device statistics, so nothing comes back to the host:
``_auc_begin`` (one thread) empties the ring this batch fills and takes it out of the
sum, ``_auc_count`` (a thread per row) adds each row to its bucket with an atomic add
(counts are integers: the order of the additions does not matter), ``_auc_finish``
(one thread) adds the ring back into the sum, writes the AUC and advances the batch
counter. Which ring is this batch's is read on the device from that counter.
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from ..roc_area import roc_area
from .copy import fill
from .device import empty, flat, launch


@cuda.jit(cache=True)
def _top_k_correct(indices, label, k, correct):
    for i in range(cuda.grid(1), label.size, cuda.gridsize(1)):
        for j in range(k):
            if indices[i * k + j] == label[i]:
                cuda.atomic.add(correct, 0, 1)
                break


@cuda.jit(cache=True)
def _ratio(correct, total, accuracy):
    if cuda.grid(1) == 0:
        accuracy[0] = correct[0] / total if total > 0 else 0.0


def accuracy(indices, label):
    """(Accuracy float32, Correct int32, Total int32), each of one element, for the
    top-k ``indices`` (n, k) and ``label`` (n,), on the device."""
    n, k = int(indices.shape[0]), int(indices.shape[1])
    correct = fill((1,), 0, np.int32)
    if n and k:
        launch(_top_k_correct, n, flat(indices), flat(label), np.int64(k), correct)
    out = empty((1,), np.float32)
    _ratio[1, 1](correct, np.int64(n), out)
    return out, correct, fill((1,), n, np.int32)


@cuda.jit(device=True)
def _ring(pos, num_thresholds, slide_steps):
    """Where this batch's ring of buckets begins (0 without slides)."""
    if slide_steps == 0:
        return 0
    return (pos[(slide_steps + 1) * (num_thresholds + 1)] % slide_steps) * \
        (num_thresholds + 1)


@cuda.jit(cache=True)
def _auc_begin(pos, neg, num_thresholds, slide_steps):
    if cuda.grid(1) != 0 or slide_steps == 0:
        return
    ring = _ring(pos, num_thresholds, slide_steps)
    total = slide_steps * (num_thresholds + 1)
    for i in range(num_thresholds + 1):
        pos[total + i] -= pos[ring + i]
        neg[total + i] -= neg[ring + i]
        pos[ring + i] = 0
        neg[ring + i] = 0


@cuda.jit(cache=True)
def _auc_count(predict, width, label, pos, neg, num_thresholds, slide_steps, scale):
    ring = _ring(pos, num_thresholds, slide_steps)
    for i in range(cuda.grid(1), label.size, cuda.gridsize(1)):
        # (scale: num_thresholds in predict's type, as the CPU's)
        bucket = ring + np.int64(predict[i * width + width - 1] * scale)
        if label[i] > 0:
            cuda.atomic.add(pos, bucket, 1)
        elif label[i] == 0:
            cuda.atomic.add(neg, bucket, 1)


@cuda.jit(cache=True)
def _auc_finish(pos, neg, num_thresholds, slide_steps, fake, auc):
    if cuda.grid(1) != 0:
        return
    total = slide_steps * (num_thresholds + 1)
    if slide_steps > 0 and not fake:
        ring = _ring(pos, num_thresholds, slide_steps)
        for i in range(num_thresholds + 1):
            pos[total + i] += pos[ring + i]
            neg[total + i] += neg[ring + i]
    auc[0] = roc_area(pos, neg, total, num_thresholds)
    if slide_steps > 0:
        counter = (slide_steps + 1) * (num_thresholds + 1)
        pos[counter] += 1
        neg[counter] += 1


def auc_update(predict, label, pos, neg, num_thresholds: int, slide_steps: int,
               fake: bool):
    """As the CPU's ``auc_update`` on device arrays: ``predict`` (n, width) with the
    positive class's probability last (checked to be in [0, 1]), ``label`` (n,), ``pos``
    and ``neg`` flat int64 statistics updated in place. Returns the AUC, a float64 of
    one element on the device."""
    auc = empty((1,), np.float64)
    args = (np.int64(num_thresholds), np.int64(slide_steps))
    _auc_begin[1, 1](pos, neg, *args)
    n = int(label.size)
    if n and not (fake and slide_steps == 0):
        launch(_auc_count, n, flat(predict), np.int64(predict.shape[1]), flat(label),
               pos, neg, *args, predict.dtype.type(num_thresholds))
    _auc_finish[1, 1](pos, neg, *args, bool(fake), auc)
    return auc
