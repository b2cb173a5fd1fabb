"""unique, unique_consecutive and where_index: ops whose output size depends on the data
(Fluid's slots and attributes, as ``paddle.unique``, ``paddle.unique_consecutive`` and
``paddle.nonzero`` save them). None has a gradient (Paddle's have none).

- unique (``is_sorted=True``, as Paddle 2.x saves it): X's distinct values in ascending
  order (``axis`` of one entry: the distinct slices along that axis, ordered
  lexicographically), with Indices (where each first occurs), Index (for each element or
  slice of X, the entry of Out it equals) and Counts. ``is_sorted=False`` is Fluid 1's
  unique: the distinct values in the order they first appear, and Index. ``dtype`` is
  the VarType code of the index outputs (int32 or int64).
- unique_consecutive: each run of equal neighbours (elements, or slices along ``axis``)
  kept once, with Index (which run each element is in) and Counts (each run's length).
- where_index: the coordinates of X's nonzero elements, int64 [n, rank], in row-major
  order (``paddle.nonzero``).

How many values come out is known only when X is read: shape inference says -1 there.
The work is a sort and a scan over the whole tensor, done on the host from one copy of X
(on CUDA the results go back to the device), as masked_select finds its positions
(ops/masked_select.py): Paddle 2.6.2's GPU kernels also bring the count to the host.
The host work is kernels/cpu/value_sized.py's: numpy's ``np.unique`` and scans for unique
and unique_consecutive, an njit loop for where_index. A compiled block calls the same
functions (unique's through in_python), so a compiled segment gives the interpreter's
values, whatever size they come out at on each run.

NaN: unique gives one NaN entry for all of X's NaNs (numpy's ``equal_nan``), the last
value; Paddle 2.6.2's CPU kernel sorts with a comparison that NaN breaks and gives wrong
results (measured: ``unique([nan, 1, nan])`` gives ``[nan]`` with a count of 0).
unique_consecutive, like Paddle, never counts two NaNs equal.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.framework_pb2 import VarType
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import value_sized as KV
from ..kernels.cuda import device
from ..kernels.lowered import Call
from . import arrays
from .common import INDEX_TYPES, X, build_fail, require_element_type, require_index_dtype, run_fail
from ..backends import CPU, CUDA

# the element types Paddle's CPU unique kernels are registered for
UNIQUE_TYPES = ("int32", "int64", "float32", "float64")
NONZERO_TYPES = ("bool", "int8", "uint8", "int16", "int32", "int64", "float32", "float64")


def _axis_of(op_type: str, axes, rank: int, fail):
    """The one axis named (None: X flattened)."""
    axes = [int(a) for a in axes or []]
    if not axes:
        return None
    if len(axes) != 1 or not -rank <= axes[0] < rank:
        fail("axis names one axis of X (or none: X flattened)",
             f"[] or one axis in [{-rank}, {rank - 1}]", f"axis={axes}")
    return axes[0] % rank


def _unique_infer(op_type: str):
    def infer(ctx):
        require_element_type(ctx, "X", UNIQUE_TYPES, f"{op_type} needs int32, int64, float32 "
                             "or float64 elements (Paddle's CPU kernels)")
        require_index_dtype(ctx, op_type, "the index outputs'", "X")
        xs = ctx.shape("X")
        axis = _axis_of(op_type, ctx.attr("axis"), len(xs),
                        build_fail(ctx, "X"))
        sorted_ = ctx.attr("is_sorted") if op_type == "unique" else True
        if axis is None or not sorted_:
            size = 1
            for d in xs:
                size = -1 if d < 0 or size < 0 else size * d
            out, along = [-1], size
        else:
            out, along = [-1 if i == axis else d for i, d in enumerate(xs)], xs[axis]
        index_type = ctx.attr("dtype")
        ctx.set_output("Out", out, ctx.dtype("X"))
        ctx.set_output("Index", [along], index_type)
        ctx.set_output("Indices", [-1], index_type)
        ctx.set_output("Counts", [-1], index_type)
    return infer


def _on(place, array):
    array = np.ascontiguousarray(array)
    return device.to_device(array) if place is CUDA else array


def _unique(place, op_type: str):
    def run(ctx):
        x = arrays.host(ctx.input("X"))
        axis = _axis_of(op_type, ctx.attr("axis"), x.ndim,
                        run_fail(op_type, "X"))
        index_type = INDEX_TYPES[ctx.attr("dtype")]
        if index_type is np.int32 and x.size > np.iinfo(np.int32).max:
            run_fail(op_type, "X")("int32 indices cannot count this many elements",
                                   "fewer than 2**31 elements", f"{x.size}")
        if op_type == "unique":
            values, first, inverse, counts = KV.unique_arrays(x, axis, ctx.attr("is_sorted"))
            ctx.set_output("Indices", _on(place, first.astype(index_type)))
        else:
            values, inverse, counts = KV.consecutive_arrays(x, axis)
        ctx.set_output("Out", _on(place, values))
        ctx.set_output("Index", _on(place, inverse.astype(index_type)))
        ctx.set_output("Counts", _on(place, counts.astype(index_type)))
    return run


def _lowered_unique(op_type: str):
    """The form of unique / unique_consecutive: the interpreter's own numpy functions
    (kernels/cpu/value_sized.py) through in_python, Out's size found from X on each run."""
    def lowered(info):
        axes = [int(a) for a in info.attr("axis") or []]
        rank = info.ndim("X")
        index = INDEX_TYPES.get(info.attr("dtype"))
        if index is None or info.dtype("X").name not in UNIQUE_TYPES or len(axes) > 1 or \
                (axes and not -rank <= axes[0] < rank):
            return None                     # (the interpreter's checks word the error)
        zero, most = index(0), int(np.iinfo(index).max)   # the index type, its largest count
        if op_type == "unique":
            writes = ("Out", "Indices", "Index", "Counts")
            if not axes:
                return Call(KV.unique_flat, ("X",), writes,
                            (bool(info.attr("is_sorted")), zero, most))
            return Call(KV.unique_along, ("X",), writes, (axes[0] % rank, zero, most))
        writes = ("Out", "Index", "Counts")
        if not axes:
            return Call(KV.consecutive_flat, ("X",), writes, (zero, most))
        return Call(KV.consecutive_along, ("X",), writes, (axes[0] % rank, zero, most))
    return lowered


