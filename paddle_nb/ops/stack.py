"""Tensors made of copies of others: stack, unstack, expand_v2, expand_as_v2, tile (Fluid's
slots and attributes, as ``paddle.stack`` ... ``paddle.tile`` save them).

Each kernel is one function for both places over arrays.py (stack, split) and the places'
``broadcast_to`` / ``sum_axes``. Their gradients undo the copying: unstack and stack are
each other's, and the gradient of a broadcast (expand_v2, tile) sums the copies back.
Shapes and repeat counts given as tensors (``Shape``, ``RepeatTimes``...) are read as
the attributes (core/attr_tensors.py): ``ctx.attr("shape")`` is the tensor's value.
"""
from __future__ import annotations

import math

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.infer_shape import numel
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import axis_maps as KA
from ..kernels.cpu.layout import (broadcast_copy, broadcast_like, split_parts, stacked,
                                  summed_back, tiled_grad)
from ..kernels.cpu.reduce import MIN_PARALLEL_SUM
from ..kernels.lowered import Call
from . import arrays
from .common import (FLOAT_TYPES, OUT, X, attr_tensor_slots, build_fail, numba_holds,
                     one_dtype, run_fail)
from ..backends import CPU, CUDA

Y_LIST = Slot("Y", "the pieces", duplicable=True)


def _axis_in(ctx, axis: int, rank: int) -> int:
    if not -rank <= axis < rank:
        ctx.fail(f"axis {axis} is out of range", slot="X",
                 expected=f"axis in [{-rank}, {rank - 1}]", given=f"axis={axis}")
    return axis % rank


# --- stack / unstack ----------------------------------------------------------------------------
def _stack_infer(ctx):
    shapes = ctx.shapes("X")
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != len(shapes[0]) or any(a >= 0 and b >= 0 and a != b
                                           for a, b in zip(s, shapes[0])):
            ctx.fail("every input of stack must have the same shape", slot="X",
                     expected=str(shapes[0]), given=ctx.describe_input("X", i))
        if ctx.dtype("X", i) != ctx.dtype("X"):        # no silent promotion
            ctx.fail("every input of stack must have the same element type", slot="X",
                     expected=ctx.describe_input("X"), given=ctx.describe_input("X", i))
    axis = _axis_in(ctx, ctx.attr("axis"), len(shapes[0]) + 1)
    out = list(shapes[0])
    out.insert(axis, len(shapes))
    ctx.set_output("Y", out, ctx.dtype("X"))


def _stack(ctx):
    xs = ctx.inputs("X")
    ctx.set_output("Y", arrays.stack(xs, ctx.attr("axis") % (xs[0].ndim + 1)))


def lowered_stacking(slot_in: str, slot_out: str):
    """The lowered form of an op whose output is its inputs stacked along a new ``axis``
    (stack, unstack's gradient): np.stack of inputs of one dtype numba holds."""
    def lowered(info):
        dtype = one_dtype(info, slot_in)
        if dtype is None or not numba_holds(dtype):
            return None
        return Call(stacked, (slot_in,), (slot_out,),
                    (info.attr("axis") % (info.ndim(slot_in) + 1),))
    return lowered


def lowered_slices(slot_in: str, slot_out: str):
    """The lowered form of an op whose outputs are X's slices along ``axis``, that axis
    dropped (unstack, unbind, stack's gradient): equal pieces of 1."""
    def lowered(info):
        rank = info.ndim(slot_in)
        if not numba_holds(info.dtype(slot_in)) or rank < 2:
            return None
        return Call(split_parts, (slot_in,), (slot_out,),
                    (info.attr("axis") % rank, (0,), len(info.pop.outputs[slot_out]), rank - 1))
    return lowered


def _pieces(value, axis: int) -> list:
    """``value`` cut into its slices along ``axis``, that axis dropped from each."""
    shape = tuple(d for i, d in enumerate(value.shape) if i != axis)
    return [p.reshape(shape) for p in arrays.split(value, [1] * value.shape[axis], axis)]


def _stack_grad(ctx):
    dy = ctx.input("Y@GRAD")
    ctx.set_outputs("X@GRAD", _pieces(dy, ctx.attr("axis") % dy.ndim))


