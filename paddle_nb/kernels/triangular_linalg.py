"""Triangular factorizations and solves of small batched matrices, one matrix at a time:
Cholesky, LU with (or without) partial pivoting, forward/back substitution, products, and
the launchers of their CUDA kernels (ops/triangular_factor.py and ops/linear_solve.py).

Each routine for ONE matrix is a ``register_jitable`` function: the CUDA kernels below run
one thread per matrix of the batch (a grid-stride loop over the batch, as
kernels/small_linalg.py does for inversion), each thread calling these loops on its own
matrix. These are the short textbook loops (Golub and Van Loan's algorithms 4.2.1, 3.4.1,
3.1.1/3.1.2), fine for the small matrices of a teaching program; on the CPU the ops call
LAPACK and BLAS instead (numpy, scipy), except LU without pivoting, which LAPACK has no
routine for, and triangular solves: BLAS's trsm gives the same for finite matrices, but a
zero on the diagonal (inf, NaN: no error, as in Paddle) comes out of its blocked kernels
in an order of its own; the substitution loop below runs on both places, so both give the
same infinities.

Where a routine can fail (a matrix that is not positive definite, a singular matrix) it
reports it in a per-matrix flag; the launcher copies the flags back and the op raises a
clear error, as Paddle does. Launchers take C-contiguous device arrays of shape
[batch, rows, cols] and return new ones; they never write into their inputs.
"""
from __future__ import annotations

import math

import numpy as np
from numba import cuda, njit
from numba.extending import register_jitable

from .cuda import copy as cuda_copy
from .cuda.device import empty, flat, launch


# --- one matrix -------------------------------------------------------------------------
@register_jitable
def cholesky_into(a, out, upper):
    """out = the Cholesky factor of a, reading only one triangle of a: lower (A = L L^T,
    out lower triangular) or, with upper, the upper one (A = U^T U, out = U). False where
    a is not positive definite."""
    n = a.shape[0]
    for i in range(n):
        for j in range(n):
            out[i, j] = 0.0
    # L is computed column by column; with upper, L[i, j] lives at out[j, i] and
    # A[i, j] (i >= j) is read at a[j, i]
    for j in range(n):
        s = a[j, j]
        for k in range(j):
            ljk = out[k, j] if upper else out[j, k]
            s -= ljk * ljk
        if not s > 0.0:                       # also False for NaN
            return False
        d = math.sqrt(s)
        out[j, j] = d
        for i in range(j + 1, n):
            t = a[j, i] if upper else a[i, j]
            for k in range(j):
                if upper:
                    t -= out[k, i] * out[k, j]
                else:
                    t -= out[i, k] * out[j, k]
            if upper:
                out[j, i] = t / d
            else:
                out[i, j] = t / d
    return True


@register_jitable
def lu_in_place(a, piv, pivoting):
    """a (m x n) becomes its packed LU factors (L unit lower below the diagonal, U on and
    above it); piv[c] (1-based, LAPACK's) is the row swapped with row c, c < min(m, n).
    Partial pivoting takes the first entry of largest magnitude, as LAPACK's getf2.
    Returns LAPACK's info: 0, or the 1-based column of the first zero pivot."""
    m, n = a.shape
    info = 0
    for c in range(m if m < n else n):      # (the CUDA target has no 2-argument min)
        p = c
        if pivoting:
            for r in range(c + 1, m):
                if abs(a[r, c]) > abs(a[p, c]):
                    p = r
        piv[c] = p + 1
        if p != c:
            for j in range(n):
                t = a[c, j]
                a[c, j] = a[p, j]
                a[p, j] = t
        d = a[c, c]
        if d == 0.0:
            if info == 0:
                info = c + 1
            continue                   # with pivoting the column below is zero too
        for r in range(c + 1, m):
            a[r, c] = a[r, c] / d
            f = a[r, c]
            if f != 0.0:
                for j in range(c + 1, n):
                    a[r, j] = a[r, j] - f * a[c, j]
    return info


