"""Elementwise math of two or three tensors that Paddle added after Fluid's elementwise_*
family: elementwise_fmax, elementwise_fmin, elementwise_heaviside, atan2, nextafter, lerp
(the slots and attributes ``paddle.fmax``, ``paddle.heaviside``, ``paddle.atan2``,
``paddle.nextafter`` and ``paddle.lerp`` save in Paddle 2.6.2).

Unlike elementwise_add these have no ``axis`` attribute: operands broadcast the numpy way
(shapes lined up from the end), as Paddle's phi kernels do; atan2 alone wants X1 and X2 of
one shape (Paddle's shape rule copies X1's). The math of each is a scalar function under
``@pointwise`` (both places); the gradients are computed at the broadcast shape and summed
back to each operand (``arrays.unbroadcast``), as elementwise.py's are.

- fmax / fmin ignore a NaN where the other operand is a number (C's fmax); the gradient
  goes to X where X wins or ties (or Y is NaN), to Y elsewhere, as Paddle's.
- heaviside(x, y) is 0 for x < 0, y where x == 0, 1 for x > 0 (a NaN x gives 0, as
  Paddle's ``x == 0 ? y : x > 0``); its gradient reaches only Y, where x == 0.
- nextafter(x, y) is the float next to x in the direction of y, computed from the
  exponent (``frexp``) of x and the number of mantissa bits of the dtype, which the kernel
  receives as scalar parameters (float32 and float64 alike, on both places).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.framework_pb2 import VarType
from ..core.grad_maker import Grad
from ..core.registry import NO_GRADIENT, OpDef, Slot, register
from ..core.limits import check_tensor_size
from ..kernels.cpu.broadcast_sum import operand_gradient
from ..kernels.cpu.lazy_ufunc import FLOAT_2, FLOAT_3, INT_AND_FLOAT_2
from ..kernels.lowered import Call, Elementwise
from ..kernels.pointwise import pointwise
from . import arrays
from .common import FLOAT_TYPES, OUT, X, Y, broadcast_read, broadcast_shapes
from ..backends import CPU, CUDA

FLOAT_5 = ["float32(float32, float32, float32, float32, float32)",
           "float64(float64, float64, float64, float64, float64)"]
# atan2 of integers is float64, as Paddle's
ATAN2_TYPES = FLOAT_2 + ["float64(int32, int32)", "float64(int64, int64)"]


# --- the math -------------------------------------------------------------------------------
@pointwise(INT_AND_FLOAT_2)
def fmax(x, y):
    if x != x:
        return y
    return x if x >= y or y != y else y


@pointwise(INT_AND_FLOAT_2)
def fmin(x, y):
    if x != x:
        return y
    return x if x <= y or y != y else y


@pointwise(FLOAT_3)
def fmax_grad_x(x, y, dout):
    return dout if x >= y or y != y else dout * 0


@pointwise(FLOAT_3)
def fmax_grad_y(x, y, dout):
    return dout * 0 if x >= y or y != y else dout


@pointwise(FLOAT_3)
def fmin_grad_x(x, y, dout):
    return dout if x <= y or y != y else dout * 0


@pointwise(FLOAT_3)
def fmin_grad_y(x, y, dout):
    return dout * 0 if x <= y or y != y else dout


@pointwise(INT_AND_FLOAT_2)
def heaviside(x, y):
    if x == 0:
        return y
    return 1 if x > 0 else 0


@pointwise(FLOAT_3)
def heaviside_grad_x(x, y, dout):
    return dout * 0


@pointwise(FLOAT_3)
def heaviside_grad_y(x, y, dout):
    return dout if x == 0 else dout * 0


@pointwise(ATAN2_TYPES, fastmath=False)
def atan2(x1, x2):
    return math.atan2(x1, x2)


@pointwise(FLOAT_3, fastmath=False)
def atan2_grad_x1(x1, x2, dout):
    return dout * x2 / (x1 * x1 + x2 * x2)


@pointwise(FLOAT_3, fastmath=False)
def atan2_grad_x2(x1, x2, dout):
    return -dout * x1 / (x1 * x1 + x2 * x2)


@pointwise(FLOAT_5, fastmath=False, params=3)
def nextafter(x, y, bits, min_exponent, largest):
    # bits: the mantissa's (24 or 53); min_exponent: frexp's exponent of the smallest
    # normal number; largest: the largest finite number (where inf steps back to)
    if x != x or y != y:
        return x + y
    if x == y:
        return y
    if math.isinf(x):
        return largest if x > 0 else -largest
    if x == 0:
        tiny = math.ldexp(1.0, int(min_exponent) - int(bits))   # the smallest subnormal
        return tiny if y > 0 else -tiny
    mantissa, exponent = math.frexp(abs(x))
    away = (y > x) == (x > 0)                 # a step that grows |x|
    if not away and mantissa == 0.5:
        exponent -= 1                         # below a power of 2 the floats are denser
    if exponent < int(min_exponent):          # a subnormal: the smallest step
        exponent = int(min_exponent)             # (not max(): it does not compile for CUDA)
    step = math.ldexp(1.0, exponent - int(bits))
    grown = abs(x) + step if away else abs(x) - step
    return grown if x > 0 else -grown


@pointwise(FLOAT_3)
def lerp(x, y, weight):
    return x + weight * (y - x)


@pointwise(FLOAT_2)
def lerp_grad_x(weight, dout):
    return dout * (1 - weight)


@pointwise(FLOAT_2)
def lerp_grad_y(weight, dout):
    return dout * weight


# --- shapes ---------------------------------------------------------------------------------
def broadcast_of(ctx, slots) -> list[int]:
    """The numpy broadcast shape of ``slots`` (a shape inference error if there is none)."""
    shapes = [ctx.shape(s) for s in slots]
    rank = max(len(s) for s in shapes)
    out = [1] * rank
    for s in shapes:
        both = broadcast_shapes(out, [1] * (rank - len(s)) + list(s))
        if both is None:
            ctx.fail(f"{', '.join(slots)} cannot be broadcast together", slot=slots[-1],
                     expected="shapes equal (or 1) from the last dim back",
                     given=", ".join(f"{t} {ctx.describe_input(t)}" for t in slots))
        out = both
    return out


def _same_dtype(ctx, slots, kind: str):
    for s in slots:
        ctx.require_dtype(s, kind)
    for s in slots[1:]:
        if ctx.dtype(s) != ctx.dtype(slots[0]):
            ctx.fail(f"{slots[0]} and {s} have different dtypes", slot=s,
                     expected=f"{s} of {slots[0]}'s dtype",
                     given=f"{slots[0]} {ctx.describe_input(slots[0])}, "
                           f"{s} {ctx.describe_input(s)}")


def _infer(slots, kind: str, out_slot: str = "Out"):
    def infer(ctx):
        _same_dtype(ctx, slots, kind)
        ctx.set_output(out_slot, broadcast_of(ctx, slots), ctx.dtype(slots[0]))
    return infer


def _atan2_infer(ctx):
    _same_dtype(ctx, ["X1", "X2"], "number")
    ctx.require_same_shape("X2", "X1")
    dtype = ctx.dtype("X1")
    ctx.set_output("Out", ctx.shape("X1"),
                   dtype if dtypes.to_numpy(dtype).kind == "f" else VarType.FP64)


# --- kernels --------------------------------------------------------------------------------
def _forward(place, kernel, slots, out_slot="Out", params_of=None, out_dtype_of=None):
    def run(ctx):
        operands = [ctx.input(s) for s in slots]
        shape = tuple(operands[0].shape)
        for a in operands[1:]:
            shape = arrays.broadcast_shape(shape, tuple(a.shape))
        dtype = out_dtype_of(operands[0].dtype) if out_dtype_of else operands[0].dtype
        check_tensor_size(shape, np.dtype(dtype), ctx.op.op.type)
        params = params_of(operands[0].dtype) if params_of else ()
        ctx.set_output(out_slot, place.apply(kernel, *operands, *params,
                                             out=ctx.out(out_slot, shape, dtype),
                                             out_dtype=dtype))
    run.__name__ = f"{place.name}_{kernel.__name__}"
    return run


def _gradients(place, grads, reads):
    """``grads[slot]``: a kernel of (the inputs named in ``reads``, dOut), at the broadcast
    shape, summed back to ``slot``'s shape."""
    def run(ctx):
        values = {s: ctx.input(s) for s in {*grads, *reads}}
        dout = ctx.input("Out@GRAD")
        for slot, kernel in grads.items():
            if not ctx.has_output(slot + "@GRAD"):
                continue
            g = place.apply(kernel, *(values[s] for s in reads), dout, out=None,
                            out_dtype=dout.dtype)
            if tuple(g.shape) != tuple(dout.shape):
                g = place.broadcast_to(g, tuple(dout.shape))
            v = values[slot]
            ctx.set_output(slot + "@GRAD", arrays.astype(
                arrays.unbroadcast(g, tuple(v.shape), tuple(v.shape)), v.dtype))
    return run


