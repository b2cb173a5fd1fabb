"""The CUDA place's primitives (numba device arrays): the operations cpu.py names, run with
the launchers of kernels/cuda (and, for batches of matrices, kernels/triangular_linalg.py),
which allocate device arrays (they take ``out`` and ignore it). Tensors placed on CUDA stay
there between ops.
"""
from __future__ import annotations

import numpy as np

from ..core.limits import check_tensor_size
from ..kernels import check, small_linalg
from ..kernels import triangular_linalg as TL
from ..kernels.cuda import axis_maps as CA
from ..kernels.cuda import conv as CV
from ..kernels.cuda import conv3d as CV3
from ..kernels.cuda import copy as CC
from ..kernels.cuda import index as CI
from ..kernels.cuda import loss as CL
from ..kernels.cuda import matmul as CM
from ..kernels.cuda import norm as CN
from ..kernels.cuda import reduce as CR
from ..kernels.cuda import scan as CS
from ..kernels.cuda.device import empty
from ..kernels.pointwise import KERNELS
from ..kernels.scale import scale_then_bias
from .products import cuda_matmul_nd, cuda_sum_to
from .shared import batch_of, binary_kernel, cols_shape


class CUDA:
    name = "cuda"

    @staticmethod
    def binary(op_type, x, y, out, out_dtype=None):
        return binary_kernel(op_type, x).cuda(x, y, out_dtype=out_dtype or x.dtype)

    @staticmethod
    def apply(kernel, *operands, out, out_dtype=None):
        return kernel.cuda(*operands, out_dtype=out_dtype)

    @staticmethod
    def update(kernel, *args, out=None):
        return kernel.cuda(*args)           # (new device arrays: no host buffers here)

    @staticmethod
    def unary(name, x, scale, out):
        if name == "scale":
            return scale_then_bias.cuda(x, float(scale), 0.0, out_dtype=x.dtype)
        return KERNELS[name].cuda(x, out_dtype=x.dtype)         # x's dtype, as the CPU

    @staticmethod
    def derivative(name, value, dout, scale, out):
        if name == "scale":
            return scale_then_bias.cuda(dout, float(scale), 0.0, out_dtype=dout.dtype)
        return KERNELS[name + "_grad"].cuda(value, dout, out_dtype=dout.dtype)

    @staticmethod
    def scale(x, factor: float):
        return scale_then_bias.cuda(x, float(factor), 0.0, out_dtype=x.dtype)

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

    # --- batches of matrices (cpu.py says what they are), here in the tensor's own dtype:
    # kernels/triangular_linalg.py runs one thread per matrix ------------------------------
    @staticmethod
    def to_matrices(x, batch_shape=None):
        if batch_shape is not None and tuple(x.shape[:-2]) != tuple(batch_shape):
            x = CC.broadcast_to(x, tuple(batch_shape) + tuple(x.shape[-2:]))
        x = CC.copy_if_strided(x)
        return x.reshape((batch_of(x.shape),) + tuple(x.shape[-2:]))

    @staticmethod
    def from_matrices(a, shape, dtype):
        if a.dtype != np.dtype(dtype):
            a = CC.astype(a, dtype)
        return a.reshape(tuple(shape))

    @staticmethod
    def unpack_lu(lu_data, piv, unpack_ludata: bool, unpack_pivots: bool):
        piv = piv.reshape((lu_data.shape[0], min(lu_data.shape[1], lu_data.shape[2])))
        return TL.unpack(lu_data, piv, unpack_ludata, unpack_pivots)

    @staticmethod
    def transpose_each(a):
        return CC.transpose(a, (0, 2, 1))

    @staticmethod
    def zero_matrices(shape, dtype):
        return CC.fill(tuple(shape), 0, dtype)

    @staticmethod
    def identities(batch: int, n: int, like):
        return small_linalg.CUDA.eyes((batch,), n, n, like.dtype)

    @staticmethod
    def concat(parts, axis: int):
        return CC.concat(parts, axis)

    @staticmethod
    def split(a, sizes, axis: int):
        return CC.split(a, sizes, axis)

    @staticmethod
    def where_batch(keep, a, b):
        """a's matrices where keep[i] (host bools), b's elsewhere."""
        keep = np.asarray(keep, dtype=bool)
        if keep.all():
            return a
        if not keep.any():
            return b
        rows = np.arange(keep.size)
        out = empty((keep.size,) + tuple(a.shape[1:]), a.dtype)
        CC.put_rows(out, rows[keep], CC.take_rows(a, rows[keep]))
        return CC.put_rows(out, rows[~keep], CC.take_rows(b, rows[~keep]))

    # --- the launchers that are primitives as they are: the matmul rules (products.py),
    # losses, reductions, indexing, copies, index maps, scans, group normalization, and
    # the batches of matrices -----------------------------------------------------------------
    sum_to = staticmethod(cuda_sum_to)
    matmul = staticmethod(cuda_matmul_nd)      # transposes and alpha done by the kernel
    hard_label_loss = staticmethod(CL.hard_label_loss)
    softmax_xent_grad = staticmethod(CL.softmax_xent_grad)
    xent_grad = staticmethod(CL.xent_grad)
    soft_label_loss = staticmethod(CL.soft_label_loss)
    soft_softmax_xent_grad = staticmethod(CL.soft_softmax_xent_grad)
    soft_xent_grad = staticmethod(CL.soft_xent_grad)
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
    gather_maps = staticmethod(CA.gather_maps)
    scatter_maps = staticmethod(CA.scatter_maps)
    cumsum = staticmethod(CS.cumsum)
    arange = staticmethod(CS.arange)
    norm_moments = staticmethod(CN.moments)
    normalize = staticmethod(CN.normalize)
    normalize_grad = staticmethod(CN.normalize_grad)
    cholesky = staticmethod(TL.cholesky)
    lu = staticmethod(TL.lu)
    lu_solve = staticmethod(TL.lu_solve)
    determinant = staticmethod(TL.determinant)
    cofactors = staticmethod(TL.cofactors)
    triangular_solve = staticmethod(TL.triangular_solve)
    batch_product = staticmethod(TL.product)
    triangle = staticmethod(TL.triangle)
    combine = staticmethod(TL.combine)
    scale_each = staticmethod(TL.scale_each)
    negate = staticmethod(TL.negate)
