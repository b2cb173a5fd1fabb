"""crop_tensor: the block of X that starts at ``offsets`` and has ``shape``, and its gradient
(Fluid's slots and attributes, as ``paddle.crop`` saves them).

``shape[i] == -1`` keeps the rest of axis i from its offset (X's dim minus the offset, as
Paddle 2.6.2 does); every block must lie inside X. Both attributes may come as tensors,
which Fluid reads at run time instead (core/attr_tensors.py): ``ShapeTensor`` and
``OffsetsTensor`` are lists of one-element tensors (``paddle.crop(x, shape=[2, n])`` with a
tensor ``n``), ``Shape`` and ``Offsets`` one 1-D tensor each; a list wins over the 1-D
tensor, as in Paddle. Out's dims that depend on a tensor are -1 until the run.

The crop is one copy through an index map per axis (the places' ``gather_maps``: axis i
reads X at offsets[i] + o); the gradient sends dOut back through the same maps into zeros
of X's shape (``scatter_maps``). Paddle's crop_tensor_grad has no shape inputs: it reads the
block's shape from dOut, as here.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from . import arrays
from ..kernels.cpu import axis_maps as KA
from ..kernels.lowered import Call
from .common import OUT, X, build_fail, numba_holds, run_fail
from ..backends import CPU, CUDA

# the element types Paddle 2.6.2's CPU crop kernel is registered for
CROPPABLE = ("int32", "int64", "float32", "float64")
SHAPE_SLOTS = [Slot("Shape", "shape as a 1-D int tensor (read at run time)", dispensable=True),
               Slot("ShapeTensor", "shape as one-element int tensors (read at run time)",
                    dispensable=True, duplicable=True)]
OFFSET_SLOTS = [Slot("Offsets", "offsets as a 1-D int tensor (read at run time)",
                     dispensable=True),
                Slot("OffsetsTensor", "offsets as one-element int tensors (read at run time)",
                     dispensable=True, duplicable=True)]


class _Unknown(int):
    """An offset a tensor gives, not known at build time."""


def _block(x_shape, shape, offsets, fail) -> list[int]:
    """The cropped block's shape (-1 where a value is not known yet), checked inside X."""
    rank = len(x_shape)
    for name, values in (("shape", shape), ("offsets", offsets)):
        if len(values) != rank:
            fail(f"{name} needs one entry per axis of X", expected=f"{rank} entries",
                 given=f"{name}={list(values)}")
    out = []
    for i, (n, size, start) in enumerate(zip(x_shape, shape, offsets)):
        if start < 0 and not isinstance(start, _Unknown):
            fail("offsets may not be negative", expected="offsets >= 0",
                 given=f"offsets={list(offsets)}")
        if size < -1:
            fail("a crop size is >= 0, or -1 for the rest of the axis",
                 expected="shape entries >= -1", given=f"shape={list(shape)}")
        if isinstance(start, _Unknown) or n < 0:
            out.append(size if size >= 0 else -1)
            continue
        size = n - start if size == -1 else size
        if size < 0 or start + size > n:
            fail(f"the block leaves X along axis {i}",
                 expected=f"offsets[{i}] + shape[{i}] <= {n}",
                 given=f"offsets={list(offsets)}, shape={list(shape)}")
        out.append(size)
    return out


def _crop_infer(ctx):
    if dtypes.name(ctx.dtype("X")) not in CROPPABLE:
        ctx.fail("crop_tensor needs int32, int64, float32 or float64 elements (Paddle's CPU "
                 "kernels)", slot="X", expected="one of those", given=ctx.describe_input("X"))
    xs = ctx.shape("X")
    shape = ctx.int_list_attr("shape")
    offsets = [int(o) for o in ctx.attr("offsets") or []]
    if ctx.attr_from_tensor("offsets"):
        offsets = [_Unknown(0) for _ in range(len(ctx.int_list_attr("offsets")))]
        if len(offsets) != len(xs):        # a 1-D tensor of unknown length
            offsets = [_Unknown(0)] * len(xs)
    if ctx.attr_from_tensor("shape") and len(shape) != len(xs):
        shape = [-1] * len(xs)
    fail = build_fail(ctx, "X")
    out = _block(xs, shape, offsets, fail)
    if ctx.attr_from_tensor("shape"):     # a size -1 from a tensor is not "the rest" yet
        out = [-1 if s < 0 else s for s in out]
    ctx.set_output("Out", out, ctx.dtype("X"))


