"""warpctc and warprnnt inside a compiled block (ops/ctc_loss.py, ops/rnnt_loss.py): the
ops' checks of lengths and labels (raising a constant message: the interpreter's rerun
names the slot and the value), then their kernels' batch loops (kernels/ctc.py,
kernels/rnnt.py) on new arrays; the gradient ops scale the stored gradient by each
sequence's dLoss with the kernels' own loop (ctc.scale_by_sequence)."""
import numpy as np
from numba import njit

from ..ctc import ctc_batch, scale_by_sequence
from ..rnnt import rnnt_batch


@njit(cache=True, fastmath=False, error_model="numpy")
def _lengths(value, batch, low, high):
    """One int64 length per sequence, each in [low, high] (sequence_loss_common's
    host_lengths)."""
    lengths = np.ascontiguousarray(value).reshape(value.size).astype(np.int64)
    if lengths.size != batch:
        raise ValueError("a lengths tensor does not hold one length per sequence")
    for b in range(batch):
        if lengths[b] < low or lengths[b] > high:
            raise ValueError("a length is out of range")
    return lengths


@njit(cache=True, fastmath=False, error_model="numpy")
def _checked_labels(label, lengths, classes, blank, refuse_blank):
    """``label`` (one row per sequence) contiguous, its real symbols checked to be classes
    (and not ``blank`` where ``refuse_blank``): sequence_loss_common's check_labels."""
    if label.shape[0] != lengths.size:
        raise ValueError("Label does not hold one row per sequence")
    for b in range(label.shape[0]):
        for i in range(lengths[b]):
            v = label[b, i]
            if v < 0 or v >= classes or (refuse_blank and v == blank):
                raise IndexError("a class index of Label is out of range")
    return np.ascontiguousarray(label)


@njit(cache=True, fastmath=False, error_model="numpy")
def ctc_loss(logits, label, logits_length, label_length, blank):
    """warpctc's (WarpCTCGrad, Loss [B, 1]) of Logits [max_T, B, C]."""
    max_t, batch, classes = logits.shape
    max_l = label.shape[1]
    if blank < 0 or blank >= classes:
        raise ValueError("warpctc: blank is not a class")
    steps = _lengths(logits_length, batch, 0, max_t)
    lengths = _lengths(label_length, batch, 0, max_l)
    labels = _checked_labels(label, lengths, classes, blank, True)
    logp = np.empty((batch, max_t, classes), np.float64)
    alpha = np.empty((batch, max_t, 2 * max_l + 1), np.float64)
    beta = np.empty((batch, max_t, 2 * max_l + 1), np.float64)
    grad, loss = np.empty(logits.shape, logits.dtype), np.empty(batch, logits.dtype)
    ctc_batch(np.ascontiguousarray(logits), labels, steps, lengths, blank, logp, alpha, beta,
              grad, loss)
    return grad, loss.reshape((batch, 1))


@njit(cache=True, fastmath=False, error_model="numpy")
def rnnt_loss(acts, label, input_lengths, label_lengths, blank, fastemit):
    """warprnnt's (loss [B], warprnntgrad) of log probabilities [B, max_T, max_U + 1, V]."""
    batch, max_t, max_u1, classes = acts.shape
    if blank < 0 or blank >= classes:
        raise ValueError("warprnnt: blank is not an output")
    steps = _lengths(input_lengths, batch, 1, max_t)
    lengths = _lengths(label_lengths, batch, 0, min(label.shape[1], max_u1 - 1))
    labels = _checked_labels(label, lengths, classes, blank, False)
    alpha = np.empty((batch, max_t, max_u1), np.float64)
    beta = np.empty((batch, max_t, max_u1), np.float64)
    grad, loss = np.empty(acts.shape, acts.dtype), np.empty(batch, acts.dtype)
    rnnt_batch(np.ascontiguousarray(acts), labels, steps, lengths, blank, fastemit, alpha,
               beta, grad, loss)
    return loss, grad


@njit(cache=True, fastmath=False, error_model="numpy")
def _scaled(grad, dloss, divisors, norm, batch_axis):
    """grad * dloss[b] (/ divisors[b] under ``norm``), b the sequence along batch_axis."""
    batch = grad.shape[batch_axis]
    inner = 1
    for d in range(batch_axis + 1, grad.ndim):
        inner *= grad.shape[d]
    if dloss.size != batch:
        raise ValueError("the loss's gradient does not hold one value per sequence")
    out = np.empty(grad.shape, grad.dtype)
    scale_by_sequence(np.ascontiguousarray(grad).reshape(grad.size),
                      np.ascontiguousarray(dloss).reshape(batch), divisors, norm, batch,
                      inner, out.reshape(grad.size))
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def ctc_loss_grad(grad, logits_length, dloss, norm_by_times):
    """warpctc_grad's Logits@GRAD: WarpCTCGrad [max_T, B, C] times each sequence's dLoss
    (divided by its steps, at least 1, under norm_by_times)."""
    steps = _lengths(logits_length, grad.shape[1], 0, grad.shape[0])
    return _scaled(grad, dloss, np.maximum(steps, 1).astype(np.float64), norm_by_times, 1)


@njit(cache=True, fastmath=False, error_model="numpy")
def rnnt_loss_grad(grad, dloss):
    """warprnnt_grad's input@GRAD: warprnntgrad [B, ...] times each sequence's dloss."""
    return _scaled(grad, dloss, np.ones(grad.shape[0], np.float64), False, 0)
