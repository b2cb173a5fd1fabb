"""Adding or writing slices of X at positions given by data: index_add, scatter_nd_add and
put_along_axis, and their gradients (Fluid's slots and attributes, as ``paddle.index_add``,
``paddle.scatter_nd_add`` / ``paddle.scatter_nd`` and ``paddle.put_along_axis`` save them).

* ``index_add``: ``Out = X``, then ``AddValue``'s slice i is added at ``Index[i]`` along
  ``axis`` (repeats add up): the places' ``scatter_add`` along that axis, then an add.
* ``scatter_nd_add``: each row of ``Index [..., k]`` names a slice of X's first k axes,
  and the matching slice of ``Updates`` is added there: gather_nd's positions
  (ops/scatter.py ``_nd_positions``), then ``scatter_add`` of the flattened slices.
* ``put_along_axis``: ``Result[.., Index[i..], ..] = Value[i..]`` along ``Axis``
  (``Reduce="assign"``; a repeated position keeps the last), or added there (``"add"``;
  with ``Include_self=False`` onto zeros instead of Input). Positions are worked out on
  the host from the checked Index (put_along_axis's are one per element of Index) and the
  write runs on the op's place (ops/write_at.py).

Every index is checked before anything is written (kernels/check.py): Paddle 2.6.2 refuses
negative ones for these three ops (put_along_axis crashes on them), so the range is
``[0, n)``. The gradients are Paddle's: X's is dOut (0 where put_along_axis assigned), the
added values' is dOut at their positions. Inside a compiled block each is a Call of
kernels/cpu/indexing.py (the same ranges checked, the same sums: X + (the values added
onto zeros in the indices' order)).
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import indexing as INDEXING
from ..kernels.cpu.fill import copied
from ..kernels.lowered import Call
from . import arrays, write_at
from .common import OUT, X, int_shape
from .indices import _axis_in
from ..backends import CPU, CUDA
from .scatter import _fits, _nd_positions, nd_index

# the element types Paddle 2.6.2's kernels of these ops take (float16 and complex aside)
ADDABLE = ("int32", "int64", "float32", "float64")


def _require_addable(ctx, slot: str, op: str) -> None:
    if dtypes.name(ctx.dtype(slot)) not in ADDABLE:
        ctx.fail(f"{op} takes int32, int64, float32 or float64 elements", slot=slot,
                 expected="one of those", given=ctx.describe_input(slot))


# --- index_add ----------------------------------------------------------------------------------
def _index_add_check(ctx, xs) -> int:
    """AddValue is X's shape with ``len(Index)`` entries along axis; the axis (>= 0)."""
    ctx.require_dtype("Index", "int")
    if len(ctx.shape("Index")) != 1:
        ctx.fail("Index must be 1-D", slot="Index", expected="shape [k]",
                 given=ctx.describe_input("Index"))
    axis = _axis_in(ctx, ctx.attr("axis"), len(xs))
    want = list(xs)
    want[axis] = ctx.shape("Index")[0]
    if not _fits(ctx.shape("AddValue"), want):
        ctx.fail("AddValue must be X's shape with one slice along axis per index",
                 slot="AddValue", expected=str(want), given=ctx.describe_input("AddValue"))
    return axis


def _index_add_infer(ctx):
    _require_addable(ctx, "X", "index_add")
    ctx.require_same_dtype("AddValue", "X")
    xs = ctx.require_rank("X", 1)
    _index_add_check(ctx, xs)
    ctx.set_output("Out", xs, ctx.dtype("X"))


def _index_add_index(ctx, n: int, axis: int):
    index = ctx.input("Index")
    check.indices(index, n, slot="Index", what="index_add index",
                  counted=f"X's axis {axis} has {n} entries")
    return index.reshape((int(index.size),))


def _index_add(place):
    def run(ctx):
        x, value = ctx.input("X"), ctx.input("AddValue")
        axis = ctx.attr("axis") % len(x.shape)
        index = _index_add_index(ctx, int(x.shape[axis]), axis)
        added = place.scatter_add(int_shape(x), index, arrays.astype(value, x.dtype), axis)
        ctx.set_output("Out", arrays.add(x, added))
    return run


def _index_add_grad(place):
    """dX = dOut; dAddValue = dOut's slices at Index along axis."""
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        axis = ctx.attr("axis") % len(dout.shape)
        index = _index_add_index(ctx, int(dout.shape[axis]), axis)
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", place.copy(dout))
        if ctx.has_output("AddValue@GRAD"):
            ctx.set_output("AddValue@GRAD", place.take(dout, index, axis))
    return run


