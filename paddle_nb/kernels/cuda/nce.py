"""nce on the device: kernels/cpu/nce.py's ``nce_row`` (read it first; it is
``register_jitable``, so it compiles for the device too), run by one thread per sample; the
draws are counter-based, so the negatives are the CPU's for the same seed."""
from __future__ import annotations

import numpy as np
from numba import cuda

from ..cpu.nce import nce_input_grad_row, nce_row, sample_scale, score_gradient
from .device import empty, launch, to_device


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
    launch(_nce, n, x, label, w, _or_stand_in(bias, x.dtype), bias is not None,
           _or_stand_in(sample_weight, x.dtype), sample_weight is not None,
           _or_stand_in(probs, np.float64),
           _or_stand_in(alias, np.int64), _or_stand_in(alias_probs, np.float64),
           to_device(custom_neg), np.int64(sampler), np.int64(num_neg),
           np.uint64(seed), logits, labels, cost)
    return cost, logits, labels


# --- the gradient: dInput one thread per sample; dWeight and dBias gathered, one thread per
# entry (class k, feature d; d = D is the class's bias) over every scored class, so no
# atomics and the same bits every run (as hierarchical_sigmoid's)
@cuda.jit(cache=True)
def _input_grad(w, sample_weight, has_weight, probs, sampler, num_neg, num_true, logits,
                labels, dcost, dx):
    for i in range(cuda.grid(1), dx.shape[0], cuda.gridsize(1)):
        nce_input_grad_row(w, sample_weight, has_weight, probs, sampler, num_neg, num_true,
                           logits, labels, dcost, dx, i)


@cuda.jit(cache=True)
def _class_grads(x, sample_weight, has_weight, probs, sampler, num_neg, num_true, logits,
                 labels, dcost, dw, dbias):
    width = dw.shape[1] + 1
    for e in range(cuda.grid(1), dw.shape[0] * width, cuda.gridsize(1)):
        k = e // width
        d = e - k * width
        acc = 0.0
        for i in range(x.shape[0]):
            scale = sample_scale(dcost, sample_weight, has_weight, i)
            for j in range(labels.shape[1]):
                if labels[i, j] == k:
                    g = score_gradient(sampler, dw.shape[0], probs, num_neg, logits[i, j],
                                       k, j < num_true, scale)
                    acc += g if d == dw.shape[1] else g * x[i, d]
        if d == dw.shape[1]:
            dbias[k] = acc
        else:
            dw[k, d] = acc


def nce_grad(x, w, sample_weight, probs, sampler: int, num_neg: int, num_true: int,
             logits, labels, dcost):
    """(dInput, dWeight, dBias [classes]) on the device; ``sample_weight``/``probs`` None
    where not given."""
    dx, dw = empty(x.shape, x.dtype), empty(w.shape, x.dtype)
    dbias = empty((int(w.shape[0]),), x.dtype)
    args = (_or_stand_in(sample_weight, x.dtype), sample_weight is not None,
            _or_stand_in(probs, np.float64), np.int64(sampler), np.int64(num_neg),
            np.int64(num_true), logits, labels, dcost)
    launch(_input_grad, int(x.shape[0]), w, *args, dx)
    entries = int(w.shape[0]) * (int(w.shape[1]) + 1)
    launch(_class_grads, entries, x, *args, dw, dbias)
    return dx, dw, dbias
