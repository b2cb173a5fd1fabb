"""Elementwise CUDA kernels that are not one scalar function of their elements: ``scale``
(its scale and bias are arguments), an exact integer ``increment``, and the broadcast
strides every elementwise launcher reads operands with.

The elementwise and activation ops themselves are ``@pointwise`` scalar functions in their
op family's file, compiled for CUDA by kernels/pointwise.py. Broadcasting is numpy's:
ranks are aligned from the right, and an operand's dim of size 1 is read with stride 0, so
every output element finds its inputs from its own multi-index (see copy.py for the stride
idea).
"""
from __future__ import annotations

from numba import cuda

from .device import c_strides, empty, flat, launch_1d

SCALE_THEN_BIAS, BIAS_THEN_SCALE = 0, 1
UNARY = {"scale_then_bias": SCALE_THEN_BIAS, "bias_then_scale": BIAS_THEN_SCALE}


def broadcast_strides(shape, out_shape) -> list[int]:
    """Element strides of a C-contiguous ``shape`` read as ``out_shape`` (numpy rules:
    aligned from the right; a missing or size-1 dim gets stride 0)."""
    lead = len(out_shape) - len(shape)
    own = c_strides(shape)
    return [0 if d < lead or shape[d - lead] == 1 else own[d - lead]
            for d in range(len(out_shape))]


@cuda.jit(cache=True)
def _unary(op, x, a, b, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        v = x[i]
        if op == SCALE_THEN_BIAS:
            out[i] = v * a + b
        else:                          # BIAS_THEN_SCALE
            out[i] = (v + b) * a


def unary(op: str, x, a: float = 1.0, b: float = 0.0, out_dtype=None):
    """``op(x)`` elementwise (``op`` a key of UNARY); ``a``, ``b`` are the scale and bias.
    Computed in float64 and stored in the output's dtype (x's unless told), as the CPU
    ufuncs do for their float32 loops within rounding."""
    out = empty(x.shape, out_dtype or x.dtype)
    if out.size:
        blocks, threads = launch_1d(out.size)
        _unary[blocks, threads](UNARY[op], flat(x), float(a), float(b), flat(out))
    return out


@cuda.jit(cache=True)
def _add_integer(x, step, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = x[i] + step


def add_integer(x, step: int):
    """``x + step`` in x's integer type, exact: the float64 path of ``unary`` rounds
    integers past 2**53 (a loop counter's increment)."""
    out = empty(x.shape, x.dtype)
    if out.size:
        blocks, threads = launch_1d(out.size)
        _add_integer[blocks, threads](flat(x), x.dtype.type(step), flat(out))
    return out
