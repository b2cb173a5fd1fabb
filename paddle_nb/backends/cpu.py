"""The CPU's primitives (numpy arrays): see backends/__init__.py for what a place is.

Each names an operation the op kernels written once for both places call (``binary``,
``unary``, ``product``, ``im2col``, ``rows``, ``sum_axes``, ``cholesky``...), run with numba
ufuncs, the row kernels of kernels/cpu, BLAS and, for batches of matrices, LAPACK (what
Paddle 2.6.2's CPU kernels call), into the array a kernel context's ``out`` gives where
they can (a reused buffer on the fast path). cuda.py names the same operations.
"""
from __future__ import annotations

import numpy as np
from scipy.linalg import lapack

from ..core.limits import check_tensor_size
from ..kernels import check
from ..kernels import triangular_linalg as TL
from ..kernels.cpu import conv as KV
from ..kernels.cpu import conv3d as KV3
from ..kernels.cpu import direct_conv as KD
from ..kernels.cpu import loss as KL
from ..kernels.cpu import norm as KN
from ..kernels.cpu import reduce as KR
from ..kernels.cpu import sorting as KSORT
from ..kernels.pointwise import KERNELS
from ..kernels.scale import scale_then_bias
from .products import BLAS_TYPES, matmul_2d, matmul_nd, sum_to
from .shared import binary_kernel, cols_shape


