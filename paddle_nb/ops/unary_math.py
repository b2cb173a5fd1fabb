"""Elementwise math of one tensor: abs, sign, sqrt, rsqrt, pow, clip, erfinv, stanh, angle
(Fluid's slots and attributes, as ``paddle.abs`` ... ``paddle.angle`` save them).

Each is a scalar function under ``@pointwise`` and one declaration, as the activations in
activation.py are (``activation(...)`` declares the op, its ``_grad`` op and both places'
kernels). pow's factor and clip's bounds are attributes, or tensors (``FactorTensor``,
``Min``, ``Max``) that override them: they reach the kernels as scalar arguments.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import GradOp, grad_name
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.lazy_ufunc import FLOAT_1, FLOAT_2, FLOAT_3, INT_AND_FLOAT_1
from ..kernels.pointwise import pointwise
from .activation import (MIN_PARALLEL_CHEAP, MIN_PARALLEL_GRAD, MIN_PARALLEL_LOG,
                         _float_like_x, _forward, _lowered_forward, _named, _no_params,
                         _real_like_x, activation)
from .common import OUT, X
from ..backends import CPU, CUDA

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
FLOAT_4 = ["float32(float32, float32, float32, float32)",
           "float64(float64, float64, float64, float64)"]


# --- the math -------------------------------------------------------------------------------
@pointwise(INT_AND_FLOAT_1, MIN_PARALLEL_CHEAP)
def abs(x):                                            # noqa: A001 (Paddle's op type)
    return -x if x < 0 else x + 0                      # NaN stays NaN; -0.0 -> 0.0


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD)
def abs_grad(x, dout):
    # Paddle's sign(x) * dout: 0 at 0, and a NaN dOut stays NaN
    return dout if x > 0 else (-dout if x < 0 else dout * 0)


@pointwise(INT_AND_FLOAT_1, MIN_PARALLEL_CHEAP)
def sign(x):
    return 1 if x > 0 else (-1 if x < 0 else x * 0)   # 0 -> 0, NaN -> NaN


# The guards give numpy's NaN / inf where Python's math (which the CUDA simulator runs)
# would raise or go complex; compiled code takes the same branches.
@pointwise(FLOAT_1, MIN_PARALLEL_LOG, fastmath=False)
def sqrt(x):
    return math.sqrt(x) if x >= 0 else math.nan


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD, fastmath=False)
def sqrt_grad(out, dout):
    return dout * 0.5 / out


@pointwise(FLOAT_1, MIN_PARALLEL_LOG, fastmath=False)
def rsqrt(x):
    if x > 0:
        return 1.0 / math.sqrt(x)
    return math.inf if x == 0 else math.nan


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD, fastmath=False)
def rsqrt_grad(out, dout):
    return -0.5 * dout * out * out * out


@pointwise(FLOAT_2, MIN_PARALLEL_LOG, fastmath=False, params=1)
def pow(x, factor):                                    # noqa: A001 (Paddle's op type)
    if -math.inf < x < 0 and math.isfinite(factor) and factor % 1.0 != 0.0:
        return math.nan                                # a negative base, a fraction power
    return x ** factor


@pointwise(FLOAT_3, MIN_PARALLEL_LOG, fastmath=False, params=1)
def pow_grad(x, dout, factor):
    if -math.inf < x < 0 and math.isfinite(factor) and factor % 1.0 != 0.0:
        return math.nan
    return dout * factor * x ** (factor - 1)


@pointwise(FLOAT_3, MIN_PARALLEL_CHEAP, params=2)
def clip(x, low, high):
    return low if x < low else (high if x > high else x)     # NaN passes through


@pointwise(FLOAT_4, MIN_PARALLEL_GRAD, params=2)
def clip_grad(x, dout, low, high):
    # Paddle's: dOut where low < x < high, 0 at and beyond the bounds
    return dout if x > low and x < high else dout * 0


# erfinv: Winitzki's closed form (within ~2e-3) polished by Newton steps on erf (on erfc
# for |y| > 0.5, where 1 - |y| is exact and erf(x) would round to 1); +-inf at +-1 and NaN
# beyond (Paddle 2.6.2 gives inf beyond 1: the inverse is undefined there).
@pointwise(FLOAT_1, MIN_PARALLEL_LOG, fastmath=False)
def erfinv(y):
    a = -y if y < 0 else y
    if not a <= 1.0:                       # NaN, or outside [-1, 1]
        return math.nan
    if a == 1.0:
        return math.inf if y > 0 else -math.inf
    log_term = math.log((1.0 - a) * (1.0 + a))
    t = 2.0 / (math.pi * 0.147) + 0.5 * log_term
    x = math.sqrt(math.sqrt(t * t - log_term / 0.147) - t)
    for _ in range(4):
        slope = TWO_OVER_SQRT_PI * math.exp(-x * x)
        miss = (1.0 - a) - math.erfc(x) if a > 0.5 else math.erf(x) - a
        if slope == 0.0:
            break
        x -= miss / slope
    return -x if y < 0 else x


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD, fastmath=False)
def erfinv_grad(out, dout):
    # 1 / erf'(out) = sqrt(pi) / 2 * exp(out^2)
    return dout * (0.5 * math.sqrt(math.pi)) * math.exp(out * out)


@pointwise(FLOAT_3, MIN_PARALLEL_LOG, params=2)
def stanh(x, scale_a, scale_b):
    return scale_b * math.tanh(scale_a * x)


@pointwise(FLOAT_4, MIN_PARALLEL_GRAD, params=2)
def stanh_grad(x, dout, scale_a, scale_b):
    t = math.tanh(scale_a * x)
    return dout * scale_a * scale_b * (1.0 - t * t)


# angle of a real number: pi for a negative one, else 0 (NaN and inf too, as Paddle's
# x < 0 test)
@pointwise(FLOAT_1, MIN_PARALLEL_CHEAP)
def angle(x):
    return math.pi if x < 0 else 0.0


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD)
def angle_grad(x, dout):
    return dout * 0                        # flat wherever it is defined, as Paddle's


# --- the ops --------------------------------------------------------------------------------
def _scalar(ctx, attr: str, dtype):
    """An attribute (a tensor's value where one gives it: core/attr_tensors.py) in the
    kernel's dtype."""
    return dtype.type(ctx.attr(attr))


def _not_nan(value):
    return "NaN is not a bound; expected a number (or +-inf)" if value != value else None


def _finite(name: str):
    def check(value) -> str | None:
        if isinstance(value, float) and not math.isfinite(value):
            return f"{name}={value}; expected a finite scale"
        return None
    return check


def _min_below_max(values: dict) -> str | None:
    """Paddle's rule: max must be at least min (clip would be constant otherwise)."""
    low, high = values.get("min"), values.get("max")
    if isinstance(low, float) and isinstance(high, float) and low > high:
        return f"min={low} is above max={high}; expected min <= max"
    return None


activation("abs", "|X|", "X", infer=_real_like_x, act=False)
activation("sqrt", "sqrt(X)", "Out", infer=_float_like_x, act=False)
activation("rsqrt", "1 / sqrt(X)", "Out", infer=_float_like_x, act=False)
activation("pow", "X ** factor", "X", act=False,
           inputs=[Slot("FactorTensor", "factor as a 1-element tensor", dispensable=True)],
           attrs=[Attr("factor", A.FLOAT, 1.0, "the exponent")],
           params_of=lambda ctx, dtype: (_scalar(ctx, "factor", dtype),),
           reads_attr_tensors=("FactorTensor",))
activation("clip", "min(max(X, min), max)", "X", act=False,
           inputs=[Slot("Min", "min as a 1-element tensor", dispensable=True),
                   Slot("Max", "max as a 1-element tensor", dispensable=True)],
           attrs=[Attr("min", A.FLOAT, float(np.finfo(np.float32).min), "the lower bound",
                       check=_not_nan),
                  Attr("max", A.FLOAT, float(np.finfo(np.float32).max), "the upper bound",
                       check=_not_nan)],
           check_attrs=_min_below_max,
           params_of=lambda ctx, dtype: (_scalar(ctx, "min", dtype),
                                         _scalar(ctx, "max", dtype)),
           reads_attr_tensors=("Min", "Max"))

activation("erfinv", "the inverse of erf (NaN outside [-1, 1])", "Out", act=False)
activation("stanh", "scale_b * tanh(scale_a * X)", "X", act=False,
           attrs=[Attr("scale_a", A.FLOAT, 0.67, "the scale of X inside tanh",
                       check=_finite("scale_a")),
                  Attr("scale_b", A.FLOAT, 1.7159, "the scale of the result",
                       check=_finite("scale_b"))],
           params_of=lambda ctx, dtype: (_scalar(ctx, "scale_a", dtype),
                                         _scalar(ctx, "scale_b", dtype)))
activation("angle", "the argument of X: pi where X < 0, else 0 (real X)", "X", act=False)


def _sign_grad(op, no_grad):
    """sign is flat wherever it is defined: Paddle's gradient is dOut scaled by 0."""
    if op.input("X")[0] in no_grad:
        return []
    return [GradOp("scale", {"X": [grad_name(op.output("Out")[0])]},
                   {"Out": [grad_name(op.input("X")[0])]},
                   {"scale": 0.0, "bias": 0.0, "bias_after_scale": True})]


register(OpDef("sign", [X], [OUT], [], comment="Out = -1, 0 or 1 by X's sign, elementwise.",
               infer_shape=_real_like_x,
               kernels={"cpu": _forward(CPU, "sign", _named("sign"), lambda c, d: ()),
                        "cuda": _forward(CUDA, "sign", _named("sign"), lambda c, d: ())},
               lowered=_lowered_forward(_named("sign"), _no_params),
               grad=_sign_grad, unary=True))
