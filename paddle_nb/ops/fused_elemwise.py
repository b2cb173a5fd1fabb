"""``fused_elemwise_activation``: an elementwise op and an activation as one op, as
Paddle's ``fuse_elewise_add_act_pass`` makes it.

``functor_list`` names the two functions and their order:

- ``[unary, binary]`` is ``Out = unary(binary(X, Y))``, e.g. ``["tanh", "elementwise_add"]``
  is ``tanh(X + Y)``; ``IntermediateOut`` is ``binary(X, Y)``;
- ``[binary, unary]`` is ``Out = binary(X, unary(Y))``, e.g. ``["elementwise_add", "relu"]``
  is ``X + relu(Y)``; ``IntermediateOut`` is ``unary(Y)``.

binary is ``elementwise_add`` or ``elementwise_mul`` (Y broadcast into X from ``axis``, as
those ops do); unary is ``relu``, ``tanh``, ``sigmoid`` or ``scale`` (times the ``scale``
attribute). ``fused_elemwise_add_activation`` is the same op under the name Paddle's pass
gives it when binary is an add. The gradient ops take the same list with ``_grad`` appended
to both names; the activation's derivative is read from its output (``Out``, or
``IntermediateOut`` for ``[binary, unary]``), so X may be absent when binary is an add.

Why it pays here: paddle_nb's executor spends more per op than an elementwise kernel costs
on a small tensor, so one op instead of two is the saving; the kernel is the two ops'
kernels run back to back, in place on one array, and gives the same bits as the two ops.
The math below is written once for both places; the backends' ``CPU`` and ``CUDA``
supply the kernels.

In a compiled block the op is one of kernels/cpu/fused_elemwise.py's loops: per element,
the two ops' own @pointwise scalar functions (the ufuncs' math: add or mul, relu, tanh,
sigmoid or scale), the inner result stored into an array of the op's dtype before the
outer function reads it (the rounding the interpreter's two ufunc calls make). Y
broadcast into X along a run of X's dims is read by index; the gradient's loops take X, Y
and dOut of one shape (a broadcast Y's gradient is a numpy sum over the broadcast dims,
which they do not repeat).
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.errors import ExecutionError
from ..core.grad_maker import EMPTY_VAR, GradOp, grad_name
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..kernels.cpu.fused_elemwise import (binary_of_unary, binary_of_unary_out, fused_grad,
                                          unary_of_binary, unary_of_binary_out)
from ..kernels.lowered import Call
from . import activation  # noqa: F401  (registers in KERNELS what the compiled loops call)
from . import arrays
from .common import FLOAT_TYPES
from .elementwise import broadcast_infer, broadcast_operands, broadcast_shape_of
from ..backends import CPU, CUDA

# in the order of the kernel's numbers (kernels/cpu/fused_elemwise.py: ADD, MUL; RELU, TANH,
# SIGMOID, SCALE): a compiled form passes a function as its index here
BINARY = ("elementwise_add", "elementwise_mul")
UNARY = ("relu", "tanh", "sigmoid", "scale")


def is_unary_compound(functors) -> bool:
    """True for ``[unary, binary]`` (Out = unary(binary(X, Y))), as Paddle decides it."""
    return functors[1].removesuffix("_grad") in BINARY


def _split(functors) -> tuple[str, str]:
    """(binary, unary) names without ``_grad``, whichever order the list has."""
    a, b = (f.removesuffix("_grad") for f in functors)
    return (b, a) if is_unary_compound(functors) else (a, b)


def _functors(ctx) -> tuple[str, str, bool]:
    """(binary, unary, unary(binary(...))?) of the op, read from functor_list once per
    prepared op (a kernel's glue resolved at its first run: ctx.resolved)."""
    def make():
        functors = ctx.attr("functor_list")
        return (*_split(functors), is_unary_compound(functors))
    return ctx.resolved("functors", make)


def _functors_check(grad: bool):
    suffix = "_grad" if grad else ""

    def check(value):
        names = list(value) if isinstance(value, (list, tuple)) else [value]
        ok = len(names) == 2 and all(isinstance(n, str) and n.endswith(suffix)
                                     for n in names)
        if ok:
            a, b = (n.removesuffix(suffix) for n in names)
            ok = (a in UNARY and b in BINARY) or (a in BINARY and b in UNARY)
        if ok:
            return None
        return (f"{names!r} is not a pair this op fuses; expected [unary{suffix}, "
                f"binary{suffix}] or [binary{suffix}, unary{suffix}] with unary one of "
                f"{list(UNARY)} and binary one of {list(BINARY)}")
    return check


def _attrs(grad: bool):
    suffix = "_grad" if grad else ""
    return [Attr("functor_list", A.STRINGS, [],
                 f"the two functions, outer first: [unary{suffix}, binary{suffix}] is "
                 f"unary(binary(X, Y)), [binary{suffix}, unary{suffix}] is binary(X, unary(Y)); "
                 f"unary one of {', '.join(UNARY)}, binary elementwise_add or elementwise_mul",
                 check=_functors_check(grad)),
            Attr("axis", A.INT, -1, "where Y's dims line up with X's (-1: at the end)"),
            Attr("scale", A.FLOAT, 0.0, "the factor of a `scale` functor"),
            Attr("save_intermediate_out", A.BOOLEAN, False,
                 "also write IntermediateOut (the gradient then reads it)")]


# --- forward ------------------------------------------------------------------------------
def _forward(place):
    def run(ctx):
        binary, unary, unary_compound = _functors(ctx)
        scale = ctx.attr("scale")
        x0, y0 = ctx.input("X"), ctx.input("Y")
        x, y = broadcast_operands(x0, y0, ctx.attr("axis"))
        shape = arrays.broadcast_shape(x.shape, y.shape)
        keep = ctx.attr("save_intermediate_out") and ctx.has_output("IntermediateOut")
        if unary_compound:                                     # unary(binary(X, Y))
            buffer = ctx.out("IntermediateOut" if keep else "Out", shape, x.dtype)
            middle = place.binary(binary, x, y, buffer)
            out = place.unary(unary, middle, scale,
                              ctx.out("Out", shape, x.dtype) if keep else middle)
        else:                                                  # binary(X, unary(Y))
            middle = place.unary(unary, y, scale, ctx.out("IntermediateOut", y.shape, y.dtype))
            out = place.binary(binary, x, middle, ctx.out("Out", shape, x.dtype))
            middle = middle.reshape(y0.shape)
        ctx.set_output("Out", out)
        if keep:
            ctx.set_output("IntermediateOut", middle)
    run.__name__ = f"{place.name}_fused_elemwise_activation"
    return run


def _require_functors(ctx, grad: bool) -> None:
    """functor_list has no usable default (Paddle's has none): say so at append time."""
    problem = _functors_check(grad)(ctx.attr("functor_list"))
    if problem:
        ctx.fail(f"attribute functor_list: {problem}", expected="two functor names",
                 given=f"functor_list={list(ctx.attr('functor_list') or [])}")


def _infer(ctx):
    _require_functors(ctx, grad=False)
    ctx.require_dtype("X", "float")
    broadcast_infer()(ctx)
    if ctx.attr("save_intermediate_out") and ctx.has_output("IntermediateOut"):
        if is_unary_compound(ctx.attr("functor_list")):     # binary(X, Y): Out's shape
            ctx.set_output("IntermediateOut", broadcast_shape_of(ctx), ctx.dtype("X"))
        else:
            ctx.set_output("IntermediateOut", ctx.shape("Y"), ctx.dtype("Y"))


# --- gradient -----------------------------------------------------------------------------
def _backward(place):
    def run(ctx):
        binary, unary, unary_compound = _functors(ctx)
        scale = ctx.attr("scale")
        y0, dout = ctx.input("Y"), ctx.input("Out@GRAD")
        x0 = ctx.input_or_none("X")
        if x0 is None and binary != "elementwise_add":       # _grad_infer says so first
            raise ExecutionError(f"{ctx.op.op.type}: input X is needed for the gradient "
                                 f"of {binary}")
        x_shape = x0.shape if x0 is not None else dout.shape
        x, y = broadcast_operands(x0 if x0 is not None else dout, y0, ctx.attr("axis"))
        if unary_compound:                               # Out = u(b(X, Y))
            d_mid = place.derivative(unary, ctx.input("Out"), dout, scale,
                                     ctx.out("IntermediateOut@GRAD", dout.shape, dout.dtype))
            dx_full, dy_full = _binary_grads(place, binary, x, y, d_mid)
            dy = arrays.unbroadcast(dy_full, y.shape, y0.shape)
        else:                                            # Out = b(X, u(Y))
            mid = ctx.input_or_none("IntermediateOut")
            if mid is None:
                mid = place.unary(unary, y, scale, None)
            mid = mid.reshape(y.shape)
            dx_full, d_mid_full = _binary_grads(place, binary, x, mid, dout)
            d_mid = arrays.unbroadcast(d_mid_full, y.shape, y0.shape)
            dy = place.derivative(unary, mid.reshape(y0.shape), d_mid, scale,
                                  ctx.out("Y@GRAD", y0.shape, y0.dtype))
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", arrays.unbroadcast(dx_full, x.shape, x_shape))
        if ctx.has_output("Y@GRAD"):
            ctx.set_output("Y@GRAD", dy)
        if ctx.has_output("IntermediateOut@GRAD"):
            ctx.set_output("IntermediateOut@GRAD", d_mid)
    run.__name__ = f"{place.name}_fused_elemwise_activation_grad"
    return run


def _binary_grads(place, binary, x, y, d):
    """(d/dX, d/dY) of ``binary`` at the broadcast shape, before summing back."""
    if binary == "elementwise_add":
        return d, d
    return (place.binary("elementwise_mul", d, y, None),     # None: a new array
            place.binary("elementwise_mul", d, x, None))


def _grad_infer(ctx):
    _require_functors(ctx, grad=True)
    binary, unary = _split(ctx.attr("functor_list"))
    if binary != "elementwise_add" and not ctx.has_input("X"):
        ctx.fail(f"the gradient of {binary} reads X", slot="X", expected="X given",
                 given="no X")
    if is_unary_compound(ctx.attr("functor_list")) and unary != "scale" and \
            not ctx.has_input("Out"):
        ctx.fail(f"the derivative of {unary} is read from its output", slot="Out",
                 expected="Out given", given="no Out")
    if ctx.has_output("X@GRAD"):
        source = "X" if ctx.has_input("X") else "Out@GRAD"
        ctx.set_output("X@GRAD", ctx.shape(source), ctx.dtype(source))
    if ctx.has_output("Y@GRAD"):
        ctx.set_output("Y@GRAD", ctx.shape("Y"), ctx.dtype("Y"))
    if ctx.has_output("IntermediateOut@GRAD"):
        source = "Out@GRAD" if is_unary_compound(ctx.attr("functor_list")) else "Y"
        ctx.set_output("IntermediateOut@GRAD", ctx.shape(source), ctx.dtype(source))


def _grad_maker(op, no_grad):
    """One <type>_grad op, as Paddle's FusedElemwiseActivationGradMaker makes it: the same
    inputs and attributes, the functor names with ``_grad``, IntermediateOut passed on when
    it was saved."""
    wanted = [s for s in ("X", "Y") if op.input(s)[0] not in no_grad]
    if not wanted:
        return []
    attrs = dict(op.attrs)
    attrs["functor_list"] = [f + "_grad" for f in op.attr("functor_list")]
    inputs = {"X": op.input("X"), "Y": op.input("Y"), "Out": op.output("Out"),
              "Out@GRAD": [grad_name(op.output("Out")[0])]}
    if op.attr("save_intermediate_out", False) and op.output("IntermediateOut"):
        inputs["IntermediateOut"] = op.output("IntermediateOut")
    outputs = {s + "@GRAD": [grad_name(op.input(s)[0]) if s in wanted else EMPTY_VAR]
               for s in ("X", "Y")}
    return [GradOp(op.type + "_grad", inputs, outputs, attrs)]


# --- in a compiled block (kernels/lowered.py; the loops: kernels/cpu/fused_elemwise.py) ------
def _codes(info, grad: bool):
    """(binary, unary, unary(binary(...))?) as numbers, and scale and 0 in the op's dtype;
    None where the operands are not float32/float64 X and Y of one dtype."""
    first = "Out@GRAD" if grad else "X"
    dtype = info.dtype(first)
    if dtype.name not in FLOAT_TYPES or info.dtype("Y") != dtype or \
            (info.has_input("X") and info.dtype("X") != dtype):
        return None
    functors = info.attr("functor_list")
    binary, unary = _split(functors)
    return (BINARY.index(binary), UNARY.index(unary), is_unary_compound(functors),
            dtype.type(info.attr("scale")), dtype.type(0))


def _lowered_forward(info):
    """unary_of_binary or binary_of_unary (their Out alone where the kernel writes no
    IntermediateOut), for a Y whose dims are X's from axis on."""
    codes = _codes(info, grad=False)
    if codes is None:
        return None
    binary, unary, compound, scale, zero = codes
    xs, ys = info.shape("X"), info.shape("Y")
    axis = info.attr("axis")
    axis = len(xs) - len(ys) if axis == -1 else axis
    if not (0 <= axis and axis + len(ys) <= len(xs) and
            tuple(xs[axis:axis + len(ys)]) == tuple(ys)):
        return "its operands broadcast in another way than Y's dims being X's from axis on"
    keep = info.attr("save_intermediate_out") and info.has_output("IntermediateOut")
    if compound:
        fn = unary_of_binary if keep else unary_of_binary_out
    else:
        fn = binary_of_unary if keep else binary_of_unary_out
    return Call(fn, ("X", "Y"), ("Out", "IntermediateOut") if keep else ("Out",),
                (axis, binary, unary, scale, zero))


def _lowered_grad(info):
    """fused_grad, for X (or dOut), Y and dOut of one shape."""
    codes = _codes(info, grad=True)
    if codes is None:
        return None
    binary, unary, compound, scale, zero = codes
    if info.shape("Y") != info.shape("Out@GRAD") or \
            (info.has_input("X") and info.shape("X") != info.shape("Out@GRAD")):
        return "its operands broadcast: Y's gradient sums over the broadcast dims"
    has_mid = info.has_input("IntermediateOut")
    reads = ("X" if info.has_input("X") else "Out@GRAD", "Y",
             "Out" if info.has_input("Out") else "Out@GRAD",
             "IntermediateOut" if has_mid else "Y", "Out@GRAD")
    if any(info.dtype(s) != info.dtype("Out@GRAD") for s in reads):
        return None
    return Call(fused_grad, reads, ("X@GRAD", "Y@GRAD", "IntermediateOut@GRAD"),
                (binary, unary, compound, has_mid, scale, zero))


for _type in ("fused_elemwise_activation", "fused_elemwise_add_activation"):
    register(OpDef(
        _type, [Slot("X", "the first operand"), Slot("Y", "the second operand (broadcast "
                                                    "into X from axis)")],
        [Slot("Out", "the result"),
         Slot("IntermediateOut", "the inner function's result", intermediate=True,
              dispensable=True)],
        _attrs(grad=False),
        comment="Out = unary(binary(X, Y)) or binary(X, unary(Y)), as functor_list says: "
                "an elementwise op and an activation fused (fuse_elewise_add_act_pass).",
        infer_shape=_infer, kernels={"cpu": _forward(CPU), "cuda": _forward(CUDA)},
        lowered=_lowered_forward, grad=_grad_maker))
    register(OpDef(
        _type + "_grad",
        [Slot("X", "", dispensable=True), Slot("Y", ""), Slot("Out", "", dispensable=True),
         Slot("IntermediateOut", "", dispensable=True), Slot("Out@GRAD", "")],
        [Slot("X@GRAD", "", dispensable=True), Slot("Y@GRAD", "", dispensable=True),
         Slot("IntermediateOut@GRAD", "", dispensable=True)],
        _attrs(grad=True),
        comment="X@GRAD, Y@GRAD (and IntermediateOut@GRAD) of the fused op: the "
                "activation's derivative, then the elementwise op's.",
        infer_shape=_grad_infer, kernels={"cpu": _backward(CPU), "cuda": _backward(CUDA)},
        lowered=_lowered_grad, grad=NO_GRADIENT, grad_of=_type))
