"""Elementwise math that several Paddle APIs save: rounding (trunc, floor, ceil, round),
logarithms (log1p, log2, log10, logit), the gamma family (lgamma, digamma) and conj.

Fluid's slots and attributes, as ``paddle.trunc`` ... ``paddle.conj`` save them (``frac``
is saved as ``x - trunc(x)``, ``multigammaln`` through ``lgamma``, ``logaddexp`` through
``log1p``). Each is a scalar function under ``@pointwise`` and one declaration, as the
activations in activation.py are.

- Rounding is flat wherever it is defined: Paddle's ``floor_grad`` (and trunc's, ceil's,
  round's) reads only dOut and writes zeros, so those gradient ops declare no forward read
  and take X@GRAD's shape from dOut.
- ``round`` rounds halves away from zero (C's ``round``, which Paddle's kernels call), not
  to the even neighbour as numpy's ``np.round`` does.
- ``lgamma``'s derivative is ``digamma``, and ``digamma``'s is the trigamma function;
  both are written here (reflection, recurrence up to 8, then the asymptotic series),
  since ``math`` has neither.
- ``conj`` of a real tensor is the tensor itself; this package holds no complex tensors,
  so a complex X is refused by the shape rule. Its gradient, as Paddle's, is another
  ``conj`` (of dOut).
"""
from __future__ import annotations

import math

from numba.extending import register_jitable

from ..core import attrs as A
from ..core.grad_maker import Grad, GradOp, grad_name
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu.generated import define
from ..kernels.cpu.lazy_ufunc import FLOAT_1, FLOAT_2, FLOAT_3
from ..kernels.lowered import Elementwise
from ..kernels.pointwise import KERNELS, pointwise
from .activation import (MIN_PARALLEL_CHEAP, MIN_PARALLEL_GRAD, _float_like_x, _forward,
                         _lowered_forward, _named, _no_params, activation, special_function)
from .common import OUT, X
from .fill import _lowered_assign      # a real X's conj is a copy, as assign's
from ..backends import CPU, CUDA

# From 2**52 on every float (float32 from 2**23) is a whole number: rounding keeps it, and
# below it the int conversion the math functions make in numba is exact.
ALL_WHOLE = 4503599627370496.0


# --- rounding ---------------------------------------------------------------------------
# Non-finite values pass through (Python's math.floor raises on inf and NaN, and the CUDA
# simulator runs Python's math, on numpy scalars: hence float(x)). ``x != x`` is tested
# first because it is a quiet compare: ``abs(x) < ...`` on a NaN raises the FPU's invalid
# flag, which numpy reports as a warning. copysign keeps the sign of a zero (-0.3 -> -0.0).
# The three differ only in the libm call: one source, made per call (kernels/cpu/
# generated.py, as @pointwise makes its loops), whose globals name it. Source, not a
# closure, so that numba's disk cache finds each under its own name in the next process.
_ROUNDING = """
def {name}(x):
    if x != x or abs(x) >= ALL_WHOLE:
        return x
    return math.copysign(float(TO_WHOLE(float(x))), x)
"""


def _rounding(name: str, to_whole):
    """The scalar function ``name``: ``to_whole`` (math.trunc, floor or ceil) with the
    rules above."""
    scope = {"math": math, "ALL_WHOLE": ALL_WHOLE, "TO_WHOLE": to_whole}
    rounded = define(_ROUNDING.format(name=name), name, name, _rounding, scope)
    return special_function(FLOAT_1, MIN_PARALLEL_CHEAP)(rounded)


trunc = _rounding("trunc", math.trunc)
floor = _rounding("floor", math.floor)
ceil = _rounding("ceil", math.ceil)


@special_function(FLOAT_1, MIN_PARALLEL_CHEAP)
def round(x):                                          # noqa: A001 (Paddle's op type)
    if x != x or abs(x) >= ALL_WHOLE:
        return x
    whole = float(math.trunc(float(x)))
    if abs(x - whole) >= 0.5:                          # x - whole is exact: a half goes out
        whole = whole + 1.0 if x > 0 else whole - 1.0
    return math.copysign(whole, x)


@pointwise(FLOAT_1, MIN_PARALLEL_GRAD)
def flat_grad(dout):
    return 0.0                     # zeros whatever dOut holds (Paddle's ZeroGradFunctor)


# --- logarithms -------------------------------------------------------------------------
_LOGARITHM = """
def {name}(x):
    if x > POLE:
        return LOG(x)
    return -math.inf if x == POLE else math.nan


def {name}_grad(x, dout):
    return dout / ((x - POLE) * LN_BASE)
"""


