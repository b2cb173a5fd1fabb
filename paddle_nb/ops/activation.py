"""Unary elementwise ops: relu, sigmoid, tanh, exp, log, square; and scale, cast."""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import activation as K
from .common import OUT, X, same_shape_as_x, unary_kernel

for _type, _kernel, _formula in (
        ("relu", K.relu, "max(X, 0)"), ("sigmoid", K.sigmoid, "1 / (1 + exp(-X))"),
        ("tanh", K.tanh, "tanh(X)"), ("exp", K.exp, "exp(X)"), ("log", K.log, "ln(X)"),
        ("square", K.square, "X * X")):
    register(OpDef(_type, [X], [OUT], [], comment=f"Out = {_formula}, elementwise.",
                   infer_shape=same_shape_as_x, kernels={"cpu": unary_kernel(_kernel)}))


def _scale(ctx):
    x = ctx.input("X")
    scale = ctx.input("ScaleTensor")
    s = float(scale.ravel()[0]) if scale is not None else ctx.attr("scale")
    kernel = K.scale_then_bias if ctx.attr("bias_after_scale") else K.bias_then_scale
    if not np.issubdtype(x.dtype, np.floating):     # integer tensors: exact numpy path
        out = (x * s + ctx.attr("bias")) if ctx.attr("bias_after_scale") \
            else (x + ctx.attr("bias")) * s
        ctx.set_output("Out", out.astype(x.dtype))
        return
    ctx.set_output("Out", kernel(x, x.dtype.type(s), x.dtype.type(ctx.attr("bias")),
                                 out=np.empty(x.shape, x.dtype)))


register(OpDef(
    "scale", [X, Slot("ScaleTensor", "scale as a 1-element tensor", dispensable=True)], [OUT],
    [Attr("scale", A.FLOAT, 1.0, "the factor"),
     Attr("bias", A.FLOAT, 0.0, "the offset"),
     Attr("bias_after_scale", A.BOOLEAN, True, "Out = X*scale + bias if true, "
          "(X + bias)*scale if false")],
    comment="Out = scale * X + bias (or scale * (X + bias)).",
    infer_shape=same_shape_as_x, kernels={"cpu": _scale}))


def _cast_infer(ctx):
    ctx.set_output("Out", ctx.shape("X"), ctx.attr("out_dtype"))


def _cast(ctx):
    to = dtypes.to_numpy(ctx.attr("out_dtype"))
    ctx.set_output("Out", np.asarray(ctx.input("X")).astype(to))


register(OpDef(
    "cast", [X], [OUT],
    [Attr("in_dtype", A.INT, 5, "VarType code of X's element type"),
     Attr("out_dtype", A.INT, 5, "VarType code of Out's element type")],
    comment="Out = X converted to out_dtype.",
    infer_shape=_cast_infer, kernels={"cpu": _cast}))
