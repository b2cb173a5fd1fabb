"""Borders around a tensor: pad (a constant around every dim) and pad3d (the three
spatial dims of a 5-D tensor, in constant, reflect, replicate or circular mode), with
Fluid's slots and attributes as ``F.pad`` saves them, and their gradients.

Both are copies through one index map per axis, as slice.py's ops (the places'
``gather_maps``): output position o along an axis reads X at ``o - before`` mapped back
into the axis by the mode (reflected at the edges, clamped to them, or wrapped around),
or nowhere (-1) in constant mode, where the pad value goes. The gradient adds dOut back
through the same maps (``scatter_maps``): a reflected or replicated X element receives
every output it was copied to. Negative paddings (a crop) are refused.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import axis_maps as KA
from ..kernels.lowered import Call
from .common import OUT, X, numba_holds, run_fail
from ..backends import CPU, CUDA

MODES = ("constant", "reflect", "replicate", "circular")
# pad3d's spatial axes (D, H, W) for each layout
SPATIAL = {"NCDHW": (2, 3, 4), "NDHWC": (1, 2, 3)}


def axis_map(n: int, before: int, after: int, mode: str) -> np.ndarray:
    """Where each of the ``before + n + after`` output positions reads an axis of n (the
    rule's one home: kernels/cpu/axis_maps.py)."""
    return KA.axis_map(n, KA.PAD_KINDS[mode], before, after)


def check_fill(ctx, attr: str) -> None:
    """The fill value must be one X's element type holds (an int X: a finite value in
    its range), or numpy would store garbage."""
    value, code = ctx.attr(attr), ctx.dtype("X")
    kind = dtypes._TO_NUMPY.get(code)
    if kind is None or kind.kind not in "iu":
        return
    info = np.iinfo(kind)
    if not (math.isfinite(value) and info.min <= value <= info.max):
        ctx.fail(f"{attr} {value!r} does not fit X's element type", slot="X",
                 expected=f"a finite value in [{info.min}, {info.max}] for {kind.name}",
                 given=f"{attr}={value!r}")


def _non_negative(ctx, paddings):
    if any(p < 0 for p in paddings):
        ctx.fail("paddings must not be negative (a crop is a slice)", slot="X",
                 expected="every padding >= 0", given=f"paddings={list(paddings)}")


# --- pad ----------------------------------------------------------------------------------------
def _pairs(paddings) -> list:
    return [(paddings[2 * i], paddings[2 * i + 1]) for i in range(len(paddings) // 2)]


def _pad_infer(ctx):
    ctx.require_dtype("X", "real")
    xs, paddings = ctx.require_rank("X", 1), ctx.attr("paddings")
    if len(paddings) != 2 * len(xs):
        ctx.fail("paddings needs a (before, after) pair per dim of X", slot="X",
                 expected=f"{2 * len(xs)} entries", given=f"paddings={list(paddings)} for "
                                                     f"{ctx.describe_input('X')}")
    _non_negative(ctx, paddings)
    check_fill(ctx, "pad_value")
    ctx.set_output("Out", [d + b + a if d >= 0 else -1 for d, (b, a) in
                           zip(xs, _pairs(paddings))], ctx.dtype("X"))


def _pad(place):
    def run(ctx):
        x = ctx.input("X")
        maps = [axis_map(int(n), b, a, "constant")
                for n, (b, a) in zip(x.shape, _pairs(ctx.attr("paddings")))]
        ctx.set_output("Out", place.gather_maps(x, maps, ctx.attr("pad_value")))
    return run


def _pad_grad(place):
    """dX: the middle of dOut, without the borders (Paddle's pad_grad reads dOut only)."""
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        pairs = _pairs(ctx.attr("paddings"))
        if len(pairs) != dout.ndim or any(int(d) < b + a for d, (b, a) in
                                          zip(dout.shape, pairs)):
            run_fail("pad_grad")("Out@GRAD is not a padded tensor",
                                      given=f"shape {list(dout.shape)}")
        maps = [KA.axis_map(int(d), KA.CROP, b, a) for d, (b, a) in zip(dout.shape, pairs)]
        ctx.set_output("X@GRAD", place.gather_maps(dout, maps))
    return run


def _pad_grad_infer(ctx):
    """X@GRAD is Out@GRAD without its borders; given X (this package's backward), Out@GRAD
    must be X padded."""
    pairs = _pairs(ctx.attr("paddings"))
    if ctx.has_input("X") and ctx.has_value("X"):
        xs = ctx.shape("X")
        ctx.require_gradient_fits("Out", want=[d + b + a if d >= 0 else -1
                                               for d, (b, a) in zip(xs, pairs)])
        ctx.set_output("X@GRAD", xs, ctx.dtype("Out@GRAD"))
        return
    ds = ctx.shape("Out@GRAD")
    xs = [d - b - a if d >= 0 else -1 for d, (b, a) in zip(ds, pairs)]
    if len(pairs) != len(ds) or any(0 <= d < b + a for d, (b, a) in zip(ds, pairs)):
        ctx.fail("Out@GRAD is not a padded tensor", slot="Out@GRAD",
                 expected=f"rank {len(pairs)}, each dim at least its two paddings",
                 given=ctx.describe_input("Out@GRAD"))
    ctx.set_output("X@GRAD", xs, ctx.dtype("Out@GRAD"))


# --- in a compiled block (kernels/lowered.py): kernels/cpu/axis_maps.py -----------------------
def _lowered_pad(info):
    """Out: X through a CONSTANT map per axis, pad_value where they read nowhere."""
    if not numba_holds(info.dtype("X")) or info.ndim("X") == 0:
        return None
    rules = tuple((KA.CONSTANT, b, a) for b, a in _pairs(info.attr("paddings")))
    return Call(KA.mapped, ("X",), ("Out",),
                (rules, float(info.attr("pad_value")), info.ndim("X")))


def _lowered_pad_grad(info):
    """dX: dOut through a CROP map per axis (its middle)."""
    if not numba_holds(info.dtype("Out@GRAD")) or info.ndim("Out@GRAD") == 0:
        return None
    rules = tuple((KA.CROP, b, a) for b, a in _pairs(info.attr("paddings")))
    return Call(KA.mapped, ("Out@GRAD",), ("X@GRAD",), (rules, 0.0, info.ndim("Out@GRAD")))


register(OpDef(
    "pad", [X], [OUT],
    [Attr("paddings", A.INTS, [], "(before, after) for each dim of X, in order"),
     Attr("pad_value", A.FLOAT, 0.0, "the value of the border")],
    comment="Out = X with pad_value borders around each dim.", infer_shape=_pad_infer,
    kernels={"cpu": _pad(CPU), "cuda": _pad(CUDA)}, lowered=_lowered_pad,
    grad=Grad(reads=["X"], optional=("X",), writes=["X"], kernel=_pad_grad(CPU),
              cuda_kernel=_pad_grad(CUDA), infer_shape=_pad_grad_infer,
              lowered=_lowered_pad_grad)))


# --- pad3d --------------------------------------------------------------------------------------
def _spatial_pads(paddings) -> list:
    """Paddle's order [left, right, top, bottom, front, back] (W, H, D) as (before,
    after) for D, H, W."""
    return [(paddings[4], paddings[5]), (paddings[2], paddings[3]), (paddings[0], paddings[1])]


def _pad3d_infer(ctx):
    ctx.require_dtype("X", "real")
    xs, paddings = ctx.shape("X"), ctx.attr("paddings")
    mode, layout = ctx.attr("mode"), ctx.attr("data_format")
    if len(xs) != 5:
        ctx.fail("pad3d pads a 5-D tensor", slot="X", expected="rank 5 (NCDHW or NDHWC)",
                 given=ctx.describe_input("X"))
    from_tensor = ctx.attr_from_tensor("paddings")      # known when it runs
    if len(paddings) != 6 and not from_tensor:
        ctx.fail("paddings needs 6 entries: left, right, top, bottom, front, back",
                 slot="X", expected="6 entries", given=f"paddings={list(paddings)}")
    if mode not in MODES:
        ctx.fail(f"unknown mode {mode!r}", slot="X", expected=" or ".join(MODES),
                 given=f"mode={mode!r}")
    if layout not in SPATIAL:
        ctx.fail(f"unknown data_format {layout!r}", slot="X", expected="NCDHW or NDHWC",
                 given=f"data_format={layout!r}")
    if from_tensor:
        ctx.set_output("Out", [-1 if i in SPATIAL[layout] else d for i, d in enumerate(xs)],
                       ctx.dtype("X"))
        return
    _non_negative(ctx, paddings)
    if mode == "constant":
        check_fill(ctx, "value")
    out = list(xs)
    for axis, (b, a) in zip(SPATIAL[layout], _spatial_pads(paddings)):
        n = xs[axis]
        if n >= 0 and mode == "reflect" and max(b, a) >= n:
            ctx.fail("reflect mode mirrors inside the dim: each padding must be smaller "
                     "than it", slot="X", expected=f"paddings < {n} along axis {axis}",
                     given=f"({b}, {a}) for {ctx.describe_input('X')}")
        if n == 0 and mode != "constant" and max(b, a) > 0:
            ctx.fail(f"{mode} mode copies from the dim, and axis {axis} is empty",
                     slot="X", expected="a non-empty dim", given=ctx.describe_input("X"))
        out[axis] = n + b + a if n >= 0 else -1
    ctx.set_output("Out", out, ctx.dtype("X"))


def _pad3d_maps(ctx, shape) -> list:
    maps = [np.arange(n, dtype=np.int64) for n in shape]
    mode = ctx.attr("mode")
    for axis, (b, a) in zip(SPATIAL[ctx.attr("data_format")],
                            _spatial_pads(ctx.attr("paddings"))):
        maps[axis] = axis_map(shape[axis], b, a, mode)
    return maps


def _pad3d(place):
    def run(ctx):
        x = ctx.input("X")
        maps = _pad3d_maps(ctx, tuple(int(d) for d in x.shape))
        ctx.set_output("Out", place.gather_maps(x, maps, ctx.attr("value")))
    return run


def _pad3d_grad(place):
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        shape = tuple(int(d) for d in x.shape)
        ctx.set_output("X@GRAD", place.scatter_maps(shape, _pad3d_maps(ctx, shape), dout))
    return run


def _pad3d_rules(info) -> tuple:
    """(kind, before, after) per axis of X: KEEP but for the three spatial ones."""
    rules = [(KA.KEEP, 0, 0)] * 5
    for axis, (b, a) in zip(SPATIAL[info.attr("data_format")],
                            _spatial_pads(info.attr("paddings"))):
        rules[axis] = (KA.PAD_KINDS[info.attr("mode")], b, a)
    return tuple(rules)


def _lowered_pad3d(grad: bool):
    """Out: X through _pad3d_rules' maps (value where they read nowhere); dX: dOut added
    back through them."""
    def lowered(info):
        if not numba_holds(info.dtype("X")) or (grad and info.dtype("Out@GRAD") !=
                                                 info.dtype("X")):
            return None
        if grad:
            return Call(KA.mapped_back, ("X", "Out@GRAD"), ("X@GRAD",), (_pad3d_rules(info),))
        return Call(KA.mapped, ("X",), ("Out",),
                    (_pad3d_rules(info), float(info.attr("value")), 5))
    return lowered


register(OpDef(
    "pad3d", [X, Slot("Paddings", "paddings as a tensor", dispensable=True)], [OUT],
    [Attr("paddings", A.INTS, [0] * 6, "left, right, top, bottom, front, back (W, H, D)"),
     Attr("mode", A.STRING, "constant", "constant, reflect, replicate or circular"),
     Attr("value", A.FLOAT, 0.0, "the border's value in constant mode"),
     Attr("data_format", A.STRING, "NCDHW", "NCDHW or NDHWC")],
    comment="Out = X (5-D) with borders around its three spatial dims.",
    infer_shape=_pad3d_infer, kernels={"cpu": _pad3d(CPU), "cuda": _pad3d(CUDA)},
    lowered=_lowered_pad3d(grad=False),
    grad=Grad(reads=["X", "Paddings"], writes=["X"], kernel=_pad3d_grad(CPU),
              cuda_kernel=_pad3d_grad(CUDA), lowered=_lowered_pad3d(grad=True)),
    reads_attr_tensors=("Paddings",)))
