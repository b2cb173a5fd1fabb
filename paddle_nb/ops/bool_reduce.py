"""reduce_all, reduce_any: whether every / some element of X over ``dim`` is true.

What ``paddle.all(x, axis, keepdim)`` and ``paddle.any(...)`` save (Paddle 2.6.2): the
reduce ops' attributes (``dim``, here a list of int64 as Fluid declares it, ``keep_dim``,
``reduce_all``) and a bool Out. X may be bool, an integer or a float tensor: an element is
true where it is nonzero (NaN too), as C++'s ``bool(x)``. Reducing over no elements gives
``all`` true and ``any`` false, as numpy and Paddle.

Written once over the places' primitives (backends/): each element becomes a 0/1 flag
(``zero_flag`` for all, ``nonzero_flag`` for any), ``sum_axes`` counts the flags over the
reduced axes, and the count says the answer (all: no zero counted; any: some nonzero
counted). Counting gives the empty case for free, where a min/max fold has no first
element to start from.

``dim`` may come from a tensor (``AxisTensor``, a 1-D tensor, or ``AxisTensorList``, one
one-element tensor per axis: core/attr_tensors.py), so the kernel reads ``ctx.attr("dim")``.
At build time the axes are then unknown: Out has X's rank with -1 dims (keep_dim), or X's
rank less one per axis the tensor holds.
"""
from __future__ import annotations

import numpy as np

from ..core.framework_pb2 import VarType
from ..core.registry import NO_GRADIENT, OpDef, register
from ..kernels.cpu import reduce as KR
from ..kernels.pointwise import pointwise
from . import arrays
from .common import OUT, X
from ..backends import CPU, CUDA
from .reduce import (AXIS_TENSOR_SLOTS, LONG_DIM_REDUCE_ATTRS, _normalize_dims,
                     attr_dims, long_dim_reduce_infer, reduced_form)

_REAL_TYPES = ("boolean", "int32", "int64", "float32", "float64")


# --- the math ---------------------------------------------------------------------------
@pointwise([f"int64({t})" for t in _REAL_TYPES])
def zero_flag(x):
    return 1 if x == 0 else 0


@pointwise([f"int64({t})" for t in _REAL_TYPES])
def nonzero_flag(x):
    return 0 if x == 0 else 1


@pointwise(["boolean(int64)"])
def none_counted(count):
    return count == 0


@pointwise(["boolean(int64)"])
def some_counted(count):
    return count != 0


# what each op counts, and what it then asks of the count
_RULES = {"reduce_all": (zero_flag, none_counted), "reduce_any": (nonzero_flag, some_counted)}


# --- the ops ----------------------------------------------------------------------------
def make(place, op_type: str):
    flag, answer = _RULES[op_type]

    def run(ctx):
        x = ctx.input("X")
        dims = _normalize_dims([int(d) for d in ctx.attr("dim")], x.ndim,
                               ctx.attr("reduce_all"))
        flags = place.apply(flag, x, out=None, out_dtype=np.int64)
        counts = place.sum_axes(flags, dims, ctx.attr("keep_dim"))
        # (into an array made here: numpy's ufunc gives a 0-d count a scalar, not a tensor)
        out = arrays.empty(counts.shape, np.bool_, like=counts)
        ctx.set_output("Out", place.apply(answer, counts, out=out, out_dtype=np.bool_))
    run.__name__ = f"{place.name}_{op_type}"
    return run


def _lowered(every: bool):
    """reduce_all's (``every``) / reduce_any's form: kernels/cpu/reduce.tested_over, for an
    X of rank >= 1 of the types the kernel takes."""
    def lowered(info):
        if info.ndim("X") == 0 or info.dtype("X").name not in ("bool", *_REAL_TYPES[1:]):
            return None
        return reduced_form(KR.tested_over, info, attr_dims(info), info.attr("keep_dim"),
                            (every,))
    return lowered


for _type, _what in (("reduce_all", "every"), ("reduce_any", "some")):
    register(OpDef(
        _type,
        [X, *AXIS_TENSOR_SLOTS], [OUT], LONG_DIM_REDUCE_ATTRS,
        comment=f"Out = whether {_what} element of X over dim is true (nonzero), as bool.",
        infer_shape=long_dim_reduce_infer("real", VarType.BOOL),
        kernels={"cpu": make(CPU, _type), "cuda": make(CUDA, _type)},
        lowered=_lowered(_type == "reduce_all"), grad=NO_GRADIENT,
        reads_attr_tensors=("AxisTensor", "AxisTensorList")))