def _crop_grad_infer(ctx):
    """X@GRAD has X's shape. The block's shape comes from Out@GRAD: the grad op has no
    shape inputs (Paddle's neither), so a shape a tensor gave is only -1s in the attribute."""
    ctx.set_output("X@GRAD", ctx.shape("X"), ctx.dtype("X"))


def _maps(x_shape, block, offsets) -> list[np.ndarray]:
    return [KA.axis_map(n, KA.BLOCK, start, size)
            for n, start, size in zip(x_shape, offsets, block)]


def _crop(place):
    def run(ctx):
        x = ctx.input("X")
        xs = tuple(int(d) for d in x.shape)
        offsets = [int(o) for o in ctx.attr("offsets") or []]
        block = _block(xs, [int(s) for s in ctx.attr("shape") or []], offsets,
                       run_fail("crop_tensor", "X"))
        ctx.set_output("Out", place.gather_maps(x, _maps(xs, block, offsets)))
    return run


def _crop_grad(place):
    """dX: zeros, with dOut where the block was taken from."""
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        xs = tuple(int(d) for d in x.shape)
        offsets = [int(o) for o in ctx.attr("offsets") or []]
        block = _block(xs, [int(d) for d in dout.shape], offsets, run_fail("crop_tensor_grad", "X"))
        dout = arrays.astype(dout, x.dtype)
        ctx.set_output("X@GRAD", place.scatter_maps(xs, _maps(xs, block, offsets), dout))
    return run


# --- in a compiled block (kernels/lowered.py): kernels/cpu/axis_maps.py -----------------------
def _lowered_crop(grad: bool):
    """X through a BLOCK map per axis (offsets, shape; -1 the rest, found when the block
    runs); dX: dOut added back through them. The gradient's block is dOut's shape: where
    the attribute leaves a size to -1, that gradient stays interpreted."""
    def lowered(info):
        x, rank = info.dtype("X"), info.ndim("X")
        shape = [int(d) for d in info.attr("shape") or []]
        offsets = [int(o) for o in info.attr("offsets") or []]
        if not numba_holds(x) or rank == 0 or len(shape) != rank or len(offsets) != rank:
            return None
        rules = tuple((KA.BLOCK, o, s) for o, s in zip(offsets, shape))
        if not grad:
            return Call(KA.mapped, ("X",), ("Out",), (rules, 0, rank))
        if -1 in shape or info.dtype("Out@GRAD") != x:
            return None
        return Call(KA.mapped_back, ("X", "Out@GRAD"), ("X@GRAD",), (rules,))
    return lowered


register(OpDef(
    "crop_tensor", [X] + SHAPE_SLOTS + OFFSET_SLOTS, [OUT],
    [Attr("shape", A.INTS, [], "the block's shape (-1: the rest of the axis)"),
     Attr("offsets", A.INTS, [], "where the block starts along each axis")],
    comment="Out = X[offsets[0]:offsets[0]+shape[0], ...] (shape -1: to the end).",
    infer_shape=_crop_infer, kernels={"cpu": _crop(CPU), "cuda": _crop(CUDA)},
    lowered=_lowered_crop(grad=False),
    grad=Grad(reads=["X", "Offsets", "OffsetsTensor"], writes=["X"],
              kernel=_crop_grad(CPU), cuda_kernel=_crop_grad(CUDA),
              infer_shape=_crop_grad_infer, lowered=_lowered_crop(grad=True)),
    reads_attr_tensors=("Shape", "ShapeTensor", "Offsets", "OffsetsTensor")))
