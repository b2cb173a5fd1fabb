"""sequence_mask: a mask of the valid steps of variable-length sequences.

What ``paddle.nn.functional.sequence_mask(lengths, maxlen, dtype)`` saves (Paddle 2.6.2),
and what ``paddle.nn.RNN`` saves when called with ``sequence_length``: for integer lengths
X of any shape, ``Y[..., j] = j < X[...]`` for j in [0, maxlen), cast to ``out_dtype``
(int64 by default). Y's shape is X's with one dim of ``maxlen`` appended.

``maxlen`` is the attribute, or the value of the optional ``MaxLenTensor`` input (a one-
element tensor that stands for it: core/attr_tensors.py, so the kernel just reads
``ctx.attr("maxlen")``). A negative maxlen (the default -1) means the longest length in
X, known only when X's values are. Then, and when the tensor gives maxlen, Y's last dim
is -1 at build time.

Written once over the places' primitives: the positions ``0..maxlen-1`` (``arange``)
compared with X as a column (``binary("less_than")``, numpy broadcasting), then cast.
No gradient (a mask of integer lengths). Inside a compiled block: a Call of
kernels/cpu/indexing.sequence_mask_of (the same comparison, element by element).
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.errors import ExecutionError
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core.limits import check_tensor_size
from ..kernels.cpu import indexing as INDEXING
from ..kernels.lowered import Call
from . import arrays
from .common import X, dtype_code_check, dtype_to_numpy
from .indices import zero_of
from ..backends import CPU, CUDA

_INT64 = 3      # VarType.INT64: Paddle's default out_dtype


def _infer(ctx):
    ctx.require_dtype("X", "int")
    maxlen = ctx.attr("maxlen")
    known = not ctx.attr_from_tensor("maxlen") and maxlen >= 0
    ctx.set_output("Y", ctx.shape("X") + [maxlen if known else -1], ctx.attr("out_dtype"))


def _maxlen(place, x, maxlen: int) -> int:
    """The attribute's (or tensor's) maxlen, or where it is negative the longest length."""
    if maxlen >= 0:
        return int(maxlen)
    if x.size == 0:                    # no lengths: no steps
        return 0
    longest = int(arrays.host_scalar(place.fold_axes(x, list(range(x.ndim)), False, "max")))
    if longest < 0:
        raise ExecutionError(f"sequence_mask: input slot X: maxlen is -1, so it is the "
                             f"longest length in X, which must not be negative: expected "
                             f"lengths >= 0, given a longest length of {longest}")
    return longest


def make(place):
    def run(ctx):
        x = ctx.input("X")
        maxlen = _maxlen(place, x, ctx.attr("maxlen"))
        dtype = dtype_to_numpy(ctx.attr("out_dtype"))
        check_tensor_size(tuple(x.shape) + (maxlen,), dtype, "sequence_mask")
        positions = place.arange(maxlen, 0, 1, x.dtype)
        mask = place.binary("less_than", positions, x.reshape(tuple(x.shape) + (1,)),
                            None, np.bool_)
        ctx.set_output("Y", arrays.astype(mask, dtype))
    run.__name__ = f"{place.name}_sequence_mask"
    return run


def _lowered(info):
    zero = zero_of(info.attr("out_dtype"))
    return None if zero is None else Call(INDEXING.sequence_mask_of, ("X",), ("Y",),
                                          (info.attr("maxlen"), zero))


register(OpDef(
    "sequence_mask",
    [X, Slot("MaxLenTensor", "maxlen as a one-element int tensor (read at run time)",
             dispensable=True)],
    [Slot("Y", "the mask: X's shape plus a last dim of maxlen")],
    [Attr("maxlen", A.INT, -1, "the mask's last dim (negative: the longest length in X)"),
     Attr("out_dtype", A.INT, _INT64, "VarType code of Y's element type",
          check=dtype_code_check("biuf"))],
    comment="Y[..., j] = j < X[...] for j < maxlen (cast to out_dtype): valid steps.",
    infer_shape=_infer, kernels={"cpu": make(CPU), "cuda": make(CUDA)},
    lowered=_lowered,
    grad=NO_GRADIENT, reads_attr_tensors=("MaxLenTensor",)))