class CPU:
    name = "cpu"
    sum_to = staticmethod(sum_to)

    @staticmethod
    def binary(op_type, x, y, out, out_dtype=None):
        """The binary elementwise op ``op_type`` of x and y with numpy broadcasting, into
        ``out`` (None: a new array)."""
        return binary_kernel(op_type, x).cpu(x, y, out=out)

    @staticmethod
    def apply(kernel, *operands, out, out_dtype=None):
        """A @pointwise kernel of the operands (numpy broadcasting), into ``out`` (None:
        a new array of the ufunc's result type)."""
        return kernel.cpu(*operands, out=out)

    @staticmethod
    def update(kernel, *args, out=None):
        """An @update kernel (kernels/update.py) of arrays, cells and scalars: new arrays,
        or ``out`` (the kernel context's buffers) written whole."""
        return kernel.cpu(*args, out=out)

    @staticmethod
    def unary(name, x, scale, out):
        """The activation ``name`` (a @pointwise kernel: relu, tanh, ...) of x, or x
        times ``scale`` (the fused ops' functor "scale": scale's kernel, bias 0)."""
        if name == "scale":
            return scale_then_bias.cpu(x, x.dtype.type(scale), x.dtype.type(0), out=out)
        return KERNELS[name].cpu(x, out=out)

    @staticmethod
    def derivative(name, value, dout, scale, out):
        """d act / d its input, times dout; ``value`` is what the derivative is read from
        (the activation's output, or its input for log and square)."""
        if name == "scale":
            return scale_then_bias.cpu(dout, dout.dtype.type(scale), dout.dtype.type(0),
                                       out=out)
        return KERNELS[name + "_grad"].cpu(value, dout, out=out)

    @staticmethod
    def product(a, b, ta=False, tb=False, out=None):
        """op(a) @ op(b) of two matrices (op: transpose if asked, a view here) into
        ``out(shape, dtype)``'s array."""
        return matmul_2d(a.T if ta else a, b.T if tb else b, out)

    @staticmethod
    def matmul(x, y, tx: bool, ty: bool, alpha: float = 1.0):
        """alpha * op(x) @ op(y) with numpy's matmul rules (batch dims broadcast)."""
        out = matmul_nd(x, y, tx, ty)
        return out if alpha == 1.0 else (out * alpha).astype(out.dtype)

    # --- convolution's index maps (kernels/cpu/conv.py; 3-D: conv3d.py); geometry: (kh,
    # kw, sh, sw, pt, pl, dh, dw, oh, ow), 3-D (kd, kh, kw, sd, ..., od, oh, ow) -----------
    @staticmethod
    def im2col(x, geometry, out=None):
        """cols [C*kh*kw, N*oh*ow] of x [N, C, H, W] (3-D: [C*kd*kh*kw, N*od*oh*ow] of
        [N, C, D, H, W]), into ``out(shape, dtype)``'s array."""
        shape = cols_shape(x.shape, geometry)
        check_tensor_size(shape, x.dtype, "im2col")
        cols = out(shape, x.dtype) if out is not None else np.empty(shape, x.dtype)
        fill = KV.im2col if len(geometry) == 10 else KV3.im2col3d
        return fill(np.ascontiguousarray(x), cols, *geometry)

    @staticmethod
    def images_per_im2col(bytes_per_image: int) -> int:
        """How many images one im2col takes at once: its cols stay in the cache."""
        return max(1, KV.COLS_BATCH_BYTES // max(bytes_per_image, 1))

    @staticmethod
    def col2im(cols, shape, geometry, out=None):
        """[N, C, H, W] (``shape``): at each position, the sum of the cols entries im2col
        reads from it."""
        dx = out(tuple(shape), cols.dtype) if out is not None else np.empty(shape, cols.dtype)
        add_back = KV.col2im if len(geometry) == 10 else KV3.col2im3d
        return add_back(np.ascontiguousarray(cols), dx, *geometry)

    # --- direct convolution (kernels/cpu/direct_conv.py): stride 1 without im2col; None
    # where it does not apply, and the op takes the im2col path ----------------------------
    @staticmethod
    def conv_direct(x, w, geometry, groups: int, buffer):
        """Output [N, O, oh, ow] of x [N, C, H, W] with w, or None."""
        if not KD.fits(geometry):
            return None
        return KD.conv2d(np.ascontiguousarray(x), w, geometry, groups, buffer)

    @staticmethod
    def conv_direct_grads(x, w, dy, geometry, groups: int, want_dx: bool, want_dw: bool,
                          buffer):
        """(dX, dFilter) (None where not wanted), or None."""
        if not KD.fits(geometry):
            return None
        return KD.conv2d_grads(np.ascontiguousarray(x), w, np.ascontiguousarray(dy),
                               geometry, groups, want_dx, want_dw, buffer)

    # --- rows: a class axis moved last, as a (rows, classes) matrix (the losses) ---------
    @staticmethod
    def rows(a, axis: int):
        rows = a.size // a.shape[axis] if a.shape[axis] else 0   # -1 cannot be inferred at 0
        return np.ascontiguousarray(np.moveaxis(a, axis, -1)).reshape(rows, a.shape[axis])

    @staticmethod
    def unrows(m, like_shape, axis: int):
        moved = list(like_shape)
        moved.append(moved.pop(axis))
        return np.moveaxis(m.reshape(moved), -1, axis)

    @staticmethod
    def per_row(a, dtype):
        """A tensor with a size-1 class axis (labels, per-row losses) as one value per row:
        moving a size-1 axis does not reorder elements, so a reshape is enough."""
        return a.reshape(-1).astype(dtype, copy=False)

    @staticmethod
    def hard_labels(label, classes: int, ignore: int):
        """The class indices, one per row, each checked to be a class (or ``ignore``)."""
        flat = label.reshape(-1)
        check.indices(flat, classes, slot="Label", what="class index", shape=label.shape,
                      ignore=ignore, counted=f"{classes} classes")
        return flat.astype(np.int64, copy=False)

    row_softmax = staticmethod(KR.row_softmax)
    hard_label_loss = staticmethod(KL.hard_label_loss)
    softmax_xent_grad = staticmethod(KL.softmax_xent_grad)
    xent_grad = staticmethod(KL.xent_grad)

    @staticmethod
    def soft_label_loss(prob, label_rows):
        return -(label_rows * np.log(prob)).sum(axis=1).astype(prob.dtype)

    @staticmethod
    def soft_softmax_xent_grad(prob, label_rows, d):
        return ((prob - label_rows) * d[:, None]).astype(prob.dtype)

    @staticmethod
    def soft_xent_grad(prob, label_rows, d):
        return (-label_rows / prob * d[:, None]).astype(prob.dtype)

    # --- reductions -----------------------------------------------------------------------
    @staticmethod
    def sum_axes(x, dims: list, keep_dim: bool):
        """Sum over ``dims``: the numba row kernel for floats (the reduced axes moved last
        and flattened, so one kernel serves every axis choice), numpy otherwise."""
        kept = [i for i in range(x.ndim) if i not in dims]
        out_shape = [1 if i in dims else d for i, d in enumerate(x.shape)] if keep_dim \
            else [d for i, d in enumerate(x.shape) if i not in dims]
        if x.dtype.type not in (np.float32, np.float64) or x.size == 0:
            return np.asarray(x.sum(axis=tuple(dims), keepdims=keep_dim)).astype(x.dtype)
        moved = np.ascontiguousarray(np.transpose(x, kept + dims))
        outer = int(np.prod([x.shape[i] for i in kept])) if kept else 1
        return KR.row_sum(moved.reshape(outer, -1)).reshape(out_shape)

    # --- indexing by data (the indices are checked by the op first) ----------------------
    @staticmethod
    def take(x, index, axis: int):
        return np.take(x, index, axis=axis)

    @staticmethod
    def scatter_add(shape, index, dout, axis: int):
        dx = np.zeros(shape, dout.dtype)
        np.add.at(dx, (slice(None),) * axis + (index,), dout)
        return dx

    @staticmethod
    def linear_index(index, dims):
        """The row-major position in ``dims`` of each row of the (m, k) ``index``."""
        strides, step = [], 1
        for d in reversed(dims):
            strides.insert(0, step)
            step *= int(d)
        return (index.astype(np.int64) * np.asarray(strides, np.int64)).sum(axis=1)

    @staticmethod
    def scatter_rows(x, ids, updates, overwrite: bool):
        """x with row ids[i] set to updates[i] (overwrite: the last one wins, numpy's
        rule for repeated indices) or to the sum of every updates[i] aimed at it."""
        out = x.copy()
        if overwrite:
            out[ids] = updates
        else:
            out[ids] = 0
            np.add.at(out, ids, updates)
        return out

    @staticmethod
    def zero_rows(x, ids):
        out = x.copy()
        out[ids] = 0
        return out

    @staticmethod
    def take_along_rows(rows, index, ignore=None):
        """out[r, c] = rows[r, index[r, c]]; 0 where index is ``ignore``."""
        index = index.astype(np.int64)
        skip = index == ignore if ignore is not None else np.zeros(index.shape, bool)
        out = np.take_along_axis(rows, np.where(skip, 0, index), axis=1)
        out[skip] = 0
        return out

    @staticmethod
    def put_along_rows(n: int, index, values, ignore=None):
        """Zeros of (R, n) with values[r, c] added at [r, index[r, c]] (``ignore``
        positions skipped)."""
        out = np.zeros((values.shape[0], n), values.dtype)
        row = np.broadcast_to(np.arange(values.shape[0])[:, None], index.shape)
        keep = index != ignore if ignore is not None else np.ones(index.shape, bool)
        np.add.at(out, (row[keep], index[keep].astype(np.int64)), values[keep])
        return out

    @staticmethod
    def top_k_rows(rows, k: int, largest: bool):
        """The k largest (or smallest) of each row, in order, and their positions: NaN
        counts as the largest value (Paddle's order), ties go to the first position."""
        return KSORT.top_k_rows(np.ascontiguousarray(rows), k, bool(largest),
                                rows.dtype.kind == "f")

    @staticmethod
    def one_hot(x, depth: int, dtype):
        out = np.zeros(x.shape + (depth,), dtype)
        np.put_along_axis(out, x[..., None].astype(np.int64), 1, axis=-1)
        return out

    @staticmethod
    def arg_extreme(x, axis: int, largest: bool, dtype):
        return np.asarray((np.argmax if largest else np.argmin)(x, axis=axis)).astype(dtype)

    _FOLDS = {"max": np.max, "min": np.min, "prod": np.prod}

    @classmethod
    def fold_axes(cls, x, dims: list, keep_dim: bool, fold: str):
        """max / min / prod over ``dims`` in x's dtype (numpy's; the axes are not empty)."""
        return np.asarray(cls._FOLDS[fold](x, axis=tuple(dims), keepdims=keep_dim)
                          ).astype(x.dtype, copy=False)

    @staticmethod
    def scale(x, factor: float):
        """x * factor in x's dtype (a 0-d x stays a 0-d array)."""
        return np.asarray(x * factor, dtype=x.dtype)

    @staticmethod
    def broadcast_to(a, shape):
        """``a`` broadcast to ``shape``, as a new contiguous array (writable, and 0-d for
        a 0-d shape, which ``np.ascontiguousarray`` would make 1-d)."""
        return np.broadcast_to(a, shape).astype(a.dtype, order="C")

    @staticmethod
    def copy(a):
        return np.array(a, copy=True)

    full = staticmethod(np.full)     # a new array (shape, value, dtype) on this place
    # normalization over the groups of a (P, G, K, S) view (kernels/cpu/norm.py)
    norm_moments = staticmethod(KN.moments)
    normalize = staticmethod(KN.normalize)
    normalize_grad = staticmethod(KN.normalize_grad)

    @staticmethod
    def softmax_grad_rows(out_rows, dout_rows):
        """dX = Out * (dOut - sum(dOut * Out)) per row (kernels/cpu/reduce.py)."""
        if out_rows.dtype == dout_rows.dtype and out_rows.dtype.type in BLAS_TYPES:
            return KR.softmax_grad_rows(out_rows, dout_rows)
        inner = (dout_rows * out_rows).sum(axis=1, keepdims=True)     # (float16: numpy)
        return (out_rows * (dout_rows - inner)).astype(out_rows.dtype)

    # X - max - log(sum(exp(X - max))) per row, and dX = dOut - exp(Out) * sum(dOut)
    row_log_softmax = staticmethod(KR.row_log_softmax)
    log_softmax_grad_rows = staticmethod(KR.log_softmax_grad_rows)

    # --- copies through per-axis index maps: slice, flip, pad (kernels/cuda/axis_maps.py)
    @staticmethod
    def gather_maps(x, maps, value=0):
        """out[o0, o1, ...] = x[maps[0][o0], maps[1][o1], ...]; ``value`` where an entry
        of a map is -1 (outside X: a pad)."""
        shape = tuple(len(m) for m in maps)
        if x.size == 0:                       # nothing to read: every position is outside
            return np.full(shape, value, x.dtype)
        if not maps:
            return np.array(x, copy=True)
        out = x[np.ix_(*[np.maximum(m, 0) for m in maps])]
        outside = [m < 0 for m in maps]
        if any(o.any() for o in outside):
            mask = np.zeros(shape, bool)
            for d, o in enumerate(outside):
                mask |= o.reshape([-1 if i == d else 1 for i in range(len(maps))])
            out[mask] = value
        return out

    @staticmethod
    def scatter_maps(shape, maps, dout):
        """Zeros of ``shape`` with each dOut element added where its maps point (a
        position read twice, as a reflect pad reads it, gets both)."""
        dx = np.zeros(shape, dout.dtype)
        if dout.size == 0 or dx.size == 0:
            return dx
        if not maps:
            return np.array(dout, copy=True).reshape(shape)
        keep = [np.flatnonzero(m >= 0) for m in maps]
        np.add.at(dx, np.ix_(*[m[k] for m, k in zip(maps, keep)]), dout[np.ix_(*keep)])
        return dx

    @staticmethod
    def cumsum(x, axis: int, exclusive: bool, reverse: bool):
        """Running sums along ``axis`` in x's dtype, in order (as the device's kernel)."""
        if x.ndim == 0:
            return np.zeros_like(x) if exclusive else np.array(x, copy=True)
        a = np.flip(x, axis) if reverse else x
        out = np.cumsum(a, axis=axis, dtype=x.dtype)
        if exclusive:                         # shifted by one: each leaves itself out
            shifted = np.zeros_like(out)
            lead = (slice(None),) * axis
            shifted[lead + (slice(1, None),)] = out[lead + (slice(None, -1),)]
            out = shifted
        return np.ascontiguousarray(np.flip(out, axis) if reverse else out)

    @staticmethod
    def arange(size: int, start, step, dtype):
        """``size`` values start + i * step of ``dtype`` (start, step: int or float64)."""
        wide = np.int64 if np.dtype(dtype).kind in "iu" else np.float64
        return (start + np.arange(size, dtype=wide) * step).astype(dtype)

    # --- batches of matrices: the triangular factorizations and solves (ops/
    # triangular_factor.py, ops/linear_solve.py), their gradients written once over these.
    # ``to_matrices`` makes a working batch [B, rows, cols], here in float64 (what LAPACK
    # computes in; CUDA's keep the tensor's dtype), the methods below take and give such
    # batches, and ``from_matrices`` makes a tensor of them again. A routine that can fail
    # gives per-matrix flags on the host (1 = fine), so the op can name the first bad one.
    @staticmethod
    def to_matrices(x, batch_shape=None):
        """x as float64 [B, rows, cols], broadcast to batch_shape first if given."""
        a = np.asarray(x)
        if batch_shape is not None:
            a = np.broadcast_to(a, tuple(batch_shape) + a.shape[-2:])
        return np.array(a.reshape((-1,) + a.shape[-2:]), dtype=np.float64, order="C")

    @staticmethod
    def from_matrices(a, shape, dtype):
        return np.asarray(a, dtype=dtype, order="C").reshape(shape)

    @staticmethod
    def cholesky(a, upper: bool):
        """(the factor of each matrix, ok flags): numpy's potrf, as Paddle's CPU kernel."""
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
        """(packed LU, 1-based pivots, LAPACK's infos): getrf, or without pivoting the
        substitution loop (LAPACK has no routine for it)."""
        batch, m, n = a.shape
        piv = np.empty((batch, min(m, n)), np.int32)
        info = np.zeros(batch, np.int32)
        if not pivoting:
            work = a.copy()
            TL.cpu_lu_unpivoted(work, piv, info)
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
        """(A^-1 rhs, ok flags); a singular matrix fails alone, not its whole batch."""
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
        TL.cpu_cofactors(a, np.empty((a.shape[0], n - 1, n - 1)),
                         np.empty((a.shape[0], n - 1), np.int32), out)
        return out

    @staticmethod
    def triangular_solve(t, rhs, upper: bool, trans: bool, unit: bool):
        # forward/back substitution (kernels/triangular_linalg.py says why not BLAS trsm)
        out = rhs.copy()
        TL.cpu_triangular_solve(t, out, upper, trans, unit)
        return out

    @staticmethod
    def batch_product(a, b, ta: bool = False, tb: bool = False):
        """op(a) op(b) for each matrix of the batch."""
        return np.matmul(np.swapaxes(a, -1, -2) if ta else a,
                         np.swapaxes(b, -1, -2) if tb else b)

    @staticmethod
    def unpack_lu(lu_data, piv, unpack_ludata: bool, unpack_pivots: bool):
        """(Pmat, L, U, ok flags) of lu's packed factors and 1-based pivots."""
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
        """scale times (the strict lower (upper) triangle of each matrix, plus diag times
        its diagonal)."""
        strict = np.tril(a, -1) if lower else np.triu(a, 1)
        eye = np.eye(a.shape[1], a.shape[2])
        return scale * (strict + diag * a * eye)

    @staticmethod
    def combine(a, b, alpha: float, beta: float):
        return alpha * a + beta * b

    @staticmethod
    def scale_each(a, s):
        """s[b] times matrix b of a."""
        return a * np.asarray(s).reshape(-1, 1, 1)

    @staticmethod
    def transpose_each(a):
        return np.ascontiguousarray(np.swapaxes(a, -1, -2))

    @staticmethod
    def zero_matrices(shape, dtype):
        return np.zeros(shape)                 # the working type, whatever the tensor's

    @staticmethod
    def negate(a):
        return -a

    @staticmethod
    def identities(batch: int, n: int, like):
        return np.broadcast_to(np.eye(n), (batch, n, n)).copy()

    @staticmethod
    def concat(parts, axis: int):
        return np.concatenate(parts, axis=axis)

    @staticmethod
    def split(a, sizes, axis: int):
        """Pieces of a along axis with the given sizes (new contiguous arrays)."""
        return [np.ascontiguousarray(p)
                for p in np.split(a, np.cumsum(sizes)[:-1], axis=axis)]

    @staticmethod
    def where_batch(keep, a, b):
        """a's matrices where keep[i] (host bools), b's elsewhere."""
        return np.where(np.asarray(keep).reshape(-1, 1, 1), a, b)
