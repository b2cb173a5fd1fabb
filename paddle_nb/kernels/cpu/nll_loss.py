"""nll_loss kernels (ops/log_prob_losses.py): the negative log-likelihood of log-
probabilities ``x`` seen as (N, C, S) (S = H * W for a 4-D input, 1 for a 2-D one) at
each element's ``label`` (N * S of them, flat), times the class's ``weight``.

An element whose label is ``ignore_index`` contributes 0 loss, 0 weight and 0 gradient.
Labels were range-checked by the op before these run (kernels/check.py): they index
unchecked. Serial loops in the order of the elements, as Paddle's CPU kernel sums them
(the reduced loss and the total weight accumulate in float64).
"""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def nll_elements(x, label, weight, ignore_index, classes, inner):
    """(loss, weight) of each element (N * S each, x's dtype): -x[n, label, s] * w and w."""
    n_elements = label.shape[0]
    loss = np.empty(n_elements, x.dtype)
    used = np.empty(n_elements, x.dtype)
    for e in range(n_elements):
        c = label[e]
        if c == ignore_index:
            loss[e] = 0
            used[e] = 0
            continue
        n, s = e // inner, e % inner
        w = weight[c]
        loss[e] = -x[(n * classes + c) * inner + s] * w
        used[e] = w
    return loss, used


@njit(cache=True, fastmath=False, error_model="numpy")
def nll_total(loss, used, mean):
    """(the summed loss, divided by the total weight when ``mean`` and that is not 0;
    the total weight), as two floats."""
    total_loss, total_weight = 0.0, 0.0
    for e in range(loss.shape[0]):
        total_loss += loss[e]
        total_weight += used[e]
    if mean and total_weight != 0:
        total_loss /= total_weight
    return total_loss, total_weight


@njit(cache=True, fastmath=False, error_model="numpy")
def nll_grad(label, weight, ignore_index, classes, inner, dout, per_element, divisor,
             dx):
    """dx (flat, x's size) = 0 but at each element's label: -w * dOut / divisor, where
    dOut is the element's own (``per_element``: reduction none) or dout[0]."""
    for i in range(dx.shape[0]):
        dx[i] = 0
    for e in range(label.shape[0]):
        c = label[e]
        if c == ignore_index:
            continue
        n, s = e // inner, e % inner
        d = dout[e] if per_element else dout[0]
        dx[(n * classes + c) * inner + s] = -weight[c] * d / divisor
    return dx