@register_jitable
def triangular_solve_in_place(t, b, upper, trans, unit):
    """b = op(T)^-1 b, op(T) = T or T^T; T is read in its upper or lower triangle only
    (with unit, its diagonal is taken as ones). A zero on the diagonal gives infinities,
    as BLAS's trsm (no error)."""
    n = t.shape[0]
    solve_upper = upper != trans          # T^T of a lower T is upper
    for col in range(b.shape[1]):
        for step in range(n):
            i = n - 1 - step if solve_upper else step
            s = b[i, col]
            lo, hi = (i + 1, n) if solve_upper else (0, i)
            for j in range(lo, hi):
                tij = t[j, i] if trans else t[i, j]
                s -= tij * b[j, col]
            b[i, col] = s if unit else s / t[i, i]


@register_jitable
def product_into(a, b, out, ta, tb):
    """out = op(a) op(b), op a transpose where asked."""
    rows, cols = out.shape
    inner = a.shape[0] if ta else a.shape[1]
    for i in range(rows):
        for j in range(cols):
            s = 0.0
            for k in range(inner):
                s += (a[k, i] if ta else a[i, k]) * (b[j, k] if tb else b[k, j])
            out[i, j] = s


@register_jitable
def swap_rows_as_pivoted(b, piv):
    """b's rows swapped as the LU factorization swapped A's (P^T b)."""
    for c in range(piv.shape[0]):
        p = piv[c] - 1
        if p != c:
            for j in range(b.shape[1]):
                t = b[c, j]
                b[c, j] = b[p, j]
                b[p, j] = t


@register_jitable
def unpack_into(lu, piv, pmat, lower, upper, unpack_ludata, unpack_pivots):
    """Pmat, L, U with A = Pmat L U from packed LU factors and 1-based pivots. False where
    a pivot is outside 1..rows."""
    m, n = lu.shape
    k = m if m < n else n
    if unpack_ludata:
        for i in range(m):
            for j in range(k):
                lower[i, j] = lu[i, j] if i > j else (1.0 if i == j else 0.0)
        for i in range(k):
            for j in range(n):
                upper[i, j] = lu[i, j] if j >= i else 0.0
    if unpack_pivots:
        for i in range(m):
            for j in range(m):
                pmat[i, j] = 1.0 if i == j else 0.0
        for c in range(k):                 # P = P_1 P_2 ... P_k: swap columns c and piv
            p = piv[c] - 1
            if p < 0 or p >= m:
                return False
            for i in range(m):
                t = pmat[i, c]
                pmat[i, c] = pmat[i, p]
                pmat[i, p] = t
    return True


@register_jitable
def cofactors_into(a, minor, piv, out):
    """out[i, j] = (-1)^(i+j) det(a without row i and column j): the gradient of det(a),
    exact for a singular a too (where det(a) a^-T is not defined). n^2 determinants of
    order n - 1: used for singular matrices only."""
    n = a.shape[0]
    for i in range(n):
        for j in range(n):
            for r in range(n - 1):
                for c in range(n - 1):
                    minor[r, c] = a[r + (r >= i), c + (c >= j)]
            lu_in_place(minor, piv, True)
            d = 1.0 if (i + j) % 2 == 0 else -1.0
            for c in range(n - 1):
                d *= minor[c, c]
                if piv[c] != c + 1:
                    d = -d
            out[i, j] = d


# --- CPU: LU without pivoting (no LAPACK routine for it) ------------------------------------
@njit(cache=True, error_model="numpy")
def cpu_lu_unpivoted(a, piv, info):
    for b in range(a.shape[0]):
        info[b] = lu_in_place(a[b], piv[b], False)


@njit(cache=True, error_model="numpy")
def cpu_triangular_solve(t, rhs, upper, trans, unit):
    for b in range(t.shape[0]):
        triangular_solve_in_place(t[b], rhs[b], upper, trans, unit)


@njit(cache=True, error_model="numpy")
def cpu_cofactors(a, minor, piv, out):
    for b in range(a.shape[0]):
        cofactors_into(a[b], minor[b], piv[b], out[b])


