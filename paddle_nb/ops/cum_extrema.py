"""cummax and cummin: the running maximum (minimum) along an axis and the position it came
from, and their gradients (Fluid's lower-case slots and attributes, as ``paddle.cummax``
and ``paddle.cummin`` save them).

Paddle 2.6.2's rule for the running value (kernels/running_scans.py): an element takes
over when it is NaN, or when it is >= the running maximum (<= the minimum), so among equal
values the index is the latest one, and NaN, once met, stays. ``dtype`` is the VarType
code of ``indices`` (int32 or int64). The gradient adds each dOut at the position indices
names along the axis (the places' ``put_along_rows``, as top_k_v2's), Paddle's
``put_along_axis`` with ``reduce='add'``.

In a compiled block: kernels/cpu/running_extremes.py (the same CPU loop, the same adds).
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.framework_pb2 import VarType
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels import running_scans as K
from ..kernels.cpu import running_extremes as KRE
from ..kernels.lowered import Call
from . import arrays
from .common import INDEX_TYPES, require_element_type, require_index_dtype
from .indices import _axis_in, zero_of
from ..backends import CPU, CUDA

# the element types Paddle's CPU cummax/cummin kernels are registered for
ORDERED = ("int32", "int64", "float32", "float64")


def _infer(op_type):
    def infer(ctx):
        require_element_type(ctx, "x", ORDERED, f"{op_type} needs int32, int64, float32 or "
                             "float64 elements (Paddle's CPU kernels)")
        require_index_dtype(ctx, op_type, "indices'", "indices")
        xs = ctx.shape("x")
        _axis_in(ctx, ctx.attr("axis"), len(xs), slot="x")
        ctx.set_output("out", xs, ctx.dtype("x"))
        ctx.set_output("indices", xs, ctx.attr("dtype"))
    return infer


def _axis(ctx, x) -> int:
    return ctx.attr("axis") % max(x.ndim, 1)


def _forward(kernels, largest: bool):
    def run(ctx):
        x = ctx.input("x")
        out, indices = kernels.extremum(x, _axis(ctx, x), largest,
                                        INDEX_TYPES[ctx.attr("dtype")])
        ctx.set_output("out", out)
        ctx.set_output("indices", indices)
    return run


def _backward(place, op_type: str):
    """dx: zeros with each dout added at the position indices names along axis."""
    def run(ctx):
        x, indices, dout = ctx.input("x"), ctx.input("indices"), ctx.input("out@GRAD")
        shape = tuple(int(d) for d in x.shape)
        if tuple(int(d) for d in indices.shape) != shape:
            raise ValueError(f"{op_type}: slot indices: expected x's shape {list(shape)}, "
                             f"given {list(indices.shape)}")
        if x.ndim == 0:                      # one element: its own running value
            ctx.set_output("x@GRAD", arrays.astype(dout, x.dtype).reshape(()))
            return
        axis = _axis(ctx, x)
        n = shape[axis]
        check.indices(indices, n, slot="indices", what="position",
                      counted=f"x's axis {axis} has {n} entries")
        dout = arrays.astype(dout, x.dtype).reshape(shape)
        dx = place.put_along_rows(n, place.rows(arrays.astype(indices, np.int64), axis),
                                  place.rows(dout, axis))
        ctx.set_output("x@GRAD", place.unrows(dx, shape, axis))
    return run


def _lowered(largest: bool):
    """The forward's form, for x of rank >= 1 (a 0-d x is its own running value)."""
    def lowered(info):
        zero = zero_of(info.attr("dtype"))
        if info.ndim("x") == 0 or zero is None or info.dtype("x").name not in ORDERED:
            return None
        return Call(KRE.extremum_along, ("x",), ("out", "indices"),
                    (info.attr("axis") % info.ndim("x"), largest, zero))
    return lowered


def _lowered_grad(info):
    """The gradient's form, for an out@GRAD of x's dtype (the kernel casts another)."""
    if info.ndim("x") == 0 or info.dtype("out@GRAD") != info.dtype("x") or \
            info.dtype("x").name not in ORDERED:
        return None
    return Call(KRE.extremum_along_grad, ("x", "indices", "out@GRAD"), ("x@GRAD",),
                (info.attr("axis") % info.ndim("x"),))


def _declare(op_type: str, largest: bool, what: str):
    register(OpDef(
        op_type, [Slot("x", "the input")],
        [Slot("out", f"the running {what} of x along axis"),
         Slot("indices", f"where each running {what} is along axis (the latest of equal "
                         "values)")],
        [Attr("axis", A.INT, -1, "the axis scanned (negative: from the end)"),
         Attr("dtype", A.INT, VarType.INT64, "VarType code of indices' element type "
                                             "(int32 or int64)")],
        comment=f"out, indices = the running {what} of x along axis and where it came "
                "from (NaN, once met, stays).",
        infer_shape=_infer(op_type),
        kernels={"cpu": _forward(K.CPU, largest), "cuda": _forward(K.CUDA, largest)},
        lowered=_lowered(largest),
        grad=Grad(reads=["x", "indices"], grads_of=["out"], writes=["x"],
                  kernel=_backward(CPU, op_type + "_grad"),
                  cuda_kernel=_backward(CUDA, op_type + "_grad"), lowered=_lowered_grad)))


_declare("cummax", True, "maximum")
_declare("cummin", False, "minimum")
