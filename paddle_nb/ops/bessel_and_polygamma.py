"""i0, i0e, i1, i1e (the modified Bessel functions of the first kind, orders 0 and 1, and
their exponentially scaled forms e^-|x| I(x)) and polygamma (the n-th derivative of
digamma), as ``paddle.i0(x)`` ... ``paddle.polygamma(x, n)`` save them.

These two are Paddle's newer ops (phi kernels, no Fluid OpMaker), and their slots are
written in lower case: ``x`` -> ``out``, with ``i0_grad`` / ``polygamma_grad`` reading
``x`` and ``out@GRAD`` and writing ``x@GRAD``. So they are declared here with their own
small kernels, not with activation()'s X -> Out shorthand.

- ``i0``, ``i1``: the power series sum of (x^2/4)^k / (k!)^2 (positive terms: no cancellation)
  up to |x| = 30, beyond it the asymptotic expansion of e^|x| / sqrt(2 pi |x|). Its
  derivative is ``i1``, computed the same way; i1's is i0 - i1 / x (1/2 at 0). The
  scaled forms take the series times e^-|x|, or the expansion without its e^|x|, so they
  stay finite where I itself overflows; i0e' = i1e - sign(x) i0e, i1e' = i0e -
  i1e (sign(x) + 1 / x).
- ``polygamma``: for n >= 1, (-1)^(n+1) n! zeta(n + 1, x), with the Hurwitz zeta function
  summed directly up to 10 and by Euler-Maclaurin beyond (Bernoulli numbers); a negative
  x is brought to positive arguments by splitting the sum at 0. n = 0 is digamma. Its
  derivative is polygamma of n + 1.

At the ends, the limits: i0(+-inf) is +inf (Paddle 2.6.2 and scipy give NaN there, their
Chebyshev form dividing inf by inf) and polygamma(+inf) is 0 (Paddle: NaN); at a pole,
polygamma of odd n is +inf, as Paddle's, and NaN for even n (and digamma), whose two
sides have opposite signs.

In a compiled block each op and gradient is its own ``@pointwise`` function (an
Elementwise form, fused with its neighbours): the series above, bit for bit, with no
scipy in either path.
"""
from __future__ import annotations

import math

from numba.extending import register_jitable

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.lazy_ufunc import FLOAT_1, FLOAT_2, FLOAT_3
from ..kernels.lowered import Elementwise
from ..kernels.pointwise import KERNELS
from .activation import MIN_PARALLEL_GRAD, special_function
from ..backends import CPU, CUDA
from .rounding_and_special import psi

SERIES_UP_TO = 30.0          # |x| from which the Bessel asymptotic expansion is used
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


# --- Bessel I0 and I1 -------------------------------------------------------------------
@register_jitable
def bessel_i(x, order):
    """I_order(x) for order 0 or 1."""
    if x != x:
        return x
    a = abs(x)
    sign = -1.0 if (order == 1 and x < 0) else 1.0
    if a <= SERIES_UP_TO:
        quarter = a * a / 4.0
        term = 1.0 if order == 0 else a / 2.0    # k = 0
        total = term
        k = 0
        while term > total * 1e-17:
            k += 1
            term *= quarter / (k * (k + order))
            total += term
        return sign * total
    if a == math.inf:
        return sign * a
    # e^a / sqrt(2 pi a) * sum of c_k, c_k = c_{k-1} * ((2k - 1)^2 - 4 order^2) / (8 k a)
    c, total = 1.0, 1.0
    for k in range(1, 17):
        c *= ((2 * k - 1) ** 2 - 4.0 * order * order) / (8.0 * k * a)
        total += c
    half = math.exp(a / 2)              # e^a as a square: finite a little further
    return sign * half * (half * INV_SQRT_2PI / math.sqrt(a)) * total


