"""Layout ops: reshape2, transpose2, concat, split. They move data, they do not compute,
so each kernel is one function for both places, moving tensors through arrays.py (numpy
views and copies on the CPU, the copy kernels on CUDA). ``XShape`` (reshape2/transpose2)
records X's shape for the gradient, as in Fluid: dims ``[0] + X.dims``."""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.infer_shape import numel
from ..core.grad_maker import Grad, GradOp, grad_name
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import layout as KL
from ..kernels.lowered import Call
from . import arrays
from .common import OUT, X, attr_tensor_slots, build_fail, numba_holds, one_dtype

XSHAPE = Slot("XShape", "X's shape, kept for the gradient", intermediate=True)


def _set_xshape(ctx):
    if ctx.has_output("XShape"):
        ctx.set_output("XShape", [0] + ctx.shape("X"), ctx.dtype("X"))


def _write_xshape(ctx, x):
    """XShape holds no data, only dims [0] + X.dims: an empty array of that shape, on X's
    place (so no output leaves the device)."""
    ctx.set_output("XShape", arrays.empty((0,) + tuple(x.shape), x.dtype, like=x))


def _x_shape_from(xshape) -> tuple[int, ...]:
    return tuple(xshape.shape[1:])


# --- in a compiled block (kernels/lowered.py): kernels/cpu/layout.py's copies ----------------
def with_xshape(info, call: Call) -> tuple | None:
    """``call`` (Out), and XShape's where the op writes one, for an X numba holds."""
    if not numba_holds(info.dtype("X")):
        return None
    xshape = (Call(KL.xshape_of, ("X",), ("XShape",)),) if info.has_output("XShape") else ()
    return (call, *xshape)


def lowered_reshape(info):
    """A reshape to the Out shape the interpreter's run gave (as groups of X's dims)."""
    x_shape, out_shape = info.shape("X"), info.shape("Out")
    if not out_shape:
        return None
    groups = KL.dim_groups(x_shape, out_shape)
    return with_xshape(info, Call(KL.regrouped, ("X",), ("Out",), (groups, len(groups))))


def lowered_reshape_grad(info):
    if not numba_holds(info.dtype("Out@GRAD")):
        return None
    return Call(KL.reshaped_to_xshape, ("Out@GRAD", "XShape"), ("X@GRAD",))


# --- reshape2 --------------------------------------------------------------------------------
def resolve_shape(target, x_shape, fail):
    """Paddle's reshape rules: 0 copies X's dim, one -1 is inferred."""
    wrong = [d for d in target if d < -1]
    if wrong:
        fail("every dim of shape is -1 (inferred), 0 (X's dim) or a size", given=f"shape="
             f"{list(target)}", expected="dims >= -1")
    if any(d == 0 and i >= len(x_shape) for i, d in enumerate(target)):
        fail("a 0 in shape copies X's dim at that position, and X has no such dim",
             given=f"shape={list(target)} for X {list(x_shape)}")
    out = [x_shape[i] if d == 0 else d for i, d in enumerate(target)]
    unknown = [i for i, d in enumerate(out) if d == -1]
    if len(unknown) > 1 and all(d >= 0 for d in x_shape):
        fail("at most one dimension of shape may be -1", given=f"shape={list(target)}")
    total = numel(x_shape)
    known = numel([d for d in out if d != -1])
    if len(unknown) == 1 and total >= 0 and known == 0:
        fail("a -1 in shape cannot be inferred when the other dims hold 0 elements",
             given=f"shape={list(target)} for X {list(x_shape)}")
    if len(unknown) == 1 and total >= 0 and known > 0:
        if total % known:
            fail("X's size does not divide into shape", expected=f"a shape whose known dims "
                 f"divide {total}", given=f"shape={list(target)} for X {list(x_shape)}")
        out[unknown[0]] = total // known
    elif not unknown and total >= 0 and numel(out) != total:
        fail("shape must keep the number of elements", expected=f"{total} elements "
             f"(X {list(x_shape)})", given=f"shape={list(target)} ({numel(out)} elements)")
    return out


def _reshape_infer(ctx):
    xs = ctx.shape("X")
    fail = build_fail(ctx, "X")
    if ctx.attr_from_tensor("shape"):     # known when it runs: 0 keeps X's dim
        target = ctx.int_list_attr("shape")
        out = [xs[i] if d == 0 and i < len(xs) else d if d > 0 else -1
               for i, d in enumerate(target)]
        ctx.set_output("Out", out, ctx.dtype("X"))
    else:
        ctx.set_output("Out", resolve_shape(ctx.attr("shape"), xs, fail), ctx.dtype("X"))
    _set_xshape(ctx)


