"""The one place to add an op: one file per family, each op declared once with
``register(OpDef(...))`` (OpProto, shape inference, kernels, gradient together).
Importing this package registers them all."""
from . import io, fill, activation, elementwise, matmul, reduce, shape  # noqa: F401
