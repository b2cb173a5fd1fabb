"""The one place to add an op: one file per family, each op declared once with
``register(OpDef(...))`` (OpProto, shape inference, kernels, gradient together).
Importing this package registers them all."""
from . import (activation, adam, arange, batch_norm, cnn_activations, conditional,  # noqa: F401
               conv, conv_transpose, cumsum, dropout, elementwise, fc, fill, fused_elemwise,
               grad_clip, group_norm, indices, interp, io, loss, matmul, norm, optimizer, pad,
               pointwise_losses, pool, recurrent, reduce, rnn, scatter, shape, slice, softmax,
               squeeze, stack, tensor_array, top_k, unary_math, while_op)
from . import distributed, embedding, layer_norm  # noqa: F401
