"""set_value: a copy of Input with a strided part of it replaced, and its gradient
(Fluid's slots and attributes, as Paddle 2.6.2 saves ``x[1:3, ::2] = v`` in static mode,
``paddle.static.setitem``, and the APIs built on it: select_scatter, vander,
householder_product).

The part is the one ``x[starts:ends:steps]`` reads on ``axes`` (every index of the other
axes), with Paddle's bounds rules: those of strided_slice (``ops/slice.py``:
``strided_range``), except that with a negative step an end before ``-n`` still runs
through index 0 (``set_value_range``). The new values are ``ValueTensor`` or, without it,
the constants ``values`` (Scalars) of ``shape``, converted to Input's element type. They
are broadcast, numpy's way, to the part's shape as the user's code sees it: without the
``decrease_axes`` (an integer index, ``x[1] = v``), with a 1 at each of ``none_axes``
(``x[None, 1:2] = v``). Bounds may come as tensors at run time (``StartsTensorList``,
``EndsTensorList``, ``StepsTensorList``: one one-element tensor per axis), which
``ctx.attr`` reads (core/attr_tensors.py).

The part's positions come from the attributes alone, so both places compute them on the
host and write through the shared primitive (ops/write_at.py). set_value_grad, as Paddle's,
gives Input@GRAD (dOut, 0 on the part: it was overwritten) and ValueTensor@GRAD (dOut on
the part, summed over the axes the value was broadcast along).

In a compiled block set_value and the Input@GRAD of its gradient are kernels/cpu/
set_value.py's loops, the part worked out there from the run's shape by these rules
(ValueTensor@GRAD summed back by numpy there, as here).
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import set_value as KV
from ..kernels.lowered import Call
from . import arrays, write_at
from ..backends import CPU, CUDA
from .common import build_fail, run_fail
from .slice import _decreased, strided_range

# the element types this set_value takes (Paddle's kernels: these and complex, float16)
SETTABLE = ("bool", "int32", "int64", "float32", "float64")
BOUND_TENSORS = ("StartsTensorList", "EndsTensorList", "StepsTensorList")


def set_value_range(start: int, end: int, step: int, n: int, fail) -> range:
    """The indices ``start:end:step`` writes on an axis of ``n`` (Paddle's set_value rule).
    strided_range's, after two adjustments set_value makes and strided_slice does not: a
    start or end past the axis is clamped to it first (``x[5:3] = v`` on 3 rows writes
    nothing), and with a negative step an end before ``-n`` means "through index 0"."""
    if n == 0:
        return range(0)
    if step > 0:
        start, end = (min(start, n) if start >= 0 else start), (min(end, n) if end >= 0
                                                                  else end)
    elif step < 0 and end < -1 and end + n < 0:
        end = -1                                  # strided_range's "through index 0"
    return strided_range(start, end, step, n, fail)


def _with_none_axes(decreased: list, decrease: list, none_axes: list, rank: int) -> list:
    """The part's shape as the value sees it: each ``none_axes`` entry counts positions
    among the original axes, and puts a 1 before the axis it names (Paddle's rule)."""
    if not none_axes:
        return decreased
    full_index = [i for i in range(rank) if i not in decrease]
    out, pending = [], sorted(none_axes)
    for d, i in zip(decreased, full_index):
        while pending and pending[0] <= i:
            out.append(1)
            pending.pop(0)
        out.append(d)
    return out + [1] * len(pending)


def _part(shape, attrs: dict, fail):
    """({axis: range} of the written part, the value's target shape); None for a range
    or a dim not known yet."""
    axes, starts, ends = attrs["axes"], attrs["starts"], attrs["ends"]
    steps = attrs["steps"] or [1] * len(axes)
    rank = len(shape)
    for name, values in (("starts", starts), ("ends", ends), ("steps", steps)):
        if len(values) != len(axes):
            fail(f"{name} needs one entry per axis", expected=f"{len(axes)} entries (axes="
                 f"{list(axes)})", given=f"{name}={list(values)}")
    ranges = {}
    for a, s, e, k in zip(axes, starts, ends, steps):
        if not 0 <= a < rank:
            fail(f"axis {a} is out of range", expected=f"axes in [0, {rank - 1}]",
                 given=f"axes={list(axes)} for a rank-{rank} Input")
        if a in ranges:
            fail(f"axis {a} is listed twice", expected="each axis once",
                 given=f"axes={list(axes)}")
        if k == 0:
            fail("a step of 0 never moves", expected="steps != 0", given=f"steps={steps}")
        n = shape[a]
        ranges[a] = None if n < 0 or attrs.get("unknown") else \
            set_value_range(s, e, k, n, fail)
    full = [(-1 if ranges[i] is None else len(ranges[i])) if i in ranges else d
            for i, d in enumerate(shape)]
    decrease = list(attrs["decrease_axes"])
    none_axes = list(attrs["none_axes"])
    for a in none_axes:
        if not 0 <= a <= rank:
            fail(f"none_axes entry {a} is out of range", expected=f"entries in [0, {rank}]",
                 given=f"none_axes={none_axes}")
    target = _with_none_axes(_decreased(full, decrease, fail), decrease, none_axes, rank)
    return ranges, target


def _attrs(ctx) -> dict:
    names = ("axes", "starts", "ends", "steps", "decrease_axes", "none_axes")
    return {n: [int(v) for v in ctx.attr(n) or []] for n in names}


def _fits_broadcast(value_shape, target) -> bool:
    """numpy's rule: ``value_shape`` broadcasts to ``target`` (-1: not known, fits)."""
    value_shape = list(value_shape)
    while len(value_shape) > len(target) and value_shape[0] == 1:
        value_shape.pop(0)                       # leading 1s of a longer value drop
    if len(value_shape) > len(target):
        return False
    return all(v in (1, t) or v < 0 or t < 0
               for v, t in zip(reversed(value_shape), reversed(target)))


def _value_shape(ctx) -> list:
    if ctx.has_input("ValueTensor"):
        return list(ctx.shape("ValueTensor"))
    return [int(d) for d in ctx.attr("shape") or []]


def _check(ctx, shape):
    """The rule both directions share, over Input's shape (the gradient: dOut's)."""
    fail = build_fail(ctx, "Input")
    attrs = _attrs(ctx)
    attrs["unknown"] = any(ctx.attr_from_tensor(n) for n in ("starts", "ends", "steps"))
    for name in ("starts", "ends", "steps"):
        if ctx.attr_from_tensor(name):          # one tensor per axis, values known later
            attrs[name] = [1] * len(attrs["axes"])
    _, target = _part(shape, attrs, fail)
    value = _value_shape(ctx)
    if not ctx.has_input("ValueTensor"):
        count = len(ctx.attr("values") or [])
        if any(d < 0 for d in value) or count != write_at.numel(value):
            ctx.fail(f"without ValueTensor, values holds the constants of shape {value}",
                     expected=f"{write_at.numel(value)} values", given=f"{count} values")
    if not _fits_broadcast(value, target):
        ctx.fail("the value must broadcast to the part it replaces",
                 slot="ValueTensor" if ctx.has_input("ValueTensor") else None,
                 expected=f"a shape that broadcasts to {target}", given=f"shape {value}")


def _set_value_infer(ctx):
    if dtypes.name(ctx.dtype("Input")) not in SETTABLE:
        ctx.fail("set_value takes bool, int32, int64, float32 or float64 elements",
                 slot="Input", expected="one of those", given=ctx.describe_input("Input"))
    if ctx.has_input("ValueTensor"):
        ctx.require_same_dtype("ValueTensor", "Input")
    _check(ctx, ctx.shape("Input"))
    ctx.set_output("Out", ctx.shape("Input"), ctx.dtype("Input"))


def _positions(ctx, shape, op_type: str):
    """The flat positions of the part in a tensor of ``shape`` (row-major, in the order
    the value's elements go), and the value's target shape."""
    ranges, target = _part(list(shape), _attrs(ctx), run_fail(op_type))
    if not shape:                                 # a 0-d Input: the part is all of it
        return np.zeros(1, np.int64), target
    maps = [np.asarray(ranges[a] if a in ranges else range(n), np.int64)
            for a, n in enumerate(shape)]
    grid = np.ravel_multi_index(np.ix_(*maps), tuple(shape)) if all(len(m) for m in maps) \
        else np.zeros(0, np.int64)
    return np.ascontiguousarray(grid, np.int64).reshape(-1), target


def _value(ctx, x):
    """ValueTensor, or the ``values`` constants shaped ``shape``, in Input's dtype."""
    if ctx.has_input("ValueTensor"):
        return arrays.astype(ctx.input("ValueTensor"), x.dtype)
    constants = np.asarray(ctx.attr("values") or [], dtype=x.dtype)
    return arrays.to_place(ctx.place, constants.reshape(_value_shape(ctx)))


def _set_value(place):
    def run(ctx):
        x = ctx.input("Input")
        positions, target = _positions(ctx, tuple(int(d) for d in x.shape), "set_value")
        value = _value(ctx, x)
        if len(value.shape) > len(target):      # a longer value's leading dims are 1s
            value = value.reshape(tuple(int(d) for d in value.shape)[-len(target):]
                                  if target else ())
        spread = place.broadcast_to(value, tuple(target))
        ctx.set_output("Out", write_at.write(place, x, write_at.positions_on(ctx, positions),
                                             spread, accumulate=False))
    return run


def _set_value_grad(place):
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        positions, target = _positions(ctx, tuple(int(d) for d in dout.shape),
                                       "set_value_grad")
        at = write_at.positions_on(ctx, positions)
        if ctx.has_output("Input@GRAD"):
            ctx.set_output("Input@GRAD", write_at.x_grad(place, dout, at, False, dout.shape))
        if ctx.has_output("ValueTensor@GRAD"):
            value = ctx.input("ValueTensor")
            grad = write_at.values_grad(place, arrays.astype(dout, value.dtype), at, target,
                                        tuple(int(d) for d in value.shape))
            ctx.set_output("ValueTensor@GRAD", grad)
    return run


def _set_value_grad_infer(ctx):
    """Input@GRAD has dOut's shape (Paddle's gradient op does not read Input; this
    package's backward gives it, to check dOut against); the part must fit dOut."""
    write_at.check_gradient(ctx, "Input", "Out@GRAD")
    if ctx.has_value("Out@GRAD"):
        _check(ctx, ctx.shape("Out@GRAD"))
        if ctx.has_output("Input@GRAD"):
            ctx.set_output("Input@GRAD", ctx.shape("Out@GRAD"), ctx.dtype("Out@GRAD"))
    if ctx.has_output("ValueTensor@GRAD") and ctx.has_input("ValueTensor"):
        ctx.set_output("ValueTensor@GRAD", ctx.shape("ValueTensor"), ctx.dtype("ValueTensor"))


# --- inside a compiled block (kernels/lowered.py) ------------------------------------------
def _led(values) -> tuple:
    """A list attribute as a tuple led by -1 (kernels/cpu/set_value.py)."""
    return (-1,) + tuple(int(v) for v in values or [])


def _part_consts(info) -> tuple:
    """(axes, starts, ends, steps, decrease_axes, none_axes), each led by -1."""
    axes = info.attr("axes") or []
    steps = info.attr("steps") or [1] * len(axes)
    return (_led(axes), _led(info.attr("starts")), _led(info.attr("ends")), _led(steps),
            _led(info.attr("decrease_axes")), _led(info.attr("none_axes")))


def _lowered(info):
    dtype = info.dtype("Input")
    if dtype.name not in SETTABLE or info.ndim("Input") == 0:
        return None
    if info.has_input("ValueTensor"):
        if info.dtype("ValueTensor") != dtype:
            return None
        return Call(KV.value_set, ("Input", "ValueTensor"), ("Out",), _part_consts(info))
    values = info.attr("values") or []
    if not values:                     # (numba has no item type for an empty tuple)
        return None
    constants = tuple(np.asarray(values, dtype=dtype).tolist())   # as the kernel converts
    return Call(KV.constants_set, ("Input",), ("Out",),
                (constants, _led(info.attr("shape"))) + _part_consts(info))


def _lowered_grad(info):
    dtype = info.dtype("Out@GRAD")
    if dtype.name not in SETTABLE or info.ndim("Out@GRAD") == 0:
        return None
    if not info.has_input("ValueTensor"):
        return Call(KV.part_zeroed, ("Out@GRAD",), ("Input@GRAD",), _part_consts(info))
    if info.dtype("ValueTensor") != dtype:
        return None
    return Call(KV.part_grads, ("Out@GRAD", "ValueTensor"), ("Input@GRAD", "ValueTensor@GRAD"),
                _part_consts(info) + (info.has_output("Input@GRAD"),
                                      info.has_output("ValueTensor@GRAD")))


def _bound_list(name: str, what: str) -> Slot:
    return Slot(name, f"{what} as one 1-element int tensor per axis (read at run time, "
                      "instead of the attribute)", dispensable=True, duplicable=True)


register(OpDef(
    "set_value",
    [Slot("Input", "the tensor a part of which is replaced"),
     Slot("ValueTensor", "the new values (broadcast to the part); without it: values",
          dispensable=True),
     _bound_list("StartsTensorList", "starts"), _bound_list("EndsTensorList", "ends"),
     _bound_list("StepsTensorList", "steps")],
    [Slot("Out", "Input with the part replaced")],
    [Attr("dtype", A.INT, 5, "VarType code of the values' element type (Input's is used)"),
     Attr("axes", A.LONGS, [], "the axes starts, ends and steps apply to"),
     Attr("starts", A.LONGS, [], "where the part starts on each axis (negative: from "
          "the end)"),
     Attr("ends", A.LONGS, [], "where it ends on each axis (exclusive)"),
     Attr("steps", A.LONGS, [], "the stride on each axis (negative: backwards; [] all 1)"),
     Attr("decrease_axes", A.LONGS, [], "axes indexed by an integer: the value has no "
          "such axis"),
     Attr("none_axes", A.LONGS, [], "where the value has an extra axis of 1 (None in "
          "the index)"),
     Attr("values", A.SCALARS, [], "the constants written where ValueTensor is not given"),
     Attr("shape", A.LONGS, [], "the shape of values")],
    comment="Out = Input with Input[starts:ends:steps on axes] = ValueTensor (or values), "
            "broadcast.",
    infer_shape=_set_value_infer, kernels={"cpu": _set_value(CPU), "cuda": _set_value(CUDA)},
    lowered=_lowered,
    grad=Grad(reads=["Input", "ValueTensor", *BOUND_TENSORS], optional=("Input",),
              writes=["Input", "ValueTensor"],
              kernel=_set_value_grad(CPU), cuda_kernel=_set_value_grad(CUDA),
              infer_shape=_set_value_grad_infer, lowered=_lowered_grad),
    reads_attr_tensors=BOUND_TENSORS))
