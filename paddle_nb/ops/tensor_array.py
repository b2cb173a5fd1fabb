"""Tensor arrays (a list of tensors in one variable, kind ``tensor_array``) and the small
counters While loops need: write_to_array, read_from_array, lod_array_length, increment,
tensor_array_to_tensor. Arrays grow as they are written; reading past the end is an error.

The kernels only move tensors (arrays.py), so each serves both places; on CUDA the index
``I`` is read on the host (one 1-element copy) and the small results (a length, sizes)
are copied to the device."""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.errors import ExecutionError
from ..core.framework_pb2 import VarType
from ..core.grad_maker import EMPTY_VAR, GradOp, grad_name, in_every_grad_block
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core import limits
from ..kernels import check
from ..kernels.cpu import fill as KF
from ..kernels.cpu import tensor_array as KT
from ..kernels.cuda import elementwise as CE
from ..kernels.lowered import Call, takes_tensor_arrays
from . import arrays
from .common import numba_holds

_I = Slot("I", "the position (an int64 tensor with one value)")


def _index(ctx, length: int, counted: str) -> int:
    """The position I holds (read on the host), checked to be below ``length``."""
    i = arrays.host(ctx.input("I"))
    if i.size != 1:
        raise ExecutionError(f"I must hold one index, got shape {list(i.shape)}")
    check.indices(i, length, slot="I", what="position", counted=counted)
    return int(i.ravel()[0])


def _array(ctx, slot="X") -> list:
    value = ctx.input_or_none(slot)
    if value is None:                  # created, never written: an empty array
        return []
    if not isinstance(value, list):
        raise ExecutionError(f"{slot} must be a tensor array, got a {type(value).__name__}")
    return value


# --- write / read ---------------------------------------------------------------------------------
def _write(ctx):
    array = ctx.output_var("Out").get_mutable("tensor_array")
    # an array grows as it is written, up to MAX_LIST_LENGTH (a position past that would
    # allocate a list of billions of entries)
    i = _index(ctx, limits.MAX_LIST_LENGTH, "an array grows up to paddle_nb.core.limits."
                                     f"MAX_LIST_LENGTH = {limits.MAX_LIST_LENGTH} positions")
    if len(array) <= i:
        array.extend([None] * (i + 1 - len(array)))
    array[i] = ctx.input("X")


def _write_infer(ctx):
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _read(ctx):
    array = _array(ctx)
    written = ctx.input_or_none("X_W")
    if written is not None:     # a gradient read: see _read_gradient
        _read_gradient(ctx, array, written)
        return
    i = _index(ctx, len(array), f"position {len(array)} and later are past the end of an "
                                f"array of length {len(array)}")
    if array[i] is None:
        raise ExecutionError(f"position {i} of an array of length {len(array)} was never "
                             f"written")
    ctx.set_output("Out", array[i])


def _read_gradient(ctx, gradients: list, written):
    """read_from_array as write_to_array's gradient (Fluid's X_W: the tensor the forward
    op wrote): X is the gradient array of the forward array, and an entry it lacks, past
    its end or never written, is one no gradient reached: its gradient is zeros shaped
    like ``written``. This is how a While's gradient runs when the loss uses only some of
    the arrays the loop wrote, e.g. paddle.nn.RNN's outputs but not its final states: the
    states' gradient array stays empty, and each step reads zeros from it."""
    i = _index(ctx, limits.MAX_LIST_LENGTH, "positions are below paddle_nb.core.limits."
                                              f"MAX_LIST_LENGTH = {limits.MAX_LIST_LENGTH}")
    if not arrays.is_tensor(written):
        raise ExecutionError(f"X_W must be the tensor write_to_array wrote, got a "
                             f"{type(written).__name__}")
    found = gradients[i] if i < len(gradients) else None
    ctx.set_output("Out", found if found is not None else arrays.zeros_like(written))


# --- compiled forms (kernels/cpu/tensor_array.py: an array is (items, filled, length)) ----
def _entries_of(info, slot: str, like: str | None = None):
    """(slot, dtype, rank) of the array in ``slot``: as learned, else (an array nothing has
    written yet) those of the tensor in slot ``like``; None if neither is known or numba
    holds no arrays of that dtype."""
    element = info.element(slot)
    if element is None and like is not None and info.has_input(like) and \
            info.dtype(like) is not None:
        element = (info.dtype(like), info.ndim(like))
    if element is None or not numba_holds(element[0]):
        return None
    return (slot, *element)


def _index_ok(info) -> bool:
    return info.dtype("I") is not None and info.dtype("I").kind in "iu"


@takes_tensor_arrays
def _lowered_write(info):
    out = _entries_of(info, "Out", like="X")
    if out is None or not _index_ok(info) or info.dtype("X") != out[1] or \
            info.ndim("X") != out[2]:
        return None
    return Call(KT.written, ("Out", "X", "I"), ("Out",), (limits.MAX_LIST_LENGTH,),
                arrays=(out,))


