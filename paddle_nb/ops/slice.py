"""Parts of a tensor: slice, strided_slice and flip (Fluid's slots and attributes, as
``paddle.slice``, ``x[::2]`` and ``paddle.flip`` save them), and their gradients.

Each is a copy through one index map per axis (the places' ``gather_maps``; on the
device kernels/cuda/axis_maps.py): output position o along an axis reads X at
``map[o]``. The attributes say what each map is, after Paddle's rules for negative and
out-of-range bounds (``slice_range``, ``strided_range``); the gradient puts dOut back
through the same maps into zeros (``scatter_maps``). flip's gradient is a flip, as in
Paddle. Bounds may also come as tensors, read at run time (``StartsTensor``: one int per
axis; ``StartsTensorList``: a 1-element tensor per axis), as Paddle saves ``x[:, t]``
inside a loop (nn.RNN does): ``ctx.attr("starts")`` is then their value
(core/attr_tensors.py), and shape inference at build time leaves those axes' sizes unknown.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad, GradOp, grad_name
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import axis_maps as KA
from ..kernels.cpu import layout as KL
from ..kernels.cpu.layout import sliced, sliced_grad
from ..kernels.lowered import Call, reads_attribute_tensors
from .common import OUT, X, build_fail, numba_holds, run_fail
from ..backends import CPU, CUDA

INPUT = Slot("Input", "the tensor to take a part of")
BOUND_SLOTS = ("StartsTensor", "EndsTensor", "StartsTensorList", "EndsTensorList")
STRIDE_SLOTS = ("StridesTensor", "StridesTensorList")
# attribute -> (its tensor slot, its list-of-tensors slot)
TENSOR_BOUNDS = {"starts": ("StartsTensor", "StartsTensorList"),
                 "ends": ("EndsTensor", "EndsTensorList"),
                 "strides": ("StridesTensor", "StridesTensorList")}


def slice_range(start: int, end: int, n: int, fail) -> range:
    """Paddle's slice bounds on an axis of n: a negative bound counts from the end, both
    are clamped into [0, n], and an end before the start is an error (as in Paddle)."""
    s = min(max(start + n if start < 0 else start, 0), n)
    e = min(max(end + n if end < 0 else end, 0), n)
    if e < s:
        fail("the end comes before the start", expected="end >= start (after negative "
             "bounds count from the end)", given=f"start={start}, end={end} on a dim of {n}")
    return range(s, e)


def strided_range(start: int, end: int, stride: int, n: int, fail) -> range:
    """Paddle's strided_slice bounds: negative bounds count from the end (clamped at 0),
    except ``end = -1`` with a negative stride, which runs through index 0 (Python's
    ``None``); a start past the end of the axis is clamped to it, as Python's slices."""
    if stride == 0:
        fail("a stride of 0 never moves", expected="stride != 0", given="stride=0")
    s = max(start + n, 0) if start < 0 else start
    e = max(end + n, 0) if end < 0 and not (end == -1 and stride < 0) else end
    if (stride > 0 and s > e) or (stride < 0 and s < e):
        fail("start and end are the wrong way round for the stride",
             expected="start <= end for a positive stride, start >= end for a negative one",
             given=f"start={start}, end={end}, stride={stride} on a dim of {n}")
    if stride > 0:
        return range(min(s, n), min(e, n), stride)
    return range(min(s, n - 1), e, stride)


