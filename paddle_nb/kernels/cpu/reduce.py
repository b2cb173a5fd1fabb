"""Reductions over the last axis of a 2-D view ``(outer, inner)``; callers move the
reduced axes last. Sums accumulate in float64 so long sums of float32 stay accurate.

``row_sum`` and ``row_softmax`` pick a serial or a ``prange`` (over rows) kernel by size;
both are generated around the same row code (twins.py), inlined (``inline="always"``: a
call per row that passes arrays costs an NRT incref/decref pair). The sums are
reassociated (vectorised), so the two may differ in the last bit.
"""
import numpy as np
from numba import literal_unroll, literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from .fastmath32 import FASTMATH32, fexp, maxnum
from .matrix_view import last_axis_rows, matrix_shape
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


# --- inside a compiled block (paddle_nb/compiler) -----------------------------------------
# The ops' computations as numba code calls them: the serial loops above (a compiled block
# cannot ask threads.parallel_ok whether BLAS's threads are still spinning), each scalar
# rounded to the array's dtype as numpy rounds an array times a Python float.
@njit(cache=True, fastmath=False, error_model="numpy")
def softmax_last_axis(x):
    """softmax along x's last axis."""
    return _row_softmax_serial(last_axis_rows(x)).reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def softmax_last_axis_grad(out, dout):
    """softmax's dX along the last axis, from Out and dOut of one dtype."""
    return _softmax_grad_rows(last_axis_rows(out), last_axis_rows(dout)).reshape(out.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def mean_of_all(x):
    """mean's 0-d Out: the sum of every element times 1 / size (NaN for none)."""
    total = _row_sum_serial(np.ascontiguousarray(x).reshape((1, x.size)))
    n = x.size
    return (total * total.dtype.type(1.0 / n if n else np.nan)).reshape(())


@njit(cache=True, fastmath=False, error_model="numpy")
def mean_of_all_grad(x, dout):
    """mean's dX: dOut / size everywhere, in x's dtype."""
    d = np.ascontiguousarray(dout).reshape(dout.size)
    if d.size == 0:
        raise ValueError("mean_grad: Out@GRAD holds no value")
    return np.full(x.shape, x.dtype.type(d[0] / d.dtype.type(max(x.size, 1))))


@njit(cache=True, fastmath=False, error_model="numpy")
def summed_over(x, order, kept, keep_dim, out_rank, mean):
    """reduce_sum (``mean``: reduce_mean) of x: ``order`` lists x's kept dims, the first
    ``kept`` of it, then the reduced ones (all ascending); ``out_rank``, a literal, is Out's
    rank (with the reduced dims as 1s where ``keep_dim``)."""
    literally(out_rank)
    moved = np.transpose(x, order)
    outer, inner = matrix_shape(moved, kept)
    total = _row_sum_serial(np.ascontiguousarray(moved).reshape((outer, inner)))
    if mean:
        total = total * total.dtype.type(1.0 / inner if inner else np.nan)
    dims = np.ones(out_rank, np.int64)
    for k in range(kept):
        dims[order[k] if keep_dim else k] = x.shape[order[k]]
    return total.reshape(to_fixed_tuple(dims, out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def summed_over_grad(x, dout, order, inverse, kept, mean):
    """reduce_sum's (``mean``: reduce_mean's) dX: each value of dOut, in x's dtype, over
    the dims it summed (divided by their count for a mean); ``order`` as summed_over's,
    ``inverse`` its inverse permutation."""
    moved = np.transpose(x, order)
    outer, inner = matrix_shape(moved, kept)
    d = np.ascontiguousarray(dout).reshape(outer)
    factor = x.dtype.type(1.0 / max(inner, 1))
    rows = np.empty((outer, inner), x.dtype)
    for i in range(outer):
        v = x.dtype.type(d[i])
        if mean:
            v = v * factor
        for j in range(inner):
            rows[i, j] = v
    return np.ascontiguousarray(np.transpose(rows.reshape(moved.shape), inverse))


@njit(cache=True, fastmath=False, error_model="numpy")
def added_up(xs):
    """The sum op's Out for a tuple of arrays of one shape and dtype: a copy of the first
    plus each of the others in turn, as the interpreter adds them."""
    out = np.copy(xs[0])
    flat = out.reshape(-1)
    first = True
    for x in literal_unroll(xs):
        if first:
            first = False
            continue
        if x.shape != out.shape:
            raise ValueError("sum: an input has another shape than the first")
        xf = np.ascontiguousarray(x).reshape(-1)
        for i in range(flat.size):
            flat[i] += xf[i]
    return out
