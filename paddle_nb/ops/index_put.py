"""index_put: ``x[indices] = value`` (or ``+=`` with ``accumulate``) for a tuple of index
tensors, and its gradient (Fluid's slots and attributes, as ``paddle.index_put`` and
``paddle.index_fill`` save them: lower-case slots ``x``, ``indices``, ``value``, ``out``).

``indices`` holds integer tensors (broadcast together, numpy's rule; a negative index
counts from the end, so ``[-n, n)`` is allowed) and boolean masks (a mask over k of x's
axes stands for the k integer tensors of its True positions, as numpy and Paddle read it).
Together they name x's first axes; each broadcast position selects one slice of x's
remaining axes, and ``value`` is broadcast to ``index shape + slice shape``.

A mask's True count is known only from its data, so the positions are worked out on the
host (on CUDA the indices are copied there, as masked_select does for its positions),
after every index has been range-checked; the write itself runs on the op's place
(ops/write_at.py). A position named twice keeps the last value, or with ``accumulate``
gets every value added. The gradient is Paddle's: x's is ``out``'s, 0 where a value was
written (all of it with ``accumulate``); value's is ``out``'s at the written positions,
summed over value's broadcast.

In a compiled block, with 1-D integer indices of one dtype, both are
kernels/cpu/index_put.py's loops (range-checked there, the interpreter's order of writes
and adds). A mask stays in the interpreter: how many positions it names depends on its
values.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import index_put as KI
from ..kernels.lowered import Call
from . import arrays, write_at
from .common import one_dtype
from ..backends import CPU, CUDA

# the element types Paddle 2.6.2's index_put takes (float16 and complex aside)
PUTTABLE = ("bool", "int32", "int64", "float32", "float64")


def _named_axes(ctx) -> int:
    """How many of x's leading axes the indices name (a mask: its rank)."""
    total = 0
    for i in range(len(ctx.input_names("indices"))):
        kind = dtypes.name(ctx.dtype("indices", i))
        if kind not in ("bool", "int32", "int64"):
            ctx.fail("each index is an int32/int64 tensor or a bool mask", slot="indices",
                     expected="int32, int64 or bool", given=ctx.describe_input("indices", i))
        total += max(len(ctx.shape("indices", i)), 1) if kind == "bool" else 1
    return total


def _index_put_infer(ctx):
    if dtypes.name(ctx.dtype("x")) not in PUTTABLE:
        ctx.fail("index_put takes bool, int32, int64, float32 or float64 elements",
                 slot="x", expected="one of those", given=ctx.describe_input("x"))
    ctx.require_same_dtype("value", "x")
    xs = ctx.shape("x")
    if not ctx.input_names("indices"):
        ctx.fail("index_put needs at least one index tensor", slot="indices",
                 expected="1 or more tensors", given="none")
    named = _named_axes(ctx)
    if named > len(xs):
        ctx.fail("the indices name more axes than x has", slot="indices",
                 expected=f"at most {len(xs)} axes", given=f"{named} axes")
    ctx.set_output("out", xs, ctx.dtype("x"))


def _as_int_indices(ctx, shape: tuple) -> list:
    """Every index as a host int64 array over one of x's axes, in order (a mask split
    into its True positions' coordinates), each checked against its axis (negative
    ones made positive)."""
    out = []
    for i, index in enumerate(ctx.inputs("indices")):
        axis = len(out)
        if index.dtype == np.bool_:
            mask = arrays.host(index)
            k = max(mask.ndim, 1)
            want = shape[axis:axis + k]
            if tuple(mask.shape) != tuple(want) and not (mask.ndim == 0 and not want):
                raise ValueError(f"index_put: the mask indices[{i}] of shape "
                                 f"{list(mask.shape)} must match x's axes {axis}.. "
                                 f"{list(want)}")
            out += [c.astype(np.int64) for c in np.nonzero(mask.reshape(want))]
            continue
        if axis >= len(shape):
            raise ValueError(f"index_put: indices name more axes than x's {len(shape)}")
        n = shape[axis]
        check.indices(index, n, low=-n, slot="indices", what=f"index_put index "
                      f"(indices[{i}])", counted=f"x's axis {axis} has {n} entries")
        values = arrays.host(index).astype(np.int64)
        out.append(np.where(values < 0, values + n, values))
    return out