def _index_add_grad_infer(ctx):
    """dX has dOut's shape (Paddle's gradient op does not read X; this package's
    backward gives it, to check dOut against), AddValue fitting it."""
    write_at.check_gradient(ctx, "X", "Out@GRAD")
    if ctx.has_value("Out@GRAD"):
        gs = ctx.require_rank("Out@GRAD", 1)
        _index_add_check(ctx, gs)
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", gs, ctx.dtype("Out@GRAD"))
    if ctx.has_output("AddValue@GRAD"):
        ctx.set_output("AddValue@GRAD", ctx.shape("AddValue"), ctx.dtype("AddValue"))


# --- in a compiled block (kernels/lowered.py) -----------------------------------------------
def _addable(info, *slots) -> bool:
    """The slots hold one of ADDABLE's types, all the same (the kernels cast another)."""
    dtype = info.dtype(slots[0])
    return dtype.name in ADDABLE and all(info.dtype(s) == dtype for s in slots)


def _lowered_index_add(info):
    if not _addable(info, "X", "AddValue"):
        return None
    return Call(INDEXING.index_added, ("X", "Index", "AddValue"), ("Out",),
                (info.attr("axis") % info.ndim("X"),))


def _lowered_index_add_grad(info):
    """dX = a copy of dOut; dAddValue = dOut's slices at Index (kernels/cpu/indexing)."""
    if not _addable(info, "Out@GRAD"):
        return None
    axis, rank = info.attr("axis") % info.ndim("Out@GRAD"), info.ndim("Out@GRAD")
    calls = []
    if info.has_output("X@GRAD"):
        calls.append(Call(copied, ("Out@GRAD",), ("X@GRAD",)))
    if info.has_output("AddValue@GRAD"):
        calls.append(Call(INDEXING.taken_at, ("Out@GRAD", "Index"), ("AddValue@GRAD",),
                          (axis, rank)))
    return tuple(calls) or None


register(OpDef(
    "index_add", [X, Slot("Index", "where each slice of AddValue goes along axis (1-D)"),
                  Slot("AddValue", "X's shape with len(Index) entries along axis")], [OUT],
    [Attr("axis", A.INT, 0, "the axis Index counts along")],
    comment="Out = X; Out[.., Index[i], ..] += AddValue[.., i, ..] along axis.",
    infer_shape=_index_add_infer, kernels={"cpu": _index_add(CPU), "cuda": _index_add(CUDA)},
    lowered=_lowered_index_add,
    grad=Grad(reads=["X", "Index", "AddValue"], optional=("X",), writes=["X", "AddValue"],
              kernel=_index_add_grad(CPU), cuda_kernel=_index_add_grad(CUDA),
              infer_shape=_index_add_grad_infer, lowered=_lowered_index_add_grad)))


# --- scatter_nd_add -----------------------------------------------------------------------------
def _scatter_nd_add_check(ctx, xs) -> None:
    """Index [..., k] (k known, at most X's rank); Updates = Index[:-1] + X[k:]."""
    idx, k = nd_index(ctx, xs)
    want = list(idx[:-1]) + list(xs[k:])
    if not _fits(ctx.shape("Updates"), want):
        ctx.fail("Updates must hold one slice of X's last axes per index row",
                 slot="Updates", expected=str(want), given=ctx.describe_input("Updates"))


def _scatter_nd_add_infer(ctx):
    _require_addable(ctx, "X", "scatter_nd_add")
    ctx.require_same_dtype("Updates", "X")
    _scatter_nd_add_check(ctx, ctx.shape("X"))
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _flat_slices(x, k: int) -> tuple:
    """X's shape with its first k axes made one: the rows the index rows name."""
    return (write_at.numel(x.shape[:k]),) + int_shape(x)[k:]


def _scatter_nd_add(place):
    def run(ctx):
        x, updates = ctx.input("X"), ctx.input("Updates")
        at, k, _ = _nd_positions(place, ctx, x, what="scatter_nd_add index")
        rows = _flat_slices(x, k)
        updates = arrays.astype(updates, x.dtype).reshape((int(at.size),) + rows[1:])
        added = place.scatter_add(rows, at, updates, 0).reshape(int_shape(x))
        ctx.set_output("Out", arrays.add(x, added))
    return run


def _scatter_nd_add_grad(place):
    """dX = dOut; dUpdates = dOut's slices at the index rows."""
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        at, k, _ = _nd_positions(place, ctx, dout, what="scatter_nd_add index")
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", place.copy(dout))
        if ctx.has_output("Updates@GRAD"):
            taken = place.take(dout.reshape(_flat_slices(dout, k)), at, 0)
            ctx.set_output("Updates@GRAD", taken.reshape(int_shape(ctx.input("Updates"))))
    return run


