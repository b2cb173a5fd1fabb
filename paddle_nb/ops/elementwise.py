"""Binary elementwise ops with Fluid's ``axis`` broadcasting.

``elementwise_add(X, Y, axis)``: Y's dims line up with X's starting at ``axis`` (``-1``:
at the end), so X [N, C, H, W] + Y [C] uses ``axis=1``. Then numpy broadcasting applies,
so a [1]-shaped Y adds a scalar. Comparisons and logical ops follow the same rule and give
bool. The kernels are numba ufuncs from ``kernels/cpu/elementwise.py``.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.framework_pb2 import VarType
from ..core.grad_maker import Grad
from ..core.registry import Attr, NO_GRADIENT, OpDef, register
from ..core.validate import check_tensor_size
from ..kernels.cpu import elementwise as K
from ..kernels.cuda import elementwise as CE
from . import arrays
from .common import OUT, X, Y, aligned_y_shape, broadcast_shapes
from .places import CPU, CUDA

AXIS = Attr("axis", A.INT, -1, "where Y's dims line up with X's (-1: at the end)")


def broadcast_shape_of(ctx) -> list[int]:
    """The shape X and Y broadcast to under Fluid's ``axis`` rule (a shape inference
    error if they cannot)."""
    xs, ys, axis = ctx.shape("X"), ctx.shape("Y"), ctx.attr("axis")
    if len(ys) > len(xs):      # Paddle 2 also broadcasts a smaller X into Y
        xs, ys = ys, xs
    if axis not in (-1, None) and not 0 <= axis <= len(xs) - len(ys):
        ctx.fail(f"axis={axis} does not fit a rank-{len(ys)} Y into a rank-{len(xs)} X",
                 slot="Y", expected=f"axis in [0, {len(xs) - len(ys)}] or -1",
                 given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
    out = broadcast_shapes(xs, aligned_y_shape(len(xs), ys, axis))
    if out is None:
        ctx.fail("X and Y cannot be broadcast together", slot="Y",
                 expected=f"Y's dims equal to X's (or 1) from axis {axis}",
                 given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
    return out


def broadcast_infer(out_dtype=None):
    def infer(ctx):
        out = broadcast_shape_of(ctx)
        if out_dtype is None and ctx.dtype("X") != ctx.dtype("Y"):
            ctx.fail("X and Y have different dtypes", slot="Y",
                     expected="Y of X's dtype", given=f"X {ctx.describe_input('X')}, "
                     f"Y {ctx.describe_input('Y')}")
        ctx.set_output("Out", out, out_dtype if out_dtype is not None else ctx.dtype("X"))
    return infer


def broadcast_operands(x: np.ndarray, y: np.ndarray, axis: int):
    """X and Y reshaped so that numpy broadcasting does what Fluid's ``axis`` says."""
    if y.ndim > x.ndim:
        return x.reshape(aligned_y_shape(y.ndim, x.shape, axis)), y
    if y.ndim < x.ndim or axis not in (-1, None):
        return x, y.reshape(aligned_y_shape(x.ndim, y.shape, axis))
    return x, y


def _binary_kernel(place, op_type: str, out_dtype=None):
    """Out = op(X, Y) with Fluid's ``axis`` reshape, then numpy broadcasting."""
    def run(ctx):
        axis = ctx.op.attrs.get("axis", -1)      # logical_and/or have no axis
        x, y = broadcast_operands(ctx.input("X"), ctx.input("Y"), axis)
        shape = arrays.broadcast_shape(x.shape, y.shape)
        dtype = out_dtype or x.dtype
        if shape != x.shape and shape != y.shape:      # broadcasting both ways grows
            check_tensor_size(shape, np.dtype(dtype), op_type)
        ctx.set_output("Out", place.binary(op_type, x, y, ctx.out("Out", shape, dtype),
                                           out_dtype))
    run.__name__ = f"{place.name}_{op_type}"
    return run


# --- gradients ---------------------------------------------------------------------------
def _binary_grad(dx_of, dy_of):
    """X@GRAD and Y@GRAD of Out = f(X, Y), on either place: ``dx_of(x, y, dout)`` and
    ``dy_of(...)`` give the gradients at the broadcast shape (with the place's kernels:
    _GRADS, _CUDA_GRADS); they are then summed back to each operand."""
    def run(ctx):
        x0, y0 = ctx.input("X"), ctx.input("Y")
        x, y = broadcast_operands(x0, y0, ctx.attr("axis"))
        dout = ctx.input("Out@GRAD")
        if ctx.has_output("X@GRAD"):
            dx = arrays.unbroadcast(dx_of(x, y, dout), x.shape, x0.shape)
            ctx.set_output("X@GRAD", arrays.astype(dx, x0.dtype))
        if ctx.has_output("Y@GRAD"):
            dy = arrays.unbroadcast(dy_of(x, y, dout), y.shape, y0.shape)
            ctx.set_output("Y@GRAD", arrays.astype(dy, y0.dtype))
    return run


