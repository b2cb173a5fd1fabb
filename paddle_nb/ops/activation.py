"""Unary elementwise ops: relu, sigmoid, tanh, exp, log, square; and scale, cast."""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad, GradOp, grad_name
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import activation as K
from ..kernels.cuda import copy as CC
from ..kernels.cuda import elementwise as CE
from . import arrays
from .common import OUT, X, dtype_code_check, same_shape_as_x
from .places import CPU, CUDA

def _forward(place, op_type: str):
    """Out = op(X) in X's dtype."""
    def run(ctx):
        x = ctx.input("X")
        ctx.set_output("Out", place.unary(op_type, x, 1.0, ctx.out("Out", x.shape, x.dtype)))
    run.__name__ = f"{place.name}_{op_type}"
    return run


def _backward(place, op_type: str, reads: str):
    """X@GRAD = op'(<reads>) * Out@GRAD, in Out@GRAD's dtype."""
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        ctx.set_output("X@GRAD", place.derivative(op_type, ctx.input(reads), dout, 1.0,
                                                  ctx.out("X@GRAD", dout.shape, dout.dtype)))
    run.__name__ = f"{place.name}_{op_type}_grad"
    return run


def _real_like_x(ctx):
    """Out has X's shape and dtype; X holds real numbers (the CUDA kernels compute with
    real math functions, so a complex X would silently lose its imaginary part)."""
    ctx.require_dtype("X", "real")
    same_shape_as_x(ctx)


def _float_like_x(ctx):
    """Out has X's shape and dtype; X holds floats (as Paddle's kernels for these: in an
    integer type the result would be truncated to a few values, or wrap)."""
    ctx.require_dtype("X", "float")
    same_shape_as_x(ctx)


# type, formula, the forward slot its gradient reads, which element types X may hold,
# whether a layer's act= may name it (log is undefined for half of a layer's outputs)
for _type, _formula, _reads, _infer, _act in (
        ("relu", "max(X, 0)", "Out", _real_like_x, True),
        ("sigmoid", "1 / (1 + exp(-X))", "Out", _float_like_x, True),
        ("tanh", "tanh(X)", "Out", _float_like_x, True),
        ("exp", "exp(X)", "Out", _float_like_x, True),
        ("log", "ln(X)", "X", _float_like_x, False),
        ("square", "X * X", "X", _real_like_x, True)):
    register(OpDef(_type, [X], [OUT], [], comment=f"Out = {_formula}, elementwise.",
                   infer_shape=_infer,
                   kernels={"cpu": _forward(CPU, _type), "cuda": _forward(CUDA, _type)},
                   grad=Grad(reads=[_reads], kernel=_backward(CPU, _type, _reads),
                             cuda_kernel=_backward(CUDA, _type, _reads)), activation=_act))


def _scale_glue(ctx, dtype):
    """(kernel, scale, bias) for float inputs of ``dtype``, from the attributes."""
    kernel = K.scale_then_bias if ctx.attr("bias_after_scale") else K.bias_then_scale
    return kernel, dtype.type(ctx.attr("scale")), dtype.type(ctx.attr("bias"))


def _scale(ctx):
    x = ctx.input("X")
    scale = ctx.input("ScaleTensor")
    if scale is None and x.dtype.type in (np.float32, np.float64):   # the common case
        kernel, s, b = ctx.resolved(x.dtype, lambda: _scale_glue(ctx, x.dtype))
        ctx.set_output("Out", kernel(x, s, b, out=ctx.out("Out", x.shape, x.dtype)))
        return
    s = float(scale.ravel()[0]) if scale is not None else ctx.attr("scale")
    kernel = K.scale_then_bias if ctx.attr("bias_after_scale") else K.bias_then_scale
    if x.dtype.type not in (np.float32, np.float64):
        # integers: the exact numpy path; float16: computed in float32, as Paddle does
        # (a scale of 1e-30 is 0 in float16, and inf * 0 would be NaN)
        w = x.astype(np.float32) if x.dtype == np.float16 else x
        out = (w * s + ctx.attr("bias")) if ctx.attr("bias_after_scale") \
            else (w + ctx.attr("bias")) * s
        ctx.set_output("Out", np.asarray(out).astype(x.dtype))
        return
    ctx.set_output("Out", kernel(x, x.dtype.type(s), x.dtype.type(ctx.attr("bias")),
                                 out=ctx.out("Out", x.shape, x.dtype)))