def _float_params(dtype):
    """nextafter's (mantissa bits, smallest normal's frexp exponent, largest finite)."""
    info = np.finfo(dtype)
    return (dtype.type(info.nmant + 1), dtype.type(info.minexp + 1), dtype.type(info.max))


# --- in a compiled block (kernels/lowered.py) ---------------------------------------------
def _lowered_forward(kernel, slots, out_slot="Out", params_of=None):
    """The op's scalar function, fused into its neighbours' loop (operands lined up from
    the end, numpy's way: axis -1; a broadcast growing both stays in the interpreter)."""
    def lowered(info):
        params = params_of(info.dtype(slots[0])) if params_of else ()
        return Elementwise(kernel, tuple(slots), out_slot, params)
    return lowered


def _summed_dims(info, slot: str) -> tuple | None:
    """The dims ``(lo, hi)`` of Out that operand ``slot`` covers as the loop reads it, where
    summing dOut back to it adds in numpy's order (nothing to sum, or a sum over leading
    dims only: numpy adds those rows one after another); None otherwise (a sum over
    trailing dims or to one element, which numpy adds pairwise)."""
    out_shape = info.shape("Out@GRAD")
    read = broadcast_read(info.shape(slot), out_shape, -1)
    if read is None:
        return None
    lo, hi = {"flat": (0, len(out_shape)), "one": (0, 0)}.get(read[0], read[1:])
    return (lo, hi) if hi == len(out_shape) and (lo < hi or not out_shape) else None


