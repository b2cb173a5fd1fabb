"""repeat_interleave: each slice of X along ``dim`` repeated in place, and its gradient
(Fluid's slots and attributes, as ``paddle.repeat_interleave`` saves them).

``Repeats`` copies every slice that many times, one after the other ([a, b] with 2 gives
[a, a, b, b], not numpy's tile order); ``RepeatsTensor`` gives one count per slice instead
(Fluid reads it at run time in place of the attribute: core/attr_tensors.py), so how long
Out is along ``dim`` is known only then, and shape inference says -1. ``paddle.
repeat_interleave(x, r)`` without an axis flattens x first (a ``flatten_contiguous_range``
op in the saved program) and repeats along dim 0.

The copy is one index map along ``dim`` (slice i of X sent to its count of positions), the
places' ``gather_maps``; the gradient is the same map run backwards (``scatter_maps``),
which adds the copies of a slice up. The map is made on the host from the counts (a
``RepeatsTensor`` on the device comes back once: its values decide Out's size).

In a compiled block, with the attribute's one count, both are kernels/cpu/structured.py's
loops (repeated: the same copies; repeated_grad: each slice's copies added into zeros in
order, as np.add.at adds them). With a RepeatsTensor the op stays in the interpreter: Out's
size depends on the tensor's values.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..core.limits import check_tensor_size
from ..kernels.cpu import structured as KS
from ..kernels.lowered import Call
from . import arrays
from .common import OUT, X, axis_in_range, build_fail, run_fail
from ..backends import CPU, CUDA

# the element types Paddle 2.6.2's CPU kernel is registered for
REPEATABLE = ("int32", "int64", "float32", "float64")
REPEATS_TENSOR = Slot("RepeatsTensor", "one repeat count per slice along dim (read at run "
                                       "time, instead of the attribute)", dispensable=True)


def _counts(repeats, n: int, fail) -> list[int]:
    """The repeat count of each of the ``n`` slices: the attribute's one count for all,
    or the tensor's list (one per slice); none negative."""
    counts = [int(r) for r in repeats] if isinstance(repeats, (list, tuple)) else \
        [int(repeats)] * n
    if len(counts) != n:
        fail("RepeatsTensor needs one count per slice along dim",
             expected=f"{n} counts", given=f"{len(counts)} counts")
    if any(c < 0 for c in counts):
        fail("a repeat count may not be negative", expected="counts >= 0",
             given=f"{min(counts)}")
    return counts


def _repeat_infer(ctx):
    if dtypes.name(ctx.dtype("X")) not in REPEATABLE:
        ctx.fail("repeat_interleave needs int32, int64, float32 or float64 elements "
                 "(Paddle's CPU kernel)", slot="X", expected="one of those",
                 given=ctx.describe_input("X"))
    xs = list(ctx.shape("X"))
    fail = build_fail(ctx, "RepeatsTensor" if ctx.has_input("RepeatsTensor") else "X")
    dim = axis_in_range(len(xs), ctx.attr("dim"), "dim", fail)
    if ctx.attr_from_tensor("Repeats"):       # counted when the tensor is read
        if len(ctx.shape("RepeatsTensor")) > 1:
            fail("RepeatsTensor holds one count per slice", expected="a 1-D int tensor",
                 given=ctx.describe_input("RepeatsTensor"))
        xs[dim] = -1
    elif xs[dim] >= 0:
        xs[dim] = sum(_counts(ctx.attr("Repeats"), xs[dim], fail))
    elif int(ctx.attr("Repeats")) < 0:
        fail("a repeat count may not be negative", expected="Repeats >= 0",
             given=f"Repeats={ctx.attr('Repeats')}")
    ctx.set_output("Out", xs, ctx.dtype("X"))


def _maps(ctx, x, op_type: str) -> list[np.ndarray]:
    """One index map per axis: the identity, and along dim each slice's position as many
    times as it is repeated."""
    shape = tuple(int(d) for d in x.shape)
    fail = run_fail(op_type, "RepeatsTensor")
    dim = axis_in_range(len(shape), int(ctx.attr("dim")), "dim", fail)
    counts = _counts(ctx.attr("Repeats"), shape[dim], fail)
    out_shape = shape[:dim] + (sum(counts),) + shape[dim + 1:]
    check_tensor_size(out_shape, x.dtype, op_type)
    along = np.repeat(np.arange(shape[dim], dtype=np.int64), counts)
    return [along if d == dim else np.arange(n, dtype=np.int64) for d, n in enumerate(shape)]


def _repeat(place):
    def run(ctx):
        x = ctx.input("X")
        ctx.set_output("Out", place.gather_maps(x, _maps(ctx, x, "repeat_interleave")))
    return run


def _repeat_grad(place):
    """dX: each slice's copies in dOut added up."""
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        maps = _maps(ctx, x, "repeat_interleave_grad")
        dout = arrays.astype(dout, x.dtype).reshape(tuple(len(m) for m in maps))
        ctx.set_output("X@GRAD", place.scatter_maps(tuple(int(d) for d in x.shape), maps,
                                                    dout))
    return run


def _lowered(grad: bool):
    def lowered(info):
        if info.has_input("RepeatsTensor"):
            return "an attribute given by a tensor: Out's size depends on RepeatsTensor's " \
                   "values"
        dtype, rank = info.dtype("X"), info.ndim("X")
        repeats, dim = info.attr("Repeats"), info.attr("dim")
        if dtype.name not in REPEATABLE or rank == 0 or not -rank <= dim < rank or \
                not isinstance(repeats, int) or repeats < 0 or \
                (grad and info.dtype("Out@GRAD") != dtype):
            return None
        if grad:
            return Call(KS.repeated_grad, ("X", "Out@GRAD"), ("X@GRAD",), (repeats, dim % rank))
        return Call(KS.repeated, ("X",), ("Out",), (repeats, dim % rank, rank))
    return lowered


register(OpDef(
    "repeat_interleave", [X, REPEATS_TENSOR], [OUT],
    [Attr("Repeats", A.INT, 0, "how many times each slice is repeated"),
     Attr("dim", A.INT, 0, "the axis along which slices are repeated")],
    comment="Out = X with each slice along dim repeated Repeats (or RepeatsTensor[i]) times "
            "in place.",
    infer_shape=_repeat_infer, kernels={"cpu": _repeat(CPU), "cuda": _repeat(CUDA)},
    lowered=_lowered(False),
    grad=Grad(reads=["X", "RepeatsTensor"], writes=["X"], kernel=_repeat_grad(CPU),
              cuda_kernel=_repeat_grad(CUDA), lowered=_lowered(True)),
    reads_attr_tensors=("RepeatsTensor",)))