# --- CUDA kernels: one thread per matrix --------------------------------------------------
@cuda.jit(cache=True)
def _cholesky(a, out, ok, upper):
    for b in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        ok[b] = 1 if cholesky_into(a[b], out[b], upper) else 0


@cuda.jit(cache=True)
def _lu(a, piv, info, pivoting):
    for b in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        info[b] = lu_in_place(a[b], piv[b], pivoting)


@cuda.jit(cache=True)
def _lu_solve(a, piv, rhs, ok):
    """rhs = A^-1 rhs; a is scratch (it becomes A's LU factors)."""
    for b in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        if lu_in_place(a[b], piv[b], True) != 0:
            ok[b] = 0
            continue
        ok[b] = 1
        swap_rows_as_pivoted(rhs[b], piv[b])
        triangular_solve_in_place(a[b], rhs[b], False, False, True)
        triangular_solve_in_place(a[b], rhs[b], True, False, False)


@cuda.jit(cache=True)
def _determinant(a, piv, out):
    """out[b] = det(A_b): the product of U's diagonal, its sign flipped per row swap."""
    for b in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        lu_in_place(a[b], piv[b], True)
        d = 1.0
        for c in range(a.shape[1]):
            d *= a[b, c, c]
            if piv[b, c] != c + 1:
                d = -d
        out[b] = d


@cuda.jit(cache=True)
def _cofactors(a, minor, piv, out):
    for b in range(cuda.grid(1), a.shape[0], cuda.gridsize(1)):
        cofactors_into(a[b], minor[b], piv[b], out[b])


@cuda.jit(cache=True)
def _triangular_solve(t, rhs, upper, trans, unit):
    for b in range(cuda.grid(1), t.shape[0], cuda.gridsize(1)):
        triangular_solve_in_place(t[b], rhs[b], upper, trans, unit)


@cuda.jit(cache=True)
def _product(a, b, out, ta, tb):
    for i in range(cuda.grid(1), out.shape[0], cuda.gridsize(1)):
        product_into(a[i], b[i], out[i], ta, tb)


@cuda.jit(cache=True)
def _unpack(lu, piv, pmat, lower, upper, ok, unpack_ludata, unpack_pivots):
    for b in range(cuda.grid(1), lu.shape[0], cuda.gridsize(1)):
        ok[b] = 1 if unpack_into(lu[b], piv[b], pmat[b], lower[b], upper[b],
                                 unpack_ludata, unpack_pivots) else 0


