"""ReLU's variants: clipped (relu6), leaky (leaky_relu), learned (prelu, a trained slope),
exponential (elu), smooth or gated (softplus, swish, silu, hard_swish) and hard_sigmoid,
hard_swish's gate. The unary ones may be named by ``act=``.

Each unary one is a scalar function and its gradient under ``@pointwise``, declared with
activation.py's ``activation(...)`` (``also_reads=("Out",)`` where Paddle's gradient op
reads both X and Out), exactly as relu or gelu are. Attributes (alpha, the
thresholds) reach the scalar functions as trailing scalar arguments in X's dtype, as
Paddle's functors get them in T. Formulas and which of X/Out each gradient op reads are
Paddle 2.6.2's (phi's activation functors); 2.6.2 saves relu6 and swish without their
``threshold``/``beta`` (fixed at 6 and 1), which older Fluid programs carry: both load.

prelu is elementwise too, but its Alpha is broadcast over X (one slope, one per channel,
or one per element of a sample): the kernels reshape Alpha so numpy broadcasting lines it
up with X, run a binary @pointwise function, and sum dAlpha back to Alpha's shape with
``arrays.unbroadcast`` (the same code on both places).
"""
from __future__ import annotations

import math

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.fastmath32 import fexp, fsigmoid
from ..kernels.cpu.lazy_ufunc import FLOAT_1, FLOAT_2, FLOAT_3
from ..kernels.lowered import Elementwise
from ..kernels.pointwise import KERNELS, pointwise
from . import arrays
from .activation import (MIN_PARALLEL_CHEAP, MIN_PARALLEL_GRAD, MIN_PARALLEL_MATH,
                         activation)
from .common import OUT, X
from ..backends import CPU, CUDA


def _floats(n: int) -> list[str]:
    """Signatures of a function of n scalars of one float type (arrays, then params)."""
    return [f"{t}({', '.join([t] * n)})" for t in ("float32", "float64")]


FLOAT_4, FLOAT_5 = _floats(4), _floats(5)


# --- the math -------------------------------------------------------------------------------
# Comparisons are written so that a NaN X (which compares false) takes the branch that
# returns it, and a gradient's "off" side is dout * 0, so a NaN dOut stays NaN (Paddle's
# dout * mask).
@pointwise(FLOAT_2, MIN_PARALLEL_CHEAP, params=1)
def relu6(x, threshold):
    v = 0 if x <= 0 else x                 # min(max(x, 0), threshold), NaN kept
    return threshold if v >= threshold else v


@pointwise(FLOAT_3, MIN_PARALLEL_GRAD, params=1)
def relu6_grad(out, dout, threshold):
    return dout if out > 0 and out < threshold else dout * 0


@pointwise(FLOAT_2, MIN_PARALLEL_CHEAP, params=1)
def leaky_relu(x, alpha):
    return x if x > 0 else alpha * x


@pointwise(FLOAT_3, MIN_PARALLEL_GRAD, params=1)
def leaky_relu_grad(x, dout, alpha):
    return dout if x > 0 else dout * alpha


@pointwise(FLOAT_4, MIN_PARALLEL_CHEAP, params=3)
def hard_swish(x, threshold, scale, offset):
    t = x + offset                       # x * clip(x + offset, 0, threshold) / scale
    t = 0.0 if t <= 0 else (threshold if t >= threshold else t)
    return x * t / scale


@pointwise(FLOAT_5, MIN_PARALLEL_GRAD, params=3)
def hard_swish_grad(x, dout, threshold, scale, offset):
    t = x + offset
    if t >= threshold:
        # Out = x * threshold / scale here; Paddle 2.6.2 returns dout (right only when
        # threshold == scale, as its API always sets them: 6 and 6)
        return dout * threshold / scale
    return dout * (2 * x + offset) / scale if t > 0 else dout * 0


@pointwise(FLOAT_3, MIN_PARALLEL_CHEAP, params=2)
def hard_sigmoid(x, slope, offset):
    v = slope * x + offset
    return 0 if v <= 0 else (1 if v >= 1 else v)


@pointwise(FLOAT_4, MIN_PARALLEL_GRAD, params=2)
def hard_sigmoid_grad(out, dout, slope, offset):
    return dout * slope if out > 0 and out < 1 else dout * 0


@pointwise(FLOAT_2, MIN_PARALLEL_MATH, params=1)
def swish(x, beta):
    return x * fsigmoid(beta * x)


@pointwise(FLOAT_3, MIN_PARALLEL_GRAD, params=1)
def swish_grad(x, dout, beta):
    # d/dx x s(bx) = s(bx) + b x s(bx) (1 - s(bx))
    s = fsigmoid(beta * x)
    return dout * (s + beta * x * s * (1 - s))


@pointwise(FLOAT_1, MIN_PARALLEL_MATH)
def silu(x):
    return x * fsigmoid(x)


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD)
def silu_grad(x, dout):
    s = fsigmoid(x)
    return dout * s * (1 + x * (1 - s))


