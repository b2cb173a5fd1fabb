"""Cross-entropy kernels over rows: probabilities (n, classes), hard labels (n,).

Each entry point picks a serial or a ``prange`` (over rows) kernel by size, both generated
around the same per-row code (twins.py), inlined (``inline="always"``: a call per row that
passes arrays costs an NRT incref/decref pair; softmax_xent_grad over 65,536 rows of 16
took 0.79 ms, now 0.17).
"""
import numpy as np
from numba import njit

from .threads import parallel_ok
from .twins import twins

# From where the prange kernels run (2 threads): the first measured power of 2 where they
# took <= ~0.8x the serial time, for 16 to 1000 classes.
MIN_PARALLEL_LOSS_ROWS = 8_192         # hard_label_loss: measured crossover ~4k rows
MIN_PARALLEL_SOFTMAX_GRAD = 131_072    # softmax_xent_grad: crossover 32k-128k elements
MIN_PARALLEL_XENT_ROWS = 1_024         # xent_grad (zeros + one value a row): crossover
#                                        < 1k rows at 64 classes, ~1k at 16


@njit(cache=True, fastmath=True, error_model="numpy", inline="always")
def _hard_label_loss_row(prob, label, ignore_index, out, i):
    if label[i] == ignore_index:
        out[i] = 0
    else:
        out[i] = -np.log(prob[i, label[i]])


_hard_label_loss_serial, _hard_label_loss_parallel = twins(
    _hard_label_loss_row, "_hard_label_loss", items="prob.shape[0]",
    allocate={"out": "np.empty(prob.shape[0], dtype=prob.dtype)"})


def hard_label_loss(prob, label, ignore_index):
    """-log(prob[i, label[i]]) per row; 0 where label == ignore_index."""
    if prob.shape[0] >= MIN_PARALLEL_LOSS_ROWS and parallel_ok():
        return _hard_label_loss_parallel(prob, label, ignore_index)
    return _hard_label_loss_serial(prob, label, ignore_index)


@njit(cache=True, fastmath=True, error_model="numpy", inline="always")
def _softmax_xent_grad_row(softmax, label, dloss, ignore_index, out, i):
    c = softmax.shape[1]
    if label[i] == ignore_index:
        for j in range(c):
            out[i, j] = 0
        return
    for j in range(c):
        out[i, j] = softmax[i, j] * dloss[i]
    out[i, label[i]] -= dloss[i]


_softmax_xent_grad_serial, _softmax_xent_grad_parallel = twins(
    _softmax_xent_grad_row, "_softmax_xent_grad", items="softmax.shape[0]",
    allocate={"out": "np.empty_like(softmax)"})


def softmax_xent_grad(softmax, label, dloss, ignore_index):
    """d loss / d logits = (softmax - onehot(label)) * dloss, rows with ignore_index 0."""
    if softmax.size >= MIN_PARALLEL_SOFTMAX_GRAD and parallel_ok():
        return _softmax_xent_grad_parallel(softmax, label, dloss, ignore_index)
    return _softmax_xent_grad_serial(softmax, label, dloss, ignore_index)


@njit(cache=True, fastmath=True, error_model="numpy", inline="always")
def _xent_grad_row(prob, label, dloss, ignore_index, out, i):
    if label[i] != ignore_index:
        out[i, label[i]] = -dloss[i] / prob[i, label[i]]


_xent_grad_serial, _xent_grad_parallel = twins(
    _xent_grad_row, "_xent_grad", items="prob.shape[0]", allocate={"out": "np.zeros_like(prob)"})


def xent_grad(prob, label, dloss, ignore_index):
    """d(-log prob[label]) / d prob: -dloss / prob at the label, 0 elsewhere."""
    if prob.shape[0] >= MIN_PARALLEL_XENT_ROWS and parallel_ok():
        return _xent_grad_parallel(prob, label, dloss, ignore_index)
    return _xent_grad_serial(prob, label, dloss, ignore_index)
