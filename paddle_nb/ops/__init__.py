"""The one place to add an op: one file per family, each op declared once with
``register(OpDef(...))`` (OpProto, shape inference, kernels, gradient together).
Importing this package registers them all."""
from . import (activation, adam, arange, batch_norm, conditional, conv,  # noqa: F401
               conv_transpose, cumsum, dropout, elementwise, fc, fill, fused_elemwise,
               grad_clip, group_norm, indices, interp, io, loss, matmul, optimizer, p_norm, pad,
               pointwise_losses, pool, recurrent, reduce, relu_variants, rnn, scatter, shape,
               slice, softmax, squeeze, stack, tensor_array, top_k, unary_math, while_op)
from . import distributed, embedding, layer_norm  # noqa: F401
# mish, logsigmoid, celu, selu, softsign, tanh_shrink; hard_shrink, softshrink,
# thresholded_relu, brelu; logsumexp; maxout
from . import logsumexp, maxout, shrink_activations, smooth_activations  # noqa: F401
# accuracy, auc; nll_loss, kldiv_loss
from . import log_prob_losses, metrics  # noqa: F401
# argsort, masked_select, roll, meshgrid, tril_triu (tensor manipulation)
from . import masked_select, meshgrid, roll, sort, triangular  # noqa: F401
# isnan_v2/isinf_v2/isfinite_v2, size, reduce_all/_any, bitwise_*, sequence_mask
from . import bitwise, bool_reduce, finite_checks, sequence_mask, size  # noqa: F401
# trunc/floor/ceil/round, log1p/log2/log10/logit, lgamma/digamma, conj; cumprod; i0, polygamma
from . import bessel_and_polygamma, cumprod, rounding_and_special  # noqa: F401
# sin/cos/tan, asin/acos/atan, sinh/cosh, asinh/acosh/atanh; erf, expm1
from . import trigonometric  # noqa: F401
# fmax/fmin/heaviside, atan2, nextafter, lerp; renorm; reduce_amax/_amin; allclose,
# isclose, equal_all, is_empty; assert; as_complex/as_real
from . import (amax_amin, assert_op, binary_math, closeness, complex_view,  # noqa: F401
               log_loss, renorm)
# pixel_shuffle, pixel_unshuffle, channel_shuffle; fold, unfold; bilinear_tensor_product;
# rrelu, gumbel_softmax; spectral_norm; data_norm; row_conv; bernoulli, multinomial,
# poisson, randint, randperm
from . import bilinear_tensor_product, fold, pixel_shuffle  # noqa: F401
from . import data_norm, random_activations, row_conv, sampling, spectral_norm  # noqa: F401
# unpool, unpool3d (pool2d/pool3d and max_pool{2,3}d_with_index are in pool)
from . import unpool  # noqa: F401
# conv3d, conv3d_transpose (over conv.py's and conv_transpose.py's rank-generic helpers)
from . import conv3d  # noqa: F401
# svd, qr, eigh, eigvalsh, eig, eigvals, matrix_rank, lstsq (spectral linear algebra)
from . import eig, eigh, lstsq, matrix_rank, qr, svd  # noqa: F401
# index_sample, take_along_axis; repeat_interleave; crop_tensor; broadcast_tensors; unbind;
# shard_index; multiplex; empty; gather_tree (reading and reshaping by index)
from . import (broadcast_tensors, crop_tensor, empty, gather_tree, multiplex,  # noqa: F401
               repeat_interleave, shard_index, take_along, unbind)
# unique, unique_consecutive, where_index, searchsorted, kthvalue, mode, nanmedian,
# cummax, cummin, logcumsumexp
from . import cum_extrema, logcumsumexp, order_statistics, searchsorted, unique  # noqa: F401
# matrix_power, multi_dot, mv, dot, addmm; kron, cross; dist, frobenius_norm; diagonal,
# trace, diag_v2, eye; histogram, bincount
from . import diagonals, distances, histogram, kron_and_cross, matrix_products  # noqa: F401
# set_value; index_put, index_add, scatter_nd_add, put_along_axis, fill_diagonal_tensor
# (writing into tensors by index)
from . import fill_diagonal_tensor, index_put, scatter_into, set_value  # noqa: F401
# cholesky, lu, lu_unpack, determinant; solve, triangular_solve, cholesky_solve
# (triangular factorizations and solves)
from . import linear_solve, triangular_factor  # noqa: F401
# warpctc, warprnnt (the CTC and RNN-T sequence losses)
from . import ctc_loss, rnnt_loss  # noqa: F401
# hierarchical_sigmoid; nce (sampled softmax-style losses over many classes)
from . import hierarchical_sigmoid, nce  # noqa: F401
