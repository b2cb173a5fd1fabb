"""The RNN-T (transducer) loss of one padded sequence and its gradient, written once for
both places: ``rnnt_batch`` (the CPU, ``njit``) and ``rnnt_kernel`` (the device,
``cuda.jit``, one thread per sequence) are the two loops place_loops.py generates around
``rnnt_sequence`` (ops/rnnt_loss.py says what the op computes).

The lattice has a node (t, u) for "u symbols emitted after t + 1 steps seen"; from it a
path emits blank (to t + 1) or the next symbol label[u] (to u + 1). In log space:
alpha[t, u] is the log probability of reaching (t, u), beta[t, u] of finishing from it
(ending with the blank at (T - 1, U)); log P = beta[0, 0]. The input is read as the log
probabilities of each node's outputs, as Paddle 2.6.2's CPU warp-transducer reads it (no
log-softmax is applied). d(-log P)/d input at a used transition is
-exp(alpha + input + beta(next) - log P); FastEmit (``fastemit_lambda``) scales the
symbol transitions' part by 1 + lambda, a regularization of the gradient only (the loss
is unchanged). Work arrays are float64; the caller checks labels and lengths first.
"""
from __future__ import annotations

import math

from numba.extending import register_jitable

from .ctc import NEG_INF, log_add
from .place_loops import place_loops


@register_jitable
def rnnt_sequence(acts, labels, steps, lengths, blank, fastemit, alpha, beta, grad, loss,
                  b):
    """Sequence ``b`` (``steps[b]`` steps, ``lengths[b]`` symbols) of ``acts``
    [B, max_T, max_U + 1, V]: its loss into ``loss[b]`` and d loss / d acts into
    ``grad[b]`` (zero off its lattice). ``alpha``/``beta`` [B, max_T, max_U + 1] work
    arrays."""
    n_steps, length = steps[b], lengths[b]
    for t in range(acts.shape[1]):
        for u in range(acts.shape[2]):
            for v in range(acts.shape[3]):
                grad[b, t, u, v] = 0.0
    last_t, last_u = n_steps - 1, length
    for t in range(n_steps):
        for u in range(length + 1):
            if t == 0 and u == 0:
                alpha[b, 0, 0] = 0.0
                continue
            a = NEG_INF
            if t > 0:
                a = alpha[b, t - 1, u] + acts[b, t - 1, u, blank]
            if u > 0:
                a = log_add(a, alpha[b, t, u - 1] + acts[b, t, u - 1, labels[b, u - 1]])
            alpha[b, t, u] = a
    for t in range(last_t, -1, -1):
        for u in range(last_u, -1, -1):
            if t == last_t and u == last_u:
                beta[b, t, u] = acts[b, t, u, blank]
                continue
            a = NEG_INF
            if t < last_t:
                a = beta[b, t + 1, u] + acts[b, t, u, blank]
            if u < last_u:
                a = log_add(a, beta[b, t, u + 1] + acts[b, t, u, labels[b, u]])
            beta[b, t, u] = a
    log_like = beta[b, 0, 0]
    loss[b] = -log_like
    emit_scale = 1.0 + fastemit
    for t in range(n_steps):
        for u in range(length + 1):
            if t < last_t:
                grad[b, t, u, blank] -= math.exp(alpha[b, t, u] + acts[b, t, u, blank]
                                                 + beta[b, t + 1, u] - log_like)
            if u < last_u:
                symbol = labels[b, u]
                grad[b, t, u, symbol] -= emit_scale * math.exp(
                    alpha[b, t, u] + acts[b, t, u, symbol] + beta[b, t, u + 1] - log_like)
    grad[b, last_t, last_u, blank] -= math.exp(alpha[b, last_t, last_u]
                                               + acts[b, last_t, last_u, blank] - log_like)


# every sequence of the batch: one after another on the CPU, one thread each on the device
rnnt_batch, rnnt_kernel = place_loops(rnnt_sequence, items="acts.shape[0]",
                                     cpu_name="rnnt_batch", cuda_name="rnnt_kernel")
