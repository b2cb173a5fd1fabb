"""Piecewise-linear activations with thresholds: hard_shrink, softshrink, thresholded_relu
and brelu (``F.hardshrink``, ``F.softshrink``, ``F.thresholded_relu``, ``F.hardtanh``; op
types, slots and attributes as Paddle 2.6.2 saves them: note ``softshrink``'s attribute
is named ``lambda`` and ``F.hardtanh`` saves a ``brelu`` op with ``t_min``/``t_max``).

Each is a scalar function and its gradient under ``@pointwise``, declared with
activation.py's ``activation(...)``; every gradient op reads X, as Paddle's do. The
gradient is dOut inside the pieces where Out follows X and 0 elsewhere (written
``dout * 0``, so a NaN dOut stays NaN, as Paddle's dout * mask). Comparisons are written so
that a NaN X takes the branch that returns it (a NaN compares false), and so that an
infinite X inside an infinite threshold gives the piece's value, not inf * 0 = NaN.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.registry import Attr
from ..kernels.cpu.lazy_ufunc import FLOAT_2, FLOAT_3
from ..kernels.pointwise import pointwise
from .activation import MIN_PARALLEL_CHEAP, MIN_PARALLEL_GRAD, activation
from .common import number_check
from .relu_variants import FLOAT_4, _float_attr


@pointwise(FLOAT_2, MIN_PARALLEL_CHEAP, params=1)
def hard_shrink(x, threshold):
    return 0 if -threshold <= x <= threshold else x


@pointwise(FLOAT_3, MIN_PARALLEL_GRAD, params=1)
def hard_shrink_grad(x, dout, threshold):
    return dout * 0 if -threshold <= x <= threshold else dout


@pointwise(FLOAT_2, MIN_PARALLEL_CHEAP, params=1)
def softshrink(x, lambd):
    # X - lambda above lambda, X + lambda below -lambda, 0 between (lambda >= 0, checked)
    if -lambd <= x <= lambd:
        return 0
    return x - lambd if x > 0 else x + lambd


@pointwise(FLOAT_3, MIN_PARALLEL_GRAD, params=1)
def softshrink_grad(x, dout, lambd):
    return dout * 0 if -lambd <= x <= lambd else dout


@pointwise(FLOAT_2, MIN_PARALLEL_CHEAP, params=1)
def thresholded_relu(x, threshold):
    return 0 if x <= threshold else x


@pointwise(FLOAT_3, MIN_PARALLEL_GRAD, params=1)
def thresholded_relu_grad(x, dout, threshold):
    return dout if x > threshold else dout * 0


@pointwise(FLOAT_3, MIN_PARALLEL_CHEAP, params=2)
def brelu(x, t_min, t_max):
    # min(max(X, t_min), t_max) in that order, as Paddle: t_max wins when t_min > t_max
    v = t_min if x < t_min else x
    return t_max if v > t_max else v


@pointwise(FLOAT_4, MIN_PARALLEL_GRAD, params=2)
def brelu_grad(x, dout, t_min, t_max):
    return dout if t_min < x < t_max else dout * 0


# softshrink's lambda: a number >= 0 (F.softshrink refuses a negative one; with one the two
# linear pieces would overlap)
_LAMBDA_CHECK = number_check(lambda value: value >= 0,
                             "lambda={value} is negative or NaN (expected a number >= 0)")


activation("hard_shrink", "X if |X| > threshold else 0", "X",
           params=[_float_attr("threshold", 0.5, "|X| at or below it gives 0")])
activation("softshrink", "X - lambda if X > lambda, X + lambda if X < -lambda, else 0", "X",
           params=[Attr("lambda", A.FLOAT, 0.5, "the half-width of the band set to 0",
                       check=_LAMBDA_CHECK)])
activation("thresholded_relu", "X if X > threshold else 0", "X",
           params=[_float_attr("threshold", 1.0, "X at or below it gives 0")])
activation("brelu", "min(max(X, t_min), t_max)", "X",
           params=[_float_attr("t_min", 0.0, "the lower bound"),
                  _float_attr("t_max", 24.0, "the upper bound")])
