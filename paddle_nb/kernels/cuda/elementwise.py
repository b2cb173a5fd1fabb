"""Elementwise CUDA launchers that are not a ``@pointwise`` kernel of their own: an exact
integer ``increment``, and ``unary``, scale's two kernels by name.

The elementwise and activation ops are ``@pointwise`` scalar functions in their op
family's file, compiled for CUDA by kernels/pointwise.py; scale's are in kernels/scale.py.
"""
from __future__ import annotations

from numba import cuda

from ..scale import bias_then_scale, scale_then_bias
from .device import empty, flat, launch

UNARY = {"scale_then_bias": scale_then_bias, "bias_then_scale": bias_then_scale}


def unary(op: str, x, a: float = 1.0, b: float = 0.0, out_dtype=None):
    """``op(x)`` elementwise (``op`` a key of UNARY); ``a``, ``b`` are the scale and bias.
    Computed in float64 and stored in the output's dtype (x's unless told), as the CPU
    ufuncs do for their float32 loops within rounding."""
    return UNARY[op].cuda(x, float(a), float(b), out_dtype=out_dtype or x.dtype)


@cuda.jit(cache=True)
def _add_integer(x, step, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = x[i] + step


def add_integer(x, step: int):
    """``x + step`` in x's integer type, exact: the float64 path of ``unary`` rounds
    integers past 2**53 (a loop counter's increment)."""
    out = empty(x.shape, x.dtype)
    launch(_add_integer, out.size, flat(x), x.dtype.type(step), flat(out))
    return out
