"""Matrix products: BLAS, called through numba for small products and through numpy for
large ones.

numba's ``np.dot`` calls scipy's BLAS; numpy's ``matmul`` calls numpy's own. Both wheels
bundle an OpenBLAS, so a process holds two OpenBLAS thread pools, and after a threaded
call each pool's workers keep spinning on the cores for a while (~0.1 s). Measured here
(2 cores): a 64x784 @ 784x256 float32 product took 0.17 ms through numpy, 0.40 ms through
numba, and 7.5 ms each when the two alternated, the pools starving each other. So a
product large enough for OpenBLAS to thread (m*k*n above ``BLAS_THREADS_FROM``, its own
rule) goes through numpy: the pool a user's own numpy code wakes anyway, so paddle_nb
never slows its neighbours' BLAS nor they its. Smaller products run single-threaded in
either library, where the njit call is the cheaper one (~2 us against ~3).

Both entry points tell threads.py when a threaded BLAS call ran, so the prange kernels
stay serial while BLAS's threads may still hold the cores. A product OpenBLAS runs on the
calling thread wakes no worker, and says nothing: LeNet's step has three such products,
and telling of them kept every kernel of the step serial.
"""
import numpy as np
from numba import literally, njit, types
from numba.extending import overload, register_jitable
from numba.np.unsafe.ndarray import to_fixed_tuple

from .in_python import in_python, like
from .matrix_view import as_matrix, matrix_shape
from .reduce import summed_over
from .threads import note_blas, parallel_ok, products_serial
from .twins import twins

# batched_matmul runs a prange over the batch only for many small products: each one a
# single-threaded BLAS call, so the two thread pools do not fight over the 2 cores.
MIN_PARALLEL_WORK = 262_144      # all products together (batch*m*k*n): measured crossover
#                                  ~200k (64 x 16^3: 0.86x serial; 64 x 8^3: 1.2x)
MAX_PARALLEL_WORK = 262_144      # one product: 64^3 still 0.52x serial; from 128^3 BLAS
#                                  threads itself and the prange stalls (8 ms, not 0.45)
# OpenBLAS threads a gemm when m*n*k > 65536 * GEMM_MULTITHREAD_THRESHOLD (4 by default)
BLAS_THREADS_FROM = 262_144
# Up to this many multiply-adds a product may run on the calling thread in row blocks,
# when threads.products_serial() says the cores are wanted by other kernels; past it the
# product is worth BLAS's threads whatever follows (LeNet's largest is 3 M).
SERIAL_PRODUCTS_UP_TO = 8_388_608


@njit(cache=True, fastmath=True, error_model="numpy")
def _matmul2d(a, b):
    return np.dot(a, b)


@njit(cache=True, fastmath=True, error_model="numpy")
def _matmul2d_into(a, b, out):
    np.dot(a, b, out)


@njit(cache=True, fastmath=True, error_model="numpy")
def _matmul2d_rows(a, b, out, rows):
    for r in range(0, a.shape[0], rows):
        np.dot(a[r:r + rows], b, out[r:r + rows])


