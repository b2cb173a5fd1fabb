"""Ops that index by data or produce indices: gather (and its gradient), one_hot_v2,
arg_max, arg_min (Fluid's slots and attributes, as ``paddle.gather``, ``F.one_hot``,
``paddle.argmax`` and ``argmin`` save them).

Every index read from a tensor is checked first (kernels/check.py): a gather index or a
one-hot class outside its range is an ``IndexRangeError`` naming the op, the slot, the bad
value and where it sits, never a read past the end. Each kernel is one function over the
places' ``take`` / ``scatter_add`` / ``one_hot`` / ``arg_extreme``; inside a compiled block
each is a Call of kernels/cpu/indexing.py, which checks the same ranges (and raises, so
that the interpreter's rerun gives the error naming the op).
"""
from __future__ import annotations

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import indexing as INDEXING
from ..kernels.lowered import Call
from .common import OUT, X, dtype_code_check, numba_holds
from ..backends import CPU, CUDA


def _axis_in(ctx, axis: int, rank: int, slot="X") -> int:
    if not -rank <= axis < max(rank, 1):
        ctx.fail(f"axis {axis} is out of range", slot=slot,
                 expected=f"axis in [{-rank}, {rank - 1}]", given=f"axis={axis}")
    return axis % max(rank, 1)


# --- gather -------------------------------------------------------------------------------------
def _gather_infer(ctx):
    ctx.require_dtype("Index", "int")
    xs, idx = ctx.require_rank("X", 1), ctx.shape("Index")
    if len(idx) > 1:
        ctx.fail("Index must be 1-D (or 0-D)", slot="Index", expected="shape [k]",
                 given=ctx.describe_input("Index"))
    if ctx.attr_from_tensor("axis"):        # known when it runs
        ctx.set_output("Out", [-1] * (len(xs) if idx else len(xs) - 1), ctx.dtype("X"))
        return
    axis = _axis_in(ctx, ctx.attr("axis"), len(xs))
    out = list(xs)
    if idx:
        out[axis] = idx[0]
    else:                                  # a 0-D index drops the axis, as Paddle
        del out[axis]
    ctx.set_output("Out", out, ctx.dtype("X"))


def _checked_index(ctx, x):
    index = ctx.input("Index")
    axis = ctx.attr("axis") % x.ndim
    check.indices(index, x.shape[axis], slot="Index", what="gather index",
                  counted=f"X's axis {axis} has {x.shape[axis]} entries")
    return index.reshape(-1), axis


def _gather(place):
    def run(ctx):
        x = ctx.input("X")
        index, axis = _checked_index(ctx, x)
        out = place.take(x, index, axis)
        if ctx.input("Index").ndim == 0:
            out = out.reshape(tuple(d for i, d in enumerate(x.shape) if i != axis))
        ctx.set_output("Out", out)
    return run


def _gather_grad(place):
    """dX: zeros with dOut's slices added at Index (a repeated index adds up)."""
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        index, axis = _checked_index(ctx, x)
        shape = list(x.shape)
        shape[axis] = index.size
        ctx.set_output("X@GRAD", place.scatter_add(x.shape, index, dout.reshape(tuple(shape)),
                                                   axis))
    return run


# --- in a compiled block (kernels/lowered.py): kernels/cpu/indexing.taken_at, added_at ---
def _lowered_gather(info):
    if not numba_holds(info.dtype("X")):
        return None
    return Call(INDEXING.taken_at, ("X", "Index"), ("Out",),
                (info.attr("axis") % info.ndim("X"), info.ndim("Out")))


def _lowered_gather_grad(info):
    """dX in dOut's dtype, as the kernel makes it."""
    if not numba_holds(info.dtype("Out@GRAD")):
        return None
    return Call(INDEXING.added_at, ("X", "Index", "Out@GRAD"), ("X@GRAD",),
                (info.attr("axis") % info.ndim("X"),))


register(OpDef(
    "gather", [X, Slot("Index", "the positions to take (1-D)"),
               Slot("Axis", "axis as a tensor", dispensable=True)], [OUT],
    [Attr("axis", A.INT, 0, "the axis to take along"),
     Attr("overwrite", A.BOOLEAN, True, "kept for Paddle compatibility", extra=True)],
    comment="Out = X's entries at Index along axis.", infer_shape=_gather_infer,
    kernels={"cpu": _gather(CPU), "cuda": _gather(CUDA)},
    lowered=_lowered_gather,
    grad=Grad(reads=["X", "Index", "Axis"], writes=["X"], kernel=_gather_grad(CPU),
              cuda_kernel=_gather_grad(CUDA), lowered=_lowered_gather_grad),
    reads_attr_tensors=("Axis",)))


# --- one_hot_v2 ---------------------------------------------------------------------------------
def _one_hot_infer(ctx):
    ctx.require_dtype("X", "int")
    if ctx.attr_from_tensor("depth"):       # known when it runs
        ctx.set_output("Out", ctx.shape("X") + [-1], ctx.attr("dtype"))
        return
    if ctx.attr("depth") < 1:
        ctx.fail("depth must be at least 1", slot="X", expected="depth >= 1",
                 given=f"depth={ctx.attr('depth')}")
    if ctx.attr("allow_out_of_range"):
        ctx.fail("allow_out_of_range is not supported: a value outside [0, depth) is an "
                 "error here", slot="X", expected="allow_out_of_range=False",
                 given="allow_out_of_range=True")
    ctx.set_output("Out", ctx.shape("X") + [ctx.attr("depth")], ctx.attr("dtype"))


