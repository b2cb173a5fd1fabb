"""Reductions over the last axis of a 2-D view ``(outer, inner)``; callers move the
reduced axes last. Sums accumulate in float64 so long sums of float32 stay accurate.

``row_sum`` and ``row_softmax`` pick a serial or a ``prange`` (over rows) kernel by size;
both are generated around the same row code (twins.py), inlined (``inline="always"``: a
call per row that passes arrays costs an NRT incref/decref pair). The sums are
reassociated (vectorised), so the two may differ in the last bit.
"""
import numpy as np
from numba import njit

from .fastmath32 import FASTMATH32, fexp, maxnum
from .threads import parallel_ok
from .twins import twins

# Elements from which the prange kernels run (2 threads): the first measured power of 2
# where they took <= ~0.8x the serial time, for rows of 16 and of 256.
MIN_PARALLEL_SUM = 131_072       # measured crossover 16k (16 columns) to 128k (256)
MIN_PARALLEL_SOFTMAX = 16_384    # measured crossover 4k (16 columns) to 8k (256)

# softmax: fastmath without "nnan"/"ninf" (rows masked with -inf must give exp(-inf) = 0,
# a NaN row must give NaN), with "reassoc" so the max and the sum vectorise.
_SOFTMAX_FLAGS = FASTMATH32 | {"reassoc"}
_BLOCK = 1024
# Rows up to this long take the max with a plain comparison, longer ones with maxnum's
# vector reduction (measured, float32 serial: 2048 rows of 32, 107 us with maxnum, 72
# with the comparison; 1000 rows of 1000, 514 against 941; 4096 of 128, 597 against 477)
_SHORT_ROW = 128


@njit(cache=True, fastmath=True, error_model="numpy", inline="always")
def _sum_row(a, out, i):
    s = 0.0
    for j in range(a.shape[1]):
        s += a[i, j]
    out[i] = s


_row_sum_serial, _row_sum_parallel = twins(
    _sum_row, "_row_sum", items="a.shape[0]",
    allocate={"out": "np.empty(a.shape[0], dtype=a.dtype)"})


def row_sum(a):
    """Sum of each row of a 2-D float array, in a's dtype."""
    if a.size >= MIN_PARALLEL_SUM and a.shape[0] > 1 and parallel_ok():
        return _row_sum_parallel(a)
    return _row_sum_serial(a)


@njit(cache=True, fastmath=_SOFTMAX_FLAGS, error_model="numpy", inline="always")
def _softmax_row(a, out, i):
    """Numerically stable softmax of row i: exp(x - max) / sum. The max uses maxnum (a
    vectorised reduction; a NaN is skipped there but still makes its row NaN through
    exp and the sum). The sum runs in a's dtype within blocks of _BLOCK columns (so it
    vectorises; slices, not index arithmetic, or LLVM gives up: 2.8x slower) and in
    float64 across blocks."""
    x = a[i]
    o = out[i]
    m = x[0]
    if x.size <= _SHORT_ROW:          # attention's rows: a scalar max is cheaper here
        for j in range(1, x.size):
            m = max(m, x[j])
    else:
        for j in range(1, x.size):
            m = maxnum(m, x[j])
    total = 0.0
    for start in range(0, x.size, _BLOCK):
        xb = x[start:start + _BLOCK]
        ob = o[start:start + _BLOCK]
        s = a.dtype.type(0)
        for j in range(xb.size):
            e = fexp(xb[j] - m)
            ob[j] = e
            s += e
        total += s
    inv = out.dtype.type(1.0 / total)
    for j in range(o.size):
        o[j] = o[j] * inv


_row_softmax_serial, _row_softmax_parallel = twins(
    _softmax_row, "_row_softmax", items="a.shape[0]", allocate={"out": "np.empty_like(a)"})


def row_softmax(a):
    """Softmax of each row of a 2-D float array (rows of at least one element)."""
    if a.size >= MIN_PARALLEL_SOFTMAX and a.shape[0] > 1 and parallel_ok():
        return _row_softmax_parallel(a)
    return _row_softmax_serial(a)


@njit(cache=True, fastmath=_SOFTMAX_FLAGS, error_model="numpy")
def _softmax_grad_rows(out, dout):
    """dX = Out * (dOut - sum(dOut * Out)) per row; the sum in float64. One pass to sum,
    one to write: numpy's three array expressions took 88 us for 2048 rows of 32, this
    13."""
    dx = np.empty_like(out)
    for i in range(out.shape[0]):
        o, d, g = out[i], dout[i], dx[i]
        total = 0.0
        for j in range(o.size):
            total += o[j] * d[j]
        inner = out.dtype.type(total)
        for j in range(o.size):
            g[j] = o[j] * (d[j] - inner)
    return dx


def softmax_grad_rows(out, dout):
    """The softmax gradient of each row (2-D float arrays of one shape and dtype)."""
    return _softmax_grad_rows(np.ascontiguousarray(out), np.ascontiguousarray(dout))