def _on_this_thread(a, b, out):
    """a @ b in blocks of rows, each under BLAS_THREADS_FROM multiply-adds, so OpenBLAS
    computes every block on the calling thread and wakes no worker."""
    m, n = a.shape[0], b.shape[1]
    a = a if a.flags.c_contiguous else np.ascontiguousarray(a)     # (row blocks of a)
    if out is None:
        out = np.empty((m, n), np.result_type(a, b))
    rows = max(1, BLAS_THREADS_FROM // (a.shape[1] * n))
    _matmul2d_rows(a, b, out, rows)
    return out


def matmul2d(a, b, out=None):
    """(m, k) @ (k, n) for float32/float64 matrices, each C- or F-contiguous (a transpose
    needs no copy); written into ``out`` (C-contiguous, (m, n), their dtype) when given."""
    work = a.shape[0] * a.shape[1] * b.shape[1]
    if work > BLAS_THREADS_FROM and products_serial() and work <= SERIAL_PRODUCTS_UP_TO:
        return _on_this_thread(a, b, out)
    if work > BLAS_THREADS_FROM:
        out = np.matmul(a, b, out=out)          # numpy's BLAS pool (module docstring)
        note_blas()
    elif out is None:
        out = _matmul2d(a, b)
    else:
        _matmul2d_into(a, b, out)
    return out


@njit(cache=True, fastmath=True, error_model="numpy", inline="always")
def _product(a, b, out, i):
    np.dot(a[i], b[i], out[i])


_batched_matmul_serial, _batched_matmul_parallel = twins(
    _product, "_batched_matmul", items="a.shape[0]",
    allocate={"out": "np.empty((a.shape[0], a.shape[1], b.shape[2]), dtype=a.dtype)"})


@register_jitable
def splits_across_cores(batch, work):
    """Whether batched_matmul runs ``batch`` products of ``work`` multiply-adds each on more
    than one core: a prange over many small ones, or numpy's (threaded) BLAS for large
    ones. (register_jitable: numba code asks it too, the compiled blocks' batched_product.)"""
    return work > MAX_PARALLEL_WORK or (batch > 1 and batch * work >= MIN_PARALLEL_WORK)


def batched_matmul(a, b):
    """(batch, m, k) @ (batch, k, n), one BLAS call per batch item."""
    work = a.shape[1] * a.shape[2] * b.shape[2]
    small = work <= MAX_PARALLEL_WORK
    if small and not splits_across_cores(a.shape[0], work):
        return _batched_matmul_serial(a, b)
    if small:
        return _batched_matmul_parallel(a, b) if parallel_ok() else _batched_matmul_serial(a, b)
    out = np.matmul(a, b)                  # threaded BLAS: numpy's pool (module docstring)
    note_blas()
    return out


# --- products inside a compiled block (paddle_nb/compiler) ---------------------------------
# A compiled block calls ``product`` from numba code. It computes what matmul2d computes,
# in the same way: a product that OpenBLAS would thread goes back to Python for a moment
# (numba's object mode, ~3 us a call) and runs matmul2d itself (numpy's BLAS, the calling
# thread's row blocks, note_blas: the module docstring says why); a smaller one is numba's
# np.dot here, as in _matmul2d. So the numbers are the interpreter's, bit for bit.
# (product and mul take literal arguments: numba code calls them, each call site typed
# once; a call from Python would retype them every time.)
def _oriented_matmul2d(a, b, transpose_a, transpose_b):
    return matmul2d(a.T if transpose_a else a, b.T if transpose_b else b)


# ``matmul2d(op(a), op(b))`` from numba code, op a transpose where asked: the flags pass as
# values, not as views, so that object mode's code is compiled once per dtype and layout
# in a process, not once per transpose (~40 ms each)
matmul2d_in_python = in_python(_oriented_matmul2d, like(0, ndim=2))


def oriented(a, transpose):
    """``a.T`` if ``transpose`` (a literal True) else ``a``, for numba code: a transposed
    matrix is an F-contiguous view that BLAS reads as it is (a branch on a run-time flag
    would give the two layouts one type, 'A', which BLAS cannot take without a copy)."""
    raise NotImplementedError("oriented is called from numba code only")


@overload(oriented, prefer_literal=True)
def _oriented(a, transpose):
    if isinstance(transpose, types.BooleanLiteral):
        if transpose.literal_value:
            return lambda a, transpose: a.T
        return lambda a, transpose: a
    return None


def blas_layout(a):
    """``a`` where numba types it C- or F-contiguous, else a C-contiguous copy, for numba
    code: backends/products._blas_layout decided on the type (a view of no one layout is
    copied once here, not inside np.dot with a performance warning)."""
    raise NotImplementedError("blas_layout is called from numba code only")


@overload(blas_layout)
def _blas_layout(a):
    if a.layout in "CF":
        return lambda a: a
    return lambda a: np.ascontiguousarray(a)


@njit(cache=True, fastmath=False, error_model="numpy")
def product(a, b, transpose_a, transpose_b, alpha):
    """alpha * op(a) @ op(b) of two matrices (op: transpose where asked, literal flags), as
    the places' ``matmul`` computes it on 2-D operands: alpha in a's dtype, after the
    product."""
    literally(transpose_a)
    literally(transpose_b)
    a, b = blas_layout(a), blas_layout(b)
    work = a.size * (b.shape[0] if transpose_b else b.shape[1])    # m * k * n
    if work > BLAS_THREADS_FROM:
        out = matmul2d_in_python(a, b, transpose_a, transpose_b)
    else:
        out = np.dot(oriented(a, transpose_a), oriented(b, transpose_b))
    if alpha == 1.0:
        return out
    return out * out.dtype.type(alpha)


@njit(cache=True, fastmath=False, error_model="numpy")
def mul(x, y, x_num_col_dims, y_num_col_dims, out_rank):
    """mul's Out = flatten(x) @ flatten(y), of shape x.shape[:x_num_col_dims] +
    y.shape[y_num_col_dims:] (``out_rank`` dims: a literal, so the shape is a tuple)."""
    literally(out_rank)
    out = product(as_matrix(x, x_num_col_dims), as_matrix(y, y_num_col_dims), False, False,
                  1.0)
    dims = np.empty(out_rank, np.int64)
    for d in range(x_num_col_dims):
        dims[d] = x.shape[d]
    for d in range(y_num_col_dims, y.ndim):
        dims[x_num_col_dims + d - y_num_col_dims] = y.shape[d]
    return out.reshape(to_fixed_tuple(dims, out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def mul_grad_x(x, y, dout, x_num_col_dims, y_num_col_dims):
    """dX of mul: dOut @ flatten(y)^T, in x's shape."""
    y2 = as_matrix(y, y_num_col_dims)
    d = np.ascontiguousarray(dout).reshape((matrix_shape(x, x_num_col_dims)[0], y2.shape[1]))
    return product(d, y2, False, True, 1.0).reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def mul_grad_y(x, y, dout, x_num_col_dims, y_num_col_dims):
    """dY of mul: flatten(x)^T @ dOut, in y's shape."""
    x2 = as_matrix(x, x_num_col_dims)
    d = np.ascontiguousarray(dout).reshape((x2.shape[0], matrix_shape(y, y_num_col_dims)[1]))
    return product(x2, d, True, False, 1.0).reshape(y.shape)


# --- stacks of matrices inside a compiled block: what backends/products.matmul_nd does -----
# ``batched_matmul(a, b)`` from numba code: the prange loop or numpy's threaded BLAS,
# chosen as the interpreter chooses them
batched_matmul_in_python = in_python(batched_matmul, like(0, ndim=3))


@njit(cache=True, fastmath=False, error_model="numpy")
def _stacked(a, transpose):
    """``a`` [..., r, c] as a C-contiguous (batch, r, c) stack, or (batch, c, r) of the
    transposed matrices: the copies matmul_nd makes before batched_matmul."""
    batch = 1
    for d in a.shape[:-2]:
        batch *= d
    flat = np.ascontiguousarray(a).reshape((batch, a.shape[-2], a.shape[-1]))
    if transpose:
        return np.ascontiguousarray(flat.transpose((0, 2, 1)))
    return flat


@njit(cache=True, fastmath=False, error_model="numpy")
def batched_product(a, b, transpose_a, transpose_b, alpha):
    """alpha * op(a) @ op(b) of two stacks of matrices with the same batch dims, as the
    places' ``matmul`` computes it: each operand copied C-contiguous (transposed where
    asked), one BLAS call per matrix, here in a serial loop, or through batched_matmul
    itself where it would split the work across the cores; alpha after the products.
    Batch dims that broadcast raise: the interpreter reruns the block (ops/matmul.py
    lowers only equal ones)."""
    if a.shape[:-2] != b.shape[:-2]:
        raise ValueError("matmul: the operands' batch dims differ (they broadcast)")
    a3, b3 = _stacked(a, transpose_a), _stacked(b, transpose_b)
    batch, m, k, n = a3.shape[0], a3.shape[1], a3.shape[2], b3.shape[2]
    if b3.shape[1] != k:
        raise ValueError("matmul: X's columns differ from Y's rows")
    if splits_across_cores(batch, m * k * n):
        out = batched_matmul_in_python(a3, b3)
    else:
        out = _batched_matmul_serial(a3, b3)
    out = out.reshape(a.shape[:-2] + (m, n))
    if alpha == 1.0:
        return out
    return out * out.dtype.type(alpha)


@njit(cache=True, fastmath=False, error_model="numpy")
def _rows(a):
    """``a`` [..., c] as a C-contiguous matrix [rows, c]: its batch dims folded into rows."""
    rows = 1
    for d in a.shape[:-1]:
        rows *= d
    return np.ascontiguousarray(a).reshape((rows, a.shape[-1]))


@njit(cache=True, fastmath=False, error_model="numpy")
def rows_product(x, y, transpose_y, alpha):
    """alpha * x @ op(y) of a stack x [..., m, k] and one matrix y, as matmul_nd does it:
    x's batch dims folded into rows, one product (a linear layer on [B, T, E])."""
    literally(transpose_y)
    out = product(_rows(x), y, False, transpose_y, alpha)
    return out.reshape(x.shape[:-1] + (out.shape[1],))


@njit(cache=True, fastmath=False, error_model="numpy")
def rows_product_grad_x(x, y, dout, transpose_y, alpha):
    """dX of rows_product: alpha * dOut @ op(y)^T, the rows folded as matmul_nd_grad does."""
    literally(transpose_y)
    if transpose_y:
        return product(_rows(dout), y, False, False, alpha).reshape(x.shape)
    return product(_rows(dout), y, False, True, alpha).reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def rows_product_grad_y(x, y, dout, transpose_y, alpha):
    """dY of rows_product: alpha * rows(x)^T @ rows(dOut) (its transpose when y is)."""
    literally(transpose_y)
    if transpose_y:
        return product(_rows(dout), _rows(x), True, False, alpha).reshape(y.shape)
    return product(_rows(x), _rows(dout), True, False, alpha).reshape(y.shape)


# --- mv, dot and addmm inside a compiled block: the steps of ops/matrix_products.py's kernels
@njit(cache=True, fastmath=False, error_model="numpy")
def _column(v):
    """A vector as an [n, 1] matrix (numpy's matmul promotes it so)."""
    return np.ascontiguousarray(v).reshape((v.shape[0], 1))


@njit(cache=True, fastmath=False, error_model="numpy")
def mv(x, vec):
    """mv's Out = x @ vec: vec as a column, one product, as the places' matmul does it."""
    return product(x, _column(vec), False, False, 1.0).reshape((x.shape[0],))


@njit(cache=True, fastmath=False, error_model="numpy")
def mv_grad_x(x, vec, dout):
    """mv's dX: dOut (a column) times vec (a row)."""
    v = np.ascontiguousarray(vec)
    return product(_column(dout), v.reshape((1, v.shape[0])), False, False, 1.0)


@njit(cache=True, fastmath=False, error_model="numpy")
def mv_grad_vec(x, vec, dout):
    """mv's dVec: x^T @ dOut (a column), as a vector."""
    return product(x, _column(dout), True, False, 1.0).reshape((vec.shape[0],))


@njit(cache=True, fastmath=False, error_model="numpy")
def dot(x, y, order, out_rank):
    """dot's Out: sum(x * y) along the last axis, the products then reduce_sum's row sums
    (``order``: x's dims in order, ``out_rank`` = x.ndim - 1, a literal)."""
    literally(out_rank)
    if x.shape != y.shape:
        raise ValueError("dot: X and Y must have the same shape")
    return summed_over(x * y, order, out_rank, False, out_rank, False)


@njit(cache=True, fastmath=False, error_model="numpy")
def dot_grad(x, y, dout):
    """dot's dX = dOut * y, dY = dOut * x (dOut broadcast along the summed axis)."""
    d = np.ascontiguousarray(dout).reshape(x.shape[:-1] + (1,))
    return y * d, x * d


@njit(cache=True, fastmath=False, error_model="numpy")
def addmm(inp, x, y, beta, alpha):
    """addmm's Out = alpha * x @ y + beta * Input (Input broadcast to the product's shape),
    in the kernel's order: the product with its factor, Input scaled, then the sum."""
    out = product(x, y, False, False, alpha)
    first = inp.shape[0] if inp.ndim == 2 else 1
    if inp.shape[inp.ndim - 1] not in (1, out.shape[1]) or first not in (1, out.shape[0]):
        raise ValueError("addmm: Input does not broadcast to the product's shape")
    return out + inp * inp.dtype.type(beta)


@njit(cache=True, fastmath=False, error_model="numpy")
def addmm_grad_input(inp, dout, beta):
    """addmm's dInput: beta * dOut, summed over the rows where Input is one row ([N] or
    [1, N]), each column from the first row down as numpy sums axis 0. An Input broadcast
    along the columns raises (numpy sums those pairwise: ops/matrix_products.py lowers
    only the other shapes; the interpreter reruns the block)."""
    scaled = dout * dout.dtype.type(beta)
    rows, cols = scaled.shape
    if inp.shape[inp.ndim - 1] != cols:
        raise ValueError("addmm_grad: Input is broadcast along the columns")
    if inp.ndim == 2 and inp.shape[0] == rows:
        return scaled.reshape(inp.shape)
    if rows == 0:
        return np.zeros(inp.shape, scaled.dtype)
    summed = scaled[0].copy()
    for r in range(1, rows):
        summed += scaled[r]
    return summed.reshape(inp.shape)