def _positions(ctx, shape: tuple):
    """The flat positions written in x (in value's order) and value's target shape."""
    ints = _as_int_indices(ctx, shape)
    try:
        spread = np.broadcast_arrays(*ints)
    except ValueError:
        raise ValueError("index_put: the index tensors do not broadcast together: shapes "
                         f"{[list(i.shape) for i in ints]}") from None
    k = len(ints)
    lead = spread[0].shape
    tail = shape[k:]
    inner = write_at.numel(tail)
    rows = (np.ravel_multi_index(tuple(s.reshape(-1) for s in spread), shape[:k])
            if spread[0].size else np.zeros(0, np.int64))
    positions = (rows[:, None] * inner + np.arange(inner, dtype=np.int64)).reshape(-1)
    return positions.astype(np.int64), tuple(lead) + tuple(tail)


def _broadcast_value(place, value, target: tuple):
    shape = tuple(int(d) for d in value.shape)
    while len(shape) > len(target) and shape[0] == 1:
        shape = shape[1:]                          # a longer value's leading 1s drop
    fits = len(shape) <= len(target) and all(
        v in (1, t) for v, t in zip(reversed(shape), reversed(target)))
    if not fits:
        raise ValueError(f"index_put: value of shape {list(value.shape)} does not "
                         f"broadcast to the {list(target)} positions it is written to")
    return place.broadcast_to(value.reshape(shape), target)


def _index_put(place):
    def run(ctx):
        x, value = ctx.input("x"), ctx.input("value")
        positions, target = _positions(ctx, tuple(int(d) for d in x.shape))
        spread = _broadcast_value(place, arrays.astype(value, x.dtype), target)
        ctx.set_output("out", write_at.write(place, x, write_at.positions_on(ctx, positions),
                                             spread, ctx.attr("accumulate")))
    return run


def _index_put_grad(place):
    def run(ctx):
        dout, value = ctx.input("out@GRAD"), ctx.input("value")
        positions, target = _positions(ctx, tuple(int(d) for d in dout.shape))
        _broadcast_value(CPU, np.zeros(tuple(int(d) for d in value.shape)), target)
        at = write_at.positions_on(ctx, positions)
        if ctx.has_output("x@GRAD"):
            ctx.set_output("x@GRAD", write_at.x_grad(place, dout, at, ctx.attr("accumulate"),
                                                     dout.shape))
        if ctx.has_output("value@GRAD"):
            ctx.set_output("value@GRAD", write_at.values_grad(
                place, arrays.astype(dout, value.dtype), at, target,
                tuple(int(d) for d in value.shape)))
    return run


def _lowered(grad: bool):
    def lowered(info):
        dtype, count = info.dtype("x"), len(info.pop.in_ix["indices"])
        kind = one_dtype(info, "indices")
        if dtype.name not in PUTTABLE or info.dtype("value") != dtype or \
                any(info.ndim("indices", i) != 1 for i in range(count)) or \
                kind is None or kind.kind != "i" or count > info.ndim("x") or \
                (info.attr("accumulate") and dtype.name == "bool") or \
                (grad and info.dtype("out@GRAD") != dtype):
            return None            # (a mask, an index of rank != 1, mixed index dtypes)
        accumulate = bool(info.attr("accumulate"))
        if grad:
            return Call(KI.index_put_grads, ("out@GRAD", "indices", "value"),
                        ("x@GRAD", "value@GRAD"),
                        (accumulate, info.has_output("x@GRAD"), info.has_output("value@GRAD")))
        return Call(KI.index_put, ("x", "indices", "value"), ("out",), (accumulate,))
    return lowered


register(OpDef(
    "index_put",
    [Slot("x", "the tensor written into"),
     Slot("indices", "int tensors (broadcast together) or bool masks naming x's first axes",
          duplicable=True),
     Slot("value", "the values (broadcast to the selected positions)")],
    [Slot("out", "x with the values put in")],
    [Attr("accumulate", A.BOOLEAN, False, "add the values instead of replacing")],
    comment="out = x; out[indices] = value (accumulate: out[indices] += value).",
    infer_shape=_index_put_infer, kernels={"cpu": _index_put(CPU), "cuda": _index_put(CUDA)},
    lowered=_lowered(False),
    grad=Grad(reads=["x", "indices", "value"], writes=["x", "value"],
              kernel=_index_put_grad(CPU), cuda_kernel=_index_put_grad(CUDA),
              lowered=_lowered(True))))