@cuda.jit(cache=True)
def _triangle(fa, rows, cols, lower, diag, scale, fo):
    """fo = scale times (the strict lower (or upper) triangle of each matrix, plus diag
    times its diagonal); flat arrays over [batch, rows, cols]."""
    for e in range(cuda.grid(1), fo.size, cuda.gridsize(1)):
        i = (e // cols) % rows
        j = e % cols
        if i == j:
            fo[e] = fa[e] * (diag * scale)
        elif (i > j) == lower:
            fo[e] = fa[e] * scale
        else:
            fo[e] = 0.0


@cuda.jit(cache=True)
def _combine(a, b, alpha, beta, out):
    """out = alpha a + beta b (flat)."""
    for e in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[e] = alpha * a[e] + beta * b[e]


@cuda.jit(cache=True)
def _negate(a, out):
    for e in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[e] = -a[e]


@cuda.jit(cache=True)
def _scale_each(a, s, out):
    """out[b] = s[b] * a[b] (flat a of [batch, rows, cols])."""
    per = a.size // s.size
    for e in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[e] = s[e // per] * a[e]


# --- launchers ----------------------------------------------------------------------------
def _scratch_copy(a):
    """A new device array holding a's values (the kernels overwrite their scratch)."""
    out = empty(a.shape, a.dtype)
    out.copy_to_device(a)
    return out


def cholesky(a, upper: bool):
    """(factors, ok flags on the host) of a [B, n, n]."""
    out = empty(a.shape, a.dtype)
    ok = cuda.to_device(np.ones(a.shape[0], np.int32))
    launch(_cholesky, a.shape[0], a, out, ok, upper)
    return out, ok.copy_to_host()


def lu(a, pivoting: bool):
    """(packed LU [B, m, n], pivots [B, k] int32, infos [B] int32) of a [B, m, n]."""
    work = _scratch_copy(a)
    piv = empty((a.shape[0], min(a.shape[1], a.shape[2])), np.int32)
    info = empty((a.shape[0],), np.int32)
    launch(_lu, a.shape[0], work, piv, info, pivoting)
    return work, piv, info


def lu_solve(a, rhs):
    """(A^-1 rhs, ok flags on the host) for a [B, n, n] and rhs [B, n, k]."""
    work, out = _scratch_copy(a), _scratch_copy(rhs)
    piv = empty((a.shape[0], a.shape[1]), np.int32)
    ok = cuda.to_device(np.ones(a.shape[0], np.int32))
    launch(_lu_solve, a.shape[0], work, piv, out, ok)
    return out, ok.copy_to_host()


def determinant(a):
    """det of each matrix of a [B, n, n], as [B]."""
    work = _scratch_copy(a)
    piv = empty((a.shape[0], a.shape[1]), np.int32)
    out = empty((a.shape[0],), a.dtype)
    launch(_determinant, a.shape[0], work, piv, out)
    return out


def cofactors(a):
    """The cofactor matrix of each matrix of a [B, n, n] (n >= 1)."""
    batch, n = a.shape[0], a.shape[1]
    minor = empty((batch, n - 1, n - 1), a.dtype)
    piv = empty((batch, n - 1), np.int32)
    out = empty(a.shape, a.dtype)
    launch(_cofactors, batch, a, minor, piv, out)
    return out


def triangular_solve(t, rhs, upper: bool, trans: bool, unit: bool):
    """op(T)^-1 rhs for t [B, n, n], rhs [B, n, k]."""
    out = _scratch_copy(rhs)
    launch(_triangular_solve, t.shape[0], t, out, upper, trans, unit)
    return out


def product(a, b, ta: bool = False, tb: bool = False):
    """op(a) op(b) for each matrix of the batch."""
    rows = a.shape[2] if ta else a.shape[1]
    cols = b.shape[1] if tb else b.shape[2]
    out = empty((a.shape[0], rows, cols), a.dtype)
    if out.size:
        launch(_product, a.shape[0], a, b, out, ta, tb)
    elif out.shape[0]:
        out = _fill_zeros(out)
    return out


def _fill_zeros(out):
    return cuda_copy.fill(out.shape, 0, out.dtype)


def unpack(lu_data, piv, unpack_ludata: bool, unpack_pivots: bool):
    """(Pmat [B, m, m], L [B, m, k], U [B, k, n], ok flags on the host)."""
    batch, m, n = lu_data.shape
    k = min(m, n)
    pmat = empty((batch, m, m), lu_data.dtype)
    lower = empty((batch, m, k), lu_data.dtype)
    upper = empty((batch, k, n), lu_data.dtype)
    ok = cuda.to_device(np.ones(batch, np.int32))
    launch(_unpack, batch, lu_data, piv, pmat, lower, upper, ok, unpack_ludata,
           unpack_pivots)
    return pmat, lower, upper, ok.copy_to_host()


def triangle(a, lower: bool, diag: float, scale: float = 1.0):
    """scale times (the strict lower (upper) triangle of each matrix, plus diag times the
    diagonal)."""
    out = empty(a.shape, a.dtype)
    launch(_triangle, a.size, flat(a), a.shape[1], a.shape[2], lower, diag, scale,
           flat(out))
    return out


def combine(a, b, alpha: float, beta: float):
    """alpha a + beta b (same shapes)."""
    out = empty(a.shape, a.dtype)
    launch(_combine, a.size, flat(a), flat(b), alpha, beta, flat(out))
    return out


def negate(a):
    out = empty(a.shape, a.dtype)
    launch(_negate, a.size, flat(a), flat(out))
    return out


def scale_each(a, s):
    """s[b] times matrix b of a."""
    out = empty(a.shape, a.dtype)
    launch(_scale_each, a.size, flat(a), s, flat(out))
    return out