def _cuda_scale(ctx):
    x = ctx.input("X")
    scale = ctx.input("ScaleTensor")
    # a ScaleTensor is read on the host: one 1-element copy
    s = float(arrays.host_scalar(scale)) if scale is not None else ctx.attr("scale")
    op = "scale_then_bias" if ctx.attr("bias_after_scale") else "bias_then_scale"
    # integer tensors too: computed in float64, stored (truncated) in X's dtype, as on CPU
    ctx.set_output("Out", CE.unary(op, x, a=s, b=ctx.attr("bias")))


def _scale_grad(op, no_grad):
    """d(scale*X + bias)/dX = scale: the gradient is another scale op, without bias."""
    if op.input("X")[0] in no_grad:
        return []
    inputs = {"X": [grad_name(op.output("Out")[0])]}
    if op.input("ScaleTensor"):
        inputs["ScaleTensor"] = op.input("ScaleTensor")
    return [GradOp("scale", inputs, {"Out": [grad_name(op.input("X")[0])]},
                   {"scale": op.attr("scale", 1.0), "bias": 0.0, "bias_after_scale": True})]


register(OpDef(
    "scale", [X, Slot("ScaleTensor", "scale as a 1-element tensor", dispensable=True)], [OUT],
    [Attr("scale", A.FLOAT, 1.0, "the factor"),
     Attr("bias", A.FLOAT, 0.0, "the offset"),
     Attr("bias_after_scale", A.BOOLEAN, True, "Out = X*scale + bias if true, "
          "(X + bias)*scale if false")],
    comment="Out = scale * X + bias (or scale * (X + bias)).",
    infer_shape=same_shape_as_x, kernels={"cpu": _scale, "cuda": _cuda_scale},
    grad=_scale_grad))


def _cast_infer(ctx):
    """in_dtype must name X's type: the gradient casts back to it."""
    if ctx.attr("in_dtype") != ctx.dtype("X"):
        ctx.fail("attribute in_dtype must be X's element type (the gradient is a cast back "
                 "to it)", slot="X", expected=f"in_dtype={ctx.dtype('X')} "
                 f"({dtypes.name(ctx.dtype('X'))})", given=f"in_dtype={ctx.attr('in_dtype')}")
    ctx.set_output("Out", ctx.shape("X"), ctx.attr("out_dtype"))


def _cast(ctx):
    to = dtypes.to_numpy(ctx.attr("out_dtype"))
    ctx.set_output("Out", np.asarray(ctx.input("X")).astype(to))


def _cuda_cast(ctx):
    ctx.set_output("Out", CC.astype(ctx.input("X"), dtypes.to_numpy(ctx.attr("out_dtype"))))


def _cast_grad(op, no_grad):
    """The gradient of a cast is the cast back."""
    if op.input("X")[0] in no_grad:
        return []
    return [GradOp("cast", {"X": [grad_name(op.output("Out")[0])]},
                   {"Out": [grad_name(op.input("X")[0])]},
                   {"in_dtype": op.attr("out_dtype"), "out_dtype": op.attr("in_dtype")})]


register(OpDef(
    "cast", [X], [OUT],
    [Attr("in_dtype", A.INT, 5, "VarType code of X's element type",
          check=dtype_code_check()),
     Attr("out_dtype", A.INT, 5, "VarType code of Out's element type",
          check=dtype_code_check())],
    comment="Out = X converted to out_dtype.",
    infer_shape=_cast_infer, kernels={"cpu": _cast, "cuda": _cuda_cast}, grad=_cast_grad))