def _scatter_nd_add_grad_infer(ctx):
    write_at.check_gradient(ctx, "X", "Out@GRAD")
    if ctx.has_value("Out@GRAD"):
        _scatter_nd_add_check(ctx, ctx.shape("Out@GRAD"))
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", ctx.shape("Out@GRAD"), ctx.dtype("Out@GRAD"))
    if ctx.has_output("Updates@GRAD"):
        ctx.set_output("Updates@GRAD", ctx.shape("Updates"), ctx.dtype("Updates"))


def _lowered_scatter_nd_add(info):
    if not _addable(info, "X", "Updates"):
        return None
    return Call(INDEXING.nd_added, ("X", "Index", "Updates"), ("Out",))


def _lowered_scatter_nd_add_grad(info):
    """dX = a copy of dOut; dUpdates = dOut's slices at the index rows (gather_nd's)."""
    if not _addable(info, "Out@GRAD"):
        return None
    calls = []
    if info.has_output("X@GRAD"):
        calls.append(Call(copied, ("Out@GRAD",), ("X@GRAD",)))
    if info.has_output("Updates@GRAD"):
        calls.append(Call(INDEXING.gathered_nd, ("Out@GRAD", "Index"), ("Updates@GRAD",),
                          (info.ndim("Updates"),)))
    return tuple(calls) or None


register(OpDef(
    "scatter_nd_add", [X, Slot("Index", "index rows [..., k] into X's first k axes"),
                       Slot("Updates", "Index's leading shape + X's last axes")], [OUT], [],
    comment="Out = X; Out[Index[i.., 0], ..., Index[i.., k-1]] += Updates[i..].",
    infer_shape=_scatter_nd_add_infer,
    kernels={"cpu": _scatter_nd_add(CPU), "cuda": _scatter_nd_add(CUDA)},
    lowered=_lowered_scatter_nd_add,
    grad=Grad(reads=["X", "Index", "Updates"], optional=("X",), writes=["X", "Updates"],
              kernel=_scatter_nd_add_grad(CPU), cuda_kernel=_scatter_nd_add_grad(CUDA),
              infer_shape=_scatter_nd_add_grad_infer, lowered=_lowered_scatter_nd_add_grad)))


# --- put_along_axis -----------------------------------------------------------------------------
REDUCTIONS = ("assign", "add")


def _check_reduce(values: dict) -> str | None:
    if values.get("Reduce") not in REDUCTIONS:
        return (f"Reduce={values.get('Reduce')!r}: this put_along_axis does "
                f"{' and '.join(REDUCTIONS)} (Paddle 2.6.2 also has mul, mean, amax, amin)")
    return None


def _put_along_axis_check(ctx, xs) -> int:
    ctx.require_dtype("Index", "int")
    idx = ctx.shape("Index")
    if len(idx) != len(xs) or not xs:
        ctx.fail("Index must have Input's rank", slot="Index",
                 expected=f"rank {len(xs)} (at least 1)", given=ctx.describe_input("Index"))
    axis = _axis_in(ctx, ctx.attr("Axis"), len(xs), slot="Input")
    for d, (i, n) in enumerate(zip(idx, xs)):
        if d != axis and i >= 0 and n >= 0 and i > n:
            ctx.fail(f"Index's dim {d} is longer than Input's", slot="Index",
                     expected=f"at most {n} there (any length along Axis {axis})",
                     given=ctx.describe_input("Index"))
    values = ctx.shape("Value")
    if not _fits_broadcast(values, idx):
        ctx.fail("Value must broadcast to Index's shape", slot="Value",
                 expected=f"a shape that broadcasts to {idx}",
                 given=ctx.describe_input("Value"))
    return axis


def _fits_broadcast(value, target) -> bool:
    if len(value) > len(target):
        return False
    return all(v in (1, t) or v < 0 or t < 0 for v, t in zip(reversed(value),
                                                               reversed(target)))


def _put_along_axis_infer(ctx):
    problem = _check_reduce({"Reduce": ctx.attr("Reduce")})
    if problem:
        ctx.fail(problem, expected=f"Reduce in {list(REDUCTIONS)}")
    _require_addable(ctx, "Input", "put_along_axis")
    ctx.require_same_dtype("Value", "Input")
    _put_along_axis_check(ctx, ctx.shape("Input"))
    ctx.set_output("Result", ctx.shape("Input"), ctx.dtype("Input"))


def _along_positions(ctx, shape: tuple):
    """The flat position in a tensor of ``shape`` of each element of Index: its own
    coordinates, with the one along Axis replaced by its (checked) value."""
    axis = ctx.attr("Axis") % len(shape)
    index = ctx.input("Index")
    n = shape[axis]
    check.indices(index, n, slot="Index", what="put_along_axis index",
                  counted=f"Input's axis {axis} has {n} entries")
    index = arrays.host(index).astype(np.int64)
    strides = np.cumprod((1,) + shape[:0:-1], dtype=np.int64)[::-1]
    coords = np.indices(index.shape, dtype=np.int64)
    coords[axis] = index
    return np.tensordot(strides, coords, axes=1).reshape(-1), index.shape


