"""tril_triu: the lower (or upper) triangle of each matrix in X, zeros elsewhere, and its
gradient (Fluid's slots and attributes, as ``paddle.tril`` and ``paddle.triu`` save them:
both are this one op, ``lower`` saying which).

X's last two dims are the matrices (rows i, columns j; any dims before them are a batch).
``lower`` keeps the elements with j - i <= diagonal, the upper triangle those with
j - i >= diagonal: diagonal 0 is the main diagonal, positive ones lie above it, negative
ones below. The kept positions are one [rows, cols] bool mask, made on the host (it
depends only on the attributes and the two dims: kernels/cpu/triangle.py, which a compiled
block's form calls too) and broadcast over the batch by the
``select`` pointwise kernel (ops/elementwise.py: where's), which writes zeros elsewhere:
a NaN outside the triangle becomes 0 as in Paddle, not NaN * 0. The gradient is the same
mask on dOut. Paddle's ``tril_triu_grad`` reads only Out@GRAD; this package's backward
also passes X (optional), so the gradient's shape rule can check dOut against X.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..kernels.cuda import device
from . import arrays
from ..kernels.cpu.triangle import triangle_mask, triangle_of
from ..kernels.lowered import Call
from .common import OUT, X
from .elementwise import select
from ..backends import CPU, CUDA

# the element types the select kernel has loops for (Paddle's CPU kernel has these too)
MASKABLE = ("bool", "int32", "int64", "float32", "float64")


def _on(place, array: np.ndarray):
    """``array`` (small, made on the host) on ``place``: a device copy on CUDA."""
    return device.to_device(array) if place is CUDA else array


def _triangle_infer(ctx):
    if dtypes.name(ctx.dtype("X")) not in MASKABLE:
        ctx.fail("tril_triu needs bool, int32, int64, float32 or float64 elements",
                 slot="X", expected="one of those", given=ctx.describe_input("X"))
    ctx.require_rank("X", 2)
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _triangle_mask(rows: int, cols: int, diagonal: int, lower: bool) -> np.ndarray:
    """The [rows, cols] bool mask of the triangle: j - i <= diagonal (lower) or
    j - i >= diagonal (upper); kernels/cpu/triangle.py, the rule's one home."""
    return triangle_mask(rows, cols, diagonal, lower)


def _masked(place, ctx, value, out_slot: str):
    """``value`` where the triangle is, zeros elsewhere (the attributes say which)."""
    shape = tuple(int(d) for d in value.shape)    # (a plain tuple: the simulator's shapes
    rows, cols = shape[-2], shape[-1]              # refuse negative indices)
    mask = _on(place, _triangle_mask(rows, cols, ctx.attr("diagonal"), ctx.attr("lower")))
    # a zero of rank 1, not 0-d: CUDA's broadcast loop reads no 0-d operand
    zero = _on(place, np.zeros(1, value.dtype))
    return place.apply(select, mask, value, zero, out=ctx.out(out_slot, shape, value.dtype),
                       out_dtype=value.dtype)


def _triangle(place):
    def run(ctx):
        ctx.set_output("Out", _masked(place, ctx, ctx.input("X"), "Out"))
    return run


def _triangle_grad(place):
    """dX: dOut inside the triangle, zeros outside."""
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        x = ctx.input_or_none("X")
        if x is not None:
            dout = arrays.astype(dout, x.dtype)
        if dout.ndim < 2:
            raise ValueError(f"tril_triu_grad: slot Out@GRAD: expected a tensor of rank 2 "
                             f"or more (matrices), given shape {list(dout.shape)}")
        ctx.set_output("X@GRAD", _masked(place, ctx, dout, "X@GRAD"))
    return run


def _lowered_triangle(grad: bool):
    """kernels/cpu/triangle.triangle_of of X (dX: of dOut, in X's dtype)."""
    def lowered(info):
        src = "Out@GRAD" if grad else "X"
        if info.ndim(src) < 2 or info.dtype(src).name not in MASKABLE or (
                grad and info.has_input("X") and info.dtype("X") != info.dtype(src)):
            return None
        return Call(triangle_of, (src,), ("X@GRAD" if grad else "Out",),
                    (int(info.attr("diagonal")), bool(info.attr("lower"))))
    return lowered


register(OpDef(
    "tril_triu", [X], [OUT],
    [Attr("diagonal", A.INT, 0, "which diagonal bounds the triangle (0: the main one, "
                                "positive: above it, negative: below)"),
     Attr("lower", A.BOOLEAN, True, "keep the lower triangle (False: the upper)")],
    comment="Out = X's lower (lower=True: j - i <= diagonal) or upper (j - i >= diagonal) "
            "triangle of each matrix in its last two dims, zeros elsewhere.",
    infer_shape=_triangle_infer,
    kernels={"cpu": _triangle(CPU), "cuda": _triangle(CUDA)},
    lowered=_lowered_triangle(grad=False),
    grad=Grad(reads=["X"], optional=("X",), writes=["X"],
              kernel=_triangle_grad(CPU), cuda_kernel=_triangle_grad(CUDA),
              lowered=_lowered_triangle(grad=True))))
