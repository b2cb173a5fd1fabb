"""nce's per-sample work on the CPU (ops/nce.py says what the op computes);
kernels/cuda/nce.py compiles ``nce_row`` for the device, one thread per sample, so one
seed draws the same negative classes on both places.

Negatives are drawn as Paddle's samplers draw them, from counter-based uniforms
(kernels/cpu/sampling.py's ``draw``; draw numbers (position in SampleLabels, 0 or 1)):
- 0 uniform: a class in [0, num_total_classes), each with probability 1 / classes;
- 1 log-uniform (Zipfian): int(exp(u * log(classes))) - 1, taken modulo classes - 1 as
  Paddle's LogUniformSampler does; P(k) = log((k + 2) / (k + 1)) / log(classes);
- 2 custom: Walker's alias method over CustomDistAliasProbs and CustomDistAlias (a
  uniform class k, kept with probability alias_probs[k], else alias[k]; an alias of -1
  keeps k, as Paddle); P(k) = CustomDistProbs[k].
"""
import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

from .check import first_outside
from .sampling import draw, pick_below

UNIFORM, LOG_UNIFORM, CUSTOM = 0, 1, 2


@register_jitable
def negative_class(sampler, classes, alias, alias_probs, seed, element):
    """One negative class for SampleLabels' flat position ``element``."""
    if sampler == UNIFORM:
        return pick_below(draw(seed, element, 0), classes)
    if sampler == LOG_UNIFORM:
        value = int(math.exp(draw(seed, element, 0) * math.log(classes))) - 1
        return value % (classes - 1) if classes > 1 else 0
    k = pick_below(draw(seed, element, 0), classes)
    if draw(seed, element, 1) > alias_probs[k] and alias[k] >= 0:
        return alias[k]
    return k


@register_jitable
def class_probability(sampler, classes, probs, k):
    """The probability the sampler draws class k."""
    if sampler == UNIFORM:
        return 1.0 / classes
    if sampler == LOG_UNIFORM:
        return math.log((k + 2.0) / (k + 1.0)) / math.log(classes)
    return probs[k]


@register_jitable
def nce_row(x, label, w, bias, has_bias, sample_weight, has_weight, probs, alias,
            alias_probs, custom_neg, sampler, num_neg, seed, logits, labels, cost, i):
    """Sample i: its true classes then its negatives into SampleLabels, sigmoid(W[k] . X[i]
    + Bias[k]) of each into SampleLogits, and Cost[i] = -sum log(o / (o + b)) over the
    true classes - sum log(b / (o + b)) over the negatives, b = num_neg * P(k), times the
    sample's weight."""
    classes = w.shape[0]
    num_true = label.shape[1]
    cols = labels.shape[1]
    for j in range(cols):
        if j < num_true:
            labels[i, j] = label[i, j]
        elif custom_neg.shape[0] > 0:
            labels[i, j] = custom_neg[j - num_true]
        else:
            labels[i, j] = negative_class(sampler, classes, alias, alias_probs, seed,
                                          i * cols + j)
    total = 0.0
    for j in range(cols):
        k = labels[i, j]
        z = bias[k] if has_bias else 0.0
        for d in range(x.shape[1]):
            z += w[k, d] * x[i, d]
        o = 1.0 / (1.0 + math.exp(-z))
        logits[i, j] = o
        b = class_probability(sampler, classes, probs, k) * num_neg
        total -= math.log(o / (o + b)) if j < num_true else math.log(b / (o + b))
    cost[i, 0] = total * (sample_weight[i] if has_weight else 1.0)


@njit(cache=True, fastmath=False, error_model="numpy")
def nce(x, label, w, bias, has_bias, sample_weight, has_weight, probs, alias, alias_probs,
        custom_neg, sampler, num_neg, seed, logits, labels, cost):
    for i in range(x.shape[0]):
        nce_row(x, label, w, bias, has_bias, sample_weight, has_weight, probs, alias,
                alias_probs, custom_neg, sampler, num_neg, seed, logits, labels, cost, i)