INDEX_TYPE_ATTR = Attr("dtype", A.INT, VarType.INT64, "VarType code of the index outputs' "
                                                      "element type (int32 or int64)")
UNIQUE_AXIS = Attr("axis", A.INTS, [], "one axis: unique slices along it (empty: X "
                                       "flattened)")

register(OpDef(
    "unique", [X],
    [Slot("Out", "the distinct values (or slices along axis), ascending"),
     Slot("Indices", "where each of Out first occurs in X", dispensable=True),
     Slot("Index", "for each element (slice) of X, the entry of Out it equals"),
     Slot("Counts", "how often each of Out occurs", dispensable=True)],
    [Attr("return_index", A.BOOLEAN, False, "the caller wants Indices"),
     Attr("return_inverse", A.BOOLEAN, False, "the caller wants Index"),
     Attr("return_counts", A.BOOLEAN, False, "the caller wants Counts"),
     UNIQUE_AXIS, INDEX_TYPE_ATTR,
     Attr("is_sorted", A.BOOLEAN, False, "Paddle 2's sorted unique (False: Fluid 1's, in "
                                         "order of first appearance)")],
    comment="Out = X's distinct values (or slices along axis) in ascending order, with "
            "where they first occur, the inverse map and the counts.",
    infer_shape=_unique_infer("unique"),
    kernels={"cpu": _unique(CPU, "unique"), "cuda": _unique(CUDA, "unique")},
    lowered=_lowered_unique("unique")))

register(OpDef(
    "unique_consecutive", [X],
    [Slot("Out", "X with each run of equal neighbours kept once"),
     Slot("Index", "for each element (slice) of X, its run", dispensable=True),
     Slot("Counts", "each run's length", dispensable=True)],
    [Attr("return_inverse", A.BOOLEAN, False, "the caller wants Index"),
     Attr("return_counts", A.BOOLEAN, False, "the caller wants Counts"),
     UNIQUE_AXIS, INDEX_TYPE_ATTR],
    comment="Out = X with each run of equal neighbours (elements, or slices along axis) "
            "kept once, with each element's run and each run's length.",
    infer_shape=_unique_infer("unique_consecutive"),
    kernels={"cpu": _unique(CPU, "unique_consecutive"),
             "cuda": _unique(CUDA, "unique_consecutive")},
    lowered=_lowered_unique("unique_consecutive")))


# --- where_index (paddle.nonzero) ---------------------------------------------------------
def _where_index_infer(ctx):
    if dtypes.name(ctx.dtype("Condition")) not in NONZERO_TYPES:
        ctx.fail("where_index needs bool, integer, float32 or float64 elements (Paddle's "
                 "CPU kernels)", slot="Condition", expected="one of those",
                 given=ctx.describe_input("Condition"))
    shape = ctx.require_rank("Condition", 1)
    ctx.set_output("Out", [-1, len(shape)], dtypes.to_code("int64"))


def _where_index(place):
    def run(ctx):
        condition = arrays.host(ctx.input("Condition"))
        if condition.ndim == 0:
            run_fail("where_index", "Condition")("a 0-d Condition has no coordinates",
                                                 "at least one dimension", "shape []")
        ctx.set_output("Out", _on(place, KV.nonzero_coordinates(condition)))
    return run


def _lowered_where_index(info):
    """kernels/cpu/value_sized.nonzero_coordinates, the interpreter's loop (a 0-d
    Condition, which has no coordinates, stays with the interpreter's error)."""
    if info.ndim("Condition") == 0 or info.dtype("Condition").name not in NONZERO_TYPES:
        return None
    return Call(KV.nonzero_coordinates, ("Condition",), ("Out",))


register(OpDef(
    "where_index", [Slot("Condition", "the tensor whose nonzero elements are listed")],
    [Slot("Out", "the coordinates of each nonzero element, one row each (int64)")], [],
    comment="Out = the coordinates of Condition's nonzero elements, [n, rank], row-major.",
    infer_shape=_where_index_infer,
    kernels={"cpu": _where_index(CPU), "cuda": _where_index(CUDA)},
    lowered=_lowered_where_index))
