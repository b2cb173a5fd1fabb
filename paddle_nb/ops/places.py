"""The primitives of each place, for kernels written once for both.

Where an op's math is the same on the CPU and on CUDA, its kernel is written once as
``make(place)`` returning ``run(ctx)``, and registered as
``kernels={"cpu": make(CPU), "cuda": make(CUDA)}`` (the elementwise, activation, matmul,
loss and reduction families). Both classes below name the same operations: ``CPU``'s run
numba ufuncs and BLAS, into the array a kernel context's ``out`` gives where they can (a
reused buffer on the compiled path); ``CUDA``'s call the launchers in kernels/cuda, which
allocate device arrays (they take ``out`` and ignore it). What needs no choice of place,
because it only moves tensors or looks at the array it is given (stack, split, transpose,
``unbroadcast``), is in arrays.py.
"""
from __future__ import annotations

import math

import numpy as np

from ..core.validate import check_tensor_size
from ..kernels import check
from ..kernels.cpu import conv as KV
from ..kernels.cpu import conv3d as KV3
from ..kernels.cpu import direct_conv as KD
from ..kernels.cpu import scale as KS
from ..kernels.cpu import loss as KL
from ..kernels.cpu import matmul as K
from ..kernels.cpu import norm as KN
from ..kernels.cpu import reduce as KR
from ..kernels.cuda import axis_maps as CA
from ..kernels.cuda import conv as CV
from ..kernels.cuda import conv3d as CV3
from ..kernels.cuda import copy as CC
from ..kernels.cuda import elementwise as CE
from ..kernels.cuda import index as CI
from ..kernels.cuda import loss as CL
from ..kernels.cuda import matmul as CM
from ..kernels.cuda import norm as CN
from ..kernels.cuda import reduce as CR
from ..kernels.cuda import scan as CS
from ..kernels.pointwise import KERNELS


# --- matrix products ------------------------------------------------------------------------
_BLAS = (np.float32, np.float64)


def _blas_layout(a: np.ndarray) -> np.ndarray:
    """numba's np.dot takes C- or F-contiguous matrices (a transpose is F): copy only others."""
    return a if a.flags.c_contiguous or a.flags.f_contiguous else np.ascontiguousarray(a)


def matmul_2d(a: np.ndarray, b: np.ndarray, out=None) -> np.ndarray:
    """a @ b; ``out(shape, dtype)``, when given, makes the array the product is written
    into (a kernel context's ``out``: a reused buffer on the compiled path)."""
    if a.shape[0] * b.shape[-1] > a.size + b.size:      # an outer product grows: check it
        check_tensor_size((a.shape[0], b.shape[-1]), np.result_type(a, b), "matmul")
    if a.dtype == b.dtype and a.dtype.type in _BLAS:
        into = out((a.shape[0], b.shape[-1]), a.dtype) if out is not None else None
        return K.matmul2d(_blas_layout(a), _blas_layout(b), into)
    return np.matmul(a, b)        # integer matrices: BLAS has no integer gemm


def matmul_nd(x: np.ndarray, y: np.ndarray, tx: bool, ty: bool) -> np.ndarray:
    if tx and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if ty and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    x2 = x[None, :] if x.ndim == 1 else x
    y2 = y[:, None] if y.ndim == 1 else y
    if x2.ndim == 2 and y2.ndim == 2:
        out = matmul_2d(x2, y2)
    elif y2.ndim == 2 and not tx and x.dtype == y.dtype and x.dtype.type in _BLAS:
        # one matrix Y for every batch (a linear layer on [B, T, E]): the batch dims
        # fold into rows, one product instead of a batch of small ones over copies of Y
        rows = x2.reshape((-1, x2.shape[-1]))
        out = matmul_2d(rows, y2).reshape(x2.shape[:-1] + (y2.shape[-1],))
    elif x.dtype == y.dtype and x.dtype.type in _BLAS:
        batch = x2.shape[:-2] if x2.shape[:-2] == y2.shape[:-2] else \
            np.broadcast_shapes(x2.shape[:-2], y2.shape[:-2])
        m, k, n = x2.shape[-2], x2.shape[-1], y2.shape[-1]
        check_tensor_size(batch + (max(m * k, k * n, m * n),), np.result_type(x, y), "matmul")
        n_batch = math.prod(batch)         # spelled out: reshape(-1, 0, k) cannot infer -1
        # (broadcast only where the batch dims differ: attention's never do)
        xb = np.ascontiguousarray(x2 if x2.shape[:-2] == batch else
                                  np.broadcast_to(x2, batch + (m, k))).reshape(n_batch, m, k)
        yb = np.ascontiguousarray(y2 if y2.shape[:-2] == batch else
                                  np.broadcast_to(y2, batch + (k, n))).reshape(n_batch, k, n)
        out = K.batched_matmul(xb, yb).reshape(batch + (m, n))
    else:
        out = np.matmul(x2, y2)
    if x.ndim == 1:
        out = out[..., 0, :]
    if y.ndim == 1:
        out = out[..., 0]
    return out