# --- slice / strided_slice ----------------------------------------------------------------------
def _ranges(shape, attrs: dict, strided: bool, fail) -> dict:
    """{axis: its range} for the sliced axes of a tensor of ``shape`` (None for a dim not
    known yet), after checking the attributes against each other and the rank."""
    axes, starts, ends = attrs["axes"], attrs["starts"], attrs["ends"]
    strides = attrs["strides"] if strided else [1] * len(axes)
    rank = len(shape)
    if rank == 0:
        fail("a 0-d tensor has no axis to slice", expected="rank >= 1", given="shape []")
    for name, values in (("starts", starts), ("ends", ends), ("strides", strides)):
        if len(values) != len(axes):
            fail(f"{name} needs one entry per axis", expected=f"{len(axes)} entries (axes="
                 f"{list(axes)})", given=f"{name}={list(values)}")
    flags = attrs["infer_flags"]
    if flags and (len(flags) != len(axes) or any(f not in (1, -1) for f in flags)):
        fail("infer_flags holds 1 per axis (-1 where a bound is a tensor)",
             expected=f"[] or {len(axes)} entries of 1 or -1",
             given=f"infer_flags={list(flags)}")
    unknown = set(attrs.get("unknown", ()))
    out = {}
    for a, s, e, k in zip(axes, starts, ends, strides):
        if not 0 <= a < rank:
            fail(f"axis {a} is out of range (paddle.slice makes negative axes positive "
                 "before it saves the op)", expected=f"axes in [0, {rank - 1}]",
                 given=f"axes={list(axes)} for a rank-{rank} Input")
        if a in out:
            fail(f"axis {a} is listed twice", expected="each axis once",
                 given=f"axes={list(axes)}")
        n = shape[a]
        out[a] = None if n < 0 or a in unknown else (
            strided_range(s, e, k, n, fail) if strided else slice_range(s, e, n, fail))
    return out


def _decreased(full, decrease, fail) -> list:
    """``full`` (the sliced dims) without the ``decrease_axis`` dims, each of which must be
    1 (Paddle's rule); all of them gone: a 0-d tensor, as Paddle 2.5+."""
    rank = len(full)
    for a in decrease:
        if not 0 <= a < rank:
            fail(f"decrease_axis {a} is out of range", expected=f"axes in [0, {rank - 1}]",
                 given=f"decrease_axis={list(decrease)}")
        if full[a] >= 0 and full[a] != 1:
            fail(f"decrease_axis {a} drops a dim of {full[a]}", expected="a dim of 1 there",
                 given=f"decrease_axis={list(decrease)}, sliced dims {full}")
    if len(set(decrease)) != len(decrease):
        fail("decrease_axis lists an axis twice", given=f"decrease_axis={list(decrease)}")
    return [d for i, d in enumerate(full) if i not in decrease]


def _attrs(ctx, strided: bool) -> dict:
    """The bounds attributes; where tensors give starts, ends or strides, their values now
    (ctx.attr, core/attr_tensors.py)."""
    names = ["axes", "starts", "ends", "infer_flags", "decrease_axis"]
    return {n: list(ctx.attr(n) or []) for n in names + (["strides"] if strided else [])}


def _tensor_bound_attrs(ctx, strided: bool) -> list:
    """The attributes (starts, ends, strides) that tensors give, unknown at build time."""
    return [name for name in TENSOR_BOUNDS
            if (strided or name != "strides") and ctx.attr_from_tensor(name)]


def _run_time_attrs(ctx, strided: bool, fail) -> dict:
    """The attributes with the bounds the tensor inputs hold now: one per axis."""
    attrs = _attrs(ctx, strided)
    for name, slots in TENSOR_BOUNDS.items():
        given_by = [slot for slot in slots if ctx.has_input(slot)]
        if given_by and (strided or name != "strides") and \
                len(attrs[name]) != len(attrs["axes"]):
            fail(f"{given_by[0]} must hold one int per axis",
                 expected=f"{len(attrs['axes'])} ints", given=f"{attrs[name]}")
    return attrs


def _slice_infer(strided: bool):
    def infer(ctx):
        fail = build_fail(ctx, "Input")
        shape = ctx.shape("Input")
        attrs = _attrs(ctx, strided)
        if _tensor_bound_attrs(ctx, strided):     # sizes known at run time only
            attrs["unknown"] = attrs["axes"]
            for name in _tensor_bound_attrs(ctx, strided):
                attrs[name] = attrs[name] or [0] * len(attrs["axes"])
        full = list(shape)
        for a, r in _ranges(shape, attrs, strided, fail).items():
            full[a] = -1 if r is None else len(r)
        ctx.set_output("Out", _decreased(full, attrs["decrease_axis"], fail),
                       ctx.dtype("Input"))
    return infer


