"""The one place to add an op: one file per family, each op declared once with
``register(OpDef(...))`` (OpProto, shape inference, kernels, gradient together).
Importing this package registers them all."""
from . import (activation, adam, arange, batch_norm, cnn_activations, conditional,  # noqa: F401
               conv, conv_transpose, cumsum, dropout, elementwise, fc, fill, fused_elemwise,
               grad_clip, group_norm, indices, interp, io, loss, matmul, norm, optimizer, pad,
               pointwise_losses, pool, recurrent, reduce, rnn, scatter, shape, slice, softmax,
               squeeze, stack, tensor_array, top_k, unary_math, while_op)
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