def _sum_to(g: np.ndarray, shape) -> np.ndarray:
    """Sum the broadcast batch dims of ``g`` away so it has ``shape``."""
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, (a, b) in enumerate(zip(g.shape[:-2], shape[:-2])) if b == 1 and a != 1)
    return np.ascontiguousarray(g.sum(axis=axes, keepdims=True) if axes else g)


def cols_shape(x_shape, geometry) -> tuple[int, int]:
    """im2col's [C * taps, N * output positions] for an input of ``x_shape`` (channels
    first) and a geometry of any spatial rank (ops/conv.py: geometry)."""
    rank = len(geometry) // 5
    return (int(x_shape[1]) * math.prod(geometry[:rank]),
            int(x_shape[0]) * math.prod(geometry[4 * rank:]))


# --- the same on the device -------------------------------------------------------------
def _as_batches(a, batch, rows, cols):
    """``a`` (rank >= 2) as a (B, rows, cols) device array for the kernel: batch dims
    broadcast to ``batch`` (materialised by copy.broadcast_to only when they differ and
    are not all 1, since the kernel reuses a batch of 1 itself)."""
    lead = tuple(int(d) for d in a.shape[:-2])
    if lead == tuple(batch) or int(np.prod(lead, dtype=np.int64)) == 1:
        return a.reshape((int(np.prod(lead, dtype=np.int64)), rows, cols))
    full = CC.broadcast_to(a, tuple(batch) + (rows, cols))
    return full.reshape((int(np.prod(batch, dtype=np.int64)), rows, cols))


def cuda_matmul_nd(x, y, tx: bool, ty: bool, alpha: float = 1.0):
    """matmul_nd on device arrays: transposes and alpha are done by the kernel."""
    tx, ty = tx and x.ndim >= 2, ty and y.ndim >= 2
    x2 = x.reshape((1, x.shape[0])) if x.ndim == 1 else x
    y2 = y.reshape((y.shape[0], 1)) if y.ndim == 1 else y
    xs, ys = tuple(x2.shape), tuple(y2.shape)   # plain tuples (the simulator's shapes
    m, k = (xs[-1], xs[-2]) if tx else (xs[-2], xs[-1])   # refuse negative indices)
    n = ys[-2] if ty else ys[-1]
    batch = np.broadcast_shapes(xs[:-2], ys[:-2])
    if batch:
        check_tensor_size(batch + (max(m * k, k * n, m * n),), x.dtype, "matmul")
    xb = _as_batches(x2, batch, *xs[-2:])
    yb = _as_batches(y2, batch, *ys[-2:])
    out_shape = batch + (m, n)
    if x.ndim == 1:
        out_shape = out_shape[:-2] + out_shape[-1:]
    if y.ndim == 1:
        out_shape = out_shape[:-1]
    return CM.matmul(xb, yb, tx, ty, alpha).reshape(tuple(out_shape))


def _cuda_sum_to(g, shape):
    """_sum_to on the device: sum the broadcast batch dims of ``g`` away."""
    g_shape, shape = tuple(g.shape), tuple(shape)
    lead = len(g_shape) - len(shape)
    axes = list(range(lead)) + [lead + i for i, (a, b) in enumerate(zip(g_shape[lead:-2],
                                                                         shape[:-2]))
                                if b == 1 and a != 1]
    if not axes:
        return g
    return CR.sum_axes(g, axes, keepdims=True).reshape(tuple(shape))


# --- elementwise ------------------------------------------------------------------------------
# the @pointwise kernel (ops/elementwise.py) each binary op type runs
_BINARY_KERNELS = {"elementwise_add": "add", "elementwise_sub": "sub",
                   "elementwise_mul": "mul", "elementwise_div": "div",
                   "elementwise_max": "maximum", "elementwise_min": "minimum",
                   "elementwise_pow": "power", "elementwise_floordiv": "floor_div",
                   "elementwise_mod": "remainder"}


