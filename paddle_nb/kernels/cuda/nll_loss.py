"""nll_loss kernels on the device, as kernels/cpu/nll_loss.py (read it first): one
thread per element for the per-element losses and the gradient (each element writes
its own position of dX: no two elements share one), one thread for the reduced loss and
the total weight (summed in float64, in the order of the elements, as the CPU's)."""
from __future__ import annotations

import numpy as np
from numba import cuda

from .copy import fill
from .device import empty, flat, launch


@cuda.jit(cache=True)
def _nll_elements(x, label, weight, ignore_index, classes, inner, loss, used):
    for e in range(cuda.grid(1), label.size, cuda.gridsize(1)):
        c = label[e]
        if c == ignore_index:
            loss[e] = 0
            used[e] = 0
        else:
            n, s = e // inner, e % inner
            w = weight[c]
            loss[e] = -x[(n * classes + c) * inner + s] * w
            used[e] = w


def nll_elements(x, label, weight, ignore_index: int, classes: int, inner: int):
    """(loss, weight) of each element, new device arrays of x's dtype."""
    n = int(label.size)
    loss, used = empty((n,), x.dtype), empty((n,), x.dtype)
    launch(_nll_elements, n, flat(x), label, weight, np.int64(ignore_index),
           np.int64(classes), np.int64(inner), loss, used)
    return loss, used


@cuda.jit(cache=True)
def _nll_total(loss, used, mean, out, total):
    if cuda.grid(1) != 0:
        return
    total_loss, total_weight = 0.0, 0.0
    for e in range(loss.size):
        total_loss += loss[e]
        total_weight += used[e]
    if mean and total_weight != 0:
        total_loss /= total_weight
    out[0] = total_loss
    total[0] = total_weight


def nll_total(loss, used, mean: bool):
    """(the reduced loss, the total weight): one-element device arrays of loss's dtype."""
    out, total = empty((1,), loss.dtype), empty((1,), loss.dtype)
    _nll_total[1, 1](loss, used, bool(mean), out, total)
    return out, total


@cuda.jit(cache=True)
def _nll_grad(label, weight, ignore_index, classes, inner, dout, per_element, divisor,
              dx):
    for e in range(cuda.grid(1), label.size, cuda.gridsize(1)):
        c = label[e]
        if c != ignore_index:
            n, s = e // inner, e % inner
            d = dout[e] if per_element else dout[0]
            dx[(n * classes + c) * inner + s] = -weight[c] * d / divisor


def nll_grad(label, weight, ignore_index: int, classes: int, inner: int, dout,
             per_element: bool, divisor: float, size: int, dtype):
    """dX, flat (``size`` elements of ``dtype``): zeros but at each element's label."""
    dx = fill((size,), 0, dtype)
    n = int(label.size)
    launch(_nll_grad, n, label, weight, np.int64(ignore_index), np.int64(classes),
           np.int64(inner), flat(dout), bool(per_element),
           np.dtype(dtype).type(divisor), dx)
    return dx
