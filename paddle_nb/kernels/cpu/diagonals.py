"""Diagonals (ops/diagonals.py): where the diagonal at ``offset`` of a rows x cols matrix
lies, and, inside a compiled block (kernels/lowered.py), diagonal, trace, diag_v2, eye and
their gradients. ``diagonal_length`` and ``diagonal_positions`` are the rule's one home:
the interpreter's kernels find their positions with them too, on either place.

The matrices of diagonal and trace lie on two axes anywhere: the compiled forms move them
last (``perm``, one copy), see the others as a batch, and move a gradient back
(``inverse``), as the interpreter's kernels do. Sizes are read when the block runs.
"""
import numpy as np
from numba import literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from .reduce import summed_over


@njit(cache=True, fastmath=False, error_model="numpy")
def diagonal_length(rows, cols, offset):
    """How many elements the diagonal at ``offset`` of a rows x cols matrix has."""
    if offset >= 0:
        return max(0, min(rows, cols - offset))
    return max(0, min(rows + offset, cols))


@njit(cache=True, fastmath=False, error_model="numpy")
def diagonal_positions(rows, cols, offset):
    """The diagonal's positions in the matrix flattened row by row (int64)."""
    i = np.arange(diagonal_length(rows, cols, offset))
    return (i + max(0, -offset)) * cols + i + max(0, offset)


@njit(cache=True, fastmath=False, error_model="numpy")
def _as_rows(shape):
    """(batch, rows, cols) of a tensor whose matrices are its last two dims."""
    batch = 1
    for d in range(len(shape) - 2):
        batch *= shape[d]
    return batch, shape[len(shape) - 2], shape[len(shape) - 1]


@njit(cache=True, fastmath=False, error_model="numpy")
def diagonal_of(x, perm, offset, out_rank):
    """diagonal's Out: x's axes moved by ``perm`` (the matrices' last), each matrix's
    diagonal at ``offset``; [*the other dims, its length] (``out_rank``, a literal)."""
    literally(out_rank)
    moved = np.transpose(x, perm).copy()
    batch, rows, cols = _as_rows(moved.shape)
    positions = diagonal_positions(rows, cols, offset)
    flat = moved.reshape((batch, rows * cols))
    out = np.zeros((batch, positions.size), x.dtype)
    for b in range(batch):
        for k in range(positions.size):
            out[b, k] = flat[b, positions[k]]
    dims = np.empty(out_rank, np.int64)
    for d in range(out_rank - 1):
        dims[d] = moved.shape[d]
    dims[out_rank - 1] = positions.size
    return out.reshape(to_fixed_tuple(dims, out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def diagonal_spread(x, dout, perm, inverse, offset, whole):
    """diagonal's dX (``whole`` False: dOut holds each diagonal element's gradient) or
    trace's (True: one per matrix, spread along its diagonal): zeros of x's shape and
    dtype, dOut added on the diagonals (as the interpreter's scatter_add adds it)."""
    moved_shape = np.transpose(x, perm).shape
    spread = np.zeros(moved_shape, x.dtype)
    batch, rows, cols = _as_rows(moved_shape)
    positions = diagonal_positions(rows, cols, offset)
    per = 1 if whole else positions.size
    d = np.ascontiguousarray(dout).reshape(dout.size)
    if d.size != batch * per:
        raise ValueError("Out@GRAD has another size than the op's Out")
    flat = spread.reshape((batch, rows * cols))
    for b in range(batch):
        for k in range(positions.size):
            flat[b, positions[k]] += d[b] if whole else d[b * per + k]
    return np.transpose(spread, inverse).copy()


@njit(cache=True, fastmath=False, error_model="numpy")
def trace_of(x, perm, offset, integer, out_rank, diag_rank):
    """trace's Out: each diagonal summed (0 where it is empty), as the interpreter's
    sum_axes sums it: floats by kernels/cpu/reduce's row sums, ``integer`` ones in x's
    type (wrapping as numpy's sum cast back does); the other dims (``out_rank``, a
    literal; ``diag_rank`` = out_rank + 1, the diagonals')."""
    literally(out_rank)
    literally(diag_rank)
    diag = diagonal_of(x, perm, offset, diag_rank)
    length = diag.shape[out_rank]
    rows = diag.reshape((diag.size // max(length, 1), length))
    if integer or length == 0 or diag.size == 0:
        total = np.zeros(rows.shape[0], x.dtype)
        for b in range(rows.shape[0]):
            for k in range(length):
                total[b] += rows[b, k]
    else:
        total = summed_over(rows, (0, 1), 1, False, 1, False)
    dims = np.empty(out_rank, np.int64)
    for d in range(out_rank):
        dims[d] = diag.shape[d]
    return total.reshape(to_fixed_tuple(dims, out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def diag_matrix(x, offset, pad):
    """diag_v2's Out of a vector: the square matrix with x on the diagonal at ``offset``
    and ``pad`` (a numpy scalar of x's dtype) elsewhere."""
    n = x.size
    size = n + abs(offset)
    out = np.full(size * size, pad)
    positions = diagonal_positions(size, size, offset)
    src = np.ascontiguousarray(x).reshape(n)
    for k in range(n):
        out[positions[k]] = src[k]
    return out.reshape((size, size))


@njit(cache=True, fastmath=False, error_model="numpy")
def diag_vector(x, offset):
    """diag_v2's Out of a matrix (and a vector's dX, of dOut): its diagonal at offset."""
    positions = diagonal_positions(x.shape[0], x.shape[1], offset)
    flat = np.ascontiguousarray(x).reshape(x.size)
    out = np.zeros(positions.size, x.dtype)
    for k in range(positions.size):
        out[k] = flat[positions[k]]
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def diag_vector_grad(x, dout, offset):
    """diag_v2's dX of a vector x: dOut's diagonal at ``offset``, in x's shape."""
    if dout.ndim != 2 or dout.shape[0] != x.size + abs(offset):
        raise ValueError("diag_v2_grad: Out@GRAD is not the vector's matrix")
    return diag_vector(dout, offset).reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def diag_matrix_grad(x, dout, offset):
    """diag_v2's dX of a matrix x: zeros of its shape, dOut added on the diagonal."""
    positions = diagonal_positions(x.shape[0], x.shape[1], offset)
    d = np.ascontiguousarray(dout).reshape(dout.size)
    if d.size != positions.size:
        raise ValueError("diag_v2_grad: Out@GRAD is not the matrix's diagonal")
    dx = np.zeros(x.size, x.dtype)
    for k in range(positions.size):
        dx[positions[k]] += d[k]
    return dx.reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def eye_of(rows, cols, zero, one):
    """eye's Out: a rows x cols matrix of ``zero`` with ``one`` where row == column (numpy
    scalars of its dtype)."""
    out = np.full((rows, cols), zero)
    for i in range(min(rows, cols)):
        out[i, i] = one
    return out