@takes_tensor_arrays
def _lowered_read(info):
    if not _index_ok(info):
        return None
    if info.has_input("X_W"):               # a gradient read: zeros where none arrived
        x = _entries_of(info, "X", like="X_W")
        return None if x is None else Call(KT.entry_or_zeros, ("X", "I", "X_W"), ("Out",),
                                           (limits.MAX_LIST_LENGTH,), arrays=(x,))
    x = _entries_of(info, "X")
    return None if x is None else Call(KT.entry, ("X", "I"), ("Out",), arrays=(x,))


@takes_tensor_arrays
def _lowered_length(info):
    x = _entries_of(info, "X")
    return None if x is None else Call(KT.length_of, ("X",), ("Out",), arrays=(x,))


register(OpDef(
    "write_to_array", [Slot("X", "the tensor to store"), _I], [Slot("Out", "the array")], [],
    comment="Out[I] = X (the array grows as needed).", infer_shape=_write_infer,
    kernels={"cpu": _write, "cuda": _write}, lowered=_lowered_write,
    # X_W (the tensor written): the gradient read gives zeros where no gradient arrived
    grad=lambda op, no_grad: [] if op.input("X")[0] in no_grad else [GradOp(
        "read_from_array", {"X": [grad_name(op.output("Out")[0])], "I": op.input("I"),
                            "X_W": op.input("X")},
        {"Out": [grad_name(op.input("X")[0])]})]))

register(OpDef(
    "read_from_array",
    [Slot("X", "the array"), _I,
     Slot("X_W", "as write_to_array's gradient, the tensor the forward op wrote: an entry "
                 "X lacks reads as zeros shaped like it", dispensable=True)],
    [Slot("Out", "the tensor at I")], [],
    comment="Out = X[I] (with X_W: zeros like X_W where X has no entry I).",
    infer_shape=lambda ctx: ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X")),
    kernels={"cpu": _read, "cuda": _read}, lowered=_lowered_read,
    grad=lambda op, no_grad: [] if op.input("X")[0] in no_grad else [GradOp(
        "write_to_array", {"X": [grad_name(op.output("Out")[0])], "I": op.input("I")},
        {"Out": [grad_name(op.input("X")[0])]})]))


# --- length, counters -----------------------------------------------------------------------------
def _length(ctx):
    ctx.set_output("Out", arrays.to_place(ctx.place, np.int64([len(_array(ctx))])))


register(OpDef(
    "lod_array_length", [Slot("X", "the array")], [Slot("Out", "its length (int64 [1])")], [],
    comment="Out = len(X).",
    infer_shape=lambda ctx: ctx.set_output("Out", [1], VarType.INT64),
    kernels={"cpu": _length, "cuda": _length}, lowered=_lowered_length,
    grad=NO_GRADIENT))


def _step(dtype, step: float):
    """The step in X's type: truncated toward zero for an integer X, as Paddle's
    ``static_cast<T>(step)`` (shape inference checked that it fits)."""
    return dtype.type(int(step) if dtype.kind in "iu" else step)


