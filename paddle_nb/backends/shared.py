"""What both places' primitives share: which ``@pointwise`` kernel a binary op type runs,
the shape of im2col's matrix, and how many matrices a batch of them holds.
"""
from __future__ import annotations

import math

import numpy as np

from ..kernels.pointwise import KERNELS


# the @pointwise kernel (ops/elementwise.py) each binary op type runs
_BINARY_KERNELS = {"elementwise_add": "add", "elementwise_sub": "sub",
                   "elementwise_mul": "mul", "elementwise_div": "div",
                   "elementwise_max": "maximum", "elementwise_min": "minimum",
                   "elementwise_pow": "power", "elementwise_floordiv": "floor_div",
                   "elementwise_mod": "remainder"}


def binary_kernel(op_type, x):
    """The kernel of ``op_type`` (elementwise_add, ..., a comparison, a logical op) for x's
    dtype: integer division truncates toward zero, as Paddle's C++ does."""
    return binary_kernel_for(op_type, x.dtype)


def binary_kernel_for(op_type, dtype):
    """binary_kernel for operands of ``dtype`` (a compiled block knows only dtypes)."""
    name = _BINARY_KERNELS.get(op_type, op_type)
    if name == "div" and dtype.kind in "iu":
        name = "trunc_div"
    return KERNELS[name]


def cols_shape(x_shape, geometry) -> tuple[int, int]:
    """im2col's [C * taps, N * output positions] for an input of ``x_shape`` (channels
    first) and a geometry of any spatial rank (ops/conv.py: geometry)."""
    rank = len(geometry) // 5
    return (int(x_shape[1]) * math.prod(geometry[:rank]),
            int(x_shape[0]) * math.prod(geometry[4 * rank:]))


def batch_of(shape) -> int:
    """How many matrices a tensor of ``shape`` holds: the product of the dims before the
    last two (1 for a single matrix)."""
    return int(np.prod(shape[:-2], dtype=np.int64))
