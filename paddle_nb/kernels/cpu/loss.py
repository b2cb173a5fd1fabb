"""Cross-entropy kernels over rows: probabilities (n, classes), hard labels (n,).

Each entry point picks a serial or a ``prange`` (over rows) kernel by size, both generated
around the same per-row code (twins.py), inlined (``inline="always"``: a call per row that
passes arrays costs an NRT incref/decref pair; softmax_xent_grad over 65,536 rows of 16
took 0.79 ms, now 0.17).
"""
import numpy as np
from numba import njit

from .check import first_outside
from .matrix_view import last_axis_rows
from .reduce import _row_softmax_serial
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


# --- inside a compiled block (paddle_nb/compiler): class axis last, hard labels ----------
# The serial loops above, called from numba code (reduce.py says why serial), after the
# labels' range check that the places' hard_labels makes (raising here: the executor then
# runs the block in the interpreter, whose error names the op and the label).
@njit(cache=True, fastmath=False, error_model="numpy")
def rows_and_labels(scores, label, ignore_index):
    """``scores`` as (rows, classes) and ``label``'s class indices, one per row, each
    checked to be in [0, classes) or ignore_index."""
    rows = last_axis_rows(scores)
    flat = np.ascontiguousarray(label).reshape(label.size)
    if flat.size != rows.shape[0]:
        raise ValueError("Label does not hold one class index per row")
    if first_outside(flat, 0, rows.shape[1], True, ignore_index) >= 0:
        raise ValueError("a class index of Label is out of range")
    return rows, flat


@njit(cache=True, fastmath=False, error_model="numpy")
def softmax_xent(logits, label, ignore_index):
    """softmax_with_cross_entropy: (Softmax, Loss) of logits over the last axis."""
    rows, labels = rows_and_labels(logits, label, ignore_index)
    prob = _row_softmax_serial(rows)
    loss = _hard_label_loss_serial(prob, labels, ignore_index)
    return prob.reshape(logits.shape), loss.reshape(logits.shape[:-1] + (1,))


@njit(cache=True, fastmath=False, error_model="numpy")
def softmax_xent_grad_of(softmax, label, dloss, ignore_index):
    """softmax_with_cross_entropy's dLogits, from Softmax and dLoss (of one dtype)."""
    prob, labels = rows_and_labels(softmax, label, ignore_index)
    d = np.ascontiguousarray(dloss).reshape(prob.shape[0])
    return _softmax_xent_grad_serial(prob, labels, d, ignore_index).reshape(softmax.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def xent(x, label, ignore_index):
    """cross_entropy's Y: -log of each row's probability at its label."""
    prob, labels = rows_and_labels(x, label, ignore_index)
    return _hard_label_loss_serial(prob, labels, ignore_index).reshape(x.shape[:-1] + (1,))


@njit(cache=True, fastmath=False, error_model="numpy")
def xent_grad_of(x, label, dy, ignore_index):
    """cross_entropy's dX, from X and dY (of one dtype)."""
    prob, labels = rows_and_labels(x, label, ignore_index)
    d = np.ascontiguousarray(dy).reshape(prob.shape[0])
    return _xent_grad_serial(prob, labels, d, ignore_index).reshape(x.shape)
