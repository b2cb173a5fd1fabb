"""Vector norms over any dims: p_norm (p = 0 counts the nonzeros, +-inf takes the largest
or smallest |x|), dist (the p-norm of X - Y) and frobenius_norm, with their gradients.

The scalar math is @pointwise (reduce.pointwise_scalar): the interpreter's kernels
(ops/p_norm.py) apply it as ``KERNELS[name]`` ufuncs and the compiled forms below call the
same functions in their loops, with the row sums of reduce.py, so both give the same bits.
Arguments ``order``, ``inverse``, ``kept``, ``keep_dim`` and ``out_rank`` are
reduce.folded_over's: the kept dims first, the reduced ones last.
"""
import math

import numpy as np
from numba import literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from .lazy_ufunc import FLOAT_1, FLOAT_2, FLOAT_3
from .reduce import (FLOAT_5, fold_rows, per_row, reduced_dims, _row_sum_serial,
                     rows_over, unmoved, pointwise_scalar)


@pointwise_scalar(FLOAT_2, params=1)
def abs_pow(x, p):
    return abs(x) ** p


@pointwise_scalar(FLOAT_1)
def nonzero(x):
    return 1.0 if x != 0 else 0.0


@pointwise_scalar(FLOAT_5, params=2)
def p_norm_grad(x, norm, dout, p, eps):
    sign = 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)
    return abs(x) ** (p - 1) / (norm ** (p - 1) + eps) * sign * dout


@pointwise_scalar(FLOAT_3)
def p_norm_extreme_grad(x, norm, dout):
    # p = +-inf: dOut to each element whose |x| is the result
    sign = 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)
    return (1.0 if abs(x) == norm else 0.0) * sign * dout



@njit(cache=True, fastmath=False, error_model="numpy")
def _norm_rows(rows, p):
    """The p-norm of each row, as ops/p_norm.norm_over computes it: the nonzeros counted
    (p = 0), the largest / smallest |x| (+-inf: rows not empty), else the row sum of
    |x|^p to the power 1 / p (pow's op: a sum is never a negative base)."""
    t = rows.dtype.type
    terms = np.empty_like(rows)
    if np.isinf(p):
        for i in range(rows.shape[0]):
            for j in range(rows.shape[1]):
                terms[i, j] = abs(rows[i, j])
        return fold_rows(terms, "max" if p > 0 else "min")
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            terms[i, j] = nonzero(rows[i, j]) if p == 0 else \
                abs_pow(rows[i, j], t(p))
    total = _row_sum_serial(terms)
    if p != 0:
        root = t(1.0 / p)
        for i in range(total.size):
            total[i] = total[i] ** root
    return total


@njit(cache=True, fastmath=False, error_model="numpy")
def _norm_grad_rows(rows, o, d, p, epsilon):
    """d norm / d x times dOut for each element of ``rows`` with its row's norm ``o`` and
    dOut ``d``, as ops/p_norm.norm_grad_over: 0 for p = 0, p_norm_extreme_grad for +-inf,
    else p_norm_grad."""
    t = rows.dtype.type
    g = np.zeros_like(rows)
    if p == 0:
        return g
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            g[i, j] = p_norm_extreme_grad(rows[i, j], o[i], d[i]) if np.isinf(p) \
                else p_norm_grad(rows[i, j], o[i], d[i], t(p), t(epsilon))
    return g


@njit(cache=True, fastmath=False, error_model="numpy")
def p_norm_over(x, order, kept, keep_dim, out_rank, p):
    """p_norm of x over the dims ``order`` puts last (as folded_over's arguments)."""
    literally(out_rank)
    rows = rows_over(x, order, kept)
    if np.isinf(p) and rows.shape[1] == 0:
        raise ValueError("p_norm: X has no elements along a reduced axis")
    return _norm_rows(rows, p).reshape(
        to_fixed_tuple(reduced_dims(x, order, kept, keep_dim, out_rank), out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def p_norm_over_grad(x, out, dout, order, inverse, kept, p, epsilon):
    """p_norm's dX."""
    rows = rows_over(x, order, kept)
    o, d = per_row(out, rows, x.dtype), per_row(dout, rows, x.dtype)
    return unmoved(_norm_grad_rows(rows, o, d, p, epsilon), x, order, inverse)


@njit(cache=True, fastmath=False, error_model="numpy")
def _difference_row(x, y):
    """X - Y of one shape (a compiled dist takes no broadcasting) as a (1, size) row."""
    if x.shape != y.shape:
        raise ValueError("dist: X and Y have other shapes than the compiled block's")
    return (np.ascontiguousarray(x) - np.ascontiguousarray(y)).reshape((1, x.size))


@njit(cache=True, fastmath=False, error_model="numpy")
def dist_of(x, y, p):
    """dist's 0-d Out: the p-norm of X - Y as one vector (0 for no elements)."""
    row = _difference_row(x, y)
    if row.size == 0:
        return np.zeros((), x.dtype)
    return _norm_rows(row, p).reshape(())


@njit(cache=True, fastmath=False, error_model="numpy")
def dist_grad(x, y, out, dout, p, epsilon):
    """dist's (dX, dY): d norm / d (X - Y) times dOut, and its negation."""
    row = _difference_row(x, y)
    o, d = per_row(out, row, x.dtype), per_row(dout, row, x.dtype)
    g = _norm_grad_rows(row, o, d, p, epsilon).reshape(x.shape)
    return g, -g


@njit(cache=True, fastmath=False, error_model="numpy")
def frobenius_over(x, order, kept, keep_dim, out_rank):
    """frobenius_norm of x over the dims ``order`` puts last: sqrt of the row sums of
    X * X."""
    literally(out_rank)
    rows = rows_over(x, order, kept)
    total = _row_sum_serial(rows * rows)
    for i in range(total.size):
        total[i] = math.sqrt(total[i])
    return total.reshape(to_fixed_tuple(reduced_dims(x, order, kept, keep_dim, out_rank),
                                        out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def frobenius_over_grad(x, out, dout, order, inverse, kept):
    """frobenius_norm's dX = X * dOut / Out (Out and dOut of each element's row)."""
    rows = rows_over(x, order, kept)
    o, d = per_row(out, rows, x.dtype), per_row(dout, rows, x.dtype)
    g = np.empty_like(rows)
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            g[i, j] = rows[i, j] * d[i] / o[i]
    return unmoved(g, x, order, inverse)
