"""The gradient of a broadcast operand inside a compiled block: dOut summed back to it.

An operand that Fluid's ``axis`` rule broadcast along a loop of shape ``S`` covers the
loop's dims ``[lo, hi)`` (a bias: the last dim; a channel scale: dim 1 of [N, C, H, W];
the whole of S when nothing was broadcast, none of it for one element). Its gradient is
dOut viewed as ``(pre, n, post)`` and summed over ``pre`` and ``post``, in the operand's
dtype and in the order numpy's ``sum(axis=0)`` adds rows (ops/arrays.unbroadcast is the
interpreter's form). ``operand_gradient`` makes the whole gradient of one operand of a
product, a quotient, a max...: the op's scalar derivative at Out's shape, then that sum.
"""
import numpy as np
from numba import njit

from .generated import define


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


@njit(cache=True, fastmath=False, error_model="numpy")
def dims_size(shape, lo, hi):
    """The product of ``shape[lo:hi]`` (1 for none)."""
    n = 1
    for k in range(lo, hi):
        n *= shape[k]
    return n


# One operand's gradient of Out = f(X, Y): the gradient at Out's shape, element by element
# (X and Y read as the loop reads them: their dims [lo, hi) of Out's, at (i // post) % n),
# each step rounded to the operands' dtype as the interpreter's ufuncs round it, then summed
# back to the operand (nothing to sum when it is Out's shape). The formula is an
# expression of the elements x, y, d (dOut) calling @pointwise scalar functions by name.
_OPERAND_GRADIENT = """
def {name}(xs, ys, ds, like, x_lo, x_hi, y_lo, y_hi, lo, hi):
    shape = ds.shape
    if xs.size != dims_size(shape, x_lo, x_hi) or ys.size != dims_size(shape, y_lo, y_hi):
        raise ValueError("{name}: X or Y has another shape than the block was compiled for")
    xf = np.ascontiguousarray(xs).reshape(-1)
    yf = np.ascontiguousarray(ys).reshape(-1)
    df = np.ascontiguousarray(ds).reshape(-1)
    x_post = dims_size(shape, x_hi, len(shape))
    y_post = dims_size(shape, y_hi, len(shape))
    full = np.empty(shape, like.dtype)
    ff = full.reshape(-1)
    for i in range(df.size):
        x = xf[(i // x_post) % xf.size]
        y = yf[(i // y_post) % yf.size]
        d = df[i]
        ff[i] = {formula}
    if lo == 0 and hi == len(shape):
        return full.reshape(like.shape)
    return summed_to_operand(full, like, lo, hi, False)
"""


def operand_gradient(name: str, formula: str, kernels):
    """An ``njit`` function ``(X, Y, dOut, like, x_lo, x_hi, y_lo, y_hi, lo, hi)`` giving
    ``formula`` (of x, y, d, calling ``kernels``, @pointwise kernels, by their names)
    summed back to ``like``, the operand covering Out's dims ``[lo, hi)``. Generated as
    source claiming the first kernel's file (generated.py says why)."""
    scope = {k.__name__: k.scalar for k in kernels}
    scope.update(np=np, dims_size=dims_size, summed_to_operand=summed_to_operand)
    source = _OPERAND_GRADIENT.format(name=name, formula=formula)
    return njit(cache=True, fastmath=False, error_model="numpy")(
        define(source, name, f"{name}__operand_gradient", kernels[0].fn, scope))
