"""Cross-entropy kernels over rows: probabilities (n, classes), hard labels (n,)."""
import numpy as np
from numba import njit, prange


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def hard_label_loss(prob, label, ignore_index):
    """-log(prob[i, label[i]]) per row; 0 where label == ignore_index."""
    n = prob.shape[0]
    out = np.empty(n, dtype=prob.dtype)
    for i in prange(n):
        if label[i] == ignore_index:
            out[i] = 0
        else:
            out[i] = -np.log(prob[i, label[i]])
    return out


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def softmax_xent_grad(softmax, label, dloss, ignore_index):
    """d loss / d logits = (softmax - onehot(label)) * dloss, rows with ignore_index 0."""
    n, c = softmax.shape
    out = np.empty_like(softmax)
    for i in prange(n):
        if label[i] == ignore_index:
            for j in range(c):
                out[i, j] = 0
            continue
        for j in range(c):
            out[i, j] = softmax[i, j] * dloss[i]
        out[i, label[i]] -= dloss[i]
    return out


@njit(cache=True, fastmath=True, error_model="numpy", parallel=True)
def xent_grad(prob, label, dloss, ignore_index):
    """d(-log prob[label]) / d prob: -dloss / prob at the label, 0 elsewhere."""
    n, c = prob.shape
    out = np.zeros_like(prob)
    for i in prange(n):
        if label[i] != ignore_index:
            out[i, label[i]] = -dloss[i] / prob[i, label[i]]
    return out
