"""hierarchical_sigmoid's loops on the CPU (ops/hierarchical_sigmoid.py says what the op
computes). The per-sample functions are ``register_jitable``: the CPU loops below and the
CUDA kernels of kernels/cuda/hierarchical_sigmoid.py call the same ones, so both places
share one description of a path.

A sample's path is a list of (node, bit) pairs, root first:
- the default tree (``custom`` False) is Paddle's SimpleCode, the complete binary tree
  over ``num_classes`` leaves: with c = label + num_classes, step j visits node
  (c >> (j + 1)) - 1 and takes bit (c >> j) & 1; the path has floor(log2(c)) steps.
- a custom tree (``custom`` True) is row i of PathTable (nodes) and PathCode (bits), the
  path ending at the first negative node (Paddle pads with -1).
Node indices were range-checked by the op before these run.
"""
import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

# Paddle clips each node's pre-activation to [-CLIP, CLIP] before its softplus
CLIP = 40.0


@register_jitable
def path_length(custom, table, i, c):
    """How many (node, bit) steps sample i's path has (c = its label + num_classes)."""
    n = 0
    if custom:
        while n < table.shape[1] and table[i, n] >= 0:
            n += 1
        return n
    c >>= 1
    while c > 0:             # floor(log2(c)) of the original c
        c >>= 1
        n += 1
    return n


@register_jitable
def node_of(custom, table, i, c, j):
    """The node (a row of W and Bias) of step j of sample i's path."""
    if custom:
        return table[i, j]
    return (c >> (j + 1)) - 1


@register_jitable
def bit_of(custom, code, i, c, j):
    """The branch (1: the bit is set) taken at step j of sample i's path."""
    if custom:
        return 1 if code[i, j] != 0 else 0
    return (c >> j) & 1


@register_jitable
def forward_row(x, w, bias, has_bias, labels, table, code, custom, num_classes, pre_out,
                out, i):
    """Sample i: PreOut[i, j] = softplus(clip(W[node] . X[i] + Bias[node])) along the path
    (softplus(0) = log 2 at the padding steps past its end, as Paddle leaves them) and
    Out[i] = the sum of PreOut[i] minus the clipped pre-activations whose bit is set."""
    c = labels[i] + num_classes
    length = path_length(custom, table, i, c)
    total = 0.0
    for j in range(pre_out.shape[1]):
        z = 0.0
        if j < length:
            k = node_of(custom, table, i, c, j)
            if has_bias:
                z += bias[k]
            for d in range(x.shape[1]):
                z += w[k, d] * x[i, d]
            if z < -CLIP:            # (CUDA's compiler types no 2-argument min/max)
                z = -CLIP
            elif z > CLIP:
                z = CLIP
            if bit_of(custom, code, i, c, j) == 1:
                total -= z
        s = math.log1p(math.exp(z))
        pre_out[i, j] = s
        total += s
    out[i, 0] = total


@register_jitable
def step_gradient(pre_out, dout, custom, code, i, c, j):
    """dLoss/dz at step j of sample i: (sigmoid(z) - bit) * dOut[i], sigmoid(z) read back
    from PreOut = softplus(z) as 1 - exp(-PreOut), as Paddle does (the clipping's zero
    slope beyond +-40 is not applied, also as Paddle)."""
    sigmoid = 1.0 - math.exp(-pre_out[i, j])
    return (sigmoid - bit_of(custom, code, i, c, j)) * dout[i]


@register_jitable
def x_grad_row(w, labels, table, code, custom, num_classes, pre_out, dout, dx, i):
    """dX[i] = sum over the path of step_gradient * W[node]."""
    c = labels[i] + num_classes
    length = path_length(custom, table, i, c)
    for d in range(dx.shape[1]):
        dx[i, d] = 0.0
    for j in range(length):
        g = step_gradient(pre_out, dout, custom, code, i, c, j)
        k = node_of(custom, table, i, c, j)
        for d in range(dx.shape[1]):
            dx[i, d] += g * w[k, d]


@njit(cache=True, fastmath=False, error_model="numpy")
def hierarchical_sigmoid(x, w, bias, has_bias, labels, table, code, custom, num_classes,
                         pre_out, out):
    for i in range(x.shape[0]):
        forward_row(x, w, bias, has_bias, labels, table, code, custom, num_classes,
                    pre_out, out, i)


@njit(cache=True, fastmath=False, error_model="numpy")
def hierarchical_sigmoid_grad(x, w, labels, table, code, custom, num_classes, pre_out,
                              dout, dx, dw, dbias):
    """dX row by row; dW and dBias (zeroed here) by adding each step's share into its
    node's row, samples in order."""
    dw[:] = 0.0
    dbias[:] = 0.0
    for i in range(x.shape[0]):
        x_grad_row(w, labels, table, code, custom, num_classes, pre_out, dout, dx, i)
        c = labels[i] + num_classes
        for j in range(path_length(custom, table, i, c)):
            g = step_gradient(pre_out, dout, custom, code, i, c, j)
            k = node_of(custom, table, i, c, j)
            dbias[k] += g
            for d in range(x.shape[1]):
                dw[k, d] += g * x[i, d]


NO_TABLE = np.zeros((1, 1), np.int64)     # PathTable / PathCode's stand-in for the default tree