@pointwise(FLOAT_2, MIN_PARALLEL_MATH, params=1)
def elu(x, alpha):
    return x if x > 0 else alpha * (fexp(x) - 1)        # exp of x <= 0 never overflows


@pointwise(FLOAT_3, MIN_PARALLEL_GRAD, params=1)
def elu_grad(x, dout, alpha):
    # alpha * exp(x) below 0, which is Paddle's (Out + alpha) without reading Out
    return dout if x > 0 else dout * alpha * fexp(x)


@pointwise(FLOAT_3, MIN_PARALLEL_MATH, params=2)
def softplus(x, beta, threshold):
    # log(1 + exp(bx)) / b, linear above threshold, as Paddle; written so exp never
    # overflows (log1p(exp(z)) = z + log1p(exp(-z)) for z > 0)
    z = beta * x
    if z > threshold:
        return x
    if z > 0:
        return (z + math.log1p(fexp(-z))) / beta
    return math.log1p(fexp(z)) / beta


@pointwise(FLOAT_4, MIN_PARALLEL_GRAD, params=2)
def softplus_grad(x, dout, beta, threshold):
    z = beta * x
    return dout if z > threshold else dout * fsigmoid(z)


# --- the unary ops --------------------------------------------------------------------------
def _number(name: str, nonzero: bool = False):
    """An ``Attr(check=...)``: a float that is not NaN (and, for a divisor, not 0)."""
    def check(value):
        if value != value:
            return f"NaN is not a valid {name}; expected a number"
        if nonzero and value == 0:
            return f"{name}=0 divides by zero; expected a nonzero number"
        return None
    return check


def _float_attr(name, default, comment, nonzero=False):
    return Attr(name, A.FLOAT, default, comment, check=_number(name, nonzero))


activation("relu6", "min(max(X, 0), threshold)", "Out",
           params=[_float_attr("threshold", 6.0, "the upper bound (Paddle 2.6.2: 6)")])
activation("leaky_relu", "X if X > 0 else alpha * X", "X",
           params=[_float_attr("alpha", 0.02, "the slope below 0")])
activation("hard_swish", "X * min(max(X + offset, 0), threshold) / scale", "X",
           params=[_float_attr("threshold", 6.0, "the upper bound of X + offset"),
                  _float_attr("scale", 6.0, "the divisor", nonzero=True),
                  _float_attr("offset", 3.0, "added to X before clipping")])
activation("hard_sigmoid", "min(max(slope * X + offset, 0), 1)", "Out",
           params=[_float_attr("slope", 0.2, "the slope"),
                  _float_attr("offset", 0.5, "the value at 0")])
activation("swish", "X * sigmoid(beta * X)", "X",
           params=[_float_attr("beta", 1.0, "the sigmoid's scale (Paddle 2.6.2: 1)")])
# silu's and elu's gradient ops read X and Out in Paddle; the kernels compute dX from X alone
activation("silu", "X * sigmoid(X)", "X", also_reads=("Out",))
activation("elu", "X if X > 0 else alpha * (exp(X) - 1)", "X", also_reads=("Out",),
           params=[_float_attr("alpha", 1.0, "the value approached as X -> -inf, negated")])
activation("softplus", "log(1 + exp(beta * X)) / beta (X where beta * X > threshold)", "X",
           params=[_float_attr("beta", 1.0, "the sharpness", nonzero=True),
                  _float_attr("threshold", 20.0, "above it (beta * X), Out = X")])


# --- prelu ----------------------------------------------------------------------------------
@pointwise(FLOAT_2, MIN_PARALLEL_CHEAP)
def prelu(x, alpha):
    return x if x > 0 else alpha * x


@pointwise(FLOAT_3, MIN_PARALLEL_GRAD)
def prelu_grad(x, alpha, dout):
    return dout if x > 0 else dout * alpha


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD)
def prelu_alpha_grad(x, dout):
    return dout * 0 if x > 0 else dout * x       # summed over Alpha's broadcast axes


def _alpha_view(mode: str, layout: str, x_shape) -> tuple:
    """The shape Alpha takes so that numpy broadcasting lines it up with X."""
    rank = len(x_shape)
    if mode == "all":
        return (1,) * rank
    if mode == "channel":
        c = x_shape[1] if layout == "NCHW" else x_shape[rank - 1]
        return tuple(c if (a == 1 if layout == "NCHW" else a == rank - 1) else 1
                     for a in range(rank))
    return (1,) + tuple(x_shape[1:])                 # element: one slope per sample entry