def _binary_kernel(op_type, x):
    """The kernel of ``op_type`` (elementwise_add, ..., a comparison, a logical op) for x's
    dtype: integer division truncates toward zero, as Paddle's C++ does."""
    name = _BINARY_KERNELS.get(op_type, op_type)
    if name == "div" and x.dtype.kind in "iu":
        name = "trunc_div"
    return KERNELS[name]


# --- the places -------------------------------------------------------------------------------
class CPU:
    name = "cpu"
    sum_to = staticmethod(_sum_to)

    @staticmethod
    def binary(op_type, x, y, out, out_dtype=None):
        """The binary elementwise op ``op_type`` of x and y with numpy broadcasting, into
        ``out`` (None: a new array)."""
        return _binary_kernel(op_type, x).cpu(x, y, out=out)

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
        times ``scale`` (``name`` "scale")."""
        if name == "scale":
            return KS.scale_then_bias(x, x.dtype.type(scale), x.dtype.type(0), out=out)
        return KERNELS[name].cpu(x, out=out)

    @staticmethod
    def derivative(name, value, dout, scale, out):
        """d act / d its input, times dout; ``value`` is what the derivative is read from
        (the activation's output, or its input for log and square)."""
        if name == "scale":
            return KS.scale_then_bias(dout, dout.dtype.type(scale), dout.dtype.type(0),
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
        if not largest:
            order = np.argsort(rows, axis=1, kind="stable")        # NaN sorts last
        elif rows.dtype.kind == "f":
            order = np.lexsort((-rows, ~np.isnan(rows)), axis=1)   # NaN first, then down
        else:
            order = np.argsort(~rows, axis=1, kind="stable")       # ~ reverses, exactly
        order = np.ascontiguousarray(order[:, :k])
        return np.take_along_axis(rows, order, axis=1), order.astype(np.int64)

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
        if out_rows.dtype == dout_rows.dtype and out_rows.dtype.type in _BLAS:
            return KR.softmax_grad_rows(out_rows, dout_rows)
        inner = (dout_rows * out_rows).sum(axis=1, keepdims=True)     # (float16: numpy)
        return (out_rows * (dout_rows - inner)).astype(out_rows.dtype)

    @staticmethod
    def row_log_softmax(rows):
        """X - max - log(sum(exp(X - max))) per row (empty rows stay empty)."""
        if rows.shape[1] == 0:
            return rows.copy()
        shifted = rows - rows.max(axis=1, keepdims=True)
        return (shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))
                ).astype(rows.dtype)

    @staticmethod
    def log_softmax_grad_rows(out_rows, dout_rows):
        """dX = dOut - exp(Out) * sum(dOut) per row."""
        return (dout_rows - np.exp(out_rows) * dout_rows.sum(axis=1, keepdims=True)
                ).astype(out_rows.dtype)

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


