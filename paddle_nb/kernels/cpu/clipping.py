"""clip_by_norm's math (ops/grad_clip.py): ``clipped_value``, the scalar function both
places' kernels run on each element (the op's @pointwise kernel calls it), and
``clipped_to_norm``, the op as a compiled block (paddle_nb/compiler) calls it: the squared
norm summed by the interpreter's row sum (reduce.squared_l2_norm, the order the places'
``sum_axes`` adds in for one row), then the same scalar function on each element, so both
paths give the same bits (both compiled without fastmath).
"""
import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

from .reduce import squared_l2_norm


@register_jitable
def clipped_value(x, squared_norm, max_norm):
    """x scaled by max_norm / ||X|| where the norm is longer than max_norm."""
    if squared_norm > max_norm * max_norm:
        return x * (max_norm / math.sqrt(squared_norm))
    return x


@njit(cache=True, fastmath=False, error_model="numpy")
def clipped_to_norm(x, max_norm):
    """clip_by_norm's Out: x scaled down to L2 norm ``max_norm`` if it is longer."""
    squared = squared_l2_norm(x)[0]
    flat = np.ascontiguousarray(x).reshape(x.size)
    out = np.empty(x.size, x.dtype)
    for i in range(x.size):
        out[i] = clipped_value(flat[i], squared, max_norm)
    return out.reshape(x.shape)
