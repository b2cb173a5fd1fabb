"""Smooth activations built from exp, log and tanh: mish, logsigmoid, celu, selu, softsign,
tanh_shrink (``F.mish``, ``F.log_sigmoid``, ``F.celu``, ``F.selu``, ``F.softsign``,
``F.tanhshrink``; op types, slots and attributes as Paddle 2.6.2 saves them).

Each is a scalar function and its gradient under ``@pointwise``, declared with
activation.py's ``activation(...)``, as relu or gelu are; attributes reach the scalar
functions as trailing arguments in X's dtype (activation()'s ``params``). Which slot
each gradient op reads is Paddle's: X for all of them but selu_grad, which reads Out.

What differs from a textbook formula is written to stay finite where the textbook one is
not: softplus inside mish and logsigmoid is ``max(z, 0) + log1p(exp(-|z|))`` (exp never
overflows, log never sees 0), so logsigmoid(-100) is -100, not -inf, and its gradient at
+-100 is 0 or 1, not NaN. tanh_shrink, x - tanh(x), loses every digit to cancellation for
small x; below |x| = 0.05 it is the Taylor series instead, in float64.
"""
from __future__ import annotations

import math

from ..core import attrs as A
from ..core.registry import Attr
from ..kernels.cpu.fastmath32 import fexp, fsigmoid, ftanh
from ..kernels.cpu.lazy_ufunc import FLOAT_1, FLOAT_2, FLOAT_3
from ..kernels.pointwise import pointwise
from .activation import MIN_PARALLEL_GRAD, MIN_PARALLEL_MATH, activation
from .common import number_check
from .relu_variants import FLOAT_4, _float_attr


# --- mish: x * tanh(softplus(x)), softplus linear above threshold (as Paddle) ----------------
@pointwise(FLOAT_2, MIN_PARALLEL_MATH, params=1)
def mish(x, threshold):
    if x > threshold:
        sp = x
    elif x > 0:
        sp = x + math.log1p(fexp(-x))       # log(1 + e^x) without e^x overflowing
    else:
        sp = math.log1p(fexp(x))            # (NaN lands here and stays NaN)
    return x * ftanh(sp)


@pointwise(FLOAT_3, MIN_PARALLEL_GRAD, params=1)
def mish_grad(x, dout, threshold):
    # d/dx x tanh(sp) = tanh(sp) + x (1 - tanh(sp)^2) sp', where sp' = sigmoid(x) (1 in
    # the linear region above threshold)
    if x > threshold:
        sp = x
        dsp = x * 0 + 1
    else:
        sp = x + math.log1p(fexp(-x)) if x > 0 else math.log1p(fexp(x))
        dsp = fsigmoid(x)
    t = ftanh(sp)
    return dout * (t + x * (1 - t * t) * dsp)


# --- logsigmoid: log(1 / (1 + e^-x)) = min(x, 0) - log1p(e^-|x|) ---------------------------
@pointwise(FLOAT_1, MIN_PARALLEL_MATH)
def logsigmoid(x):
    if x > 0:
        return -math.log1p(fexp(-x))
    return x - math.log1p(fexp(x))


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD)
def logsigmoid_grad(x, dout):
    return dout * fsigmoid(-x)              # 1 - sigmoid(x), without the cancellation


# --- celu and selu: exponential below 0 --------------------------------------------------
@pointwise(FLOAT_2, MIN_PARALLEL_MATH, params=1)
def celu(x, alpha):
    # max(0, x) + min(0, alpha (e^(x/alpha) - 1)), which is this for either sign of alpha
    return x if x > 0 else alpha * math.expm1(x / alpha)


@pointwise(FLOAT_3, MIN_PARALLEL_GRAD, params=1)
def celu_grad(x, dout, alpha):
    return dout if x > 0 else dout * fexp(x / alpha)


@pointwise(FLOAT_3, MIN_PARALLEL_MATH, params=2)
def selu(x, scale, alpha):
    return scale * x if x > 0 else scale * alpha * math.expm1(x)


@pointwise(FLOAT_4, MIN_PARALLEL_GRAD, params=2)
def selu_grad(out, dout, scale, alpha):
    # from Out, as Paddle's selu_grad: below 0, d/dx scale alpha (e^x - 1) = Out + scale
    # alpha. (Right when scale > 0 and alpha >= 0, so that Out > 0 exactly where X > 0: the
    # attribute checks below hold them there.)
    return dout * scale if out > 0 else dout * (out + scale * alpha)


# --- softsign and tanh_shrink -----------------------------------------------------------
@pointwise(FLOAT_1, MIN_PARALLEL_MATH)
def softsign(x):
    if math.isinf(x):
        return 1 if x > 0 else -1          # the limit (inf / inf would be NaN)
    return x / (1 + abs(x))


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD)
def softsign_grad(x, dout):
    d = 1 + abs(x)
    return dout / (d * d)


# x - tanh(x) = x^3/3 - 2x^5/15 + 17x^7/315 - 62x^9/2835 + 1382x^11/155925 - ...; the next
# term is below float64's rounding of the sum for |x| < 0.05
TANH_SHRINK_SERIES_BELOW = 0.05


@pointwise(FLOAT_1, MIN_PARALLEL_MATH)
def tanh_shrink(x):
    w = x * 1.0                              # float64 for float32 X too
    if abs(w) < TANH_SHRINK_SERIES_BELOW:
        z = w * w
        return w * z * (1 / 3 - z * (2 / 15 - z * (17 / 315 - z * (62 / 2835
                                                                   - z * (1382 / 155925)))))
    return w - math.tanh(w)


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD)
def tanh_shrink_grad(x, dout):
    t = math.tanh(x)
    return dout * t * t


# --- the ops ---------------------------------------------------------------------------------
def _positive(name: str):
    """An ``Attr(check=...)``: a positive finite number."""
    return number_check(lambda value: 0 < value < math.inf,
                        name + "={value} is not positive (expected a finite number > 0)")


def _not_negative(name: str):
    """An ``Attr(check=...)``: a finite number >= 0."""
    return number_check(lambda value: 0 <= value < math.inf, name + "={value} is negative or "
                        "not finite (expected a finite number >= 0)")


# Paddle's SELU constants (Klambauer et al.), which F.selu saves as its defaults
SELU_SCALE, SELU_ALPHA = 1.0507009873554804934193349852946, 1.6732632423543772848170429916717

activation("mish", "X * tanh(softplus(X)) (softplus(X) = X above threshold)", "X",
           params=[_float_attr("threshold", 20.0, "above it, softplus(X) is taken as X")])
activation("logsigmoid", "log(1 / (1 + exp(-X)))", "X")
activation("celu", "X if X > 0 else alpha * (exp(X / alpha) - 1)", "X",
           params=[_float_attr("alpha", 1.0, "the scale of the exponential part",
                              nonzero=True)])
activation("selu", "scale * (X if X > 0 else alpha * (exp(X) - 1))", "Out",
           params=[Attr("scale", A.FLOAT, SELU_SCALE, "the factor (> 0: the gradient reads Out)",
                       check=_positive("scale")),
                  Attr("alpha", A.FLOAT, SELU_ALPHA, "the exponential part's scale",
                       check=_not_negative("alpha"))])
activation("softsign", "X / (1 + |X|)", "X")
activation("tanh_shrink", "X - tanh(X)", "X")
