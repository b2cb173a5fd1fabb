"""nce on the device: kernels/cpu/nce.py's ``nce_row`` (read it first; ``register_jitable``,
so it compiles for the device too) and run by one thread per sample; the draws are counter-based, so the
negatives are the CPU's for the same seed."""
from __future__ import annotations

import numpy as np
from numba import cuda

from ..cpu.nce import nce_row
from .device import empty, launch_1d, to_device




@cuda.jit(cache=True)
def _nce(x, label, w, bias, has_bias, sample_weight, has_weight, probs, alias, alias_probs,
         custom_neg, sampler, num_neg, seed, logits, labels, cost):
    for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        nce_row(x, label, w, bias, has_bias, sample_weight, has_weight, probs, alias,
                alias_probs, custom_neg, sampler, num_neg, seed, logits, labels, cost, i)


def _or_stand_in(array, dtype):
    return to_device(np.zeros(1, dtype)) if array is None else array


def nce(x, label, w, bias, sample_weight, probs, alias, alias_probs, custom_neg,
        sampler: int, num_neg: int, seed: int):
    """(Cost [N, 1], SampleLogits, SampleLabels [N, true + num_neg]) on the device; the
    optional arrays None where not given; ``custom_neg`` a host int64 array."""
    n, cols = int(x.shape[0]), int(label.shape[1]) + num_neg
    cost, logits = empty((n, 1), x.dtype), empty((n, cols), x.dtype)
    labels = empty((n, cols), np.int64)
    if n:
        blocks, threads = launch_1d(n)
        _nce[blocks, threads](x, label, w, _or_stand_in(bias, x.dtype), bias is not None,
                              _or_stand_in(sample_weight, x.dtype), sample_weight is not None,
                              _or_stand_in(probs, np.float64),
                              _or_stand_in(alias, np.int64), _or_stand_in(alias_probs, np.float64),
                              to_device(custom_neg), np.int64(sampler), np.int64(num_neg),
                              np.uint64(seed), logits, labels, cost)
    return cost, logits, labels
