"""Reductions over the last axis of a 2-D view ``(outer, inner)``; callers move the
reduced axes last. Sums accumulate in float64 so long sums of float32 stay accurate.

``row_sum`` and ``row_softmax`` pick a serial or a ``prange`` (over rows) kernel by size;
both are generated around the same row code (twins.py), inlined (``inline="always"``: a
call per row that passes arrays costs an NRT incref/decref pair). The sums are
reassociated (vectorised), so the two may differ in the last bit.

Below them, what the ops' compiled forms (paddle_nb/compiler) call: the reductions over any
dims (the kept dims moved first, the reduced ones last, as the places' ``sum_axes``), the
log_softmax rows (the interpreter's kernel too) and logsumexp; scans.py (cumsum,
logcumsumexp) and vector_norms.py (p_norm, dist, frobenius_norm) build on the same row
views. The scalar math of the reductions' gradients
is @pointwise here (``pointwise_scalar``): the interpreter's ufunc and the compiled loop
call one function, so they give the same bits.
"""
import math

import numpy as np
from numba import literal_unroll, literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from ..pointwise import pointwise
from .fastmath32 import FASTMATH32, fexp, maxnum
from .lazy_ufunc import FLOAT_2, FLOAT_3
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
# @pointwise signatures of 4 and 5 float operands (lazy_ufunc.py has them up to 3)
FLOAT_4 = ["float32(float32, float32, float32, float32)",
           "float64(float64, float64, float64, float64)"]
FLOAT_5 = ["float32(float32, float32, float32, float32, float32)",
           "float64(float64, float64, float64, float64, float64)"]


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


# The reductions over any dims: ``order`` lists x's kept dims (the first ``kept`` of it) then
# its reduced ones, all ascending, so that the reduced dims are the columns of a
# C-contiguous (outer, inner) matrix, as the places' sum_axes sees them; ``inverse`` is
# ``order``'s inverse permutation; ``out_rank``, a literal, is Out's rank (with the reduced
# dims as 1s where ``keep_dim``).
@njit(cache=True, fastmath=False, error_model="numpy")
def rows_over(x, order, kept):
    """x's dims in ``order`` as a C-contiguous (outer, inner) matrix."""
    moved = np.transpose(x, order)
    return np.ascontiguousarray(moved).reshape(matrix_shape(moved, kept))


@njit(cache=True, fastmath=False, error_model="numpy")
def unmoved(rows, x, order, inverse):
    """An (outer, inner) matrix of rows_over(x, order, ...) back in x's layout."""
    return np.ascontiguousarray(np.transpose(rows.reshape(np.transpose(x, order).shape),
                                             inverse))


@njit(cache=True, fastmath=False, error_model="numpy")
def reduced_dims(x, order, kept, keep_dim, out_rank):
    """Out's dims as an array of ``out_rank``: the kept dims (with the reduced ones as 1s
    in their places where ``keep_dim``)."""
    dims = np.ones(out_rank, np.int64)
    for k in range(kept):
        dims[order[k] if keep_dim else k] = x.shape[order[k]]
    return dims


