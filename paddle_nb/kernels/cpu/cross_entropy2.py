"""cross_entropy2's scalar math, and the loops a compiled block runs for the op and its
gradient (ops/loss.py): the class axis last, one hard label a row.

The interpreter's kernels apply the two @pointwise functions below (their ufuncs) and pick
each row's value by ``take_along_rows`` after the places' label check, or put it back into
zeros by ``np.add.at``; the loops here call the same scalar functions (the module keeps
them under their names: reduce.pointwise_scalar; the ufuncs are ``KERNELS[name]``) per
row, on the same operands, so each value has the same bits.
"""
import math

import numpy as np
from numba import njit

from .check import first_outside
from .lazy_ufunc import FLOAT_1, FLOAT_2
from .loss import rows_and_labels
from .reduce import pointwise_scalar


@pointwise_scalar(FLOAT_1)
def tolerable_neg_log(x):
    # -log(x), with Paddle's TolerableValue: an infinite log is +-1e20, so a probability
    # of 0 costs 1e20, not inf (log is only called above 0: the CUDA simulator's raises)
    if x > 0:
        return -math.log(x) if x < math.inf else 1e20
    return 1e20 if x == 0 else math.nan


@pointwise_scalar(FLOAT_2)
def match_grad(match, dy):
    # Paddle's -dY / MatchX; at 0 (an ignored row's, never put in dX) -dY * inf, without
    # dividing by 0 (a vectorised loop computes both branches: numpy would warn)
    safe = match if match != 0 else 1.0
    return -dy / safe if match != 0 else -dy * math.inf



@njit(cache=True, fastmath=False, error_model="numpy")
def picked_neg_log(x, label, ignore_index):
    """(Y, MatchX, XShape): each row's probability at its label and -log of it (both 0
    where the label is ``ignore_index``), each [rows..., 1]; XShape X's dims + [0]."""
    prob, labels = rows_and_labels(x, label, ignore_index)      # range-checked
    y, match = np.empty(prob.shape[0], x.dtype), np.empty(prob.shape[0], x.dtype)
    for i in range(prob.shape[0]):
        if labels[i] == ignore_index:
            y[i] = match[i] = 0
        else:
            match[i] = prob[i, labels[i]]
            y[i] = tolerable_neg_log(match[i])
    row = x.shape[:-1] + (1,)
    return y.reshape(row), match.reshape(row), np.empty(x.shape + (0,), x.dtype)


@njit(cache=True, fastmath=False, error_model="numpy")
def put_match_grad(match, label, dy, xshape, ignore_index):
    """dX of X's shape (XShape's without its last dim): -dY / MatchX (``match_grad``)
    added into zeros at each row's label, nothing in an ignored row."""
    shape = xshape.shape[:-1]
    classes = shape[len(shape) - 1]
    n = match.size
    labels = np.ascontiguousarray(label).reshape(label.size)
    if labels.size != n or dy.size != n:
        raise ValueError("cross_entropy_grad2: Label or Y@GRAD does not hold one value a row")
    if first_outside(labels, 0, classes, True, ignore_index) >= 0:
        raise IndexError("cross_entropy_grad2: a class index of Label is out of range")
    m = np.ascontiguousarray(match).reshape(n)
    d = np.ascontiguousarray(dy).reshape(n)
    dx = np.zeros((n, classes), match.dtype)
    for i in range(n):
        if labels[i] != ignore_index:
            dx[i, labels[i]] += match_grad(m[i], d[i])
    return dx.reshape(shape)