def _stack_grad_infer(ctx):
    """Each X@GRAD is a slice of Y@GRAD along axis. Given X (this package's backward),
    Y@GRAD must be X's stack; Paddle's stack_grad reads no X, and then Y@GRAD says."""
    ys = ctx.shape("Y@GRAD")
    if ctx.has_input("X") and all(ctx.has_value("X", i)
                                  for i in range(len(ctx.input_names("X")))):
        xs = ctx.shapes("X")
        want = list(xs[0])
        want.insert(_axis_in(ctx, ctx.attr("axis"), len(want) + 1), len(xs))
        ctx.require_gradient_fits("Y", want=want)
        ys = want
    axis = _axis_in(ctx, ctx.attr("axis"), len(ys))
    if ys[axis] >= 0 and ys[axis] != len(ctx.output_names("X@GRAD")):
        ctx.fail("Y@GRAD must hold one slice per input", slot="Y@GRAD",
                 expected=f"{len(ctx.output_names('X@GRAD'))} along axis {axis}",
                 given=ctx.describe_input("Y@GRAD"))
    for i in range(len(ctx.output_names("X@GRAD"))):
        ctx.set_output("X@GRAD", [d for j, d in enumerate(ys) if j != axis],
                       ctx.dtype("Y@GRAD"), i=i)


register(OpDef(
    "stack", [Slot("X", "the tensors to stack", duplicable=True)], [Slot("Y", "the stack")],
    [Attr("axis", A.INT, 0, "the new axis")],
    comment="Y = the inputs stacked along a new axis.", infer_shape=_stack_infer,
    kernels={"cpu": _stack, "cuda": _stack}, lowered=lowered_stacking("X", "Y"),
    grad=Grad(reads=["X"], optional=("X",), grads_of=["Y"], writes=["X"],
              kernel=_stack_grad, cuda_kernel=_stack_grad, infer_shape=_stack_grad_infer,
              lowered=lowered_slices("Y@GRAD", "X@GRAD"))))


def set_slice_outputs(ctx, slot: str, xs, axis: int) -> None:
    """Each output of ``slot`` one slice of X (shape ``xs``) along ``axis``: X's shape
    without that axis (unstack, unbind)."""
    piece = [d for i, d in enumerate(xs) if i != axis]
    for i in range(len(ctx.output_names(slot))):
        ctx.set_output(slot, piece, ctx.dtype("X"), i=i)


def _unstack_infer(ctx):
    xs = ctx.shape("X")
    axis = _axis_in(ctx, ctx.attr("axis"), len(xs))
    n = len(ctx.output_names("Y"))
    if xs[axis] >= 0 and xs[axis] != n:
        ctx.fail("unstack makes one output per slice", slot="X",
                 expected=f"{xs[axis]} outputs (num={xs[axis]})", given=f"{n} outputs")
    set_slice_outputs(ctx, "Y", xs, axis)


def _unstack(ctx):
    x = ctx.input("X")
    ctx.set_outputs("Y", _pieces(x, ctx.attr("axis") % x.ndim))


def _unstack_grad(ctx):
    dys = ctx.inputs("Y@GRAD")
    ctx.set_output("X@GRAD", arrays.stack(dys, ctx.attr("axis") % (dys[0].ndim + 1)))


def _unstack_grad_infer(ctx):
    """X@GRAD is the Y@GRADs stacked along axis; given X (this package's backward), each
    Y@GRAD must be one of its slices (Paddle's unstack_grad reads no X)."""
    shapes = ctx.shapes("Y@GRAD")
    if ctx.has_input("X") and ctx.has_value("X"):
        xs = ctx.shape("X")
        axis = _axis_in(ctx, ctx.attr("axis"), len(xs))
        piece = [d for j, d in enumerate(xs) if j != axis]
        for i in range(len(shapes)):
            ctx.require_gradient_fits("Y", i, want=piece)
        ctx.set_output("X@GRAD", xs, ctx.dtype("Y@GRAD"))
        return
    for i, s in enumerate(shapes[1:], 1):
        if s != shapes[0]:
            ctx.fail("every Y@GRAD must have the same shape", slot="Y@GRAD",
                     expected=str(shapes[0]), given=ctx.describe_input("Y@GRAD", i))
    out = list(shapes[0])
    out.insert(_axis_in(ctx, ctx.attr("axis"), len(out) + 1), len(shapes))
    ctx.set_output("X@GRAD", out, ctx.dtype("Y@GRAD"))


register(OpDef(
    "unstack", [X], [Y_LIST],
    [Attr("axis", A.INT, 0, "the axis to cut along"),
     Attr("num", A.INT, 0, "how many slices (X's size along axis)")],
    comment="Y = X's slices along axis, that axis dropped.", infer_shape=_unstack_infer,
    kernels={"cpu": _unstack, "cuda": _unstack}, lowered=lowered_slices("X", "Y"),
    grad=Grad(reads=["X"], optional=("X",), grads_of=["Y"], writes=["X"],
              kernel=_unstack_grad, cuda_kernel=_unstack_grad,
              infer_shape=_unstack_grad_infer, lowered=lowered_stacking("Y@GRAD", "X@GRAD"))))


