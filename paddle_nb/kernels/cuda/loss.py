"""Cross-entropy kernels over rows, as kernels/cpu/loss.py: probabilities ``(n, classes)``
(flat, C order), hard labels ``(n,)`` int64, or soft labels of the probabilities' shape.
One thread per row; a row whose label is ``ignore_index`` gets loss 0 and gradient 0."""
from __future__ import annotations

import math

from numba import cuda

from .device import empty, flat, launch_1d


@cuda.jit(cache=True)
def _hard_label_loss(prob, label, classes, ignore_index, out):
    for r in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        if label[r] == ignore_index:
            out[r] = 0
        else:
            out[r] = -math.log(prob[r * classes + label[r]])


@cuda.jit(cache=True)
def _soft_label_loss(prob, label, classes, out):
    for r in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        s = 0.0
        for j in range(r * classes, (r + 1) * classes):
            s += label[j] * math.log(prob[j])
        out[r] = -s


@cuda.jit(cache=True)
def _softmax_xent_grad(softmax, label, dloss, classes, ignore_index, out):
    """(softmax - onehot(label)) * dloss per row."""
    for r in range(cuda.grid(1), dloss.size, cuda.gridsize(1)):
        start = r * classes
        if label[r] == ignore_index:
            for j in range(start, start + classes):
                out[j] = 0
        else:
            for j in range(start, start + classes):
                out[j] = softmax[j] * dloss[r]
            out[start + label[r]] = (softmax[start + label[r]] - 1) * dloss[r]


@cuda.jit(cache=True)
def _soft_softmax_xent_grad(softmax, label, dloss, classes, out):
    """(softmax - label) * dloss per row."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = (softmax[i] - label[i]) * dloss[i // classes]


@cuda.jit(cache=True)
def _xent_grad(prob, label, dloss, classes, ignore_index, out):
    """d(-log prob[label]) / d prob: -dloss / prob at the label, 0 elsewhere."""
    for r in range(cuda.grid(1), dloss.size, cuda.gridsize(1)):
        start = r * classes
        for j in range(start, start + classes):
            out[j] = 0
        if label[r] != ignore_index:
            out[start + label[r]] = -dloss[r] / prob[start + label[r]]


@cuda.jit(cache=True)
def _soft_xent_grad(prob, label, dloss, classes, out):
    """d(-sum label * log prob) / d prob = -label / prob * dloss."""
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = -label[i] / prob[i] * dloss[i // classes]


def _launch(n):
    return launch_1d(max(n, 1))


def hard_label_loss(prob, label, ignore_index: int):
    """-log(prob[i, label[i]]) per row of the 2-D ``prob``; 0 where label == ignore_index."""
    rows, classes = prob.shape
    out = empty((rows,), prob.dtype)
    if rows:
        blocks, threads = _launch(rows)
        _hard_label_loss[blocks, threads](flat(prob), flat(label), classes, int(ignore_index),
                                          out)
    return out


def soft_label_loss(prob, label):
    """-sum(label * log(prob)) per row."""
    rows, classes = prob.shape
    out = empty((rows,), prob.dtype)
    if rows:
        blocks, threads = _launch(rows)
        _soft_label_loss[blocks, threads](flat(prob), flat(label), classes, out)
    return out


def softmax_xent_grad(softmax, label, dloss, ignore_index: int):
    """d loss / d logits for hard labels; ``dloss`` has one value per row."""
    rows, classes = softmax.shape
    out = empty(softmax.shape, softmax.dtype)
    if rows and classes:
        blocks, threads = _launch(rows)
        _softmax_xent_grad[blocks, threads](flat(softmax), flat(label), flat(dloss), classes,
                                            int(ignore_index), flat(out))
    return out


def soft_softmax_xent_grad(softmax, label, dloss):
    rows, classes = softmax.shape
    out = empty(softmax.shape, softmax.dtype)
    if out.size:
        blocks, threads = _launch(out.size)
        _soft_softmax_xent_grad[blocks, threads](flat(softmax), flat(label), flat(dloss),
                                                 classes, flat(out))
    return out


def xent_grad(prob, label, dloss, ignore_index: int):
    rows, classes = prob.shape
    out = empty(prob.shape, prob.dtype)
    if rows and classes:
        blocks, threads = _launch(rows)
        _xent_grad[blocks, threads](flat(prob), flat(label), flat(dloss), classes,
                                    int(ignore_index), flat(out))
    return out


def soft_xent_grad(prob, label, dloss):
    rows, classes = prob.shape
    out = empty(prob.shape, prob.dtype)
    if out.size:
        blocks, threads = _launch(out.size)
        _soft_xent_grad[blocks, threads](flat(prob), flat(label), flat(dloss), classes,
                                         flat(out))
    return out
