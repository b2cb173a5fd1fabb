"""Elementwise kernels: binary ops with numpy broadcasting, and the unary ops scale and
neg.

Binary ops broadcast the numpy way: ranks are aligned from the right, and an operand's dim
of size 1 is read with stride 0, so every output element finds its two inputs from its own
multi-index (see copy.py for the stride idea). One kernel serves a family of ops with an
integer opcode: numba compiles one specialisation per dtype combination, not per op, and
the branch on a value every thread shares costs nothing measurable.

Two families, because their typing differs: arithmetic (ints and floats) and
comparison/logic (any dtype, bool result). The unary ops here (scale, neg) are one kernel
with two float parameters ``a`` and ``b`` (scale and bias), computed in float64 and stored
in the output's dtype, as the CPU ufuncs do for their float32 loops within rounding. The
activations are not here: each is one scalar function for both places (kernels/pointwise.py).
"""
from __future__ import annotations


import numpy as np
from numba import cuda

from .device import c_strides, empty, flat, int_array, launch_1d

# opcodes: arithmetic
ADD, SUB, MUL, DIV, TRUNC_DIV = 0, 1, 2, 3, 4
# opcodes: comparisons and logic (bool result)
GREATER, LESS, EQUAL, NOT_EQUAL, AND, OR = 0, 1, 2, 3, 4, 5
ARITHMETIC = {"add": ADD, "sub": SUB, "mul": MUL, "div": DIV, "trunc_div": TRUNC_DIV}
COMPARE = {"greater_than": GREATER, "less_than": LESS, "equal": EQUAL,
           "not_equal": NOT_EQUAL, "logical_and": AND, "logical_or": OR}

# unary opcodes (the activations are @pointwise kernels: kernels/pointwise.py)
SCALE_THEN_BIAS, BIAS_THEN_SCALE, NEG = range(3)
UNARY = {"scale_then_bias": SCALE_THEN_BIAS, "bias_then_scale": BIAS_THEN_SCALE, "neg": NEG,
         "logical_not": -1}


# --- binary ---------------------------------------------------------------------------------
@cuda.jit(device=True)
def _offsets(i, out_shape, x_strides, y_strides):
    """The element offsets in x and y of flat output index i (C order)."""
    rem = i
    xo = 0
    yo = 0
    for d in range(out_shape.size - 1, -1, -1):
        extent = out_shape[d]
        k = rem % extent
        rem //= extent
        xo += k * x_strides[d]
        yo += k * y_strides[d]
    return xo, yo


@cuda.jit(cache=True)
def _arithmetic(op, x, x_strides, y, y_strides, out_shape, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        xo, yo = _offsets(i, out_shape, x_strides, y_strides)
        a = x[xo]
        b = y[yo]
        if op == ADD:
            out[i] = a + b
        elif op == SUB:
            out[i] = a - b
        elif op == MUL:
            out[i] = a * b
        elif op == DIV:
            out[i] = a / b
        else:        # TRUNC_DIV: integer division rounding toward zero, as C++ (and Paddle)
            if b == 0:
                out[i] = 0
            else:
                q = abs(a) // abs(b)
                out[i] = q if (a >= 0) == (b >= 0) else -q


@cuda.jit(cache=True)
def _compare(op, x, x_strides, y, y_strides, out_shape, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        xo, yo = _offsets(i, out_shape, x_strides, y_strides)
        a = x[xo]
        b = y[yo]
        if op == GREATER:
            out[i] = a > b
        elif op == LESS:
            out[i] = a < b
        elif op == EQUAL:
            out[i] = a == b
        elif op == NOT_EQUAL:
            out[i] = a != b
        elif op == AND:
            out[i] = (a != 0) and (b != 0)
        else:
            out[i] = (a != 0) or (b != 0)


def broadcast_strides(shape, out_shape) -> list[int]:
    """Element strides of a C-contiguous ``shape`` read as ``out_shape`` (numpy rules:
    aligned from the right; a missing or size-1 dim gets stride 0)."""
    lead = len(out_shape) - len(shape)
    own = c_strides(shape)
    return [0 if d < lead or shape[d - lead] == 1 else own[d - lead]
            for d in range(len(out_shape))]


def binary(op: str, x, y, out_dtype=None):
    """``op(x, y)`` with numpy broadcasting; ``op`` is a key of ARITHMETIC or COMPARE.
    The result has ``out_dtype`` (default: x's; comparisons: bool)."""
    shape = tuple(int(d) for d in np.broadcast_shapes(x.shape, y.shape))
    if op in COMPARE:
        kernel, code, out_dtype = _compare, COMPARE[op], np.bool_
    else:
        kernel, code = _arithmetic, ARITHMETIC[op]
    out = empty(shape, out_dtype or x.dtype)
    if out.size == 0:
        return out
    run_shape = shape or (1,)                 # a 0-d result is one element of rank 1
    xs = broadcast_strides(x.shape, run_shape)
    ys = broadcast_strides(y.shape, run_shape)
    blocks, threads = launch_1d(out.size)
    kernel[blocks, threads](code, flat(x), int_array(xs), flat(y), int_array(ys),
                            int_array(run_shape), flat(out))
    return out


# --- unary ----------------------------------------------------------------------------------
@cuda.jit(cache=True)
def _unary(op, x, a, b, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        v = x[i]
        if op == SCALE_THEN_BIAS:
            out[i] = v * a + b
        elif op == BIAS_THEN_SCALE:
            out[i] = (v + b) * a
        else:                          # NEG
            out[i] = -v


def unary(op: str, x, a: float = 1.0, b: float = 0.0, out_dtype=None):
    """``op(x)`` elementwise (``op`` a key of UNARY); ``a``, ``b`` are the scale and bias
    of scale_then_bias / bias_then_scale. The result keeps x's dtype unless told."""
    if op == "logical_not":
        return logical_not(x)
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


@cuda.jit(cache=True)
def _logical_not(x, out):
    # its own kernel: x may be bool, which the arithmetic of _unary does not take
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = x[i] == 0


def logical_not(x):
    out = empty(x.shape, np.bool_)
    if out.size:
        blocks, threads = launch_1d(out.size)
        _logical_not[blocks, threads](flat(x), flat(out))
    return out
