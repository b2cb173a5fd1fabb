"""size: how many elements a tensor holds (what ``paddle.numel(x)`` saves).

Paddle 2.6.2 saves ``size`` with one input slot ``Input`` and answers a 0-d int64 tensor
(a shape [] variable), whatever Input's dtype. Like ``shape`` (ops/squeeze.py) it reads
only Input's dims, never its elements, so one kernel serves both places: the count is
made on the host and copied to the device on CUDA. No gradient (a count).
"""
from __future__ import annotations

import numpy as np

from ..core.framework_pb2 import VarType
from ..core.registry import NO_GRADIENT, OpDef, Slot, register
from . import arrays
from ..kernels.cpu.size import element_count
from ..kernels.lowered import Call
from .common import OUT


def _size_infer(ctx):
    ctx.shape("Input")                       # (an Input that is not a tensor fails here)
    ctx.set_output("Out", [], VarType.INT64)


def _size(ctx):
    count = np.asarray(int(np.prod(ctx.input("Input").shape, dtype=np.int64)), np.int64)
    ctx.set_output("Out", arrays.to_place(ctx.place, count))


register(OpDef("size", [Slot("Input", "any tensor")], [OUT], [],
               comment="Out = the number of elements of Input (a 0-d int64 tensor).",
               infer_shape=_size_infer, kernels={"cpu": _size, "cuda": _size},
               lowered=lambda info: Call(element_count, ("Input",), ("Out",)), grad=NO_GRADIENT))
