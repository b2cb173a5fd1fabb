"""Running products along an axis, and their gradient, for both places (ops/cumprod.py).

The tensor is seen as ``(outer, n, inner)`` around the axis, as kernels/cuda/scan.py sees
cumsum's: one line is the n elements ``base + j * inner``. The work of one line is written
once, as ``register_jitable`` functions that the CPU's ``njit`` loop and the device's
``cuda.jit`` kernel (one thread per line) both call.

The gradient without dividing by X (a zero in X must not give NaN). With
``P_i = x_0 ... x_i`` (Out), dOut's contribution to x_i is

    dX_i = sum over j >= i of dOut_j * P_j / x_i
         = P_{i-1} * S_i,   S_i = dOut_i + x_{i+1} * S_{i+1}   (S past the end: 0)

so one pass from the end computes S, and one pass from the start multiplies by the
exclusive running product P_{i-1}: O(n) per line, exact wherever X has zeros.
"""
from __future__ import annotations

import numpy as np
from numba import cuda, njit
from numba.extending import register_jitable

from .cuda.device import empty, flat, launch


@register_jitable
def _line_cumprod(x, out, base, n, inner):
    product = x[base]
    out[base] = product
    for j in range(1, n):
        at = base + j * inner
        product = product * x[at]
        out[at] = product


@register_jitable
def _line_cumprod_grad(x, dout, dx, base, n, inner):
    total = dout[base] * 0           # S past the end: 0 in the line's type
    after = x[base] * 0              # x_{i+1} past the end (multiplies that 0 only)
    for k in range(n):               # from the end: S_i = dOut_i + x_{i+1} * S_{i+1}
        at = base + (n - 1 - k) * inner
        total = dout[at] + after * total
        dx[at] = total
        after = x[at]
    before = after * 0 + 1           # from the start: times x_0 ... x_{i-1}
    for j in range(n):
        at = base + j * inner
        dx[at] = dx[at] * before
        before = before * x[at]


@register_jitable
def _line_base(line, n, inner):
    return (line // inner) * n * inner + line % inner


# --- the CPU: one loop over the lines ----------------------------------------------------
@njit(cache=True, error_model="numpy")
def _cpu_cumprod(x, n, inner, out):
    for line in range(out.size // n):
        _line_cumprod(x, out, _line_base(line, n, inner), n, inner)


@njit(cache=True, error_model="numpy")
def _cpu_cumprod_grad(x, dout, n, inner, dx):
    for line in range(dx.size // n):
        _line_cumprod_grad(x, dout, dx, _line_base(line, n, inner), n, inner)


# --- CUDA: one thread per line -------------------------------------------------------------
@cuda.jit(cache=True)
def _cuda_cumprod(x, n, inner, out):
    for line in range(cuda.grid(1), out.size // n, cuda.gridsize(1)):
        _line_cumprod(x, out, _line_base(line, n, inner), n, inner)


@cuda.jit(cache=True)
def _cuda_cumprod_grad(x, dout, n, inner, dx):
    for line in range(cuda.grid(1), dx.size // n, cuda.gridsize(1)):
        _line_cumprod_grad(x, dout, dx, _line_base(line, n, inner), n, inner)


def _lines(shape, axis: int):
    """(n, inner) of ``shape`` around ``axis`` (a 0-d tensor is one line of one)."""
    if not shape:
        return 1, 1
    return shape[axis], int(np.prod(shape[axis + 1:], dtype=np.int64))


class CPU:
    @staticmethod
    def cumprod(x, axis: int):
        shape = tuple(int(d) for d in x.shape)
        out = np.empty(shape, x.dtype)
        n, inner = _lines(shape, axis)
        if out.size:
            _cpu_cumprod(np.ascontiguousarray(x).reshape(-1), n, inner, out.reshape(-1))
        return out

    @staticmethod
    def cumprod_grad(x, dout, axis: int):
        shape = tuple(int(d) for d in x.shape)
        dx = np.empty(shape, dout.dtype)
        n, inner = _lines(shape, axis)
        if dx.size:
            _cpu_cumprod_grad(np.ascontiguousarray(x, dout.dtype).reshape(-1),
                              np.ascontiguousarray(dout).reshape(-1), n, inner,
                              dx.reshape(-1))
        return dx


class CUDA:
    @staticmethod
    def cumprod(x, axis: int):
        shape = tuple(int(d) for d in x.shape)
        out = empty(shape, x.dtype)
        n, inner = _lines(shape, axis)
        if out.size:
            launch(_cuda_cumprod, out.size // n, flat(x), n, inner, flat(out))
        return out

    @staticmethod
    def cumprod_grad(x, dout, axis: int):
        shape = tuple(int(d) for d in x.shape)
        dx = empty(shape, dout.dtype)
        n, inner = _lines(shape, axis)
        if dx.size:
            launch(_cuda_cumprod_grad, dx.size // n, flat(x), flat(dout), n, inner, flat(dx))
        return dx