# --- expand_v2 ----------------------------------------------------------------------------------
def expanded(x_shape, shape, fail) -> list:
    """Paddle's expand_v2: ``shape`` aligned with X's dims from the end; -1 keeps X's dim,
    a dim of X that is 1 may grow, any other must equal the target."""
    if len(shape) < len(x_shape):
        fail("shape has fewer dims than X", expected=f">= {len(x_shape)} dims",
             given=f"shape={shape}")
    lead = len(shape) - len(x_shape)
    out = []
    for i, d in enumerate(shape):
        own = x_shape[i - lead] if i >= lead else 1
        if d == -1:
            if i < lead:
                fail("a -1 in shape keeps X's dim, and X has none there", given=f"shape={shape}")
            out.append(own)
        elif d < 1 or (own not in (1, d) and own >= 0):
            fail(f"X's dim {own} cannot be expanded to {d}",
                 expected="each dim of X equal to the target's, or 1", given=f"shape={shape}")
        else:
            out.append(d)
    return out


def _expand_infer(ctx):
    fail = build_fail(ctx, "X")
    if ctx.attr_from_tensor("shape"):        # known when it runs
        ctx.set_output("Out", [d if d > 0 else -1 for d in ctx.int_list_attr("shape")],
                       ctx.dtype("X"))
        return
    ctx.set_output("Out", expanded(ctx.shape("X"), ctx.attr("shape"), fail), ctx.dtype("X"))


def _grown(place, x, shape):
    """x broadcast to ``shape`` (checked by ``expanded``), its dims aligned at the end."""
    lead = len(shape) - x.ndim
    return place.broadcast_to(x.reshape((1,) * lead + tuple(x.shape)), tuple(shape))


def _expand(place):
    def run(ctx):
        x = ctx.input("X")
        shape = expanded(list(x.shape), ctx.attr("shape"), run_fail("expand_v2"))
        ctx.set_output("Out", _grown(place, x, shape))
    return run


def broadcast_dims(x_shape, dout_shape) -> list:
    """The dims of dOut that X (its dims aligned at the end) was broadcast along: the
    leading ones, and those where X has a 1 and dOut has not."""
    lead = len(dout_shape) - len(x_shape)
    return [i for i, d in enumerate(dout_shape)
            if d != 1 and (i < lead or x_shape[i - lead] == 1)]


def _expand_grad(place):
    """dX: dOut summed over the broadcast dims (the place's ``sum_axes``: on the CPU the
    row sums of kernels/cpu/reduce.py, which the compiled form calls too)."""
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        dims = broadcast_dims(x.shape, dout.shape)
        if not dims:                         # nothing was broadcast: dOut is dX
            ctx.set_output("X@GRAD", arrays.unbroadcast(dout, x.shape, tuple(x.shape)))
            return
        summed = place.sum_axes(dout, dims, True)
        ctx.set_output("X@GRAD", summed.reshape(tuple(x.shape)))
    return run


# --- in a compiled block (kernels/lowered.py): kernels/cpu/layout.py and axis_maps.py ----------
def _lowered_expand(info):
    rank = info.ndim("Out")
    if not numba_holds(info.dtype("X")) or info.ndim("X") == 0:
        return None
    if info.pop.op_def.type == "expand_as_v2" and info.has_input("Y"):
        return Call(broadcast_like, ("X", "Y"), ("Out",))
    if info.pop.op_def.type == "expand_v2":
        shape = info.attr("shape")
    else:                                # no Y: target_shape, whole (the kernel's rule)
        shape = info.attr("target_shape")
        if not shape or any(d < 0 for d in shape):
            return None
    return Call(broadcast_copy, ("X",), ("Out",), (tuple(int(d) for d in shape), rank))


def _summed_floats(info) -> str | None:
    """Why a gradient that sums dOut's copies stays interpreted, or None: the compiled
    sums are the CPU's float row sums, serial."""
    if info.dtype("Out@GRAD").name not in FLOAT_TYPES or info.ndim("X") == 0 or \
            info.dtype("Out@GRAD") != info.dtype("X"):
        return "no lowered form for these dtypes: the compiled sums are of floats"
    if math.prod(info.shape("Out@GRAD")) >= MIN_PARALLEL_SUM:
        return "large: the interpreter splits its sums across the cores"
    return None