# --- the gradient (nce_grad) ---------------------------------------------------------------
@register_jitable
def score_gradient(sampler, classes, probs, num_neg, o, k, is_true, scale):
    """dCost/dz of one scored class (z its logit, o = sigmoid(z)), times ``scale`` (the
    sample's dCost and weight): -b (1 - o) / (o + b) for a true class, o (1 - o) / (o + b)
    for a negative, b = num_neg * P(k) (Paddle's nce_grad)."""
    b = class_probability(sampler, classes, probs, k) * num_neg
    if is_true:
        return -b * (1.0 - o) / (o + b) * scale
    return o * (1.0 - o) / (o + b) * scale


@register_jitable
def sample_scale(dcost, sample_weight, has_weight, i):
    return dcost[i] * (sample_weight[i] if has_weight else 1.0)


@register_jitable
def nce_input_grad_row(w, sample_weight, has_weight, probs, sampler, num_neg, num_true,
                       logits, labels, dcost, dx, i):
    """dInput[i] = sum over the scored classes k of score_gradient * Weight[k]."""
    scale = sample_scale(dcost, sample_weight, has_weight, i)
    for d in range(dx.shape[1]):
        dx[i, d] = 0.0
    for j in range(labels.shape[1]):
        k = labels[i, j]
        g = score_gradient(sampler, w.shape[0], probs, num_neg, logits[i, j], k,
                           j < num_true, scale)
        for d in range(dx.shape[1]):
            dx[i, d] += g * w[k, d]


@njit(cache=True, fastmath=False, error_model="numpy")
def nce_grad(x, w, sample_weight, has_weight, probs, sampler, num_neg, num_true, logits,
             labels, dcost, dx, dw, dbias):
    """dInput row by row; dWeight and dBias (zeroed here) by adding each scored class's
    share into its row, samples in order."""
    dw[:] = 0.0
    dbias[:] = 0.0
    for i in range(x.shape[0]):
        nce_input_grad_row(w, sample_weight, has_weight, probs, sampler, num_neg, num_true,
                           logits, labels, dcost, dx, i)
        scale = sample_scale(dcost, sample_weight, has_weight, i)
        for j in range(labels.shape[1]):
            k = labels[i, j]
            g = score_gradient(sampler, w.shape[0], probs, num_neg, logits[i, j], k,
                               j < num_true, scale)
            dbias[k] += g
            for d in range(x.shape[1]):
                dw[k, d] += g * x[i, d]


# --- inside a compiled block (paddle_nb/compiler): the loops above after the op's checks ---
# The generated call passes the op's operands in their slots' order; one the op has not is
# read from a stand-in slot (Input for a float, Label for an int one) and its ``has_`` flag
# is False, so it becomes the interpreter's own stand-in here (numba compiles both
# branches, hence the stand-in of the right kind). The draws are sampling.draw's of the
# same seed (a literal: the ``seed`` attribute), so the same negatives as the interpreter.
@njit(cache=True, fastmath=False, error_model="numpy")
def _floats_or(a, present, dtype):
    """``a`` flat in ``dtype`` where ``present``, else the kernels' one-zero stand-in."""
    if present:
        return np.ascontiguousarray(a).reshape(a.size).astype(dtype)
    return np.zeros(1, dtype)


