"""The one place to add an op: one file per family, each op declared once with
``register(OpDef(...))`` (OpProto, shape inference, kernels, gradient together).
Importing this package registers them all."""
from . import (activation, elementwise, fill, io, loss, matmul, optimizer,  # noqa: F401
               reduce, shape)