def _lowered_expand_grad(info):
    """dOut summed over the dims X was broadcast along (the interpreter's sum_axes), or
    copied where there are none."""
    why = _summed_floats(info)
    if why:
        return why
    dims = broadcast_dims(info.shape("X"), info.shape("Out@GRAD"))
    kept = [d for d in range(info.ndim("Out@GRAD")) if d not in dims]
    return Call(summed_back, ("X", "Out@GRAD"), ("X@GRAD",),
                (tuple(kept + dims), len(kept), info.ndim("Out@GRAD")))


register(OpDef(
    "expand_v2", [X, *attr_tensor_slots("Shape", "expand_shapes_tensor", "the shape")], [OUT],
    [Attr("shape", A.INTS, [], "the target shape (-1 keeps X's dim)")],
    comment="Out = X broadcast to shape.", infer_shape=_expand_infer,
    kernels={"cpu": _expand(CPU), "cuda": _expand(CUDA)}, lowered=_lowered_expand,
    grad=Grad(reads=["X"], writes=["X"], kernel=_expand_grad(CPU),
              cuda_kernel=_expand_grad(CUDA), lowered=_lowered_expand_grad),
    reads_attr_tensors=("Shape", "expand_shapes_tensor")))


# --- expand_as_v2 -------------------------------------------------------------------------------
def _as_target(target, y_shape) -> list:
    """Paddle's expand_as_v2 target: target_shape (Y's shape as declared when the op was
    built), or Y's real shape where that has a -1 (a batch dim) or is empty."""
    target = list(target or [])
    if y_shape is not None and (not target or -1 in target):
        return [int(d) for d in y_shape]
    return target


def _expand_as_infer(ctx):
    fail = build_fail(ctx, "X")
    xs, attr = ctx.shape("X"), list(ctx.attr("target_shape") or [])
    y = ctx.shape("Y") if ctx.has_input("Y") and ctx.has_value("Y") else None
    if any(d < -1 for d in attr):
        fail("target_shape holds a negative dim", expected="dims >= 1, or -1 for Y's",
             given=f"target_shape={attr}")
    if y is not None and attr and -1 not in attr and (
            len(y) != len(attr) or any(a >= 0 and a != b for a, b in zip(y, attr))):
        ctx.fail("Y's shape is not target_shape", slot="Y", expected=str(attr),
                 given=ctx.describe_input("Y"))
    target = _as_target(attr, y)
    if not target and y is None:
        fail("expand_as_v2 needs target_shape or Y", given="neither")
    # a dim not known yet (a -1 of Y, or of target_shape without Y): checked at run time
    lead = len(target) - len(xs)
    probe = [d if d >= 0 else (xs[i - lead] if i >= lead and xs[i - lead] >= 1 else 1)
             for i, d in enumerate(target)]
    out = expanded(xs, probe, fail)
    ctx.set_output("Out", [-1 if d < 0 else o for d, o in zip(target, out)], ctx.dtype("X"))


def _expand_as(place):
    def run(ctx):
        x, fail = ctx.input("X"), run_fail("expand_as_v2")
        y = ctx.input("Y") if ctx.has_input("Y") else None
        target = _as_target(ctx.attr("target_shape"), None if y is None else y.shape)
        if any(d < 0 for d in target):
            fail("target_shape has a -1 (a dim of Y's) and there is no Y",
                 given=f"target_shape={target}")
        ctx.set_output("Out", _grown(place, x, expanded(list(x.shape), target, fail)))
    return run


def _expand_as_grad(place):
    """expand_v2's gradient, once dOut is checked to be a broadcast of X (target_shape may
    leave its shape to Y, which the gradient op does not read)."""
    summed = _expand_grad(place)

    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        if expanded(list(x.shape), list(dout.shape), run_fail("expand_as_v2_grad")) != \
                [int(d) for d in dout.shape]:
            run_fail("expand_as_v2_grad")("Out@GRAD is not X broadcast",
                                          given=f"shape {list(dout.shape)}")
        summed(ctx)
    return run


register(OpDef(
    "expand_as_v2", [X, Slot("Y", "the tensor whose shape X takes", dispensable=True)],
    [OUT], [Attr("target_shape", A.INTS, [], "the shape to broadcast to (-1: Y's dim)")],
    comment="Out = X broadcast to target_shape (Y's shape).", infer_shape=_expand_as_infer,
    kernels={"cpu": _expand_as(CPU), "cuda": _expand_as(CUDA)}, lowered=_lowered_expand,
    grad=Grad(reads=["X"], writes=["X"], kernel=_expand_as_grad(CPU),
              cuda_kernel=_expand_as_grad(CUDA), lowered=_lowered_expand_grad)))


