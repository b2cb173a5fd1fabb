"""dropout's element math (ops/dropout.py), and its training form in a compiled block.

A kept element is X * mul / div and a dropped one 0 (``dropout_kept``), its gradient
dOut * Mask * mul / div (``dropout_masked_grad``): @pointwise functions (the interpreter's
kernels are ``pointwise.KERNELS[name]``; this module keeps the scalar functions), so the
interpreter's ufunc and a compiled loop compute each element with one function. In
training the Mask is random.dropout_mask of a seed: the op's own (fix_seed), or a new one
from numpy's generator each run, which a compiled block draws at the same point of the run
as the interpreter (random.chosen_seed), so a compiled training run drops the elements a
plain one drops.
"""
import numpy as np
from numba import njit

from .random import chosen_seed, dropout_mask
from .reduce import pointwise_scalar

MASKED = ["float32(float32, uint8, float32, float32)",
          "float64(float64, uint8, float64, float64)"]


@pointwise_scalar(MASKED, params=2)
def dropout_kept(x, mask, mul, div):
    # a dropped element is 0, even where X is NaN or inf (as Paddle writes it)
    return x * mul / div if mask != 0 else 0.0


@pointwise_scalar(MASKED, params=2)
def dropout_masked_grad(dout, mask, mul, div):
    return dout * mask * mul / div


@njit(cache=True, fastmath=False, error_model="numpy")
def dropout_trained(x, fixed, seed, p, mul, div):
    """Training's (Out, Mask) of X: the mask of ``seed`` (``fixed``: fix_seed's), else of
    a new seed from numpy's generator; ``mul`` and ``div`` in X's dtype (ops/dropout.py's
    _factors)."""
    s = np.uint64(seed) if fixed else np.uint64(chosen_seed(0))
    mask = dropout_mask(x.size, s, p)
    out = np.empty(x.size, x.dtype)
    flat = np.ascontiguousarray(x).reshape(x.size)
    for i in range(x.size):
        out[i] = dropout_kept(flat[i], mask[i], mul, div)
    return out.reshape(x.shape), mask.reshape(x.shape)
