"""The one place to add an op: one file per family, each op declared once with
``register(OpDef(...))`` (OpProto, shape inference, kernels, gradient together).
Importing this package registers them all."""
from . import (activation, conditional, elementwise, fc, fill, fused_elemwise,  # noqa: F401
               indices, io, loss, matmul, optimizer, pointwise_losses, recurrent, reduce,
               shape, softmax, squeeze, stack, tensor_array, unary_math, while_op)
