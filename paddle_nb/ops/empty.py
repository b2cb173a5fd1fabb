"""empty: a new tensor of ``shape`` and ``dtype`` whose values are not specified (Fluid's
slots and attributes, as ``paddle.empty`` saves them).

Paddle allocates the memory and leaves whatever was there; a program must write the tensor
before reading it. Here the tensor is zeros on both places: the same numbers every run
(tests can compare them), and no stale values of another tensor shown to a learner. The
shape may come as tensors, which Fluid reads at run time instead of the attribute
(core/attr_tensors.py): ``ShapeTensor`` (one 1-D int tensor) or ``ShapeTensorList`` (one
one-element tensor per dim, ``paddle.empty([n, 3])`` with a tensor ``n``).
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.framework_pb2 import VarType
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core.limits import check_tensor_size
from ..kernels.cpu.fill import filled
from ..kernels.lowered import Call
from .common import OUT, dtype_code_check, dtype_to_numpy, numba_holds
from ..backends import CPU, CUDA


def _empty_infer(ctx):
    shape = ctx.int_list_attr("shape")
    if any(d < -1 for d in shape) or (not ctx.attr_from_tensor("shape")
                                      and any(d < 0 for d in shape)):
        ctx.fail("every dim of empty's shape must be known and >= 0", expected="dims >= 0",
                 given=f"shape={list(shape)}")
    ctx.set_output("Out", shape, ctx.attr("dtype"))


def _empty(place):
    def run(ctx):
        dtype = dtype_to_numpy(ctx.attr("dtype"))
        shape = tuple(int(d) for d in ctx.attr("shape"))
        if any(d < 0 for d in shape):
            raise ValueError(f"empty: a dim of shape {list(shape)} is negative; expected "
                             f"dims >= 0")
        check_tensor_size(shape, dtype, "empty")
        ctx.set_output("Out", place.full(shape, 0, dtype))     # (Paddle: unspecified)
    return run


def _lowered_empty(info):
    """Zeros of the attribute's shape, as fill_constant's form makes them (a shape given by
    tensors keeps the op in the interpreter: lowering.py)."""
    dtype = dtype_to_numpy(info.attr("dtype"))
    shape = tuple(int(d) for d in info.attr("shape"))
    if not numba_holds(dtype) or any(d < 0 for d in shape):
        return None
    return Call(filled, (), ("Out",), (shape, dtype.type(0)))


register(OpDef(
    "empty",
    [Slot("ShapeTensor", "shape as a 1-D int tensor (read at run time)", dispensable=True),
     Slot("ShapeTensorList", "shape as one-element int tensors (read at run time)",
          dispensable=True, duplicable=True)],
    [OUT],
    [Attr("shape", A.LONGS, [], "Out's shape"),
     Attr("dtype", A.INT, VarType.FP32, "VarType code of Out's element type",
          check=dtype_code_check("biuf"))],
    comment="Out = a new tensor of shape and dtype (its values unspecified in Paddle; zeros "
            "here).",
    infer_shape=_empty_infer, kernels={"cpu": _empty(CPU), "cuda": _empty(CUDA)},
    lowered=_lowered_empty, grad=NO_GRADIENT, allocates=("shape", "dtype"),
    reads_attr_tensors=("ShapeTensor", "ShapeTensorList")))