def _lowered_gradients(grads, reads):
    """The gradients of _gradients: each kernel of (``reads``, dOut) at Out's shape, summed
    back to its operand (kernels/cpu/broadcast_sum.operand_gradient, the loop the
    elementwise ops' gradients run), one Call per gradient asked for; for float operands
    and dOut of one dtype (the interpreter casts others)."""
    first, second = reads[0], reads[-1]            # operand_gradient's x and y
    args = "x, y, d" if len(reads) == 2 else "x, d"
    fns = {slot: operand_gradient(f"{kernel.__name__}_summed", f"{kernel.__name__}({args})",
                                  [kernel])
           for slot, kernel in grads.items()}

    def lowered(info):
        dtype = info.dtype("Out@GRAD")
        wanted = [slot for slot in grads if info.has_output(slot + "@GRAD")]
        if dtype.name not in FLOAT_TYPES or any(
                info.dtype(s) != dtype for s in {first, second, *wanted}):
            return None
        dims = {s: _summed_dims(info, s) for s in {first, second, *wanted}}
        if None in dims.values():
            return "a broadcast operand's gradient: numpy sums it pairwise"
        return tuple(Call(fns[slot], (first, second, "Out@GRAD", slot), (slot + "@GRAD",),
                          (*dims[first], *dims[second], *dims[slot])) for slot in wanted)
    return lowered