def _reshape(ctx):
    x = ctx.input("X")
    target = [x.shape[i] if d == 0 else d for i, d in enumerate(ctx.attr("shape"))]
    if -1 in target:                   # device arrays want the -1 resolved
        known = int(np.prod([d for d in target if d != -1]))
        target[target.index(-1)] = x.size // known if known else 0
    ctx.set_output("Out", arrays.copy(x).reshape(tuple(target)))
    _write_xshape(ctx, x)


def _reshape_grad(ctx):
    dout = ctx.input("Out@GRAD")
    ctx.set_output("X@GRAD", arrays.copy(dout).reshape(_x_shape_from(ctx.input("XShape"))))


def _reshape_grad_infer(ctx):
    """dOut has Out's shape: the shape attribute resolved against X's dims (from XShape);
    where a tensor gave it instead (the attribute is empty, or Paddle's placeholder with a
    -1 for each tensor), X's element count."""
    xs = ctx.shape("XShape")[1:]
    if ctx.has_value("Out@GRAD"):
        fail = build_fail(ctx, "Out@GRAD")
        if ctx.attr("shape") and list(ctx.attr("shape")).count(-1) <= 1:
            ctx.require_gradient_fits("Out", want=resolve_shape(ctx.attr("shape"), xs, fail))
        elif numel(ctx.shape("Out@GRAD")) != numel(xs) >= 0:
            fail("the gradient must have X's element count", expected=f"{numel(xs)} elements",
                 given=ctx.describe_input("Out@GRAD"))
    ctx.set_output("X@GRAD", xs, ctx.dtype("Out@GRAD"))


register(OpDef(
    "reshape2", [X, *attr_tensor_slots("Shape", "ShapeTensor", "the shape")],
    [OUT, XSHAPE],
    [Attr("shape", A.INTS, [], "the new shape: 0 keeps X's dim, one -1 is inferred")],
    comment="Out = X with a new shape (same elements, same order).",
    infer_shape=_reshape_infer, kernels={"cpu": _reshape, "cuda": _reshape},
    lowered=lowered_reshape,
    grad=Grad(reads=["XShape"], grads_of=["Out"], writes=["X"], kernel=_reshape_grad,
              cuda_kernel=_reshape_grad, infer_shape=_reshape_grad_infer,
              lowered=lowered_reshape_grad),
    reads_attr_tensors=("Shape", "ShapeTensor")))


# --- transpose2 ------------------------------------------------------------------------------
def _transpose_infer(ctx):
    xs, axis = ctx.shape("X"), ctx.attr("axis")
    if sorted(axis) != list(range(len(xs))):
        ctx.fail("axis must be a permutation of X's dims", slot="X",
                 expected=f"a permutation of {list(range(len(xs)))}", given=f"axis={axis}")
    ctx.set_output("Out", [xs[a] for a in axis], ctx.dtype("X"))
    _set_xshape(ctx)


