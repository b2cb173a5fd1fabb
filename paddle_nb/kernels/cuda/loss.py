"""Cross-entropy kernels over rows, as kernels/cpu/loss.py: probabilities ``(n, classes)``
(flat, C order), hard labels ``(n,)`` int64, or soft labels of the probabilities' shape.
One thread per row; a row whose label is ``ignore_index`` gets loss 0 and gradient 0."""
from __future__ import annotations

import math

from numba import cuda

from .device import empty, flat, launch


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


def _written(kernel, shape, dtype, n: int, *args):
    """A new device array of ``shape`` and ``dtype``, written by ``kernel(*args, out)``
    over ``n`` threads (rows or elements)."""
    out = empty(shape, dtype)
    launch(kernel, n, *args, flat(out))
    return out


def hard_label_loss(prob, label, ignore_index: int):
    """-log(prob[i, label[i]]) per row of the 2-D ``prob``; 0 where label == ignore_index."""
    rows, classes = prob.shape
    return _written(_hard_label_loss, (rows,), prob.dtype, rows, flat(prob), flat(label),
                    classes, int(ignore_index))


def soft_label_loss(prob, label):
    """-sum(label * log(prob)) per row."""
    rows, classes = prob.shape
    return _written(_soft_label_loss, (rows,), prob.dtype, rows, flat(prob), flat(label),
                    classes)


def softmax_xent_grad(softmax, label, dloss, ignore_index: int):
    """d loss / d logits for hard labels; ``dloss`` has one value per row."""
    rows, classes = softmax.shape
    return _written(_softmax_xent_grad, softmax.shape, softmax.dtype, rows if classes else 0,
                    flat(softmax), flat(label), flat(dloss), classes, int(ignore_index))


def soft_softmax_xent_grad(softmax, label, dloss):
    return _written(_soft_softmax_xent_grad, softmax.shape, softmax.dtype, softmax.size,
                    flat(softmax), flat(label), flat(dloss), softmax.shape[1])


def xent_grad(prob, label, dloss, ignore_index: int):
    rows, classes = prob.shape
    return _written(_xent_grad, prob.shape, prob.dtype, rows if classes else 0, flat(prob),
                    flat(label), flat(dloss), classes, int(ignore_index))


def soft_xent_grad(prob, label, dloss):
    return _written(_soft_xent_grad, prob.shape, prob.dtype, prob.size, flat(prob),
                    flat(label), flat(dloss), prob.shape[1])