def _maps(ctx, shape, strided: bool, op_type: str) -> list:
    """One int64 map per axis of Input: the sliced positions, or every position."""
    fail = run_fail(op_type)
    ranges = _ranges(shape, _run_time_attrs(ctx, strided, fail), strided, fail)
    maps = []
    for a, n in enumerate(shape):
        r = ranges.get(a, range(n))
        maps.append(np.arange(r.start, r.stop, r.step, dtype=np.int64))
    return maps


def _slice(place, strided: bool, op_type: str):
    def run(ctx):
        x = ctx.input("Input")
        shape = tuple(int(d) for d in x.shape)
        maps = _maps(ctx, shape, strided, op_type)
        out = place.gather_maps(x, maps)
        keep = _decreased([len(m) for m in maps], ctx.attr("decrease_axis") or [],
                          run_fail(op_type))
        ctx.set_output("Out", out.reshape(tuple(keep)))
    return run


def _slice_grad(place, strided: bool, op_type: str):
    """dInput: zeros with dOut (its decreased dims put back) where the slice read."""
    def run(ctx):
        x, dout = ctx.input("Input"), ctx.input("Out@GRAD")
        shape = tuple(int(d) for d in x.shape)
        maps = _maps(ctx, shape, strided, op_type)
        dout = dout.reshape(tuple(len(m) for m in maps))
        ctx.set_output("Input@GRAD", place.scatter_maps(shape, maps, dout))
    return run


# --- in a compiled block (kernels/lowered.py): kernels/cpu/layout.sliced ----------------------
def _lowered_slice(strided: bool, op_type: str, grad: bool):
    """The part as (start, count, step) per axis (the whole axis: count -1), from the
    bounds resolved against the Input the interpreter's run saw; where tensors give
    bounds (a slice by a loop's counter: x[:, t]), read and resolved when the block runs."""
    @reads_attribute_tensors
    def lowered(info):
        if not numba_holds(info.dtype("Input")) or info.ndim("Input") == 0:
            return None
        given = [slot for slot in BOUND_SLOTS + STRIDE_SLOTS if info.has_input(slot)]
        if given:
            return _lowered_by_tensors(info, strided, grad, given)
        shape = info.shape("Input")
        attrs = _attrs(info, strided)           # (an OpInfo reads attributes as a ctx)
        ranges = _ranges(shape, attrs, strided, run_fail(op_type))
        parts = tuple((ranges[a].start, len(ranges[a]), ranges[a].step) if a in ranges
                      else (0, -1, 1) for a in range(len(shape)))
        if grad:
            return Call(sliced_grad, ("Input", "Out@GRAD"), ("Input@GRAD",), (parts,))
        kept = tuple(a not in attrs["decrease_axis"] for a in range(len(shape)))
        return Call(sliced, ("Input",), ("Out",), (parts, kept, sum(kept)))
    return lowered


def _lowered_by_tensors(info, strided: bool, grad: bool, given: list):
    """kernels/cpu/layout.sliced_by: the tensors' bounds (a list of 1-element tensors, or
    one tensor, for the starts, the ends or both), the other side's attribute."""
    starts = [s for s in given if s.startswith("Starts")]
    ends = [s for s in given if s.startswith("Ends")]
    if strided or len(starts) > 1 or len(ends) > 1 or len(starts) + len(ends) != len(given):
        return "an attribute given by a tensor: a stride, or one bound by two tensors"
    axes = tuple(info.attr("axes"))
    if starts and ends:
        reads, consts = (starts[0], ends[0]), (axes, 0)
    elif starts:
        reads, consts = (starts[0],), (tuple(info.attr("ends")), axes, 1)
    else:
        reads, consts = (ends[0],), (tuple(info.attr("starts")), axes, 2)
    if grad:
        return Call(KL.sliced_grad_by, ("Input", "Out@GRAD", *reads), ("Input@GRAD",),
                    consts)
    kept = tuple(a not in info.attr("decrease_axis") for a in range(info.ndim("Input")))
    return Call(KL.sliced_by, ("Input", *reads), ("Out",), consts + (kept, sum(kept)))


def _bounds(slots, what: str) -> list:
    return [Slot(name, f"{what} as {'1-element tensors' if name.endswith('List') else 'a tensor'}"
                 f" (read at run time, instead of the attribute)", dispensable=True,
                 duplicable=name.endswith("List")) for name in slots]


