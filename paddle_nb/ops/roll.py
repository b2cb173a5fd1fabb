"""roll: X's elements shifted along axes, those pushed off one end coming back at the other,
and its gradient (Fluid's slots and attributes, as ``paddle.roll`` saves them).

``shifts[i]`` moves every element ``shifts[i]`` places along ``axis[i]`` (negative: back);
an axis named twice is shifted by the sum, as in Paddle. With ``axis`` empty the tensor is
rolled as if flattened (one shift), then given its shape back. Shifts may also come as a
tensor, ``ShiftsTensor`` (one int per shifted axis), which Fluid reads at run time instead
of the attribute (``paddle.roll(x, shifts=t)`` with a tensor ``t`` saves ``shifts=[]``).

Each roll is a copy through one index map per axis, as slice and flip are (the places'
``gather_maps``): output position o along a rolled axis of n reads X at (o - shift) mod n.
The gradient rolls dOut back by the opposite shifts (Paddle's ``roll_grad``).
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

# the element types Paddle's CPU roll kernel is registered for (complex aside)
ROLLABLE = ("int32", "int64", "float32", "float64")
SHIFTS_TENSOR = Slot("ShiftsTensor", "shifts as a 1-D int tensor (read at run time, instead "
                                     "of the attribute)", dispensable=True)


def _check_counts(shifts, axes, rank: int, fail) -> None:
    """One shift per axis (one shift for the flattened roll); every axis in range."""
    for a in axes:
        if not -rank <= a < rank:
            fail(f"axis {a} is out of range", expected=f"axes in [{-rank}, {rank - 1}]",
                 given=f"axis={list(axes)} for a rank-{rank} X")
    if axes and len(shifts) != len(axes):
        fail("shifts needs one entry per axis", expected=f"{len(axes)} shifts (axis="
             f"{list(axes)})", given=f"shifts={list(shifts)}")
    if not axes and len(shifts) != 1:
        fail("with axis empty, X is rolled flattened: one shift", expected="1 shift",
             given=f"shifts={list(shifts)}")


def _roll_infer(ctx):
    fail = build_fail(ctx, "X")
    if dtypes.name(ctx.dtype("X")) not in ROLLABLE:
        ctx.fail("roll needs int32, int64, float32 or float64 elements (Paddle's CPU "
                 "kernels)", slot="X", expected="one of those", given=ctx.describe_input("X"))
    axes = list(ctx.attr("axis") or [])
    if ctx.attr_from_tensor("shifts"):       # ShiftsTensor's, counted when it is read
        if len(ctx.shape("ShiftsTensor")) > 1:
            ctx.fail("ShiftsTensor holds one shift per axis", slot="ShiftsTensor",
                     expected="a 1-D int tensor", given=ctx.describe_input("ShiftsTensor"))
        shifts = [0] * max(len(axes), 1)
    else:                                    # the attribute, or at run time the tensor's
        shifts = list(ctx.attr("shifts") or [])
    _check_counts(shifts, axes, len(ctx.shape("X")), fail)
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _shifts(ctx) -> list[int]:
    """The shifts: the attribute, or ShiftsTensor's values where it is given (ctx.attr:
    core/attr_tensors.py)."""
    return [int(s) for s in ctx.attr("shifts") or []]


def _rolled(place, x, shifts, axes, op_type: str):
    """x rolled by ``shifts`` along ``axes`` (empty: flattened), as a new array."""
    shape = tuple(int(d) for d in x.shape)
    _check_counts(shifts, axes, len(shape), run_fail(op_type))
    if not axes:                             # the flattened roll: one axis of every element
        flat = x.reshape((int(np.prod(shape, dtype=np.int64)),))
        return _rolled(place, flat, shifts, [0], op_type).reshape(shape)
    maps = [KA.axis_map(n, kind, shift, 0) for n, (kind, shift, _) in
            zip(shape, _rules(shifts, axes, len(shape)))]
    return place.gather_maps(x, maps)


def _rules(shifts, axes, rank: int) -> tuple:
    """(ROLL, the axis' total shift, 0) per axis of a rank-``rank`` X (kernels/cpu/
    axis_maps.py): an axis named twice moves by the sum."""
    total = [0] * rank
    for s, a in zip(shifts, axes):
        total[a % rank] += s
    return tuple((KA.ROLL, s, 0) for s in total)


def _roll(place):
    def run(ctx):
        ctx.set_output("Out", _rolled(place, ctx.input("X"), _shifts(ctx),
                                      list(ctx.attr("axis") or []), "roll"))
    return run


def _roll_grad(place):
    """dX: dOut rolled back (the opposite shifts)."""
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        back = [-s for s in _shifts(ctx)]
        dout = arrays.astype(dout, x.dtype).reshape(tuple(int(d) for d in x.shape))
        ctx.set_output("X@GRAD", _rolled(place, dout, back, list(ctx.attr("axis") or []),
                                         "roll_grad"))
    return run


# --- in a compiled block (kernels/lowered.py): kernels/cpu/axis_maps.py -----------------------
def _lowered_roll(grad: bool):
    """X (dX: dOut) through ROLL maps (the opposite shifts for dX); an empty axis rolls
    X seen flat (axis_maps.rolled_flat)."""
    def lowered(info):
        src = "Out@GRAD" if grad else "X"
        if not numba_holds(info.dtype(src)) or info.dtype(src) != info.dtype("X") or \
                info.ndim("X") == 0 or (grad and info.shape(src) != info.shape("X")):
            return None
        shifts = [(-1 if grad else 1) * int(s) for s in info.attr("shifts") or []]
        axes = list(info.attr("axis") or [])
        reads, writes = (src,), ("X@GRAD" if grad else "Out",)
        if not axes:
            return Call(KA.rolled_flat, reads, writes, (shifts[0], info.ndim("X")))
        rank = info.ndim("X")
        return Call(KA.mapped, reads, writes, (_rules(shifts, axes, rank), 0, rank))
    return lowered


register(OpDef(
    "roll", [X, SHIFTS_TENSOR], [OUT],
    [Attr("shifts", A.LONGS, [], "how far to move along each axis (negative: back)"),
     Attr("axis", A.LONGS, [], "the axes rolled (empty: X rolled flattened)")],
    comment="Out = X shifted along each of axis by shifts, wrapping around (axis empty: "
            "flattened).",
    infer_shape=_roll_infer, kernels={"cpu": _roll(CPU), "cuda": _roll(CUDA)},
    lowered=_lowered_roll(grad=False),
    grad=Grad(reads=["X", "ShiftsTensor"], writes=["X"],
              kernel=_roll_grad(CPU), cuda_kernel=_roll_grad(CUDA),
              lowered=_lowered_roll(grad=True)),
    reads_attr_tensors=("ShiftsTensor",)))