def _logarithm(name: str, log, pole: float, ln_base: float):
    """The scalar function ``name`` (``log``, whose argument reaches 0 where x is ``pole``)
    and its gradient ``dOut / ((x - pole) * ln(base))``, under ``@special_function``: the
    three logarithms differ only in these numbers (made from one source as the roundings
    are). Below the pole the guard gives numpy's NaN, at it -inf, where Python's math (the
    CUDA simulator's) raises. ``log`` itself, not ``ln(x) / ln(base)``, so that
    log10(1000) is 3 exactly, as numpy's is."""
    scope = {"math": math, "LOG": log, "POLE": pole, "LN_BASE": ln_base}
    source = _LOGARITHM.format(name=name)
    return (special_function(FLOAT_1)(define(source, name, name, _logarithm, scope)),
            special_function(FLOAT_2, MIN_PARALLEL_GRAD)(
                define(source, f"{name}_grad", f"{name}_grad", _logarithm, scope)))


log1p, log1p_grad = _logarithm("log1p", math.log1p, -1.0, 1.0)
log2, log2_grad = _logarithm("log2", math.log2, 0.0, 0.6931471805599453)         # ln 2
log10, log10_grad = _logarithm("log10", math.log10, 0.0, 2.302585092994046)      # ln 10


# logit(x) = ln(x / (1 - x)); with eps > 0, x is first clipped to [eps, 1 - eps] (Paddle's
# rule), and the gradient is 0 where the clip held x; with eps = 0 it is NaN outside [0, 1]
@special_function(FLOAT_2, params=1)
def logit(x, eps):
    if eps > 0:
        x = eps if x < eps else (1.0 - eps if x > 1.0 - eps else x)
    if 0 < x < 1:
        return math.log(x / (1.0 - x))
    if x == 0:
        return -math.inf
    return math.inf if x == 1 else math.nan


@special_function(FLOAT_3, MIN_PARALLEL_GRAD, params=1)
def logit_grad(x, dout, eps):
    if x < eps or x > 1.0 - eps:
        return dout * 0
    return dout / (x * (1.0 - x))


# --- the gamma family -------------------------------------------------------------------
@register_jitable
def psi(x):
    """digamma(x) = d/dx ln|Gamma(x)|; NaN at the poles (0, -1, -2, ...)."""
    if x != x or x == -math.inf:
        return math.nan
    if x == math.inf:
        return x
    result = 0.0
    if x < 0.5:                      # reflection: psi(x) = psi(1 - x) - pi / tan(pi x)
        if x == math.floor(float(x)):
            return math.nan
        result = -math.pi / math.tan(math.pi * x)
        x = 1.0 - x
    while x < 8.0:                   # recurrence: psi(x) = psi(x + 1) - 1 / x
        result -= 1.0 / x
        x += 1.0
    f = 1.0 / (x * x)                # the asymptotic series (Bernoulli numbers)
    return result + math.log(x) - 0.5 / x - f * (
        1.0 / 12 - f * (1.0 / 120 - f * (1.0 / 252 - f * (1.0 / 240 - f / 132))))


@register_jitable
def trigamma(x):
    """psi'(x) = sum over k >= 0 of 1 / (x + k)**2; NaN at the poles."""
    if x != x or x == -math.inf:
        return math.nan
    if x == math.inf:
        return 0.0
    result = 0.0
    sign = 1.0
    if x < 0.5:                      # reflection: psi'(x) = pi^2 / sin^2(pi x) - psi'(1 - x)
        if x == math.floor(float(x)):
            return math.nan
        s = math.sin(math.pi * x)
        result = math.pi * math.pi / (s * s)
        sign = -1.0
        x = 1.0 - x
    tail = 0.0
    while x < 8.0:                   # recurrence: psi'(x) = psi'(x + 1) + 1 / x^2
        tail += 1.0 / (x * x)
        x += 1.0
    f = 1.0 / (x * x)
    tail += 1.0 / x + f / 2 + f / x * (1.0 / 6 - f * (1.0 / 30 - f * (1.0 / 42 - f / 30)))
    return result + sign * tail


@special_function(FLOAT_1)
def lgamma(x):
    if x != x:
        return x
    if abs(x) == math.inf or (x <= 0 and x == math.floor(float(x))):
        return math.inf              # the poles, as C's lgamma (Python's math raises)
    return math.lgamma(x)


@special_function(FLOAT_2)
def lgamma_grad(x, dout):
    return dout * psi(x)


@special_function(FLOAT_1)
def digamma(x):
    return psi(x)


@special_function(FLOAT_2)
def digamma_grad(x, dout):
    return dout * trigamma(x)