@njit(cache=True, fastmath=False, error_model="numpy")
def summed_over(x, order, kept, keep_dim, out_rank, mean):
    """reduce_sum (``mean``: reduce_mean) of x over the dims ``order`` puts last."""
    literally(out_rank)
    rows = rows_over(x, order, kept)
    total = _row_sum_serial(rows)
    if mean:
        inner = rows.shape[1]
        total = total * total.dtype.type(1.0 / inner if inner else np.nan)
    return total.reshape(to_fixed_tuple(reduced_dims(x, order, kept, keep_dim, out_rank),
                                        out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def summed_over_grad(x, dout, order, inverse, kept, mean):
    """reduce_sum's (``mean``: reduce_mean's) dX: each value of dOut, in x's dtype, over
    the dims it summed (divided by their count for a mean)."""
    outer, inner = matrix_shape(np.transpose(x, order), kept)
    d = np.ascontiguousarray(dout).reshape(outer)
    factor = x.dtype.type(1.0 / max(inner, 1))
    rows = np.empty((outer, inner), x.dtype)
    for i in range(outer):
        v = x.dtype.type(d[i])
        if mean:
            v = v * factor
        for j in range(inner):
            rows[i, j] = v
    return unmoved(rows, x, order, inverse)


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


def pointwise_scalar(signatures, **options):
    """@pointwise (kernels/pointwise.py) for the math that a compiled form's loop here
    calls too: the interpreter's kernel is ``KERNELS[name]``, and the module keeps the
    scalar function under the name (numba code calls a global dispatcher, not an
    attribute)."""
    return lambda fn: pointwise(signatures, **options)(fn).scalar


# --- max, min, prod and the boolean reductions over any dims (arguments as summed_over's) ---
@pointwise_scalar(FLOAT_3)
def picked_grad(x, out, dout):
    # reduce_max/_min, as Paddle: dOut goes to every element equal to the result (ties too)
    return dout if x == out else dout * 0


@pointwise_scalar(FLOAT_3, fastmath=False)
def prod_grad(x, out, dout):
    # reduce_prod, as Paddle: dOut * Out / X (a 0 in X gives inf or NaN there, as Paddle's)
    return dout * out / x


@pointwise_scalar(FLOAT_4)
def shared_grad(x, out, dout, ties):
    # reduce_amax/_amin: dOut shared evenly by the ``ties`` elements equal to the result
    return dout / ties if x == out else dout * 0


@njit(cache=True, fastmath=False, error_model="numpy")
def fold_rows(rows, fold):
    """max / min / prod of each row (not empty), as numpy's: a NaN is the max and the min
    of its row, among equal values the first stays, and the product runs left to right."""
    out = np.empty(rows.shape[0], rows.dtype)
    product, largest = fold == "prod", fold == "max"
    for i in range(rows.shape[0]):
        m = rows[i, 0]
        if product:
            for j in range(1, rows.shape[1]):
                m = m * rows[i, j]
        elif m == m:                  # (a NaN first is the result)
            for j in range(1, rows.shape[1]):
                v = rows[i, j]
                if v != v:
                    m = v
                    break
                if (v > m) if largest else (v < m):
                    m = v
        out[i] = m
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def folded_over(x, order, kept, keep_dim, out_rank, fold):
    """reduce_max / _min / _prod (``fold``: "max", "min", "prod") of x over the dims
    ``order`` puts last; ``out_rank``, a literal, is Out's rank."""
    literally(out_rank)
    rows = rows_over(x, order, kept)
    if rows.shape[1] == 0:
        raise ValueError("reduce: X has no elements along a reduced dim")
    out = fold_rows(rows, fold)
    return out.reshape(to_fixed_tuple(reduced_dims(x, order, kept, keep_dim, out_rank),
                                      out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def per_row(a, rows, dtype):
    """Out or dOut of a reduction: one value per row of ``rows``, in ``dtype``."""
    if a.size != rows.shape[0]:
        raise ValueError("reduce grad: Out or Out@GRAD has another size than X's rows")
    return np.ascontiguousarray(a).reshape(a.size).astype(dtype)


@njit(cache=True, fastmath=False, error_model="numpy")
def folded_over_grad(x, out, dout, order, inverse, kept, fold):
    """reduce_max's / _min's / _prod's dX (``fold`` as folded_over's): picked_grad or
    prod_grad of each element with its row's Out and dOut."""
    rows = rows_over(x, order, kept)
    o, d = per_row(out, rows, x.dtype), per_row(dout, rows, x.dtype)
    g = np.empty_like(rows)
    for i in range(rows.shape[0]):
        if fold == "prod":
            for j in range(rows.shape[1]):
                g[i, j] = prod_grad(rows[i, j], o[i], d[i])
        else:
            for j in range(rows.shape[1]):
                g[i, j] = picked_grad(rows[i, j], o[i], d[i])
    return unmoved(g, x, order, inverse)


@njit(cache=True, fastmath=False, error_model="numpy")
def shared_over_grad(x, out, dout, order, inverse, kept):
    """reduce_amax's / _amin's dX: shared_grad of each element with its row's Out, dOut
    and count of ties (a count: exact in any order)."""
    rows = rows_over(x, order, kept)
    o, d = per_row(out, rows, x.dtype), per_row(dout, rows, x.dtype)
    g = np.empty_like(rows)
    for i in range(rows.shape[0]):
        ties = 0
        for j in range(rows.shape[1]):
            if rows[i, j] == o[i]:
                ties += 1
        t = x.dtype.type(ties)
        for j in range(rows.shape[1]):
            g[i, j] = shared_grad(rows[i, j], o[i], d[i], t)
    return unmoved(g, x, order, inverse)


@njit(cache=True, fastmath=False, error_model="numpy")
def tested_over(x, order, kept, keep_dim, out_rank, every):
    """reduce_all (``every``) / reduce_any of x: whether every / some element of each row
    is nonzero (NaN too); an empty row is all but not any."""
    literally(out_rank)
    rows = rows_over(x, order, kept)
    out = np.empty(rows.shape[0], np.bool_)
    for i in range(rows.shape[0]):
        found = False              # all: a zero found; any: a nonzero found
        for j in range(rows.shape[1]):
            if (rows[i, j] == 0) == every:
                found = True
                break
        out[i] = not found if every else found
    return out.reshape(to_fixed_tuple(reduced_dims(x, order, kept, keep_dim, out_rank),
                                      out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def squared_l2_norm(x):
    """squared_l2_norm's Out, shape (1,): the squares summed by the interpreter's row sum."""
    flat = np.ascontiguousarray(x).reshape(x.size)
    return _row_sum_serial((flat * flat).reshape((1, x.size)))


# --- log_softmax ------------------------------------------------------------------------------
# Strict IEEE (no reassociation), so the serial and the prange loops, and a compiled
# block's call of the serial one, give the same bits.
@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _log_softmax_row(a, out, i):
    """Row i's X - max - log(sum(exp(X - max))): the max as numpy's (a NaN is it), the
    sum in float64, each difference in a's dtype."""
    x, o = a[i], out[i]
    if x.size == 0:
        return
    m = x[0]
    for j in range(1, x.size):
        if x[j] > m or x[j] != x[j]:
            m = x[j]
    total = 0.0
    for j in range(x.size):
        total += math.exp(x[j] - m)
    log_total = a.dtype.type(math.log(total))
    for j in range(x.size):
        o[j] = (x[j] - m) - log_total


_row_log_softmax_serial, _row_log_softmax_parallel = twins(
    _log_softmax_row, "_row_log_softmax", items="a.shape[0]",
    allocate={"out": "np.empty_like(a)"})


def row_log_softmax(a):
    """log_softmax of each row of a 2-D C-contiguous float array."""
    if a.size >= MIN_PARALLEL_SOFTMAX and a.shape[0] > 1 and parallel_ok():
        return _row_log_softmax_parallel(a)
    return _row_log_softmax_serial(a)


@njit(cache=True, fastmath=False, error_model="numpy")
def _log_softmax_grad_rows(out, dout):
    """dX = dOut - exp(Out) * sum(dOut) per row; the sum in float64."""
    dx = np.empty_like(out)
    for i in range(out.shape[0]):
        o, d, g = out[i], dout[i], dx[i]
        total = 0.0
        for j in range(d.size):
            total += d[j]
        s = out.dtype.type(total)
        for j in range(o.size):
            g[j] = d[j] - math.exp(o[j]) * s
    return dx


def log_softmax_grad_rows(out, dout):
    """The log_softmax gradient of each row (2-D float arrays of one shape and dtype)."""
    return _log_softmax_grad_rows(np.ascontiguousarray(out), np.ascontiguousarray(dout))


@njit(cache=True, fastmath=False, error_model="numpy")
def log_softmax_last_axis(x):
    """log_softmax along x's last axis."""
    return _row_log_softmax_serial(last_axis_rows(x)).reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def log_softmax_last_axis_grad(out, dout):
    """log_softmax's dX along the last axis, from Out and dOut of one dtype."""
    return _log_softmax_grad_rows(last_axis_rows(out), last_axis_rows(dout)
                                  ).reshape(out.shape)


# --- logsumexp --------------------------------------------------------------------------------
@pointwise_scalar(FLOAT_2)
def logsumexp_shift(x, m):
    # exp(x - m), m the max of x's axes (<= 1); not needed where m is infinite or NaN
    return math.exp(x - m) if math.isfinite(m) else 0


@pointwise_scalar(FLOAT_2, fastmath=False)
def logsumexp_finish(total, m):
    # m + log(total), total >= 1 (the max's own term); an infinite or NaN max is the result
    return m + math.log(total) if math.isfinite(m) else m


@pointwise_scalar(FLOAT_3)
def logsumexp_grad(x, out, dout):
    return dout * math.exp(x - out)



@njit(cache=True, fastmath=False, error_model="numpy")
def logsumexp_over(x, order, kept, keep_dim, out_rank):
    """logsumexp of x over the dims ``order`` puts last (as folded_over's arguments), as
    ops/logsumexp.py's kernel: the max, the shifted terms, their row sum, the finish."""
    literally(out_rank)
    rows = rows_over(x, order, kept)
    shape = to_fixed_tuple(reduced_dims(x, order, kept, keep_dim, out_rank), out_rank)
    if x.size == 0:                        # a sum of no terms is 0: its log is -inf
        return np.full(shape, -np.inf, x.dtype)
    m = fold_rows(rows, "max")
    terms = np.empty_like(rows)
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            terms[i, j] = logsumexp_shift(rows[i, j], m[i])
    total = _row_sum_serial(terms)
    out = np.empty_like(m)
    for i in range(m.size):
        out[i] = logsumexp_finish(total[i], m[i])
    return out.reshape(shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def logsumexp_over_grad(x, out, dout, order, inverse, kept):
    """logsumexp's dX: logsumexp_grad of each element with its row's Out and dOut."""
    rows = rows_over(x, order, kept)
    o, d = per_row(out, rows, x.dtype), per_row(dout, rows, x.dtype)
    g = np.empty_like(rows)
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            g[i, j] = logsumexp_grad(rows[i, j], o[i], d[i])
    return unmoved(g, x, order, inverse)