def _bound_attrs(strided: bool) -> list:
    attrs = [Attr("axes", A.INTS, [], "the axes sliced (in [0, rank))"),
             Attr("starts", A.INTS, [], "where each axis' part starts (negative: from "
                                        "the end)"),
             Attr("ends", A.INTS, [], "where each axis' part ends, exclusive (clamped to "
                                      "the dim)")]
    if strided:
        attrs.append(Attr("strides", A.INTS, [], "the step along each axis (not 0; "
                                                  "negative: backwards)"))
    return attrs + [
        Attr("infer_flags", A.INTS, [], "1 per axis (-1 marks a bound given as a tensor)"),
        Attr("decrease_axis", A.INTS, [], "sliced axes of size 1 to drop from Out")]


for _type, _strided in (("slice", False), ("strided_slice", True)):
    _slots = BOUND_SLOTS + (STRIDE_SLOTS if _strided else ())
    register(OpDef(
        _type, [INPUT, *_bounds(_slots, "bounds")], [OUT], _bound_attrs(_strided),
        comment="Out = Input[starts:ends" + (":strides" if _strided else "") +
                "] along each of axes (numpy-style bounds), decrease_axis dropped.",
        infer_shape=_slice_infer(_strided),
        kernels={"cpu": _slice(CPU, _strided, _type), "cuda": _slice(CUDA, _strided, _type)},
        lowered=_lowered_slice(_strided, _type, grad=False),
        grad=Grad(reads=["Input", *_slots], writes=["Input"],
                  kernel=_slice_grad(CPU, _strided, _type),
                  cuda_kernel=_slice_grad(CUDA, _strided, _type),
                  lowered=_lowered_slice(_strided, _type, grad=True)),
        reads_attr_tensors=_slots))


# --- flip ---------------------------------------------------------------------------------------
def _flip_axes(axes, rank: int, fail) -> set:
    seen = set()
    for a in axes:
        if not -rank <= a < rank:
            fail(f"axis {a} is out of range", expected=f"axes in [{-rank}, {rank - 1}]",
                 given=f"axis={list(axes)} for a rank-{rank} X")
        if a % rank in seen:
            fail(f"axis {a} is listed twice", expected="each axis once",
                 given=f"axis={list(axes)}")
        seen.add(a % rank)
    return seen


def _flip_infer(ctx):
    fail = build_fail(ctx, "X")
    _flip_axes(ctx.attr("axis") or [], len(ctx.shape("X")), fail)
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _flip(place):
    def run(ctx):
        x = ctx.input("X")
        shape = tuple(int(d) for d in x.shape)
        flipped = _flip_axes(ctx.attr("axis") or [], len(shape), run_fail("flip"))
        maps = [KA.axis_map(n, KA.FLIP if a in flipped else KA.KEEP, 0, 0)
                for a, n in enumerate(shape)]
        ctx.set_output("Out", place.gather_maps(x, maps))
    return run


def _lowered_flip(info):
    """X through FLIP maps along axis, KEEP maps along the others."""
    rank = info.ndim("X")
    if not numba_holds(info.dtype("X")) or rank == 0:
        return None
    flipped = _flip_axes(info.attr("axis") or [], rank, run_fail("flip"))
    return Call(KA.mapped, ("X",), ("Out",),
                (tuple((KA.FLIP if a in flipped else KA.KEEP, 0, 0) for a in range(rank)),
                 0, rank))


def _flip_grad(op, no_grad):
    """The gradient of a flip is the same flip of dOut (Paddle appends a ``flip`` op)."""
    if op.input("X")[0] in no_grad:
        return []
    return [GradOp("flip", {"X": [grad_name(op.output("Out")[0])]},
                   {"Out": [grad_name(op.input("X")[0])]},
                   {"axis": list(op.attrs.get("axis") or [])})]


register(OpDef(
    "flip", [X], [OUT], [Attr("axis", A.INTS, [], "the axes to reverse")],
    comment="Out = X reversed along each of axis.", infer_shape=_flip_infer,
    kernels={"cpu": _flip(CPU), "cuda": _flip(CUDA)}, lowered=_lowered_flip,
    grad=_flip_grad))
