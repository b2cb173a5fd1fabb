"""cumprod inside a compiled block (ops/cumprod.py): the running products along an axis and
their gradient through kernels/cumprod.py's CPU loops, the interpreter's own, so both
paths give the same bits.
"""
import numpy as np
from numba import njit

from ..cumprod import _cpu_cumprod, _cpu_cumprod_grad
from .scans import _lines_of


@njit(cache=True, fastmath=False, error_model="numpy")
def cumprod_along(x, axis):
    """The running products of x (rank >= 1) along ``axis``, as cumprod.CPU.cumprod."""
    out = np.empty(x.shape, x.dtype)
    if x.size:
        n, inner = _lines_of(x, axis)
        _cpu_cumprod(np.ascontiguousarray(x).reshape(x.size), n, inner, out.reshape(out.size))
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def cumprod_along_grad(x, dout, axis):
    """cumprod's dX along ``axis`` for a dOut of x's dtype, as cumprod.CPU.cumprod_grad."""
    if dout.size != x.size:
        raise ValueError("cumprod_grad: Out@GRAD has another size than X")
    dx = np.empty(x.shape, dout.dtype)
    if x.size:
        n, inner = _lines_of(x, axis)
        _cpu_cumprod_grad(np.ascontiguousarray(x).reshape(x.size),
                          np.ascontiguousarray(dout).reshape(dout.size), n, inner,
                          dx.reshape(dx.size))
    return dx
