"""The gradient of a broadcast operand inside a compiled block: dOut summed back to it.

An operand that Fluid's ``axis`` rule broadcast along a loop of shape ``S`` covers the
loop's dims ``[lo, hi)`` (a bias: the last dim; a channel scale: dim 1 of [N, C, H, W];
the whole of S when nothing was broadcast, none of it for one element). Its gradient is
dOut viewed as ``(pre, n, post)`` and summed over ``pre`` and ``post``, in the operand's
dtype and in the order numpy's ``sum(axis=0)`` adds rows (ops/arrays.unbroadcast is the
interpreter's form).
"""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")    # (adds in numpy's order)
def summed_to_operand(d, like, lo, hi, negate):
    """dOut ``d`` summed to ``like``'s shape, over every dim outside ``[lo, hi)``;
    ``negate``: minus that (elementwise_sub's Y)."""
    shape = d.shape
    pre = n = post = 1
    for k in range(len(shape)):
        if k < lo:
            pre *= shape[k]
        elif k < hi:
            n *= shape[k]
        else:
            post *= shape[k]
    flat = np.ascontiguousarray(d).reshape((pre, n, post))
    out = np.zeros(n, d.dtype)
    for a in range(pre):
        for j in range(n):
            for b in range(post):
                out[j] += flat[a, j, b]
    if negate:
        out = -out
    return out.reshape(like.shape)