@register_jitable
def bessel_i_scaled(x, order):
    """e^-|x| I_order(x) for order 0 or 1."""
    a = abs(x)
    if not a > SERIES_UP_TO:               # the series (and NaN), then scaled
        return bessel_i(x, order) * math.exp(-a)
    if a == math.inf:
        return -0.0 if (order == 1 and x < 0) else 0.0   # the limit of 1 / sqrt(2 pi |x|)
    c, total = 1.0, 1.0
    for k in range(1, 17):
        c *= ((2 * k - 1) ** 2 - 4.0 * order * order) / (8.0 * k * a)
        total += c
    sign = -1.0 if (order == 1 and x < 0) else 1.0
    return sign * INV_SQRT_2PI / math.sqrt(a) * total


@special_function(FLOAT_1)
def i0(x):
    return bessel_i(x, 0)


@special_function(FLOAT_2, MIN_PARALLEL_GRAD)
def i0_grad(x, dout):
    return dout * bessel_i(x, 1)


@special_function(FLOAT_1)
def i0e(x):
    return bessel_i_scaled(x, 0)


@special_function(FLOAT_2, MIN_PARALLEL_GRAD)
def i0e_grad(x, dout):
    sign = 1.0 if x > 0 else (-1.0 if x < 0 else 0.0)
    return dout * (bessel_i_scaled(x, 1) - sign * bessel_i_scaled(x, 0))


@special_function(FLOAT_1)
def i1(x):
    return bessel_i(x, 1)


@special_function(FLOAT_2, MIN_PARALLEL_GRAD)
def i1_grad(x, dout):
    if x == 0:
        return dout * 0.5
    return dout * (bessel_i(x, 0) - bessel_i(x, 1) / x)


@special_function(FLOAT_1)
def i1e(x):
    return bessel_i_scaled(x, 1)


@special_function(FLOAT_2, MIN_PARALLEL_GRAD)
def i1e_grad(x, dout):
    if x == 0:
        return dout * 0.5
    sign = 1.0 if x > 0 else -1.0
    return dout * (bessel_i_scaled(x, 0) - bessel_i_scaled(x, 1) * (sign + 1.0 / x))


# --- polygamma --------------------------------------------------------------------------
# B_2j / (2j)!, j = 1..7: the Euler-Maclaurin coefficients of the zeta tail
_EM = (1.0 / 12, -1.0 / 720, 1.0 / 30240, -1.0 / 1209600, 1.0 / 47900160,
       -691.0 / 1307674368000, 1.0 / 74724249600)


@register_jitable
def zeta_positive(s, a):
    """Hurwitz zeta, sum over k >= 0 of 1 / (a + k)^s, for s >= 2 and a > 0."""
    total = 0.0
    while a < 10.0:
        total += a ** -s
        a += 1.0
    total += a ** (1.0 - s) / (s - 1.0) + 0.5 * a ** -s
    term = s * a ** (-s - 1.0)         # s (s+1) ... (s+2j-2) a^(-s-2j+1), from j = 1
    for j in range(7):
        total += _EM[j] * term
        term *= (s + 2 * j + 1) * (s + 2 * j + 2) / (a * a)
    return total


@register_jitable
def hurwitz_zeta(s, x):
    """The same sum for any x that is not 0, -1, -2...: for x < 0, with f = x - floor(x),
    the terms below 0 are (-1)^s (zeta(s, 1 - f) - zeta(s, 1 - x)), those above zeta(s, f)
    (the sum split at 0; every argument positive)."""
    if x > 0:
        return zeta_positive(s, x)
    f = x - math.floor(float(x))
    parity = 1.0 if int(s) % 2 == 0 else -1.0
    return zeta_positive(s, f) + parity * (zeta_positive(s, 1.0 - f)
                                           - zeta_positive(s, 1.0 - x))


@register_jitable
def polygamma_of(x, n):
    if n == 0:
        return psi(x)
    if x != x or x == -math.inf:
        return math.nan
    if x == math.inf:
        return 0.0
    if x <= 0 and x == math.floor(float(x)):
        # a pole: every term 1 / (x + k)^(n+1) is positive for odd n (+inf from both
        # sides, as Paddle gives); for even n the sides disagree
        return math.inf if int(n) % 2 == 1 else math.nan
    factorial = 1.0
    for k in range(2, int(n) + 1):
        factorial *= k
    sign = 1.0 if int(n) % 2 == 1 else -1.0       # (-1)^(n+1)
    return sign * factorial * hurwitz_zeta(n + 1.0, x)