# --- tile ---------------------------------------------------------------------------------------
def _tiled(x_shape, reps, fail) -> tuple[list, list]:
    """(X's dims padded with leading 1s, the repeats padded the same way) to one length."""
    if any(r < 1 for r in reps):
        fail("every repeat count must be at least 1", given=f"repeat_times={reps}")
    rank = max(len(x_shape), len(reps))
    dims = [1] * (rank - len(x_shape)) + list(x_shape)
    return dims, [1] * (rank - len(reps)) + list(reps)


def _tile_infer(ctx):
    fail = build_fail(ctx, "X")
    if ctx.attr_from_tensor("repeat_times"):     # known when it runs
        reps = ctx.int_list_attr("repeat_times")
        ctx.set_output("Out", [-1] * max(len(reps), len(ctx.shape("X"))), ctx.dtype("X"))
        return
    dims, reps = _tiled(ctx.shape("X"), ctx.attr("repeat_times"), fail)
    ctx.set_output("Out", [d * r if d >= 0 else -1 for d, r in zip(dims, reps)],
                   ctx.dtype("X"))


def _tile(place):
    """X (dims d) seen as [1, d0, 1, d1, ...], broadcast to [r0, d0, r1, d1, ...], then
    merged pairwise: each dim repeated r times, as numpy's tile."""
    def run(ctx):
        x = ctx.input("X")
        dims, reps = _tiled(list(x.shape), ctx.attr("repeat_times"), run_fail("tile"))
        pairs = [v for d in dims for v in (1, d)]
        grown = [v for d, r in zip(dims, reps) for v in (r, d)]
        out = place.broadcast_to(x.reshape(tuple(pairs)), tuple(grown))
        ctx.set_output("Out", out.reshape(tuple(d * r for d, r in zip(dims, reps))))
    return run


def _tile_grad(place):
    """The copies summed back: dOut as [r0, d0, r1, d1, ...], summed over the r axes."""
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        dims, reps = _tiled(list(x.shape), ctx.attr("repeat_times"), run_fail("tile"))
        grown = tuple(v for d, r in zip(dims, reps) for v in (r, d))
        summed = place.sum_axes(dout.reshape(grown), list(range(0, len(grown), 2)), False)
        ctx.set_output("X@GRAD", summed.reshape(tuple(x.shape)) if numel(dims) else
                       arrays.zeros_like(x))
    return run


def _lowered_tile(info):
    """X seen with its dims padded to the repeats' count, copied through TILE maps."""
    if not numba_holds(info.dtype("X")) or info.ndim("X") == 0:
        return None
    reps = [int(r) for r in info.attr("repeat_times")]
    rank = info.ndim("Out")
    rules = tuple((KA.TILE, r, 0) for r in [1] * (rank - len(reps)) + reps)
    return Call(KA.tiled, ("X",), ("Out",), (rules, rank))


def _lowered_tile_grad(info):
    """dOut summed over the copies as the interpreter's sum_axes sums them."""
    why = _summed_floats(info)
    if why:
        return why
    reps = [int(r) for r in info.attr("repeat_times")]
    rank = max(len(reps), info.ndim("X"))
    order = tuple(range(1, 2 * rank, 2)) + tuple(range(0, 2 * rank, 2))
    return Call(tiled_grad, ("X", "Out@GRAD"), ("X@GRAD",),
                (tuple([1] * (rank - len(reps)) + reps), order, rank, 2 * rank))


register(OpDef(
    "tile", [X, *attr_tensor_slots("RepeatTimes", "repeat_times_tensor", "the repeats")], [OUT],
    [Attr("repeat_times", A.INTS, [], "how often X repeats along each dim")],
    comment="Out = X repeated along each dim (numpy's tile).", infer_shape=_tile_infer,
    kernels={"cpu": _tile(CPU), "cuda": _tile(CUDA)}, lowered=_lowered_tile,
    grad=Grad(reads=["X", "RepeatTimes", "repeat_times_tensor"], writes=["X"],
              kernel=_tile_grad(CPU), cuda_kernel=_tile_grad(CUDA),
              lowered=_lowered_tile_grad),
    reads_attr_tensors=("RepeatTimes", "repeat_times_tensor")))