def _prelu_infer(ctx):
    ctx.require_dtype("X", "float")
    ctx.require_same_dtype("Alpha", "X")
    mode, layout = ctx.attr("mode"), ctx.attr("data_format")
    if mode not in ("all", "channel", "element"):
        ctx.fail("mode must be all, channel or element", slot="X",
                 expected="'all', 'channel' or 'element'", given=f"mode={mode!r}")
    if layout not in ("NCHW", "NHWC"):
        ctx.fail("data_format must be NCHW or NHWC (the channel axis: 1 or last)",
                 slot="X", expected="'NCHW' or 'NHWC'", given=f"data_format={layout!r}")
    xs = ctx.require_rank("X", 1 if mode == "all" else 2)
    want = _alpha_view(mode, layout, xs)
    size = 1
    for d in want:
        size = -1 if d < 0 or size < 0 else size * d
    alpha = ctx.shape("Alpha")
    given = -1 if any(d < 0 for d in alpha) else math.prod(alpha)
    if size >= 0 and given >= 0 and size != given:
        what = "element of a sample" if mode == "element" else mode
        ctx.fail(f"Alpha holds one slope per {what} in mode {mode!r}", slot="Alpha",
                 expected=f"{size} elements", given=ctx.describe_input("Alpha"))
    ctx.set_output("Out", xs, ctx.dtype("X"))


def _alpha(ctx, x):
    view = _alpha_view(ctx.attr("mode"), ctx.attr("data_format"),
                       tuple(int(d) for d in x.shape))
    return ctx.input("Alpha").reshape(view), view


def _prelu(place):
    def run(ctx):
        x = ctx.input("X")
        alpha, _ = _alpha(ctx, x)
        ctx.set_output("Out", place.apply(KERNELS["prelu"], x, alpha,
                                          out=ctx.out("Out", x.shape, x.dtype),
                                          out_dtype=x.dtype))
    return run


def _alpha_axis(info):
    """Where a fused loop over X reads Alpha so that it reads the interpreter's view of it
    (one slope, a channel's, a sample's): Fluid's broadcast ``axis``, or why not."""
    mode, layout = info.attr("mode"), info.attr("data_format")
    x_shape, a_shape = info.shape("X"), info.shape("Alpha")
    rank = len(x_shape)
    if mode == "all" and math.prod(a_shape) == 1:
        axis = -1
    elif mode == "channel" and len(a_shape) == 1:
        axis = 1 if layout == "NCHW" else rank - 1
    elif mode == "element" and tuple(a_shape) == tuple(x_shape[1:]):
        axis = 1
    elif mode == "element" and len(a_shape) == rank and a_shape[0] == 1:
        axis = -1                             # [1, ...sample]: lined up as it is
    else:
        return "an Alpha shaped otherwise than its mode's slopes"
    return axis


def _lowered_prelu(info):
    axis = _alpha_axis(info)
    return axis if isinstance(axis, str) else \
        Elementwise(prelu, ("X", "Alpha"), "Out", axis=axis)


def _lowered_prelu_grad(info):
    """dX in a fused loop, where Alpha is not trained; a trained Alpha's gradient is a sum
    over the positions sharing a slope, in numpy's order: the op stays interpreted."""
    if info.has_output("Alpha@GRAD"):
        return "Alpha's gradient is summed by numpy"
    axis = _alpha_axis(info)
    return axis if isinstance(axis, str) else \
        Elementwise(prelu_grad, ("X", "Alpha", "Out@GRAD"), "X@GRAD", axis=axis)


def _prelu_backward(place):
    """dX = dOut (X > 0) or alpha dOut; dAlpha = sum of X dOut where X <= 0, over the
    positions that share a slope."""
    def run(ctx):
        x, dout = ctx.input("X"), ctx.input("Out@GRAD")
        alpha, view = _alpha(ctx, x)
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", place.apply(KERNELS["prelu_grad"], x, alpha, dout,
                                                 out=ctx.out("X@GRAD", x.shape, x.dtype),
                                                 out_dtype=x.dtype))
        if ctx.has_output("Alpha@GRAD"):
            each = place.apply(KERNELS["prelu_alpha_grad"], x, dout, out=None,
                               out_dtype=x.dtype)
            shape = tuple(int(d) for d in ctx.input("Alpha").shape)
            ctx.set_output("Alpha@GRAD", arrays.unbroadcast(each, view, shape))
    return run


register(OpDef(
    "prelu", [X, Slot("Alpha", "the slopes below 0: [1] (all), [C] (channel) or a "
                                "sample's shape (element)")], [OUT],
    [Attr("mode", A.STRING, "all", "all: one slope; channel: one per channel; element: "
                                   "one per element of a sample"),
     Attr("data_format", A.STRING, "NCHW", "where the channel axis is (NCHW: 1, NHWC: "
                                           "last)")],
    comment="Out = X if X > 0 else Alpha * X (Alpha broadcast by mode), elementwise.",
    infer_shape=_prelu_infer, kernels={"cpu": _prelu(CPU), "cuda": _prelu(CUDA)},
    lowered=_lowered_prelu,
    grad=Grad(reads=["X", "Alpha"], writes=["X", "Alpha"], kernel=_prelu_backward(CPU),
              cuda_kernel=_prelu_backward(CUDA), lowered=_lowered_prelu_grad)))