def _increment(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", np.asarray(x + _step(x.dtype, ctx.attr("step")), dtype=x.dtype))


def _cuda_increment(ctx):
    """The counter stays on the device: an exact integer add for integer counters, else
    X * 1 + step in X's dtype (elementwise kernels)."""
    x = ctx.input("X")
    if x.dtype.kind in "iu":
        ctx.set_output("Out", CE.add_integer(x, _step(x.dtype, ctx.attr("step"))))
    else:
        ctx.set_output("Out", CE.unary("scale_then_bias", x, a=1.0, b=ctx.attr("step")))


def _increment_infer(ctx):
    """X holds one number (a counter, as Paddle requires); an integer X takes a step that
    fits its type (NaN or 2**40 for an int32 counter would be undefined in C++)."""
    ctx.require_dtype("X", "number")
    ctx.require_one_element("X")
    dtype, step = dtypes.to_numpy(ctx.dtype("X")), ctx.attr("step")
    if dtype.kind in "iu" and not (math.isfinite(step) and np.iinfo(dtype).min <= int(step)
                                   <= np.iinfo(dtype).max):
        ctx.fail(f"step {step} does not fit the {dtype} counter", slot="X",
                 expected=f"a step in [{np.iinfo(dtype).min}, {np.iinfo(dtype).max}]",
                 given=f"step={step}")
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


@in_every_grad_block
def _increment_grad(op, no_grad):
    """increment(-step) undoes an in-place count; a float X's gradient is an assign"""
    # Fluid's IncrementGradOpMaker: increment with X = the forward Out, Out = the forward X
    # and step = -step. In a While's gradient block (which runs it whether or not a
    # gradient flows: the counter is an int) it walks the counter back as the block runs
    # the steps last first, so the grad ops before it (read_from_array's write_to_array)
    # read each step's value: the step scopes keep no copy of a counter updated in place.
    # Only an in-place increment changed a value; one into a new variable is left alone.
    x, out = op.input("X")[0], op.output("Out")[0]
    made = []
    if x == out:
        made.append(GradOp("increment", {"X": [out]}, {"Out": [x]},
                           {"step": -op.attr("step", 1.0)}))
    if x not in no_grad:     # d(X + step)/dX = 1; last, so it reads Out@GRAD before a reuse
        made.append(GradOp("assign", {"X": [grad_name(out)]}, {"Out": [grad_name(x)]}))
    return made


def _lowered_increment(info):
    """kernels/cpu/fill.stepped, the step in X's type as the CPU kernel has it."""
    dtype = info.dtype("X")
    if dtype.kind not in "iuf" or dtype.itemsize < 4:
        return None
    return Call(KF.stepped, ("X",), ("Out",), (_step(dtype, info.attr("step")),))


register(OpDef(
    "increment", [Slot("X", "a tensor with one value (a loop counter)")], [Slot("Out", "X+step")],
    [Attr("step", A.FLOAT, 1.0, "the amount to add")],
    comment="Out = X + step (usually in place: Out is X).",
    infer_shape=_increment_infer,
    kernels={"cpu": _increment, "cuda": _cuda_increment}, lowered=_lowered_increment,
    grad=_increment_grad))


# --- array -> tensor -----------------------------------------------------------------------
def _to_tensor(ctx):
    array = [a for a in _array(ctx) if a is not None]
    axis = ctx.attr("axis")
    if not array:
        raise ExecutionError("tensor_array_to_tensor: the array is empty")
    if ctx.attr("use_stack"):
        out = arrays.stack(array, axis=axis)
        sizes = [1] * len(array)
    else:
        out = arrays.concat(array, axis=axis)
        sizes = [a.shape[axis] for a in array]
    ctx.set_output("Out", out)
    ctx.set_output("OutIndex", arrays.to_place(ctx.place, np.int32(sizes)))


def _to_tensor_grad(ctx):
    array, dout = _array(ctx), ctx.input("Out@GRAD")
    axis = ctx.attr("axis")
    if ctx.attr("use_stack"):       # pieces of size 1 along axis, then that axis dropped
        pieces = [p.reshape(tuple(d for j, d in enumerate(p.shape) if j != axis % p.ndim))
                  for p in arrays.split(dout, [1] * len(array), axis)]
    else:
        pieces = arrays.split(dout, [a.shape[axis] for a in array], axis)
    if ctx.output_names("X@GRAD") and ctx.output_names("X@GRAD")[0] != EMPTY_VAR:
        ctx.output_var("X@GRAD").set(pieces, kind="tensor_array")


@takes_tensor_arrays
def _lowered_to_tensor(info):
    x = _entries_of(info, "X")
    if x is None:
        return None
    fn = KT.stacked_in_python if info.attr("use_stack") else KT.concatenated_in_python
    return Call(fn, ("X",), ("Out", "OutIndex"), (info.attr("axis"),), arrays=(x,))


@takes_tensor_arrays
def _lowered_to_tensor_grad(info):
    x = _entries_of(info, "X")
    if x is None or not info.has_output("X@GRAD") or info.dtype("Out@GRAD") != x[1]:
        return None
    return Call(KT.cut_in_python, ("X", "Out@GRAD"), ("X@GRAD",),
                (info.attr("axis"), info.attr("use_stack")), arrays=(x, ("X@GRAD", *x[1:])))


def _to_tensor_infer(ctx):
    shape = ctx.shape("X")
    axis = ctx.attr("axis")
    if ctx.attr("use_stack"):
        out = shape[:axis] + [-1] + shape[axis:]
    else:
        out = list(shape)
        if out:
            out[axis] = -1
    ctx.set_output("Out", out, ctx.dtype("X"))
    ctx.set_output("OutIndex", [-1], VarType.INT32)


register(OpDef(
    "tensor_array_to_tensor", [Slot("X", "the array")],
    [Slot("Out", "the tensors joined"), Slot("OutIndex", "each one's size along axis",
                                             intermediate=True)],
    [Attr("axis", A.INT, 0, "the axis to join along"),
     Attr("use_stack", A.BOOLEAN, False, "stack on a new axis instead of concatenating")],
    comment="Out = concat(X, axis) (or stack).", infer_shape=_to_tensor_infer,
    kernels={"cpu": _to_tensor, "cuda": _to_tensor}, lowered=_lowered_to_tensor,
    grad=lambda op, no_grad: [] if op.input("X")[0] in no_grad else [GradOp(
        "tensor_array_to_tensor_grad", {"X": op.input("X"),
                                        "Out@GRAD": [grad_name(op.output("Out")[0])]},
        {"X@GRAD": [grad_name(op.input("X")[0])]}, dict(op.attrs))]))

register(OpDef(
    "tensor_array_to_tensor_grad", [Slot("X", "the forward array"),
                                    Slot("Out@GRAD", "the gradient of Out")],
    [Slot("X@GRAD", "the gradient array", dispensable=True)],
    [Attr("axis", A.INT, 0, "as forward"), Attr("use_stack", A.BOOLEAN, False, "as forward")],
    comment="Cut Out@GRAD back into one gradient per array entry.",
    kernels={"cpu": _to_tensor_grad, "cuda": _to_tensor_grad}, grad=NO_GRADIENT,
    lowered=_lowered_to_tensor_grad,
    grad_of="tensor_array_to_tensor"))
