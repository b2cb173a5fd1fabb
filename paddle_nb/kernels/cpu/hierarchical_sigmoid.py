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
from numba import njit, types
from numba.extending import overload, register_jitable

from .check import first_outside

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


# --- inside a compiled block (paddle_nb/compiler): the loops above, after the op's checks ---
# ``table`` and ``code`` are PathTable and PathCode, or None for the default tree (a literal
# the generated code passes: numba compiles each case apart); ``bias`` Bias or None. A
# failed check raises, and the interpreter's rerun gives the error naming the slot.
@njit(cache=True, fastmath=False, error_model="numpy")
def checked_tree(x, w, label, table, num_classes):
    """(labels flat, PathTable and PathCode as the loops take them, custom?), the node
    indices checked as the op checks them: labels in [0, num_classes) and W holding the
    default tree's nodes, or PathTable's nodes rows of W (-1 ending a path)."""
    labels = np.ascontiguousarray(label).reshape(label.size)
    if labels.size != x.shape[0] or x.shape[1] != w.shape[1]:
        raise ValueError("hierarchical_sigmoid: Label or W does not fit X")
    if table is None:
        if first_outside(labels, 0, num_classes, False, 0) >= 0:
            raise IndexError("hierarchical_sigmoid: a class of Label is out of range")
        if w.shape[0] < num_classes - 1:
            raise IndexError("hierarchical_sigmoid: W has fewer rows than the default tree")
        return labels, np.zeros((1, 1), np.int64), False
    flat = np.ascontiguousarray(table).reshape(table.size)
    if table.shape[0] != x.shape[0] or first_outside(flat, 0, w.shape[0], True, -1) >= 0:
        raise IndexError("hierarchical_sigmoid: a node of PathTable is out of range")
    return labels, np.ascontiguousarray(table), True


@njit(cache=True, fastmath=False, error_model="numpy")
def _codes(code, table):
    """PathCode as the loops take it (the stand-in for the default tree)."""
    if code is None:
        return table
    if code.shape != table.shape:
        raise ValueError("hierarchical_sigmoid: PathCode does not have PathTable's shape")
    return np.ascontiguousarray(code)


@njit(cache=True, fastmath=False, error_model="numpy")
def hsigmoid_loss(x, w, label, table, code, bias, num_classes, default_length):
    """(Out, PreOut, W_Out): the op's kernel on new arrays (PreOut's width the default
    tree's ``default_length``, or PathTable's), W_Out a copy of W."""
    labels, tab, custom = checked_tree(x, w, label, table, num_classes)
    length = tab.shape[1] if custom else default_length
    n = x.shape[0]
    out, pre_out = np.empty((n, 1), x.dtype), np.empty((n, length), x.dtype)
    hierarchical_sigmoid(np.ascontiguousarray(x), np.ascontiguousarray(w), _biases(bias, w),
                         bias is not None, labels, tab, _codes(code, tab), custom,
                         num_classes, pre_out, out)
    return out, pre_out, w.copy()


@njit(cache=True, fastmath=False, error_model="numpy")
def hsigmoid_loss_default_tree(x, w, label, bias, num_classes, default_length):
    """hsigmoid_loss without PathTable and PathCode (the generated call passes the op's
    operands in order, the absent ones as None after them)."""
    return hsigmoid_loss(x, w, label, None, None, bias, num_classes, default_length)


@njit(cache=True, fastmath=False, error_model="numpy")
def _biases(bias, w):
    """Bias flat as the loops take it (a zero stand-in, unread, without one)."""
    if bias is None:
        return np.zeros(1, w.dtype)
    if bias.size != w.shape[0]:
        raise ValueError("hierarchical_sigmoid: Bias does not hold one value a node")
    return np.ascontiguousarray(bias).reshape(bias.size)


def shaped_like(a, like):
    """``a`` in ``like``'s shape, or as it is where ``like`` is None (numba code only)."""
    raise NotImplementedError("shaped_like is called from numba code only")


@overload(shaped_like)
def _shaped_like(a, like):
    # chosen on the type: a function whose two returns have other ranks does not type
    if isinstance(like, types.NoneType):
        return lambda a, like: a
    return lambda a, like: a.reshape(like.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def hsigmoid_loss_grad(x, w, label, pre_out, dout, table, code, bias, num_classes,
                       default_length):
    """(dX, dW, dBias in Bias's shape, or flat without a Bias) from PreOut and dOut (of
    X's dtype)."""
    labels, tab, custom = checked_tree(x, w, label, table, num_classes)
    length = tab.shape[1] if custom else default_length
    n = x.shape[0]
    if pre_out.shape[0] != n or pre_out.shape[1] != length or dout.size != n:
        raise ValueError("hierarchical_sigmoid_grad: PreOut or Out@GRAD is not the forward's")
    dx, dw = np.empty(x.shape, x.dtype), np.empty(w.shape, x.dtype)
    dbias = np.empty(w.shape[0], x.dtype)
    hierarchical_sigmoid_grad(np.ascontiguousarray(x), np.ascontiguousarray(w), labels, tab,
                              _codes(code, tab), custom, num_classes,
                              np.ascontiguousarray(pre_out),
                              np.ascontiguousarray(dout).reshape(n), dx, dw, dbias)
    return dx, dw, shaped_like(dbias, bias)


@njit(cache=True, fastmath=False, error_model="numpy")
def hsigmoid_loss_grad_default_tree(x, w, label, pre_out, dout, bias, num_classes,
                                    default_length):
    """hsigmoid_loss_grad without PathTable and PathCode."""
    return hsigmoid_loss_grad(x, w, label, pre_out, dout, None, None, bias, num_classes,
                              default_length)