def _transpose(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", arrays.transpose(x, ctx.attr("axis")))
    _write_xshape(ctx, x)


def _transpose_grad(ctx):
    """Undo the permutation: dX = transpose(dOut, argsort(axis))."""
    inverse = [int(i) for i in np.argsort(ctx.attr("axis"))]
    ctx.set_output("X@GRAD", arrays.transpose(ctx.input("Out@GRAD"), inverse))


def _transpose_grad_infer(ctx):
    """dOut has X's dims (read from XShape) permuted by axis; dX has X's dims."""
    xs, axis = ctx.shape("XShape")[1:], ctx.attr("axis")
    if sorted(axis) != list(range(len(xs))):
        ctx.fail("axis must be a permutation of X's dims", slot="XShape",
                 expected=f"a permutation of {list(range(len(xs)))}", given=f"axis={axis}")
    if ctx.has_value("Out@GRAD"):
        ctx.require_gradient_fits("Out", want=[xs[a] for a in axis])
    ctx.set_output("X@GRAD", xs, ctx.dtype("Out@GRAD"))


def _lowered_transpose_grad(info):
    if not numba_holds(info.dtype("Out@GRAD")):
        return None
    inverse = tuple(int(i) for i in np.argsort(info.attr("axis")))
    return Call(KL.transposed, ("Out@GRAD",), ("X@GRAD",), (inverse,))


register(OpDef(
    "transpose2", [X], [OUT, XSHAPE],
    [Attr("axis", A.INTS, [], "the permutation: Out dim i is X dim axis[i]"),
     Attr("data_format", A.STRING, "AnyLayout", "kept for Paddle compatibility", extra=True)],
    comment="Out = X with its dims permuted by axis.",
    infer_shape=_transpose_infer, kernels={"cpu": _transpose, "cuda": _transpose},
    lowered=lambda info: with_xshape(info, Call(KL.transposed, ("X",), ("Out",),
                                                (tuple(info.attr("axis")),))),
    grad=Grad(reads=["XShape"], grads_of=["Out"], writes=["X"], kernel=_transpose_grad,
              cuda_kernel=_transpose_grad, infer_shape=_transpose_grad_infer,
              lowered=_lowered_transpose_grad)))


# --- concat ----------------------------------------------------------------------------------
def _concat_infer(ctx):
    shapes = ctx.shapes("X")
    rank = len(shapes[0])
    axis = ctx.attr("axis")
    for i in range(1, len(shapes)):
        if ctx.dtype("X", i) != ctx.dtype("X"):
            ctx.fail("inputs must have one element type", slot="X",
                     expected=dtypes.name(ctx.dtype("X")), given=ctx.describe_input("X", i))
    if ctx.attr_from_tensor("axis"):         # any dim may be the one joined
        ctx.set_output("Out", list(shapes[0]) if len(shapes) == 1 else [-1] * rank,
                       ctx.dtype("X"))
        return
    if not -rank <= axis < rank:
        ctx.fail(f"axis {axis} is out of range for rank-{rank} inputs", slot="X")
    axis %= rank
    out = list(shapes[0])
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != rank or any(j != axis and a >= 0 and b >= 0 and a != b
                                 for j, (a, b) in enumerate(zip(s, shapes[0]))):
            ctx.fail(f"inputs must match in every dim but axis {axis}", slot="X",
                     expected=f"{shapes[0]} outside axis {axis}",
                     given=f"{s} ({ctx.input_names('X')[i]})")
        out[axis] = -1 if out[axis] < 0 or s[axis] < 0 else out[axis] + s[axis]
    ctx.set_output("Out", out, ctx.dtype("X"))


def _concat(ctx):
    ctx.set_output("Out", arrays.concat(ctx.inputs("X"), ctx.attr("axis")))


def _lowered_concat(info):
    """np.concatenate of inputs of one dtype numba holds (at least one dim each)."""
    dtype = one_dtype(info, "X")
    if dtype is None or not numba_holds(dtype) or info.ndim("X") == 0:
        return None
    return Call(KL.joined, ("X",), ("Out",), (info.attr("axis") % info.ndim("X"),))


def _lowered_concat_grad(info):
    """dOut cut into pieces the sizes of the inputs (kernels/cpu/layout.split_like)."""
    dtype = info.dtype("Out@GRAD")
    if one_dtype(info, "X") is None or not numba_holds(dtype) or info.ndim("Out@GRAD") == 0:
        return None
    return Call(KL.split_like, ("Out@GRAD", "X"), ("X@GRAD",),
                (info.attr("axis") % info.ndim("Out@GRAD"),))


def _concat_grad(ctx):
    """Cut dOut back into pieces the sizes of the inputs."""
    xs, dout = ctx.inputs("X"), ctx.input("Out@GRAD")
    axis = ctx.attr("axis") % dout.ndim
    ctx.set_outputs("X@GRAD", arrays.split(dout, [x.shape[axis] for x in xs], axis))


register(OpDef(
    "concat", [Slot("X", "the tensors to join", duplicable=True),
               Slot("AxisTensor", "axis as a tensor", dispensable=True)], [OUT],
    [Attr("axis", A.INT, 0, "the axis to join along")],
    comment="Out = the inputs joined along axis.",
    infer_shape=_concat_infer,
    kernels={"cpu": _concat, "cuda": _concat}, lowered=_lowered_concat,
    grad=Grad(reads=["X", "AxisTensor"], writes=["X"], kernel=_concat_grad,
              cuda_kernel=_concat_grad, lowered=_lowered_concat_grad),
    reads_attr_tensors=("AxisTensor",)))


# --- split -----------------------------------------------------------------------------------
def _sections(size, num, sections, n_out):
    if sections:
        secs = list(sections)
        if -1 in secs and size >= 0:
            secs[secs.index(-1)] = size - sum(s for s in secs if s != -1)
        return secs
    n = num or n_out
    return [size // n if size >= 0 else -1] * n


def _split_infer(ctx):
    xs = ctx.require_rank("X", 1)
    n_out = len(ctx.output_names("Out"))
    if ctx.attr_from_tensor("axis"):         # known when it runs: any dim may be cut
        for i in range(n_out):
            ctx.set_output("Out", [-1] * len(xs), ctx.dtype("X"), i=i)
        return
    axis = ctx.require_range("axis", ctx.attr("axis"), -len(xs), len(xs), slot="X") % len(xs)
    num, sections, size = ctx.attr("num"), list(ctx.attr("sections") or []), xs[axis]
    if ctx.attr_from_tensor("sections"):     # their sizes are known when it runs
        for i in range(n_out):
            ctx.set_output("Out", [-1 if j == axis else d for j, d in enumerate(xs)],
                           ctx.dtype("X"), i=i)
        return
    if sections:
        known = sum(s for s in sections if s != -1)
        bad = any(s < -1 for s in sections) or sections.count(-1) > 1 or size >= 0 and (
            known > size if -1 in sections else known != size)
        if bad:
            ctx.fail(f"sections must cut dim {axis} of X ({size}) into pieces that add up to "
                     "it (sizes >= 0, at most one -1 for the rest)", slot="X",
                     given=f"sections={sections}")
    elif num and num != n_out or n_out == 0:     # checked before any list of num pieces
        ctx.fail("num must equal the number of outputs (or be 0: one piece per output)",
                 slot="Out", expected=f"num={n_out} or 0", given=f"num={num}, {n_out} outputs")
    elif size >= 0 and size % (num or n_out):
        ctx.fail(f"dim {axis} of X ({size}) does not split into {num or n_out} equal parts",
                 slot="X")
    secs = _sections(size, num, sections, n_out)
    if len(secs) != n_out:
        ctx.fail("the number of outputs must match num / sections", slot="Out",
                 expected=f"{len(secs)} outputs", given=f"{n_out}")
    for i, s in enumerate(secs):
        shape = list(xs)
        shape[axis] = s
        ctx.set_output("Out", shape, ctx.dtype("X"), i=i)


def _split(ctx):
    x = ctx.input("X")
    axis = ctx.attr("axis") % x.ndim
    secs = _sections(x.shape[axis], ctx.attr("num"), ctx.attr("sections"),
                     len(ctx.output_names("Out")))
    ctx.set_outputs("Out", arrays.split(x, secs, axis))


def _lowered_split(info):
    """X's pieces (kernels/cpu/layout.split_parts): by sections, or num equal ones."""
    if not numba_holds(info.dtype("X")) or info.ndim("X") == 0:
        return None
    rank, sections = info.ndim("X"), tuple(info.attr("sections") or ())
    equal = 0 if sections else info.attr("num") or len(info.pop.outputs["Out"])
    return Call(KL.split_parts, ("X",), ("Out",),
                (info.attr("axis") % rank, sections or (0,), equal, rank))


def _split_grad(op, no_grad):
    """The gradient of a split is a concat of the pieces' gradients."""
    if op.input("X")[0] in no_grad:
        return []
    inputs = {"X": [grad_name(n) for n in op.output("Out")]}
    if op.input("AxisTensor"):                 # the same axis, read at run time
        inputs["AxisTensor"] = op.input("AxisTensor")
    return [GradOp("concat", inputs, {"Out": [grad_name(op.input("X")[0])]},
                   {"axis": op.attr("axis")})]


register(OpDef(
    "split", [X, Slot("AxisTensor", "axis as a tensor", dispensable=True),
              Slot("SectionsTensorList", "sections as tensors", dispensable=True,
                   duplicable=True)],
    [Slot("Out", "the pieces", duplicable=True)],
    [Attr("axis", A.INT, 0, "the axis to split"),
     Attr("num", A.INT, 0, "split into num equal parts (when sections is empty)"),
     Attr("sections", A.INTS, [], "the size of each piece (one may be -1)")],
    comment="Out = X cut into pieces along axis.",
    infer_shape=_split_infer, kernels={"cpu": _split, "cuda": _split}, lowered=_lowered_split,
    grad=_split_grad, reads_attr_tensors=("AxisTensor", "SectionsTensorList")))
