"""The one place to add an op: one file per family, each op declared once with
``register(OpDef(...))`` (OpProto, shape inference, kernels, gradient together).
Importing this package registers them all."""
from . import (activation, adam, arange, conditional, cumsum, elementwise,  # noqa: F401
               fc, fill, fused_elemwise, grad_clip, indices, io, loss, matmul, norm,
               optimizer, pad, pointwise_losses, recurrent, reduce, scatter, shape, slice,
               softmax, squeeze, stack, tensor_array, top_k, unary_math, while_op)
