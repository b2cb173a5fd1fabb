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

from .check import first_outside


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


# --- inside a compiled block (paddle_nb/compiler) ----------------------------------------
# The loops above, called from numba code after the labels' range check that the op makes
# with kernels/check.py (raising here with a constant message: the executor then reruns
# the block in the interpreter, whose error names the op, the slot and the label). Weight
# is None where the op has none (a literal the generated code passes; numba prunes the
# branch), as the op's kernel then weighs every class 1.
@njit(cache=True, fastmath=False, error_model="numpy")
def checked_labels(x, label, ignore_index):
    """``label`` flat, one class per element of ``x`` seen as (N, C, S), each checked to
    be in [0, C) or ignore_index."""
    flat = np.ascontiguousarray(label).reshape(label.size)
    if flat.size * x.shape[1] != x.size:
        raise ValueError("nll_loss: Label does not hold one class per element of X")
    if first_outside(flat, 0, x.shape[1], True, ignore_index) >= 0:
        raise IndexError("nll_loss: a class index of Label is out of range")
    return flat


@njit(cache=True, fastmath=False, error_model="numpy")
def class_weights(weight, x):
    """Weight as a contiguous array, or ones of x's dtype, one per class, without one."""
    if weight is None:
        return np.ones(x.shape[1], x.dtype)
    return np.ascontiguousarray(weight)


@njit(cache=True, fastmath=False, error_model="numpy")
def _inner(x):
    """S: the elements per (sample, class), the product of x's dims after the second."""
    inner = 1
    for k in range(2, x.ndim):
        inner *= x.shape[k]
    return inner


@njit(cache=True, fastmath=False, error_model="numpy")
def nll_per_element(x, label, weight, ignore_index):
    """reduction none: (Out of (N,) + x.shape[2:], Total_weight 0)."""
    flat = checked_labels(x, label, ignore_index)
    loss, _ = nll_elements(np.ascontiguousarray(x).reshape(x.size), flat,
                           class_weights(weight, x), ignore_index, x.shape[1], _inner(x))
    return loss.reshape(x.shape[:1] + x.shape[2:]), np.zeros((), x.dtype)


@njit(cache=True, fastmath=False, error_model="numpy")
def nll_reduced(x, label, weight, ignore_index, mean):
    """reduction sum or mean: (Out, Total_weight), both 0-d in x's dtype."""
    flat = checked_labels(x, label, ignore_index)
    loss, used = nll_elements(np.ascontiguousarray(x).reshape(x.size), flat,
                              class_weights(weight, x), ignore_index, x.shape[1], _inner(x))
    out, total = nll_total(loss, used, mean)
    out_0d, total_0d = np.empty((), x.dtype), np.empty((), x.dtype)
    out_0d[()] = out
    total_0d[()] = total
    return out_0d, total_0d


@njit(cache=True, fastmath=False, error_model="numpy")
def nll_grad_of(x, label, total_weight, dout, weight, ignore_index, per_element, mean):
    """dX (x's shape) from dOut (of x's dtype); ``mean`` divides by Total_weight unless
    that is 0, as the forward did."""
    flat = checked_labels(x, label, ignore_index)
    divisor = 1.0
    if mean:
        total = float(total_weight.reshape(1)[0])
        divisor = total if total != 0 else 1.0
    dx = nll_grad(flat, class_weights(weight, x), ignore_index, x.shape[1], _inner(x),
                  np.ascontiguousarray(dout).reshape(dout.size), per_element, divisor,
                  np.empty(x.size, x.dtype))
    return dx.reshape(x.shape)
