"""Small dense matrices for both places: the identity and Gauss-Jordan inversion
(ops/matrix_products.py's ``matrix_power`` with a negative ``n``, ops/diagonals.py's
``eye``).

The inversion of one matrix is written once, as ``register_jitable`` functions that the
CPU's ``njit`` loop and the device's ``cuda.jit`` kernel (one thread per matrix: these
are small matrices, as in a teaching program) both call. Partial pivoting (the largest
entry of the column below the diagonal) keeps it stable; a column without a nonzero pivot
means the matrix is singular, and the batch's flags say which matrix was.
"""
from __future__ import annotations

import numpy as np
from numba import cuda, njit
from numba.extending import register_jitable

from .cuda.device import empty, flat, launch


@register_jitable
def _invert(a, inv):
    """inv = a^-1 by Gauss-Jordan elimination (a is used as scratch and destroyed);
    False where a is singular."""
    n = a.shape[0]
    for i in range(n):
        for j in range(n):
            inv[i, j] = 1.0 if i == j else 0.0
    for c in range(n):
        pivot = c
        for r in range(c + 1, n):
            if abs(a[r, c]) > abs(a[pivot, c]):
                pivot = r
        if a[pivot, c] == 0:
            return False
        if pivot != c:                       # swap rows c and pivot of both
            for j in range(n):
                t = a[c, j]
                a[c, j] = a[pivot, j]
                a[pivot, j] = t
                t = inv[c, j]
                inv[c, j] = inv[pivot, j]
                inv[pivot, j] = t
        d = a[c, c]
        for j in range(n):
            a[c, j] = a[c, j] / d
            inv[c, j] = inv[c, j] / d
        for r in range(n):                   # clear column c from every other row
            f = a[r, c]
            if r != c and f != 0:
                for j in range(n):
                    a[r, j] = a[r, j] - f * a[c, j]
                    inv[r, j] = inv[r, j] - f * inv[c, j]
    return True


@njit(cache=True)
def _cpu_inverse(a, inv, ok):
    for b in range(a.shape[0]):
        ok[b] = 1 if _invert(a[b], inv[b]) else 0


@cuda.jit(cache=True)
def _cuda_inverse(a, inv, ok):
    for b in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        ok[b] = 1 if _invert(a[b], inv[b]) else 0


@cuda.jit(cache=True)
def _cuda_eye(rows, cols, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = 1 if (i // cols) % rows == i % cols else 0


def _singular(ok, op_type: str) -> None:
    bad = np.flatnonzero(ok == 0)
    if bad.size:
        raise ValueError(f"{op_type}: slot X: matrix {int(bad[0])} of X is singular (no "
                         "inverse); expected an invertible matrix for a negative n")


def _matrices(x):
    """(x's shape [..., n, n], n, how many matrices)."""
    shape = tuple(int(d) for d in x.shape)
    return shape, shape[-1], int(np.prod(shape[:-2], dtype=np.int64))


class CPU:
    @staticmethod
    def inverse(x, op_type: str):
        """The inverse of each matrix of x [..., n, n] (a ValueError names a singular one)."""
        shape, n, batch = _matrices(x)
        work = np.array(x, dtype=x.dtype, order="C").reshape((batch, n, n))
        inv = np.empty((batch, n, n), x.dtype)
        ok = np.ones(batch, np.int32)
        _cpu_inverse(work, inv, ok)
        _singular(ok, op_type)
        return inv.reshape(shape)

    @staticmethod
    def eyes(batch: tuple, rows: int, cols: int, dtype):
        """Identity matrices [*batch, rows, cols] (ones where row == column)."""
        return np.broadcast_to(np.eye(rows, cols, dtype=dtype),
                               tuple(batch) + (rows, cols)).copy()


class CUDA:
    @staticmethod
    def inverse(x, op_type: str):
        shape, n, batch = _matrices(x)
        work = empty((batch, n, n), x.dtype)
        work.copy_to_device(x.reshape((batch, n, n)))     # scratch: the kernel destroys it
        inv = empty((batch, n, n), x.dtype)
        ok = cuda.to_device(np.ones(batch, np.int32))
        launch(_cuda_inverse, batch, work, inv, ok)
        _singular(ok.copy_to_host(), op_type)            # one flag per matrix comes back
        return inv.reshape(shape)

    @staticmethod
    def eyes(batch: tuple, rows: int, cols: int, dtype):
        out = empty(tuple(batch) + (rows, cols), dtype)
        launch(_cuda_eye, out.size, rows, cols, flat(out))
        return out