class CUDA:
    name = "cuda"
    sum_to = staticmethod(_cuda_sum_to)
    matmul = staticmethod(cuda_matmul_nd)      # transposes and alpha done by the kernel

    @staticmethod
    def binary(op_type, x, y, out, out_dtype=None):
        return _binary_kernel(op_type, x).cuda(x, y, out_dtype=out_dtype or x.dtype)

    @staticmethod
    def apply(kernel, *operands, out, out_dtype=None):
        return kernel.cuda(*operands, out_dtype=out_dtype)

    @staticmethod
    def update(kernel, *args, out=None):
        return kernel.cuda(*args)           # (new device arrays: no host buffers here)

    @staticmethod
    def unary(name, x, scale, out):
        if name == "scale":
            return CE.unary("scale_then_bias", x, a=scale, b=0.0)
        return KERNELS[name].cuda(x, out_dtype=x.dtype)         # x's dtype, as the CPU

    @staticmethod
    def derivative(name, value, dout, scale, out):
        if name == "scale":
            return CE.unary("scale_then_bias", dout, a=scale, b=0.0)
        return KERNELS[name + "_grad"].cuda(value, dout, out_dtype=dout.dtype)

    @staticmethod
    def im2col(x, geometry, out=None):
        check_tensor_size(cols_shape(x.shape, geometry), x.dtype, "im2col")
        return (CV.im2col if len(geometry) == 10 else CV3.im2col3d)(x, *geometry)

    @staticmethod
    def col2im(cols, shape, geometry, out=None):
        return (CV.col2im if len(geometry) == 10 else CV3.col2im3d)(cols, shape, *geometry)

    @staticmethod
    def conv_direct(x, w, geometry, groups, buffer):
        return None           # the device convolves through im2col and its tiled products

    @staticmethod
    def conv_direct_grads(x, w, dy, geometry, groups, want_dx, want_dw, buffer):
        return None

    @staticmethod
    def images_per_im2col(bytes_per_image: int) -> int:
        return 2**62          # all at once: one launch, the device has the memory

    @staticmethod
    def product(a, b, ta=False, tb=False, out=None):
        rows, cols = a.shape[1 if ta else 0], b.shape[0 if tb else 1]
        if rows * cols > a.size + b.size:                  # an outer product grows
            check_tensor_size((rows, cols), a.dtype, "matmul")
        return CM.matmul(a, b, trans_a=ta, trans_b=tb)

    # --- rows (transposes are copies on the device: kernels/cuda/copy.py) -----------------
    @staticmethod
    def rows(a, axis: int):
        if axis != a.ndim - 1:
            a = CC.transpose(a, [d for d in range(a.ndim) if d != axis] + [axis])
        classes = a.shape[a.ndim - 1]
        return a.reshape((a.size // classes if classes else 0, classes))

    @staticmethod
    def unrows(m, like_shape, axis: int):
        moved = [d for i, d in enumerate(like_shape) if i != axis] + [like_shape[axis]]
        m = m.reshape(tuple(moved))
        if axis == len(like_shape) - 1:
            return m
        perm = list(range(len(like_shape) - 1))
        perm.insert(axis, len(like_shape) - 1)
        return CC.transpose(m, perm)

    @staticmethod
    def per_row(a, dtype):
        flat = a.reshape((a.size,))
        return flat if flat.dtype == dtype else CC.astype(flat, dtype)

    @classmethod
    def hard_labels(cls, label, classes: int, ignore: int):
        """As the CPU's, checked on the device (one number comes back)."""
        check.indices(label, classes, slot="Label", what="class index", ignore=ignore,
                      counted=f"{classes} classes")
        return cls.per_row(label, np.int64)

    @staticmethod
    def row_softmax(rows):
        return CR.row_softmax(rows, *rows.shape)

    hard_label_loss = staticmethod(CL.hard_label_loss)
    softmax_xent_grad = staticmethod(CL.softmax_xent_grad)
    xent_grad = staticmethod(CL.xent_grad)
    soft_label_loss = staticmethod(CL.soft_label_loss)
    soft_softmax_xent_grad = staticmethod(CL.soft_softmax_xent_grad)
    soft_xent_grad = staticmethod(CL.soft_xent_grad)

    # --- reductions -------------------------------------------------------------------------
    sum_axes = staticmethod(CR.sum_axes)
    fold_axes = staticmethod(CR.fold_axes)
    broadcast_to = staticmethod(CC.broadcast_to)
    take = staticmethod(CI.gather)
    scatter_add = staticmethod(CI.scatter_add)
    one_hot = staticmethod(CI.one_hot)
    arg_extreme = staticmethod(CI.arg_extreme)
    linear_index = staticmethod(CI.linear_index)
    scatter_rows = staticmethod(CI.scatter_rows)
    zero_rows = staticmethod(CI.zero_rows)
    take_along_rows = staticmethod(CI.take_along_rows)
    put_along_rows = staticmethod(CI.put_along_rows)
    top_k_rows = staticmethod(CI.top_k_rows)
    copy = staticmethod(CC.copy)
    full = staticmethod(CC.fill)

    @staticmethod
    def scale(x, factor: float):
        return CE.unary("scale_then_bias", x, a=factor)

    @staticmethod
    def softmax_grad_rows(out_rows, dout_rows):
        cols = int(out_rows.shape[1])
        return CR.softmax_grad_rows(out_rows, dout_rows, int(out_rows.shape[0]), cols)

    @staticmethod
    def row_log_softmax(rows):
        return CR.row_log_softmax(rows, *rows.shape)

    @staticmethod
    def log_softmax_grad_rows(out_rows, dout_rows):
        return CR.log_softmax_grad_rows(out_rows, dout_rows, *out_rows.shape)

    gather_maps = staticmethod(CA.gather_maps)
    scatter_maps = staticmethod(CA.scatter_maps)
    cumsum = staticmethod(CS.cumsum)
    arange = staticmethod(CS.arange)
    norm_moments = staticmethod(CN.moments)
    normalize = staticmethod(CN.normalize)
    normalize_grad = staticmethod(CN.normalize_grad)