# --- the ops --------------------------------------------------------------------------------
for _type, _kernel, (_gx, _gy), _formula in (
        ("elementwise_fmax", fmax, (fmax_grad_x, fmax_grad_y), "fmax(X, Y) (a NaN loses)"),
        ("elementwise_fmin", fmin, (fmin_grad_x, fmin_grad_y), "fmin(X, Y) (a NaN loses)"),
        ("elementwise_heaviside", heaviside, (heaviside_grad_x, heaviside_grad_y),
         "0 where X < 0, Y where X == 0, 1 where X > 0")):
    _grads = {"X": _gx, "Y": _gy}
    register(OpDef(_type, [X, Y], [OUT], [],
                   comment=f"Out = {_formula}, elementwise with numpy broadcasting.",
                   infer_shape=_infer(["X", "Y"], "number"),
                   kernels={"cpu": _forward(CPU, _kernel, ["X", "Y"]),
                            "cuda": _forward(CUDA, _kernel, ["X", "Y"])},
                   lowered=_lowered_forward(_kernel, ["X", "Y"]),
                   grad=Grad(reads=["X", "Y"],
                             kernel=_gradients(CPU, _grads, ["X", "Y"]),
                             cuda_kernel=_gradients(CUDA, _grads, ["X", "Y"]),
                             lowered=_lowered_gradients(_grads, ["X", "Y"]))))

_ATAN2_GRADS = {"X1": atan2_grad_x1, "X2": atan2_grad_x2}


def _atan2_out_dtype(dtype):
    return dtype if dtype.kind == "f" else np.dtype(np.float64)


register(OpDef("atan2", [Slot("X1", "the y coordinates"), Slot("X2", "the x coordinates")],
               [OUT], [],
               comment="Out = atan2(X1, X2), the angle of the point (X2, X1) in (-pi, pi] "
                       "(integers give float64).",
               infer_shape=_atan2_infer,
               kernels={"cpu": _forward(CPU, atan2, ["X1", "X2"],
                                        out_dtype_of=_atan2_out_dtype),
                        "cuda": _forward(CUDA, atan2, ["X1", "X2"],
                                         out_dtype_of=_atan2_out_dtype)},
               lowered=_lowered_forward(atan2, ["X1", "X2"]),
               grad=Grad(reads=["X1", "X2"],
                         kernel=_gradients(CPU, _ATAN2_GRADS, ["X1", "X2"]),
                         cuda_kernel=_gradients(CUDA, _ATAN2_GRADS, ["X1", "X2"]),
                         lowered=_lowered_gradients(_ATAN2_GRADS, ["X1", "X2"]))))

LOWER_X, LOWER_Y, LOWER_OUT = (Slot("x", "the start"), Slot("y", "the direction"),
                               Slot("out", "the result"))
register(OpDef("nextafter", [LOWER_X, LOWER_Y], [LOWER_OUT], [],
               comment="out = the next float after x toward y, elementwise (numpy "
                       "broadcasting); no gradient, as in Paddle.",
               infer_shape=_infer(["x", "y"], "float", "out"),
               kernels={"cpu": _forward(CPU, nextafter, ["x", "y"], "out", _float_params),
                        "cuda": _forward(CUDA, nextafter, ["x", "y"], "out", _float_params)},
               lowered=_lowered_forward(nextafter, ["x", "y"], "out", _float_params),
               grad=NO_GRADIENT))

_LERP_GRADS = {"X": lerp_grad_x, "Y": lerp_grad_y}
register(OpDef("lerp", [X, Y, Slot("Weight", "how far from X toward Y (0: X, 1: Y)")],
               [OUT], [],
               comment="Out = X + Weight * (Y - X), elementwise with numpy broadcasting.",
               infer_shape=_infer(["X", "Y", "Weight"], "float"),
               kernels={"cpu": _forward(CPU, lerp, ["X", "Y", "Weight"]),
                        "cuda": _forward(CUDA, lerp, ["X", "Y", "Weight"])},
               lowered=_lowered_forward(lerp, ["X", "Y", "Weight"]),
               grad=Grad(reads=["X", "Y", "Weight", "Out"], writes=["X", "Y"],
                         kernel=_gradients(CPU, _LERP_GRADS, ["Weight"]),
                         cuda_kernel=_gradients(CUDA, _LERP_GRADS, ["Weight"]),
                         lowered=_lowered_gradients(_LERP_GRADS, ["Weight"]))))
