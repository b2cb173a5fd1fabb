"""Matrix products with numpy's ``matmul`` rules on each place: 1-D operands promoted, batch
dims broadcast, and ``sum_to``, which sums a broadcast batch's gradient back to an
operand's shape (ops/matmul.py and the products built on it).

On the CPU, float32/float64 matrices go to BLAS through kernels/cpu/matmul.py (which
chooses numba's or numpy's BLAS and the calling thread or BLAS's own, kernels/cpu/
threads.py says why), other types to numpy. On the device, one tiled kernel
(kernels/cuda/matmul.py) takes the transposes and alpha itself.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.limits import check_tensor_size
from ..kernels.cpu import matmul as K
from ..kernels.cuda import copy as CC
from ..kernels.cuda import matmul as CM
from ..kernels.cuda import reduce as CR

BLAS_TYPES = (np.float32, np.float64)     # the types BLAS multiplies


def _blas_layout(a: np.ndarray) -> np.ndarray:
    """numba's np.dot takes C- or F-contiguous matrices (a transpose is F): copy only others."""
    return a if a.flags.c_contiguous or a.flags.f_contiguous else np.ascontiguousarray(a)


def matmul_2d(a: np.ndarray, b: np.ndarray, out=None) -> np.ndarray:
    """a @ b; ``out(shape, dtype)``, when given, makes the array the product is written
    into (a kernel context's ``out``: a reused buffer on the fast path)."""
    if a.shape[0] * b.shape[-1] > a.size + b.size:      # an outer product grows: check it
        check_tensor_size((a.shape[0], b.shape[-1]), np.result_type(a, b), "matmul")
    if a.dtype == b.dtype and a.dtype.type in BLAS_TYPES:
        into = out((a.shape[0], b.shape[-1]), a.dtype) if out is not None else None
        return K.matmul2d(_blas_layout(a), _blas_layout(b), into)
    return np.matmul(a, b)        # integer matrices: BLAS has no integer gemm


def matmul_nd(x: np.ndarray, y: np.ndarray, tx: bool, ty: bool) -> np.ndarray:
    if tx and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if ty and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    x2 = x[None, :] if x.ndim == 1 else x
    y2 = y[:, None] if y.ndim == 1 else y
    if x2.ndim == 2 and y2.ndim == 2:
        out = matmul_2d(x2, y2)
    elif y2.ndim == 2 and not tx and x.dtype == y.dtype and x.dtype.type in BLAS_TYPES:
        # one matrix Y for every batch (a linear layer on [B, T, E]): the batch dims
        # fold into rows, one product instead of a batch of small ones over copies of Y
        rows = x2.reshape((-1, x2.shape[-1]))
        out = matmul_2d(rows, y2).reshape(x2.shape[:-1] + (y2.shape[-1],))
    elif x.dtype == y.dtype and x.dtype.type in BLAS_TYPES:
        batch = x2.shape[:-2] if x2.shape[:-2] == y2.shape[:-2] else \
            np.broadcast_shapes(x2.shape[:-2], y2.shape[:-2])
        m, k, n = x2.shape[-2], x2.shape[-1], y2.shape[-1]
        check_tensor_size(batch + (max(m * k, k * n, m * n),), np.result_type(x, y), "matmul")
        n_batch = math.prod(batch)         # spelled out: reshape(-1, 0, k) cannot infer -1
        # (broadcast only where the batch dims differ: attention's never do)
        xb = np.ascontiguousarray(x2 if x2.shape[:-2] == batch else
                                  np.broadcast_to(x2, batch + (m, k))).reshape(n_batch, m, k)
        yb = np.ascontiguousarray(y2 if y2.shape[:-2] == batch else
                                  np.broadcast_to(y2, batch + (k, n))).reshape(n_batch, k, n)
        out = K.batched_matmul(xb, yb).reshape(batch + (m, n))
    else:
        out = np.matmul(x2, y2)
    if x.ndim == 1:
        out = out[..., 0, :]
    if y.ndim == 1:
        out = out[..., 0]
    return out


def sum_to(g: np.ndarray, shape) -> np.ndarray:
    """Sum the broadcast batch dims of ``g`` away so it has ``shape``."""
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, (a, b) in enumerate(zip(g.shape[:-2], shape[:-2])) if b == 1 and a != 1)
    return np.ascontiguousarray(g.sum(axis=axes, keepdims=True) if axes else g)


# --- the same on the device ---------------------------------------------------------------
def _as_batches(a, batch, rows, cols):
    """``a`` (rank >= 2) as a (B, rows, cols) device array for the kernel: batch dims
    broadcast to ``batch`` (materialised by copy.broadcast_to only when they differ and
    are not all 1, since the kernel reuses a batch of 1 itself)."""
    lead = tuple(int(d) for d in a.shape[:-2])
    if lead == tuple(batch) or int(np.prod(lead, dtype=np.int64)) == 1:
        return a.reshape((int(np.prod(lead, dtype=np.int64)), rows, cols))
    full = CC.broadcast_to(a, tuple(batch) + (rows, cols))
    return full.reshape((int(np.prod(batch, dtype=np.int64)), rows, cols))


def cuda_matmul_nd(x, y, tx: bool, ty: bool, alpha: float = 1.0):
    """matmul_nd on device arrays: transposes and alpha are done by the kernel."""
    tx, ty = tx and x.ndim >= 2, ty and y.ndim >= 2
    x2 = x.reshape((1, x.shape[0])) if x.ndim == 1 else x
    y2 = y.reshape((y.shape[0], 1)) if y.ndim == 1 else y
    xs, ys = tuple(x2.shape), tuple(y2.shape)   # plain tuples (the simulator's shapes
    m, k = (xs[-1], xs[-2]) if tx else (xs[-2], xs[-1])   # refuse negative indices)
    n = ys[-2] if ty else ys[-1]
    batch = np.broadcast_shapes(xs[:-2], ys[:-2])
    if batch:
        check_tensor_size(batch + (max(m * k, k * n, m * n),), x.dtype, "matmul")
    xb = _as_batches(x2, batch, *xs[-2:])
    yb = _as_batches(y2, batch, *ys[-2:])
    out_shape = batch + (m, n)
    if x.ndim == 1:
        out_shape = out_shape[:-2] + out_shape[-1:]
    if y.ndim == 1:
        out_shape = out_shape[:-1]
    return CM.matmul(xb, yb, tx, ty, alpha).reshape(tuple(out_shape))


def cuda_sum_to(g, shape):
    """sum_to on the device: sum the broadcast batch dims of ``g`` away."""
    g_shape, shape = tuple(g.shape), tuple(shape)
    lead = len(g_shape) - len(shape)
    axes = list(range(lead)) + [lead + i for i, (a, b) in enumerate(zip(g_shape[lead:-2],
                                                                         shape[:-2]))
                                if b == 1 and a != 1]
    if not axes:
        return g
    return CR.sum_axes(g, axes, keepdims=True).reshape(tuple(shape))
