"""hierarchical_sigmoid on the device: kernels/cpu/hierarchical_sigmoid.py's per-sample
functions (read it first; ``register_jitable``, so they compile for the device too), one
thread per sample for the forward and for dX. dW and dBias are gathered, not scattered: one
thread per entry (node k, feature d; d = D is the node's bias) walks every sample's path and
adds the steps that visit node k, so no atomics are needed and every run gives the same bits."""
from __future__ import annotations

import numpy as np
from numba import cuda

from ..cpu import hierarchical_sigmoid as cpu
from ..cpu.hierarchical_sigmoid import (forward_row, node_of, path_length, step_gradient,
                                        x_grad_row)
from .device import empty, launch, to_device


@cuda.jit(cache=True)
def _forward(x, w, bias, has_bias, labels, table, code, custom, num_classes, pre_out, out):
    for i in range(cuda.grid(1), x.shape[0], cuda.gridsize(1)):
        forward_row(x, w, bias, has_bias, labels, table, code, custom, num_classes,
                    pre_out, out, i)


@cuda.jit(cache=True)
def _x_grad(w, labels, table, code, custom, num_classes, pre_out, dout, dx):
    for i in range(cuda.grid(1), dx.shape[0], cuda.gridsize(1)):
        x_grad_row(w, labels, table, code, custom, num_classes, pre_out, dout, dx, i)


@cuda.jit(cache=True)
def _node_grads(x, labels, table, code, custom, num_classes, pre_out, dout, dw, dbias):
    width = dw.shape[1] + 1                  # the node's D weights, then its bias
    for e in range(cuda.grid(1), dw.shape[0] * width, cuda.gridsize(1)):
        k = e // width
        d = e - k * width
        acc = 0.0
        for i in range(x.shape[0]):
            c = labels[i] + num_classes
            for j in range(path_length(custom, table, i, c)):
                if node_of(custom, table, i, c, j) == k:
                    g = step_gradient(pre_out, dout, custom, code, i, c, j)
                    acc += g if d == dw.shape[1] else g * x[i, d]
        if d == dw.shape[1]:
            dbias[k] = acc
        else:
            dw[k, d] = acc


def _tables(table, code):
    if table is None:
        stand_in = to_device(cpu.NO_TABLE)
        return stand_in, stand_in, False
    return table, code, True


def hierarchical_sigmoid(x, w, bias, labels, table, code, num_classes: int, code_length: int):
    """(Out [N, 1], PreOut [N, code_length]) on the device; ``table``/``code`` None for
    the default tree, ``bias`` None without one, ``labels`` int64 [N]."""
    n = int(x.shape[0])
    out, pre_out = empty((n, 1), x.dtype), empty((n, code_length), x.dtype)
    table, code, custom = _tables(table, code)
    has_bias = bias is not None
    if not has_bias:
        bias = to_device(np.zeros(1, x.dtype))
    launch(_forward, n, x, w, bias, has_bias, labels, table, code, custom,
           np.int64(num_classes), pre_out, out)
    return out, pre_out


def hierarchical_sigmoid_grad(x, w, labels, table, code, num_classes: int, pre_out, dout):
    """(dX, dW, dBias [K]) on the device."""
    n, k, width = int(x.shape[0]), int(w.shape[0]), int(w.shape[1])
    dx, dw, dbias = empty((n, width), x.dtype), empty((k, width), x.dtype), empty((k,), x.dtype)
    table, code, custom = _tables(table, code)
    launch(_x_grad, n, w, labels, table, code, custom, np.int64(num_classes),
           pre_out, dout, dx)
    if k:
        launch(_node_grads, k * (width + 1), x, labels, table, code, custom, np.int64(num_classes),
               pre_out, dout, dw, dbias)
    return dx, dw, dbias