def _assigns(ctx) -> bool:
    """True for Reduce="assign", False for "add" (the gradient op, which has no shape
    rule of its own to refuse the others, refuses them here)."""
    problem = _check_reduce({"Reduce": ctx.attr("Reduce")})
    if problem:
        raise ValueError(f"put_along_axis: {problem}")
    return ctx.attr("Reduce") == "assign"


def _put_along_axis(place):
    def run(ctx):
        x, value = ctx.input("Input"), ctx.input("Value")
        positions, index_shape = _along_positions(ctx, int_shape(x))
        at = write_at.positions_on(ctx, positions)
        value = place.broadcast_to(arrays.astype(value, x.dtype), index_shape)
        if not _assigns(ctx) and not ctx.attr("Include_self"):     # add onto zeros
            x = write_at.write(place, x, at, arrays.full(index_shape, 0, x.dtype, x), False)
        ctx.set_output("Result", write_at.write(place, x, at, value,
                                                accumulate=not _assigns(ctx)))
    return run


def _put_along_axis_grad(place):
    """dInput: dOut, 0 where a value was assigned (or added onto zeros); dValue: dOut at
    each value's position (summed over its broadcast)."""
    def run(ctx):
        dout = ctx.input("Result@GRAD")
        positions, index_shape = _along_positions(ctx, int_shape(dout))
        at = write_at.positions_on(ctx, positions)
        kept = not _assigns(ctx) and ctx.attr("Include_self")
        if ctx.has_output("Input@GRAD"):
            ctx.set_output("Input@GRAD", write_at.x_grad(place, dout, at, kept, dout.shape))
        if ctx.has_output("Value@GRAD"):
            ctx.set_output("Value@GRAD", write_at.values_grad(
                place, dout, at, index_shape, int_shape(ctx.input("Value"))))
    return run


_BROADCAST_VALUE = "its operands broadcast: Value is broadcast to Index's shape"


def _lowered_put_along_axis(info):
    """Value of Index's shape (a broadcast one stays in the interpreter)."""
    if not _addable(info, "Input", "Value") or info.attr("Reduce") not in REDUCTIONS:
        return None
    if info.shape("Value") != info.shape("Index"):
        return _BROADCAST_VALUE
    return Call(INDEXING.put_along_of, ("Input", "Index", "Value"), ("Result",),
                (info.attr("Axis") % info.ndim("Input"), info.attr("Reduce") == "assign",
                 info.attr("Include_self")))


def _lowered_put_along_axis_grad(info):
    """dInput: a copy of dOut where the values were added onto Input, else dOut zeroed
    at the positions written; dValue: dOut at the positions."""
    if not _addable(info, "Result@GRAD", "Input") or \
            info.attr("Reduce") not in REDUCTIONS:
        return None
    if info.shape("Value") != info.shape("Index"):
        return _BROADCAST_VALUE
    axis = info.attr("Axis") % info.ndim("Input")
    calls = []
    if info.has_output("Input@GRAD"):
        kept = info.attr("Reduce") == "add" and info.attr("Include_self")
        calls.append(Call(copied, ("Result@GRAD",), ("Input@GRAD",)) if kept else
                     Call(INDEXING.along_zeroed, ("Result@GRAD", "Index"), ("Input@GRAD",),
                          (axis,)))
    if info.has_output("Value@GRAD"):
        calls.append(Call(INDEXING.taken_along, ("Result@GRAD", "Index"), ("Value@GRAD",),
                          (axis,)))
    return tuple(calls) or None


register(OpDef(
    "put_along_axis",
    [Slot("Input", "the tensor written into"),
     Slot("Index", "positions along Axis (Input's rank)"),
     Slot("Value", "the values (broadcast to Index's shape)")],
    [Slot("Result", "Input with the values put in")],
    [Attr("Axis", A.INT, 0, "the axis Index counts along"),
     Attr("Reduce", A.STRING, "assign", "assign: replace; add: add the values"),
     Attr("Include_self", A.BOOLEAN, True, "with add: add onto Input (False: onto zeros)")],
    comment="Result = Input; Result[.., Index[i..], ..] = (or +=) Value[i..] along Axis.",
    infer_shape=_put_along_axis_infer, check_attrs=_check_reduce,
    kernels={"cpu": _put_along_axis(CPU), "cuda": _put_along_axis(CUDA)},
    lowered=_lowered_put_along_axis,
    grad=Grad(reads=["Input", "Index", "Value", "Result"], writes=["Input", "Value"],
              kernel=_put_along_axis_grad(CPU), cuda_kernel=_put_along_axis_grad(CUDA),
              lowered=_lowered_put_along_axis_grad)))