def _one_hot(place):
    def run(ctx):
        x, depth = ctx.input("X"), ctx.attr("depth")
        check.indices(x, depth, slot="X", what="class", counted=f"depth={depth}")
        ctx.set_output("Out", place.one_hot(x, depth, dtypes.to_numpy(ctx.attr("dtype"))))
    return run


def zero_of(dtype_code: int):
    """A 0 of the VarType's element type: a compiled form's constant that makes an array
    of that type (kernels/cpu/indexing.py fills with it); None for one numba has no
    arrays of (float16)."""
    dtype = dtypes.to_numpy(dtype_code)
    return dtype.type(0) if numba_holds(dtype) else None


def _lowered_one_hot(info):
    zero = zero_of(info.attr("dtype"))
    return None if zero is None else Call(INDEXING.one_hot_of, ("X",), ("Out",),
                                          (info.attr("depth"), zero))


register(OpDef(
    "one_hot_v2", [X, Slot("depth_tensor", "depth as a tensor",
                           dispensable=True)], [OUT],
    [Attr("depth", A.INT, 1, "how many classes"),
     Attr("dtype", A.INT, 5, "VarType code of Out's element type",
          check=dtype_code_check("iuf")),
     Attr("allow_out_of_range", A.BOOLEAN, False, "refused: out-of-range values are errors")],
    comment="Out = a one-hot vector of length depth for each class index in X.",
    infer_shape=_one_hot_infer, kernels={"cpu": _one_hot(CPU), "cuda": _one_hot(CUDA)},
    lowered=_lowered_one_hot,
    grad=NO_GRADIENT, reads_attr_tensors=("depth_tensor",)))


# --- arg_max / arg_min --------------------------------------------------------------------------
def _arg_infer(ctx):
    xs = ctx.shape("X")
    if ctx.attr("dtype") not in (dtypes.to_code("int32"), dtypes.to_code("int64")):
        ctx.fail("dtype must be int32 or int64", slot="X", expected="dtype 2 or 3",
                 given=f"dtype={ctx.attr('dtype')}")
    if ctx.attr("flatten"):
        shape = [1] * len(xs) if ctx.attr("keepdims") else []
    else:
        axis = _axis_in(ctx, ctx.attr("axis"), len(xs))
        shape = [1 if i == axis else d for i, d in enumerate(xs)] if ctx.attr("keepdims") \
            else [d for i, d in enumerate(xs) if i != axis]
        if xs and xs[axis] == 0:
            ctx.fail("the axis is empty: there is no extreme value", slot="X",
                     given=ctx.describe_input("X"))
    ctx.set_output("Out", shape, ctx.attr("dtype"))


def _arg(place, largest: bool):
    def run(ctx):
        x = ctx.input("X")
        dtype = dtypes.to_numpy(ctx.attr("dtype"))
        if ctx.attr("flatten") or x.ndim == 0:
            flat_x = x.reshape((-1,))
            out = place.arg_extreme(flat_x, 0, largest, dtype)
            shape = (1,) * x.ndim if ctx.attr("keepdims") else ()
        else:
            axis = ctx.attr("axis") % x.ndim
            out = place.arg_extreme(x, axis, largest, dtype)
            shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape)) \
                if ctx.attr("keepdims") else tuple(out.shape)
        ctx.set_output("Out", out.reshape(shape))
    return run


def _lowered_arg(largest: bool):
    """kernels/cpu/indexing.arg_extreme_of, for numbers (and bools) of 1 dim or more."""
    def lowered(info):
        dtype = info.dtype("X")
        if dtype.kind not in "biuf" or not numba_holds(dtype) or info.ndim("X") == 0:
            return None
        return Call(INDEXING.arg_extreme_of, ("X",), ("Out",),
                    (info.attr("axis") % info.ndim("X"), largest, info.attr("flatten"),
                     info.attr("keepdims"), zero_of(info.attr("dtype")), info.ndim("Out")))
    return lowered


for _type, _largest in (("arg_max", True), ("arg_min", False)):
    register(OpDef(
        _type, [X], [OUT],
        [Attr("axis", A.LONG, 0, "the axis searched"),
         Attr("keepdims", A.BOOLEAN, False, "keep the axis as size 1"),
         Attr("flatten", A.BOOLEAN, False, "search all of X as one row"),
         Attr("dtype", A.INT, 3, "VarType code of Out: int32 (2) or int64 (3)")],
        comment=f"Out = the index of the {'largest' if _largest else 'smallest'} value "
                "along axis (the first, on ties).",
        infer_shape=_arg_infer, kernels={"cpu": _arg(CPU, _largest),
                                         "cuda": _arg(CUDA, _largest)},
        lowered=_lowered_arg(_largest), grad=NO_GRADIENT))

