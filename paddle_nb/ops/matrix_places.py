"""Batched matrix primitives on both places, so that the triangular factorizations and
solves (ops/triangular_factor.py, ops/linear_solve.py) and their gradients are written
once, as ``make(place)`` code over ``CPU`` or ``CUDA`` (the idea of backends/).

Every array here is a batch of matrices, [B, rows, cols]. ``CPU`` works in float64 on
numpy arrays and calls LAPACK (numpy.linalg, scipy's getrf): what Paddle 2.6.2's CPU
kernels call; its triangular solves are the substitution loop CUDA runs too. ``CUDA``
works on device arrays in their own dtype with the one-thread-per-matrix kernels of
kernels/triangular_linalg.py. ``enter`` and ``leave``
convert between an op's tensors and these working arrays.

A routine that can fail returns per-matrix flags on the host (1 = fine), so the op can
name the first bad matrix in its error.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from ..kernels import small_linalg
from ..kernels import triangular_linalg as K
from ..kernels.cuda import copy as cuda_copy
from . import arrays


def batch_of(shape) -> int:
    return int(np.prod(shape[:-2], dtype=np.int64))


class CPU:
    kind = "cpu"

    @staticmethod
    def enter(x, batch_shape=None):
        """x as float64 [B, rows, cols], broadcast to batch_shape first if given."""
        a = np.asarray(x)
        if batch_shape is not None:
            a = np.broadcast_to(a, tuple(batch_shape) + a.shape[-2:])
        return np.array(a.reshape((-1,) + a.shape[-2:]), dtype=np.float64, order="C")

    @staticmethod
    def leave(a, shape, dtype):
        return np.asarray(a, dtype=dtype, order="C").reshape(shape)

    @staticmethod
    def host(a):
        return np.asarray(a)

    @staticmethod
    def cholesky(a, upper: bool):
        out, ok = np.zeros_like(a), np.ones(a.shape[0], np.int32)
        for b in range(a.shape[0]):
            # numpy's potrf reads the lower triangle: the upper one read as a transpose
            m = a[b].T if upper else a[b]
            try:
                low = np.linalg.cholesky(m)
            except np.linalg.LinAlgError:
                ok[b] = 0
                continue
            out[b] = low.T if upper else low
        return out, ok

    @staticmethod
    def lu(a, pivoting: bool):
        batch, m, n = a.shape
        piv = np.empty((batch, min(m, n)), np.int32)
        info = np.zeros(batch, np.int32)
        if not pivoting:
            work = a.copy()
            K.cpu_lu_unpivoted(work, piv, info)
            return work, piv, info
        work = np.empty_like(a)
        for b in range(batch):
            if a[b].size == 0:
                work[b] = a[b]
                continue
            work[b], p, info[b] = lapack.dgetrf(a[b])
            piv[b] = p + 1                     # scipy gives LAPACK's pivots 0-based
        return work, piv, info

    @staticmethod
    def lu_solve(a, rhs):
        ok = np.ones(a.shape[0], np.int32)
        try:
            return np.linalg.solve(a, rhs), ok
        except np.linalg.LinAlgError:
            out = np.zeros(rhs.shape)
            for b in range(a.shape[0]):
                try:
                    out[b] = np.linalg.solve(a[b], rhs[b])
                except np.linalg.LinAlgError:
                    ok[b] = 0
            return out, ok

    @staticmethod
    def determinant(a):
        return np.linalg.det(a) if a.shape[-1] else np.ones(a.shape[0])

    @staticmethod
    def cofactors(a):
        n = a.shape[-1]
        out = np.empty_like(a)
        K.cpu_cofactors(a, np.empty((a.shape[0], n - 1, n - 1)),
                        np.empty((a.shape[0], n - 1), np.int32), out)
        return out

    @staticmethod
    def triangular_solve(t, rhs, upper: bool, trans: bool, unit: bool):
        # forward/back substitution (kernels/triangular_linalg.py says why not BLAS trsm)
        out = rhs.copy()
        K.cpu_triangular_solve(t, out, upper, trans, unit)
        return out

    @staticmethod
    def product(a, b, ta: bool = False, tb: bool = False):
        return np.matmul(np.swapaxes(a, -1, -2) if ta else a,
                         np.swapaxes(b, -1, -2) if tb else b)

    @staticmethod
    def unpack(lu_data, piv, unpack_ludata: bool, unpack_pivots: bool):
        batch, m, n = lu_data.shape
        k = min(m, n)
        lower = np.tril(lu_data[:, :, :k], -1) + np.eye(m, k)
        upper = np.triu(lu_data[:, :k, :])
        pmat = np.zeros((batch, m, m))
        ok = np.ones(batch, np.int32)
        if unpack_pivots:
            piv = np.asarray(piv).reshape(batch, -1)
            for b in range(batch):
                if np.any((piv[b, :k] < 1) | (piv[b, :k] > m)):
                    ok[b] = 0
                    continue
                perm = np.arange(m)
                for c in range(k):               # P = P_1 ... P_k: swap columns c, piv
                    p = piv[b, c] - 1
                    perm[c], perm[p] = perm[p], perm[c]
                pmat[b, perm, np.arange(m)] = 1.0
        return pmat, lower, upper, ok

    @staticmethod
    def triangle(a, lower: bool, diag: float, scale: float = 1.0):
        strict = np.tril(a, -1) if lower else np.triu(a, 1)
        eye = np.eye(a.shape[1], a.shape[2])
        return scale * (strict + diag * a * eye)

    @staticmethod
    def combine(a, b, alpha: float, beta: float):
        return alpha * a + beta * b

    @staticmethod
    def scale_each(a, s):
        return a * np.asarray(s).reshape(-1, 1, 1)

    @staticmethod
    def transpose(a):
        return np.ascontiguousarray(np.swapaxes(a, -1, -2))

    @staticmethod
    def zeros(shape, dtype):
        return np.zeros(shape)

    @staticmethod
    def negate(a):
        return -a

    @staticmethod
    def eye(batch: int, n: int, like):
        return np.broadcast_to(np.eye(n), (batch, n, n)).copy()

    @staticmethod
    def concat(parts, axis: int):
        return np.concatenate(parts, axis=axis)

    @staticmethod
    def split(a, sizes, axis: int):
        return arrays.split(a, sizes, axis)

    @staticmethod
    def where_batch(keep, a, b):
        """a's matrices where keep[i] (host bools), b's elsewhere."""
        return np.where(np.asarray(keep).reshape(-1, 1, 1), a, b)


class CUDA:
    kind = "cuda"
    cholesky = staticmethod(K.cholesky)
    lu = staticmethod(K.lu)
    lu_solve = staticmethod(K.lu_solve)
    determinant = staticmethod(K.determinant)
    cofactors = staticmethod(K.cofactors)
    triangular_solve = staticmethod(K.triangular_solve)
    product = staticmethod(K.product)
    triangle = staticmethod(K.triangle)
    combine = staticmethod(K.combine)
    scale_each = staticmethod(K.scale_each)

    @staticmethod
    def enter(x, batch_shape=None):
        x = arrays.astype(x, x.dtype)                     # a device array already
        if batch_shape is not None and tuple(x.shape[:-2]) != tuple(batch_shape):
            x = cuda_copy.broadcast_to(x, tuple(batch_shape) + tuple(x.shape[-2:]))
        x = cuda_copy.copy_if_strided(x)
        return x.reshape((batch_of(x.shape),) + tuple(x.shape[-2:]))

    @staticmethod
    def leave(a, shape, dtype):
        return arrays.astype(a, dtype).reshape(tuple(shape))

    @staticmethod
    def host(a):
        return arrays.host(a)

    @staticmethod
    def unpack(lu_data, piv, unpack_ludata: bool, unpack_pivots: bool):
        piv = piv.reshape((lu_data.shape[0], min(lu_data.shape[1], lu_data.shape[2])))
        return K.unpack(lu_data, piv, unpack_ludata, unpack_pivots)

    @staticmethod
    def transpose(a):
        return arrays.transpose(a, (0, 2, 1))

    @staticmethod
    def zeros(shape, dtype):
        return cuda_copy.fill(tuple(shape), 0, dtype)

    negate = staticmethod(K.negate)

    @staticmethod
    def eye(batch: int, n: int, like):
        return _device_eye(batch, n, like.dtype)

    @staticmethod
    def concat(parts, axis: int):
        return arrays.concat(parts, axis)

    @staticmethod
    def split(a, sizes, axis: int):
        return arrays.split(a, sizes, axis)

    @staticmethod
    def where_batch(keep, a, b):
        keep = np.asarray(keep, dtype=bool)
        if keep.all():
            return a
        if not keep.any():
            return b
        rows = np.arange(keep.size)
        return arrays.merge_rows(keep.size, [(rows[keep], arrays.take_rows(a, rows[keep])),
                                             (rows[~keep], arrays.take_rows(b, rows[~keep]))],
                                 a)


def _device_eye(batch: int, n: int, dtype):
    return small_linalg.CUDA.eyes((batch,), n, n, dtype)


def place_of(ctx):
    return CUDA if ctx.place.kind == "cuda" else CPU
