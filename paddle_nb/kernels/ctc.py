"""The CTC loss of one padded sequence and its gradient, written once for both places:
``ctc_batch`` (the CPU, ``njit``) and ``ctc_kernel`` (the device, ``cuda.jit``, one thread
per sequence) are the two loops place_loops.py generates around ``ctc_sequence``, which
``register_jitable`` lets both compilers take (ops/ctc_loss.py says what the op computes).

The recursions run in log space (probabilities of long sequences underflow): the label
is extended with a blank before, between and after its symbols (2L + 1 states); alpha[t, s]
is the log probability of all paths that are in state s after step t, beta[t, s] of all
paths from state s at step t to the end (both include step t's emission). A path may stay
in its state, move one on, or skip a blank between two different symbols. The gradient
with respect to the logits is softmax minus the posterior of each class at each step
(sum over the states showing that class of exp(alpha + beta - emission - log P)).

Work arrays (log-softmax, alpha, beta) are float64 whatever the logits are, so float32
inputs lose nothing in the sums. The caller range-checks labels and lengths first.
"""
from __future__ import annotations

import math

import numpy as np
from numba.extending import register_jitable

from .place_loops import place_loops

NEG_INF = -np.inf


@register_jitable
def log_add(a, b):
    """log(exp(a) + exp(b)), -inf when both are (no NaN from -inf - -inf)."""
    if a != a or b != b:             # NaN stays NaN (max() would drop it)
        return a + b
    m = a if a > b else b            # (not max(): numba's CUDA target lacks it here)
    if m == NEG_INF:
        return NEG_INF
    return m + math.log(math.exp(a - m) + math.exp(b - m))


@register_jitable
def _state_class(labels, b, s, blank):
    """The class state s of the extended label shows: blank at even s, else a symbol."""
    if s % 2 == 0:
        return blank
    return labels[b, (s - 1) // 2]


@register_jitable
def _may_skip(labels, b, s, t, blank):
    """Whether a path may jump from state s to state t = s + 2 (over a blank): only
    between two different symbols."""
    c = _state_class(labels, b, t, blank)
    return c != blank and c != _state_class(labels, b, s, blank)


@register_jitable
def ctc_sequence(logits, labels, steps, lengths, blank, logp, alpha, beta, grad, loss, b):
    """Sequence ``b`` (``steps[b]`` steps, ``lengths[b]`` symbols): its loss into
    ``loss[b]`` and d loss / d logits into ``grad[:, b, :]`` (zero past its steps).
    ``logits`` [max_T, B, C]; ``labels`` [B, max_L]; ``logp`` [B, max_T, C],
    ``alpha``/``beta`` [B, max_T, 2 max_L + 1] work."""
    n_steps, length = steps[b], lengths[b]
    max_t, classes = logits.shape[0], logits.shape[2]
    for t in range(max_t):
        for v in range(classes):
            grad[t, b, v] = 0.0
    for t in range(n_steps):                     # log-softmax of each step's logits
        top = logits[t, b, 0]
        for v in range(classes):
            if logits[t, b, v] > top:
                top = logits[t, b, v]
        log_z = top          # an inf score takes all the mass (inf - inf is no sum)
        if top != math.inf:
            total = 0.0
            for v in range(classes):
                total += math.exp(logits[t, b, v] - top)
            log_z = top + math.log(total)
        for v in range(classes):
            logp[b, t, v] = logits[t, b, v] - log_z
    repeats = 0
    for i in range(1, length):
        if labels[b, i] == labels[b, i - 1]:
            repeats += 1
    if n_steps == 0 or length + repeats > n_steps:
        # no alignment fits: warp-ctc (so Paddle) answers 0 and a zero gradient
        loss[b] = 0.0
        return
    states = 2 * length + 1
    last = n_steps - 1
    for t in range(n_steps):
        for s in range(states):
            alpha[b, t, s] = NEG_INF
            beta[b, t, s] = NEG_INF
    alpha[b, 0, 0] = logp[b, 0, blank]
    if states > 1:
        alpha[b, 0, 1] = logp[b, 0, labels[b, 0]]
    for t in range(1, n_steps):
        for s in range(states):
            a = alpha[b, t - 1, s]
            if s >= 1:
                a = log_add(a, alpha[b, t - 1, s - 1])
            if s >= 2 and _may_skip(labels, b, s - 2, s, blank):
                a = log_add(a, alpha[b, t - 1, s - 2])
            alpha[b, t, s] = a + logp[b, t, _state_class(labels, b, s, blank)]
    beta[b, last, states - 1] = logp[b, last, _state_class(labels, b, states - 1, blank)]
    if states > 1:
        beta[b, last, states - 2] = logp[b, last, _state_class(labels, b, states - 2, blank)]
    for t in range(last - 1, -1, -1):
        for s in range(states):
            a = beta[b, t + 1, s]
            if s + 1 < states:
                a = log_add(a, beta[b, t + 1, s + 1])
            if s + 2 < states and _may_skip(labels, b, s, s + 2, blank):
                a = log_add(a, beta[b, t + 1, s + 2])
            beta[b, t, s] = a + logp[b, t, _state_class(labels, b, s, blank)]
    log_like = alpha[b, last, states - 1]
    if states > 1:
        log_like = log_add(log_like, alpha[b, last, states - 2])
    loss[b] = -log_like
    for t in range(n_steps):
        for v in range(classes):
            grad[t, b, v] = math.exp(logp[b, t, v])
        for s in range(states):
            c = _state_class(labels, b, s, blank)
            occupancy = alpha[b, t, s] + beta[b, t, s] - logp[b, t, c] - log_like
            if occupancy != NEG_INF:
                grad[t, b, c] -= math.exp(occupancy)


# every sequence of the batch: one after another on the CPU, one thread each on the device
ctc_batch, ctc_kernel = place_loops(ctc_sequence, items="logits.shape[1]",
                                   cpu_name="ctc_batch", cuda_name="ctc_kernel")


# --- the gradient ops: each sequence's stored gradient times its loss's gradient ----------
@register_jitable
def _scale_element(grad, dloss, lengths, norm_by_length, batch, inner, out, i):
    """``out[i]``: flat element ``i`` of the stored gradient times its sequence's dLoss
    (divided by the sequence's length under ``norm_by_length``); ``inner``: elements per
    batch index along the flattened layout, ``batch``: the batch size."""
    b = (i // inner) % batch
    value = grad[i] * dloss[b]
    if norm_by_length:
        value /= lengths[b]
    out[i] = value


# out = grad * dloss[b] (/ lengths[b]) over flat arrays, b each element's sequence
scale_by_sequence, scale_by_sequence_kernel = place_loops(
    _scale_element, items="grad.size", cpu_name="scale_by_sequence",
    cuda_name="scale_by_sequence_kernel")
