"""Reductions over rows: sums, max/min/product, softmax and log_softmax. Callers move the
reduced axes last (a transpose, copy.py) and see the array as ``(rows, row_len)``; one
thread handles one row.

One thread per row is the simplest correct schedule and is fast when there are many rows
(a minibatch); a few very long rows would want a block per row with a shared-memory tree
reduction, which this teaching-sized version leaves out. Sums of floats accumulate in
float64 (as the CPU kernels do), sums of integers in int64.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda

from .copy import fill, transpose
from .device import empty, flat, launch


@cuda.jit(cache=True)
def _row_sum(a, row_len, zero, out):
    """Each row's sum, accumulated from ``zero``: 0.0 for floats (a float64 accumulator),
    0 for ints (int64); numba compiles the kernel once for each."""
    for r in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        s = zero
        for j in range(r * row_len, (r + 1) * row_len):
            s += a[j]
        out[r] = s


def row_sum(a, rows: int, row_len: int):
    """The sum of each of the ``rows`` consecutive runs of ``row_len`` elements of the
    C-contiguous ``a``: a new 1-D array of ``rows`` values in a's dtype."""
    out = empty((rows,), a.dtype)
    if rows == 0:
        return out
    if row_len == 0:                           # sums of nothing
        return fill((rows,), 0, a.dtype)
    zero = 0.0 if np.issubdtype(a.dtype, np.floating) else 0
    launch(_row_sum, rows, flat(a), row_len, zero, out)
    return out


def _as_rows(x, axes, keepdims: bool):
    """(x with the ``axes`` moved last, rows, row_len, the result's shape)."""
    axes = sorted({int(a) % max(x.ndim, 1) for a in axes}) if x.ndim else []
    kept = [d for d in range(x.ndim) if d not in axes]
    if keepdims:
        out_shape = tuple(1 if d in axes else int(x.shape[d]) for d in range(x.ndim))
    else:
        out_shape = tuple(int(x.shape[d]) for d in kept)
    rows = int(np.prod([x.shape[d] for d in kept])) if kept else 1
    row_len = int(np.prod([x.shape[d] for d in axes])) if axes else 1
    moved = x if kept + axes == list(range(x.ndim)) else transpose(x, kept + axes)
    return moved, rows, row_len, out_shape


def sum_axes(x, axes, keepdims: bool = False):
    """``x.sum(axis=axes, keepdims=keepdims)`` (bool sums count, as int64 in numpy; here
    the caller passes ints or floats)."""
    moved, rows, row_len, out_shape = _as_rows(x, axes, keepdims)
    return row_sum(moved, rows, row_len).reshape(out_shape)


MAX, MIN, PROD = 0, 1, 2
FOLDS = {"max": MAX, "min": MIN, "prod": PROD}


@cuda.jit(cache=True)
def _row_fold(op, a, row_len, out):
    """max, min (in the element type; a NaN wins, as numpy's) or product of each row."""
    for r in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        start = r * row_len
        acc = a[start]
        for j in range(start + 1, start + row_len):
            v = a[j]
            if op == MAX:
                if v > acc or v != v:
                    acc = v if acc == acc else acc
            elif op == MIN:
                if v < acc or v != v:
                    acc = v if acc == acc else acc
            else:
                acc = acc * v
        out[r] = acc


def fold_axes(x, axes, keepdims: bool, fold: str):
    """``x.max`` / ``x.min`` / ``x.prod`` over ``axes`` (a key of FOLDS), in x's dtype;
    the reduced axes hold at least one element (the caller checks)."""
    moved, rows, row_len, out_shape = _as_rows(x, axes, keepdims)
    out = empty((rows,), x.dtype)
    launch(_row_fold, rows, FOLDS[fold], flat(moved), row_len, out)
    return out.reshape(out_shape)


@cuda.jit(device=True)
def _row_max(a, start, row_len):
    """The largest of a[start:start + row_len] (what softmax subtracts so exp never
    overflows)."""
    m = a[start]
    for j in range(start + 1, start + row_len):
        if a[j] > m:
            m = a[j]
    return m


@cuda.jit(cache=True)
def _softmax_rows(a, log, row_len, out):
    """Per row, softmax exp(X - max) / sum or (``log``) log_softmax X - max - log(sum):
    both take the sum of exp(X - max), where subtracting the max keeps exp from
    overflowing. (``log`` is the same for every thread: the branch costs no divergence.)"""
    for r in range(cuda.grid(1), out.size // row_len, cuda.gridsize(1)):
        start = r * row_len
        m = _row_max(a, start, row_len)
        s = 0.0
        for j in range(start, start + row_len):
            e = math.exp(a[j] - m)
            if not log:
                out[j] = e                     # kept, to be divided by the sum below
            s += e
        if log:
            shift = m + math.log(s)
            for j in range(start, start + row_len):
                out[j] = a[j] - shift
        else:
            inv = 1.0 / s
            for j in range(start, start + row_len):
                out[j] = out[j] * inv


@cuda.jit(cache=True)
def _softmax_grad_rows(out, dout, log, row_len, dx):
    """Per row, from the forward's Out: softmax's dX = Out * (dOut - sum(dOut * Out)), or
    (``log``) log_softmax's dX = dOut - exp(Out) * sum(dOut)."""
    for r in range(cuda.grid(1), out.size // row_len, cuda.gridsize(1)):
        start = r * row_len
        s = 0.0
        for j in range(start, start + row_len):
            s += dout[j] if log else dout[j] * out[j]
        for j in range(start, start + row_len):
            dx[j] = dout[j] - math.exp(out[j]) * s if log else out[j] * (dout[j] - s)


def _per_row(kernel, rows: int, row_len: int, log: bool, first, *more):
    """Launch a one-thread-per-row ``kernel(first, *more, log, row_len, out)`` over arrays
    of ``first``'s shape seen as (rows, row_len); the new ``out``."""
    out = empty(first.shape, first.dtype)
    if rows and row_len:
        launch(kernel, rows, flat(first), *[flat(a) for a in more], log, row_len, flat(out))
    return out


def row_softmax(a, rows: int, row_len: int):
    """Softmax of each row of the C-contiguous ``a`` seen as (rows, row_len)."""
    return _per_row(_softmax_rows, rows, row_len, False, a)


def row_log_softmax(a, rows: int, row_len: int):
    """log_softmax of each row of the C-contiguous ``a`` seen as (rows, row_len)."""
    return _per_row(_softmax_rows, rows, row_len, True, a)


def softmax_grad_rows(out, dout, rows: int, row_len: int):
    return _per_row(_softmax_grad_rows, rows, row_len, False, out, dout)


def log_softmax_grad_rows(out, dout, rows: int, row_len: int):
    return _per_row(_softmax_grad_rows, rows, row_len, True, out, dout)