@special_function(FLOAT_2, params=1)
def polygamma(x, n):
    return polygamma_of(x, n)


@special_function(FLOAT_3, params=1)
def polygamma_grad(x, dout, n):
    return dout * polygamma_of(x, n + 1)


# --- the ops ----------------------------------------------------------------------------
LOWER_X = Slot("x", "the input tensor")
LOWER_OUT = Slot("out", "the result")


def _float_like_x(ctx):
    ctx.require_dtype("x", "float")
    ctx.set_output("out", ctx.shape("x"), ctx.dtype("x"))


def _no_params(ctx, dtype):
    return ()


def _order(ctx, dtype):
    """polygamma's n, as the kernels' scalar argument (in the elements' float type)."""
    return (dtype.type(ctx.attr("n")),)


def _forward(place, op_type: str, params_of):
    def run(ctx):
        x = ctx.input("x")
        ctx.set_output("out", place.apply(KERNELS[op_type], x, *params_of(ctx, x.dtype),
                                          out=ctx.out("out", x.shape, x.dtype),
                                          out_dtype=x.dtype))
    run.__name__ = f"{place.name}_{op_type}"
    return run


def _backward(place, op_type: str, params_of):
    def run(ctx):
        dout = ctx.input("out@GRAD")
        ctx.set_output("x@GRAD", place.apply(KERNELS[op_type + "_grad"], ctx.input("x"),
                                             dout, *params_of(ctx, dout.dtype),
                                             out=ctx.out("x@GRAD", dout.shape, dout.dtype),
                                             out_dtype=dout.dtype))
    run.__name__ = f"{place.name}_{op_type}_grad"
    return run


def _lowered(op_type: str, params_of, grad: bool):
    """The op (``grad``: its gradient) in a compiled block: the same scalar function, its
    parameters from ``params_of`` (which reads only ``attr``, as an OpInfo has it)."""
    if grad:
        return lambda info: Elementwise(
            KERNELS[op_type + "_grad"], ("x", "out@GRAD"), "x@GRAD",
            params_of(info, info.dtype("out@GRAD")))
    return lambda info: Elementwise(KERNELS[op_type], ("x",), "out",
                                    params_of(info, info.dtype("x")))


def _declare(op_type: str, formula: str, attrs=(), params_of=_no_params, reads=("x",)):
    register(OpDef(op_type, [LOWER_X], [LOWER_OUT], list(attrs),
                   comment=f"out = {formula}, elementwise.", infer_shape=_float_like_x,
                   kernels={"cpu": _forward(CPU, op_type, params_of),
                            "cuda": _forward(CUDA, op_type, params_of)},
                   lowered=_lowered(op_type, params_of, False),
                   grad=Grad(reads=list(reads), writes=["x"],
                             kernel=_backward(CPU, op_type, params_of),
                             cuda_kernel=_backward(CUDA, op_type, params_of),
                             lowered=_lowered(op_type, params_of, True))))


MAX_ORDER = 170        # n! must be a float64 (171! is not); the gradient reads order n + 1


def _order_in_range(n) -> str | None:
    if isinstance(n, int) and not 0 <= n < MAX_ORDER:
        return (f"n={n} is out of range; expected the order of the derivative, "
                f"0 <= n < {MAX_ORDER} (n! is computed in float64)")
    return None


_declare("i0", "I0(x), the modified Bessel function of the first kind of order 0")
# Paddle's gradient ops of these three also read out (ours need only x)
_declare("i0e", "e^-|x| I0(x), i0 scaled", reads=("x", "out"))
_declare("i1", "I1(x), the modified Bessel function of the first kind of order 1",
         reads=("x", "out"))
_declare("i1e", "e^-|x| I1(x), i1 scaled", reads=("x", "out"))
_declare("polygamma", "the n-th derivative of digamma at x",
         attrs=[Attr("n", A.INT, 0, "the order of the derivative (0: digamma)",
                     check=_order_in_range)],
         params_of=_order)