_CUDA_GRADS = {
    "elementwise_add": (lambda x, y, d: d, lambda x, y, d: d),
    "elementwise_sub": (lambda x, y, d: d, lambda x, y, d: CE.unary("neg", d)),
    "elementwise_mul": (lambda x, y, d: CE.binary("mul", d, y),
                        lambda x, y, d: CE.binary("mul", d, x)),
    "elementwise_div": (lambda x, y, d: CE.binary("div", d, y),
                        lambda x, y, d: CE.unary("neg", CE.binary(
                            "div", CE.binary("mul", d, x), CE.binary("mul", y, y)))),
}


def _like(a, b):
    return np.empty(np.broadcast_shapes(a.shape, b.shape), np.result_type(a, b))


_GRADS = {
    "elementwise_add": (lambda x, y, d: d, lambda x, y, d: d),
    "elementwise_sub": (lambda x, y, d: d, lambda x, y, d: -d),
    "elementwise_mul": (lambda x, y, d: K.mul(d, y, out=_like(d, y)),
                        lambda x, y, d: K.mul(d, x, out=_like(d, x))),
    "elementwise_div": (lambda x, y, d: K.div(d, y, out=_like(d, y)),
                        lambda x, y, d: -K.div(K.mul(d, x, out=_like(d, x)), y * y,
                                               out=_like(d, y))),
}

for _type, _formula in (("elementwise_add", "X + Y"), ("elementwise_sub", "X - Y"),
                        ("elementwise_mul", "X * Y"), ("elementwise_div", "X / Y")):
    register(OpDef(_type, [X, Y], [OUT], [AXIS], comment=f"Out = {_formula}, with Y broadcast "
                   "into X from `axis`.", infer_shape=broadcast_infer(),
                   kernels={"cpu": _binary_kernel(CPU, _type),
                            "cuda": _binary_kernel(CUDA, _type)},
                   grad=Grad(reads=["X", "Y"], kernel=_binary_grad(*_GRADS[_type]),
                             cuda_kernel=_binary_grad(*_CUDA_GRADS[_type]))))

for _type, _formula in (("greater_than", "X > Y"), ("less_than", "X < Y"),
                        ("equal", "X == Y"), ("not_equal", "X != Y")):
    register(OpDef(_type, [X, Y], [OUT],
                   [AXIS, Attr("force_cpu", A.BOOLEAN, False, "keep Out on the CPU", extra=True)],
                   comment=f"Out = {_formula} elementwise, as bool.",
                   infer_shape=broadcast_infer(VarType.BOOL),
                   kernels={"cpu": _binary_kernel(CPU, _type, np.bool_),
                            "cuda": _binary_kernel(CUDA, _type, np.bool_)}, grad=NO_GRADIENT,
                   out_dtype="bool"))


def _logical_infer(ctx):
    """numpy broadcasting (shapes lined up from the end), bool result."""
    xs, ys = ctx.shape("X"), ctx.shape("Y")
    rank = max(len(xs), len(ys))
    out = broadcast_shapes([1] * (rank - len(xs)) + xs, [1] * (rank - len(ys)) + ys)
    if out is None:
        ctx.fail("X and Y cannot be broadcast together", slot="Y",
                 given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
    ctx.set_output("Out", out, VarType.BOOL)


for _type, _formula in (("logical_and", "X and Y"), ("logical_or", "X or Y")):
    register(OpDef(_type, [X, Y], [OUT], [], comment=f"Out = {_formula} elementwise (bool).",
                   infer_shape=_logical_infer,
                   kernels={"cpu": _binary_kernel(CPU, _type, np.bool_),
                            "cuda": _binary_kernel(CUDA, _type, np.bool_)}, grad=NO_GRADIENT))


def _logical_not(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", K.logical_not(x.astype(np.bool_, copy=False),
                                        out=np.empty(x.shape, np.bool_)))


register(OpDef("logical_not", [X], [OUT], [], comment="Out = not X elementwise (bool).",
               infer_shape=lambda ctx: ctx.set_output("Out", ctx.shape("X"), VarType.BOOL),
               kernels={"cpu": _logical_not,
                        "cuda": lambda ctx: ctx.set_output("Out", CE.logical_not(ctx.input("X")))},
               grad=NO_GRADIENT))