# --- the ops ----------------------------------------------------------------------------
def _flat_grad(place, op_type: str):
    """X@GRAD = zeros of dOut's shape and dtype (rounding is flat)."""
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        ctx.set_output("X@GRAD", place.apply(KERNELS["flat_grad"], dout,
                                             out=ctx.out("X@GRAD", dout.shape, dout.dtype),
                                             out_dtype=dout.dtype))
    run.__name__ = f"{place.name}_{op_type}_grad"
    return run


def _grad_like_dout(ctx):
    """X@GRAD has dOut's shape and dtype. Paddle's rounding gradients read dOut alone; this
    package's backward also gives X (an optional slot), and then dOut must have X's shape
    (a dOut of another shape would give a dX of the wrong shape, silently)."""
    if ctx.has_input("X") and ctx.has_value("X"):
        ctx.require_gradient_fits("Out", want=ctx.shape("X"))
    ctx.set_output("X@GRAD", ctx.shape("Out@GRAD"), ctx.dtype("Out@GRAD"))


def _lowered_flat_grad(info):
    """In a compiled block: the zeros of flat_grad, fused into the loop of dOut's ops."""
    return Elementwise(KERNELS["flat_grad"], ("Out@GRAD",), "X@GRAD")


def _rounding(op_type: str, formula: str):
    """Declare a rounding op: activation()'s forward (and its lowered form), and a gradient
    op that, as Paddle's, needs dOut alone (X only to check dOut's shape, where it is
    given). Declared here and not by activation(), whose gradient reads a forward slot:
    so the lowered forms are named here too."""
    register(OpDef(op_type, [X], [OUT], [], comment=f"Out = {formula}, elementwise.",
                   infer_shape=_float_like_x,
                   kernels={"cpu": _forward(CPU, op_type, _named(op_type), _no_params),
                            "cuda": _forward(CUDA, op_type, _named(op_type), _no_params)},
                   lowered=_lowered_forward(_named(op_type), _no_params),
                   grad=Grad(reads=["X"], optional=("X",), writes=["X"],
                             kernel=_flat_grad(CPU, op_type),
                             cuda_kernel=_flat_grad(CUDA, op_type),
                             infer_shape=_grad_like_dout, lowered=_lowered_flat_grad),
                   unary=True))


for _type, _formula in (("trunc", "X rounded toward zero"), ("floor", "X rounded down"),
                        ("ceil", "X rounded up"),
                        ("round", "X rounded to the nearest whole number, halves away from "
                                  "zero")):
    _rounding(_type, _formula)


def _small_margin(eps) -> str | None:
    """logit's eps clips X to [eps, 1 - eps]: a margin of 0.5 or more leaves no interval."""
    if isinstance(eps, (int, float)) and not 0 <= eps < 0.5:
        return f"eps={eps} is outside [0, 0.5); expected a small margin (0: no clip)"
    return None


activation("log1p", "ln(1 + X)", "X", act=False)
activation("log2", "log2(X)", "X", act=False)
activation("log10", "log10(X)", "X", act=False)
activation("logit", "ln(X / (1 - X)), X clipped to [eps, 1 - eps] first when eps > 0", "X",
           act=False,
           attrs=[Attr("eps", A.FLOAT, 1e-6, "the clip margin (0: no clip)",
                       check=_small_margin)],
           params_of=lambda ctx, dtype: (dtype.type(ctx.attr("eps")),))
activation("lgamma", "ln|Gamma(X)|", "X", act=False)
activation("digamma", "digamma(X), the derivative of ln|Gamma(X)|", "X", act=False)


# --- conj ---------------------------------------------------------------------------------
def _conj_infer(ctx):
    # ints and floats (complex tensors are out of this package's scope; bool has no conj)
    ctx.require_dtype("X", "number")
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _conj(place):
    def run(ctx):
        ctx.set_output("Out", place.copy(ctx.input("X")))     # a real X is its own conj
    run.__name__ = f"{place.name}_conj"
    return run


def _conj_grad(op, no_grad):
    """Paddle's: the gradient of conj is conj of dOut (another conj op)."""
    if op.input("X")[0] in no_grad:
        return []
    return [GradOp("conj", {"X": [grad_name(op.output("Out")[0])]},
                   {"Out": [grad_name(op.input("X")[0])]}, {})]


register(OpDef("conj", [X], [OUT], [], comment="Out = the complex conjugate of X (a real X "
               "is its own); complex tensors are refused.",
               infer_shape=_conj_infer, kernels={"cpu": _conj(CPU), "cuda": _conj(CUDA)},
               lowered=_lowered_assign, grad=_conj_grad, unary=True))
