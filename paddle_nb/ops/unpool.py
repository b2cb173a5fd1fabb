"""Max unpooling: unpool (2-D) and unpool3d, the inverse of max_pool{2,3}d_with_index, and
their gradients (Fluid's slots and attributes, as ``F.max_unpool1d``, ``F.max_unpool2d``
and ``F.max_unpool3d`` save them in Paddle 2.6.2; the 1-D one is the 2-D op on a height
of 1).

Out is ``output_size`` big, zeros except where Indices points: each X value goes to the
flat position its Indices element names in its own plane (volume) of Out, the Mask a max
pool saved. ``ksize``, ``strides`` and ``paddings`` are the pool's (Paddle's layers use
them to work out ``output_size``); the op itself reads only ``output_size``, as Paddle's
does. Indices come from the data, so they are range-checked before anything is written:
a position outside the output plane is an error naming the op, the slot, the range and
the value. The gradient reads dOut at the same positions (Paddle's ``unpool_grad``), for
the value that stayed at each: where Indices repeat a position, the later value stays in
Out and the earlier ones get 0 (Paddle 2.6.2 gives each of them dOut; central
differences say 0). Kernels: kernels/cpu/unpool.py and kernels/cuda/unpool.py.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import unpool as CPU_UNPOOL
from ..kernels.cuda import unpool as CUDA_UNPOOL
from ..kernels.lowered import Call
from . import arrays
from .common import OUT, X, build_fail, run_fail

KERNELS = {"cpu": CPU_UNPOOL, "cuda": CUDA_UNPOOL}
INDICES = Slot("Indices", "where each X value goes: its flat position in Out's plane "
                          "(volume), as max_pool{2,3}d_with_index's Mask (int32 or int64)")
# the element types Paddle's CPU unpool kernels are registered for
UNPOOLABLE = ("int32", "int64", "float32", "float64")
LAYOUT = {2: "NCHW", 3: "NCDHW"}                 # the only layout Paddle's unpool takes
AXES = {2: "h, w", 3: "d, h, w"}


def _check_attrs(attr, dims, fail) -> list[int]:
    """output_size, after checking the attributes the op reads."""
    if dims == 2 and attr("unpooling_type") != "max":
        fail("unpooling_type must be max", expected="'max'",
             given=f"unpooling_type={attr('unpooling_type')!r}")
    if attr("data_format") != LAYOUT[dims]:
        fail(f"data_format must be {LAYOUT[dims]} (Paddle's unpool takes no other)",
             expected=repr(LAYOUT[dims]), given=f"data_format={attr('data_format')!r}")
    for name in ("ksize", "output_size"):
        values = list(attr(name) or [])
        if len(values) != dims or any(not isinstance(v, int) or v < 1 for v in values):
            fail(f"{name} needs {dims} ints ({AXES[dims]}), each at least 1",
                 expected=f"[{AXES[dims]}] each >= 1", given=f"{name}={values}")
    return list(attr("output_size"))


def _out_shape(ctx, dims) -> list[int]:
    fail = build_fail(ctx, "X")
    if dtypes.name(ctx.dtype("X")) not in UNPOOLABLE:
        fail(f"{ctx.op_def.type} needs int32, int64, float32 or float64 elements (Paddle's "
             "CPU kernels)", expected="one of those", given=ctx.describe_input("X"))
    ctx.require_dtype("Indices", "int")
    xs, ids = ctx.shape("X"), ctx.shape("Indices")
    if len(xs) != 2 + dims:
        fail(f"needs a {2 + dims}-D tensor", expected=f"{LAYOUT[dims]}",
             given=ctx.describe_input("X"))
    if len(ids) != len(xs) or any(a >= 0 and b >= 0 and a != b for a, b in zip(xs, ids)):
        ctx.fail("Indices must have X's shape (one position per value)", slot="Indices",
                 expected=f"shape {xs}", given=ctx.describe_input("Indices"))
    return [xs[0], xs[1], *_check_attrs(ctx.attr, dims, fail)]


def _infer(dims):
    def infer(ctx):
        ctx.set_output("Out", _out_shape(ctx, dims), ctx.dtype("X"))
    return infer


def _grad_infer(dims):
    """dOut must have Out's shape: its elements are read at Indices' positions."""
    def infer(ctx):
        shape = _out_shape(ctx, dims)
        got = ctx.shape("Out@GRAD")
        if len(got) != len(shape) or any(a >= 0 and b >= 0 and a != b
                                         for a, b in zip(got, shape)):
            ctx.fail("Out@GRAD must have the unpooled output's shape", slot="Out@GRAD",
                     expected=str(shape), given=ctx.describe_input("Out@GRAD"))
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", ctx.shape("X"), ctx.dtype("X"))
    return infer


def _flat_indices(ctx, op_type, dims):
    """(X, Indices) as (N*C, K), Out's shape, and the size of one output plane (volume),
    the indices checked against it."""
    x, indices = ctx.input("X"), ctx.input("Indices")
    out_size = _check_attrs(ctx.attr, dims, run_fail(op_type))
    n, c = (int(d) for d in x.shape[:2])
    k, size = int(np.prod(x.shape[2:], dtype=np.int64)), int(np.prod(out_size))
    if tuple(indices.shape) != tuple(x.shape):
        run_fail(op_type)("Indices must have X's shape", expected=str(tuple(x.shape)),
                               given=str(tuple(indices.shape)))
    where = "plane" if dims == 2 else "volume"
    check.indices(indices, size, slot="Indices", what=f"position in Out's {where}",
                  counted=f"each {where} of Out holds {size} (output_size {out_size})")
    return (x.reshape((n * c, k)), indices.reshape((n * c, k)), (n, c, *out_size), size)


def _unpool(kind, op_type, dims):
    def run(ctx):
        x, indices, shape, size = _flat_indices(ctx, op_type, dims)
        ctx.set_output("Out", KERNELS[kind].unpool(x, indices, size).reshape(shape))
    return run


def _unpool_grad(kind, op_type, dims):
    def run(ctx):
        x, indices, shape, size = _flat_indices(ctx, op_type, dims)
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape((x.shape[0], size))
        dx = KERNELS[kind].unpool_grad(indices, dout)
        ctx.set_output("X@GRAD", dx.reshape(ctx.input("X").shape))
    return run


def _lowered(dims, grad: bool):
    """kernels/cpu/unpool.unpooled (unpooled_grad): the serial loops, Indices checked
    there; Out's size is output_size's, an attribute."""
    def lowered(info):
        if info.attr("data_format") != LAYOUT[dims] or \
                (dims == 2 and info.attr("unpooling_type") != "max"):
            return None
        if grad and info.dtype("Out@GRAD") != info.dtype("X"):
            return None
        out = info.shape("Out@GRAD" if grad else "Out")
        if math.prod(out) >= CPU_UNPOOL.MIN_PARALLEL_UNPOOL:
            return "large: the interpreter splits it across the cores"
        if grad:
            return Call(CPU_UNPOOL.unpooled_grad, ("X", "Indices", "Out@GRAD"), ("X@GRAD",))
        return Call(CPU_UNPOOL.unpooled, ("X", "Indices"), ("Out",),
                    (tuple(int(v) for v in info.attr("output_size")),))
    return lowered


def _attrs(dims):
    axes = f"[{AXES[dims]}]"
    attrs = [Attr("ksize", A.INTS, [], f"the pool's window {axes}"),
             Attr("strides", A.INTS, [1] * dims, f"the pool's strides {axes}"),
             Attr("paddings", A.INTS, [0] * dims, f"the pool's paddings {axes}"),
             Attr("output_size", A.INTS, [], f"Out's spatial size {axes}"),
             Attr("data_format", A.STRING, LAYOUT[dims], f"{LAYOUT[dims]} only")]
    if dims == 2:
        attrs.insert(1, Attr("unpooling_type", A.STRING, "max", "max only"))
    return attrs


for _dims, _type in ((2, "unpool"), (3, "unpool3d")):
    register(OpDef(
        _type, [X, INDICES], [OUT], _attrs(_dims),
        comment=f"Out = zeros of output_size, with each X value at its Indices position in "
                f"its {'plane' if _dims == 2 else 'volume'}.",
        infer_shape=_infer(_dims),
        kernels={"cpu": _unpool("cpu", _type, _dims), "cuda": _unpool("cuda", _type, _dims)},
        lowered=_lowered(_dims, grad=False),
        grad=Grad(reads=["X", "Indices", "Out"], writes=["X"],
                  kernel=_unpool_grad("cpu", _type + "_grad", _dims),
                  cuda_kernel=_unpool_grad("cuda", _type + "_grad", _dims),
                  infer_shape=_grad_infer(_dims),
                  lowered=_lowered(_dims, grad=True))))
