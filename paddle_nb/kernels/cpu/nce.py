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

from numba import njit
from numba.extending import register_jitable

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