@njit(cache=True, fastmath=False, error_model="numpy")
def nce_loss(x, label, w, bias, sample_weight, probs, alias, alias_probs, has_bias,
             has_weight, has_probs, has_alias, has_alias_probs, custom_neg, neg_count,
             sampler, num_neg, seed):
    """(Cost, SampleLogits, SampleLabels) as the op's kernel computes them; ``custom_neg``
    a tuple whose first ``neg_count`` values after a leading 0 are custom_neg_classes."""
    classes, n = w.shape[0], x.shape[0]
    if label.shape[0] != n or x.shape[1] != w.shape[1]:
        raise ValueError("nce: Label or Weight does not fit Input")
    lab = np.ascontiguousarray(label)
    if first_outside(lab.reshape(lab.size), 0, classes, False, 0) >= 0:
        raise IndexError("nce: a class of Label is out of range")
    aliases = _floats_or(alias, has_alias, np.int64)
    if sampler == CUSTOM and neg_count == 0 and \
            first_outside(aliases, 0, classes, True, -1) >= 0:
        raise IndexError("nce: a class of CustomDistAlias is out of range")
    b = _floats_or(bias, has_bias, x.dtype)
    weights = _floats_or(sample_weight, has_weight, x.dtype)
    p = _floats_or(probs, has_probs, np.float64)
    keep = _floats_or(alias_probs, has_alias_probs, np.float64)
    if (has_bias and b.size < classes) or (has_weight and weights.size < n) or \
            (sampler == CUSTOM and (p.size < classes or (neg_count == 0 and (
                aliases.size < classes or keep.size < classes)))):
        raise ValueError("nce: Bias, SampleWeight or the custom distribution is too short")
    negatives = np.empty(neg_count, np.int64)
    for k in range(neg_count):
        negatives[k] = custom_neg[k + 1]
    cols = label.shape[1] + num_neg
    cost, logits = np.empty((n, 1), x.dtype), np.empty((n, cols), x.dtype)
    labels = np.empty((n, cols), np.int64)
    nce(np.ascontiguousarray(x), lab, np.ascontiguousarray(w), b, has_bias, weights,
        has_weight, p, aliases, keep, negatives, sampler, num_neg, seed, logits, labels, cost)
    return cost, logits, labels


@njit(cache=True, fastmath=False, error_model="numpy")
def _nce_grads(x, w, label, sample_weight, probs, logits, labels, dcost, has_weight,
               has_probs, sampler, num_neg):
    """(dInput, dWeight, dBias flat): the op's checks, then nce_grad."""
    n, num_true = x.shape[0], label.shape[1]
    if logits.shape[0] != n or logits.shape[1] != num_true + num_neg or \
            labels.shape != logits.shape or dcost.size != n:
        raise ValueError("nce_grad: SampleLogits, SampleLabels or Cost@GRAD is not the "
                         "forward's")
    lab = np.ascontiguousarray(labels)
    if first_outside(lab.reshape(lab.size), 0, w.shape[0], False, 0) >= 0:
        raise IndexError("nce_grad: a class of SampleLabels is out of range")
    dx, dw = np.empty(x.shape, x.dtype), np.empty(w.shape, x.dtype)
    dbias = np.empty(w.shape[0], x.dtype)
    nce_grad(np.ascontiguousarray(x), np.ascontiguousarray(w),
             _floats_or(sample_weight, has_weight, x.dtype), has_weight,
             _floats_or(probs, has_probs, np.float64), sampler, num_neg, num_true,
             np.ascontiguousarray(logits), lab, np.ascontiguousarray(dcost).reshape(n),
             dx, dw, dbias)
    return dx, dw, dbias


@njit(cache=True, fastmath=False, error_model="numpy")
def nce_loss_grad(x, label, w, bias, sample_weight, probs, logits, labels, dcost,
                  has_weight, has_probs, sampler, num_neg):
    """(dInput, dWeight, dBias in Bias's shape)."""
    dx, dw, dbias = _nce_grads(x, w, label, sample_weight, probs, logits, labels, dcost,
                               has_weight, has_probs, sampler, num_neg)
    if bias.size != dbias.size:
        raise ValueError("nce_grad: Bias does not hold one value a class")
    return dx, dw, dbias.reshape(bias.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def nce_loss_grad_unbiased(x, label, w, sample_weight, probs, logits, labels, dcost,
                           has_weight, has_probs, sampler, num_neg):
    """nce_loss_grad of an op without Bias (no Bias@GRAD: the third value is dropped)."""
    return _nce_grads(x, w, label, sample_weight, probs, logits, labels, dcost, has_weight,
                      has_probs, sampler, num_neg)
