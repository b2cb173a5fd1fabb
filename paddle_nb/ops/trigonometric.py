"""The circular and hyperbolic functions and their inverses (sin, cos, tan, asin, acos,
atan, sinh, cosh, asinh, acosh, atanh), the error function (erf) and exp(x) - 1 (expm1).

Fluid's slots and attributes, as ``paddle.sin`` ... ``paddle.expm1`` save them: X -> Out,
no attributes, and a ``<op>_grad`` op. Each is a scalar function under ``@pointwise`` and
one ``activation(...)`` declaration, as the logarithms in rounding_and_special.py are.

- The gradients are Paddle's formulas (its activation functors): ``dOut * cos(X)`` for sin,
  ``dOut / sqrt(1 - X^2)`` for asin, and so on; every one reads X except expm1's, which,
  as Paddle's, reads Out (``dOut * Out + dOut``).
- Outside its domain a function gives what numpy gives: NaN (asin(2), acosh(0.5),
  sin(inf)), or an infinity at a pole or past overflow (atanh(1), sinh(1000)). Compiled
  code gets that from C's libm already; the guards are there because the CUDA simulator
  runs Python's ``math``, which raises instead (ValueError, OverflowError).
- All are computed without fastmath (``special_function``, activation.py: ``@pointwise``
  with ``fastmath=False``): no reciprocal approximations, and inf and NaN keep their meaning.
"""
from __future__ import annotations

import math

from numba.extending import register_jitable

from ..kernels.cpu.lazy_ufunc import FLOAT_1, FLOAT_2
from .activation import MIN_PARALLEL_GRAD, activation, special_function

TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
# exp(x) overflows a float64 above ln(DBL_MAX) ~ 709.78; cosh and sinh (e^|x| / 2) only
# above ~ 710.48, and past 2 * 709.78 even exp(|x| / 2) overflows
EXP_LIMIT = 709.782712893384
HALF_EXP_LIMIT = 2 * EXP_LIMIT


# --- helpers both places compile: each is C's answer where Python's math would raise ------
@register_jitable
def _circular_arg_ok(x):
    """sin, cos and tan of an infinity are NaN (Python's math raises)."""
    return not math.isinf(x)


@register_jitable
def _sqrt_or_nan(v):
    return math.sqrt(v) if v >= 0 else math.nan


@register_jitable
def _half_exp_past_overflow(a):
    """e^a / 2 for a >= EXP_LIMIT, where e^a alone overflows but e^a / 2 does not up to
    a ~ 710.48: the product of two halves, inf past it."""
    if a > HALF_EXP_LIMIT:
        return math.inf
    h = math.exp(0.5 * a)
    return (0.5 * h) * h


@register_jitable
def _sinh(x):
    if x != x or abs(x) < EXP_LIMIT:
        return math.sinh(x)
    return math.copysign(_half_exp_past_overflow(abs(x)), x)


@register_jitable
def _cosh(x):
    if x != x or abs(x) < EXP_LIMIT:
        return math.cosh(x)
    return _half_exp_past_overflow(abs(x))


# --- circular ---------------------------------------------------------------------------
@special_function(FLOAT_1)
def sin(x):
    return math.sin(x) if _circular_arg_ok(x) else math.nan


@special_function(FLOAT_2)
def sin_grad(x, dout):
    return dout * (math.cos(x) if _circular_arg_ok(x) else math.nan)


@special_function(FLOAT_1)
def cos(x):
    return math.cos(x) if _circular_arg_ok(x) else math.nan


@special_function(FLOAT_2)
def cos_grad(x, dout):
    return -dout * (math.sin(x) if _circular_arg_ok(x) else math.nan)


@special_function(FLOAT_1)
def tan(x):
    return math.tan(x) if _circular_arg_ok(x) else math.nan


@special_function(FLOAT_2)
def tan_grad(x, dout):
    c = math.cos(x) if _circular_arg_ok(x) else math.nan
    return dout / (c * c)                              # 1 + tan^2 = 1 / cos^2


# --- inverse circular (asin, acos: defined on [-1, 1]) ------------------------------------
@special_function(FLOAT_1)
def asin(x):
    return math.asin(x) if -1.0 <= x <= 1.0 else math.nan


@special_function(FLOAT_2)
def asin_grad(x, dout):
    return dout / _sqrt_or_nan(1.0 - x * x)           # inf at +-1, NaN outside


@special_function(FLOAT_1)
def acos(x):
    return math.acos(x) if -1.0 <= x <= 1.0 else math.nan


@special_function(FLOAT_2)
def acos_grad(x, dout):
    return -dout / _sqrt_or_nan(1.0 - x * x)


@special_function(FLOAT_1)
def atan(x):
    return math.atan(x)                                # +-pi/2 at +-inf


@special_function(FLOAT_2, MIN_PARALLEL_GRAD)
def atan_grad(x, dout):
    return dout / (1.0 + x * x)


# --- hyperbolic -------------------------------------------------------------------------
@special_function(FLOAT_1)
def sinh(x):
    return _sinh(x)


@special_function(FLOAT_2)
def sinh_grad(x, dout):
    return dout * _cosh(x)


@special_function(FLOAT_1)
def cosh(x):
    return _cosh(x)


@special_function(FLOAT_2)
def cosh_grad(x, dout):
    return dout * _sinh(x)


# --- inverse hyperbolic (acosh: X >= 1; atanh: |X| <= 1, infinite at +-1) -----------------
@special_function(FLOAT_1)
def asinh(x):
    return math.asinh(x)


@special_function(FLOAT_2)
def asinh_grad(x, dout):
    return dout / math.sqrt(x * x + 1.0)


@special_function(FLOAT_1)
def acosh(x):
    return math.acosh(x) if x >= 1.0 else math.nan


@special_function(FLOAT_2)
def acosh_grad(x, dout):
    return dout / _sqrt_or_nan(x * x - 1.0)


@special_function(FLOAT_1)
def atanh(x):
    if -1.0 < x < 1.0:
        return math.atanh(x)
    if x == 1.0 or x == -1.0:
        return math.copysign(math.inf, x)
    return math.nan


@special_function(FLOAT_2, MIN_PARALLEL_GRAD)
def atanh_grad(x, dout):
    return dout / (1.0 - x * x)


# --- erf, expm1 -------------------------------------------------------------------------
@special_function(FLOAT_1)
def erf(x):
    return math.erf(x)


@special_function(FLOAT_2)
def erf_grad(x, dout):
    return dout * TWO_OVER_SQRT_PI * math.exp(-x * x)


@special_function(FLOAT_1)
def expm1(x):
    return math.expm1(x) if x < EXP_LIMIT else (x if x != x else math.inf)


@special_function(FLOAT_2, MIN_PARALLEL_GRAD)
def expm1_grad(out, dout):
    return dout * out + dout                           # Paddle's: d/dx (e^x - 1) = Out + 1


# --- the ops ----------------------------------------------------------------------------
for _type, _formula in (("sin", "sin(X)"), ("cos", "cos(X)"), ("tan", "tan(X)"),
                        ("asin", "arcsin(X), NaN outside [-1, 1]"),
                        ("acos", "arccos(X), NaN outside [-1, 1]"), ("atan", "arctan(X)"),
                        ("sinh", "sinh(X)"), ("cosh", "cosh(X)"), ("asinh", "arsinh(X)"),
                        ("acosh", "arcosh(X), NaN below 1"),
                        ("atanh", "artanh(X), NaN outside [-1, 1]"),
                        ("erf", "the error function of X")):
    activation(_type, _formula, "X", act=False)
activation("expm1", "exp(X) - 1, exact near 0", "Out", act=False)
