"""Adam's family as ops (Fluid's slots): adam, adamw (decoupled weight decay) and lamb
(Adam's step scaled per parameter by the trust ratio ||Param|| / ||step||).

All three keep two running moments and the powers beta1^t, beta2^t (one-element tensors
the op advances: Beta1PowOut = Beta1Pow * beta1), and correct the moments' bias with them.

adam also takes a SelectedRows Grad (an embedding's sparse gradient) and then does what
Paddle 2.6.2's CPU kernel does (``adam_rows``), two of whose quirks change the numbers:
the beta powers are advanced *before* the update reads them (so the bias correction uses
beta^(t+1)), and a row with no gradient divides by sqrt(Moment2) + epsilon unscaled.
"""
from __future__ import annotations

import math

from ..core import attrs as A
from ..core.registry import Attr, Slot
from ..kernels.cpu.lamb import lamb_moments, lamb_step, lamb_update
from ..kernels.lowered import Call
from ..kernels.update import times, update
from . import selected_rows
from .optimizer import (MIN_PARALLEL_ADAM, buffers, optimizer_op, read_state, unchanged,
                        update_lowered)
from ..backends import CPU, CUDA
from .common import FLOAT_TYPES

_MOMENTS = [("Moment1", "running mean of Grad"), ("Moment2", "running mean of Grad^2")]
_POWERS = [("Beta1Pow", "beta1^t"), ("Beta2Pow", "beta2^t")]
_OUTPUTS = [("ParamOut", "Param"), ("Moment1Out", "Moment1"), ("Moment2Out", "Moment2"),
            ("Beta1PowOut", "Beta1Pow"), ("Beta2PowOut", "Beta2Pow")]


def _decay_rate(v):
    # the bias correction divides by 1 - beta^t: a beta outside [0, 1) has no meaning
    return None if isinstance(v, (int, float)) and 0 <= v < 1 else f"{v!r} is not in [0, 1)"


_BETAS = [Attr("beta1", A.FLOAT, 0.9, "decay of the first moment", check=_decay_rate),
          Attr("beta2", A.FLOAT, 0.999, "decay of the second moment", check=_decay_rate)]
# SkipUpdate is kept for Paddle compatibility (unused); the three tensors give beta1, beta2
# and epsilon at run time (core/attr_tensors.py): ctx.attr("beta1") is Beta1Tensor's value
_BETA_TENSORS = ("Beta1Tensor", "Beta2Tensor", "EpsilonTensor")
_UNUSED = [Slot("SkipUpdate", "kept for Paddle compatibility (unused)", dispensable=True)] + \
    [Slot(name, f"{name[:-len('Tensor')].lower()} as a 1-element tensor", dispensable=True)
     for name in _BETA_TENSORS]
_LAZY = Attr("lazy_mode", A.BOOLEAN, False, "with a SelectedRows Grad: update only its rows "
             "(else every row, the others with a zero gradient)")
_KEPT = [Attr("lazy_mode", A.BOOLEAN, False, "kept for Paddle compatibility", extra=True),
         Attr("min_row_size_to_use_multithread", A.LONG, 1000,
              "kept for Paddle compatibility", extra=True),
         Attr("use_global_beta_pow", A.BOOLEAN, False, "kept for Paddle compatibility",
              extra=True)]


def _advance_powers(ctx, place):
    """Beta1PowOut = Beta1Pow * beta1, Beta2PowOut = Beta2Pow * beta2 (on the place)."""
    for k in ("1", "2"):
        if ctx.has_output(f"Beta{k}PowOut"):
            ctx.set_output(f"Beta{k}PowOut", place.scale(ctx.input(f"Beta{k}Pow"),
                                                         ctx.attr(f"beta{k}")))


def _lowered_powers(info):
    """_advance_powers in a compiled block (kernels/update.times)."""
    return tuple(Call(times, (f"Beta{k}Pow",), (f"Beta{k}PowOut",), (info.attr(f"beta{k}"),))
                 for k in ("1", "2") if info.has_output(f"Beta{k}PowOut"))


# --- adam and adamw -----------------------------------------------------------------------------
@update(arrays=4, cells=3, outputs=3, min_parallel=MIN_PARALLEL_ADAM)
def adamw(param, grad, m1, m2, lr, beta1_pow, beta2_pow, beta1, beta2, epsilon, coeff):
    # Paddle folds the bias correction into the step and epsilon: terms of the cells only,
    # computed once per call (the loop loads the cells before it starts)
    lr_t = lr * math.sqrt(1.0 - beta2_pow) / (1.0 - beta1_pow)
    eps_t = epsilon * math.sqrt(1.0 - beta2_pow)
    m1 = beta1 * m1 + (1.0 - beta1) * grad
    m2 = beta2 * m2 + (1.0 - beta2) * grad * grad
    decayed = param * (1.0 - lr * coeff)    # decoupled weight decay (Adam: coeff 0)
    return decayed - lr_t * (m1 / (math.sqrt(m2) + eps_t)), m1, m2


# --- adam with a SelectedRows gradient ----------------------------------------------------------
@update(arrays=5, cells=3, outputs=3, min_parallel=MIN_PARALLEL_ADAM)
def adam_rows(param, grad, m1, m2, given, lr, beta1_pow, beta2_pow, beta1, beta2, epsilon,
              lazy):
    """Paddle 2.6.2's CPU step with a SelectedRows gradient (SparseAdamFunctor<CPUAdam>)
    for one element: ``given`` is nonzero where the element's row is among the gradient's
    rows, and ``grad`` is then that row's merged gradient."""
    lr_t = lr * math.sqrt(1.0 - beta2_pow) / (1.0 - beta1_pow)
    if given != 0.0:                      # Adam's step, as the dense one
        m1 = beta1 * m1 + (1.0 - beta1) * grad
        m2 = beta2 * m2 + (1.0 - beta2) * grad * grad
        return param - lr_t * (m1 / (math.sqrt(m2) + epsilon * math.sqrt(1.0 - beta2_pow))), \
            m1, m2
    if lazy:                              # lazy_mode: a row not looked up stays as it is
        return param, m1, m2
    m1 = beta1 * m1                       # else its moments decay, and it still moves,
    m2 = beta2 * m2                       # by a step whose epsilon Paddle does not scale
    return param - lr_t * (m1 / (math.sqrt(m2) + epsilon)), m1, m2


def adam_sparse(ctx, place, dense):
    """Adam with a SelectedRows gradient, as Paddle 2.6.2's CPU kernel
    (AdamDenseParamSparseGradKernel): the rows merged (repeats added); every element
    updated by ``adam_rows`` (with ``lazy_mode`` only the rows given). Paddle writes
    Beta1PowOut = Beta1Pow * beta1 first, and, Beta1PowOut being Beta1Pow's own tensor in
    its programs, the update then reads the advanced powers: its bias correction is one
    step ahead of the dense kernel's (sqrt(1 - b2^2) / (1 - b1^2) against sqrt(1 - b2) /
    (1 - b1) on the first step: 0.744x the step). Here too, when the op writes the powers
    back into the variables it reads them from. A gradient with no rows changes nothing,
    the powers included (Paddle returns first)."""
    param = ctx.input("Param")
    rows, value = selected_rows.given(ctx, "Grad", "Param")
    if not int(rows.shape[0]):
        return unchanged(ctx, _OUTPUTS)
    grad = selected_rows.dense(rows, value, param.shape)         # repeats added in order
    given = selected_rows.dense(rows, place.full(value.shape, 1, value.dtype), param.shape)
    values = read_state(ctx, ["Param", "Grad", "Moment1", "Moment2"],
                        ["LearningRate", "Beta1Pow", "Beta2Pow"], grad)
    powers = list(values[5:])
    for i, k in enumerate(("1", "2")):
        if ctx.output_names(f"Beta{k}PowOut") == ctx.input_names(f"Beta{k}Pow"):
            powers[i] = place.scale(powers[i], ctx.attr(f"beta{k}"))
    slots = ("ParamOut", "Moment1Out", "Moment2Out")
    new = place.update(adam_rows, *values[:4], given, values[4], *powers, ctx.attr("beta1"),
                       ctx.attr("beta2"), ctx.attr("epsilon"), bool(ctx.attr("lazy_mode")),
                       out=buffers(ctx, place, slots, param))
    for slot, value in zip(slots, new):
        ctx.set_output(slot, value)
    _advance_powers(ctx, place)


_EPSILON = Attr("epsilon", A.FLOAT, 1e-8, "keeps the division finite")
optimizer_op(
    "adam", "Adam: Param -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * Moment1 / "
    "(sqrt(Moment2) + epsilon * sqrt(1 - beta2^t)); a SelectedRows Grad as Paddle's CPU "
    "kernel (lazy_mode: only its rows).",
    adamw, _MOMENTS, _POWERS, _OUTPUTS, _BETAS + [_EPSILON, _LAZY] + _KEPT[1:],
    lambda ctx: (ctx.attr("beta1"), ctx.attr("beta2"), ctx.attr("epsilon"), 0.0),
    extra_inputs=_UNUSED + [Slot("Moment2Max", "kept for Paddle compatibility (unused)",
                                 dispensable=True)],
    after=_advance_powers, sparse=adam_sparse, reads_attr_tensors=_BETA_TENSORS,
    lowered_after=_lowered_powers)


def _adamw_params(ctx):
    return (ctx.attr("beta1"), ctx.attr("beta2"), ctx.attr("epsilon"),
            ctx.attr("coeff") if ctx.attr("with_decay") else 0.0)


def _adamw(place):
    """AdamW steps with the learning rate times lr_ratio (a per-parameter factor)."""
    def run(ctx):
        values = read_state(ctx, ["Param", "Grad", "Moment1", "Moment2"],
                       ["LearningRate", "Beta1Pow", "Beta2Pow"])
        values[4] = place.scale(values[4], ctx.attr("lr_ratio"))
        slots = ("ParamOut", "Moment1Out", "Moment2Out")
        for slot, value in zip(slots, place.update(adamw, *values, *_adamw_params(ctx),
                                                   out=buffers(ctx, place, slots, values[0]))):
            ctx.set_output(slot, value)
        _advance_powers(ctx, place)
    return run


_adam_lowered = update_lowered(adamw, ["Param", "Grad", "Moment1", "Moment2"],
                               ["LearningRate", "Beta1Pow", "Beta2Pow"],
                               ["ParamOut", "Moment1Out", "Moment2Out"], _adamw_params,
                               _lowered_powers)


def _lowered_adamw(info):
    """adamw's returning loop and the powers' Calls, as adam's, where lr_ratio is 1 (the
    kernel's LearningRate * 1 is LearningRate; another ratio scales it first, a step the
    compiled form has no slot for)."""
    return _adam_lowered(info) if info.attr("lr_ratio") == 1.0 else None


optimizer_op(
    "adamw", "AdamW: Param *= 1 - lr * coeff (with_decay), then Adam's step; lr is "
    "LearningRate * lr_ratio.",
    adamw, _MOMENTS, _POWERS, _OUTPUTS,
    _BETAS + [_EPSILON, Attr("lr_ratio", A.FLOAT, 1.0, "this parameter's learning-rate factor"),
              Attr("coeff", A.FLOAT, 0.01, "the decoupled weight decay"),
              Attr("with_decay", A.BOOLEAN, False, "apply the weight decay")] + _KEPT,
    None, extra_inputs=_UNUSED, kernels={"cpu": _adamw(CPU), "cuda": _adamw(CUDA)},
    reads_attr_tensors=_BETA_TENSORS, lowered=_lowered_adamw)


# --- lamb (its update loops: kernels/cpu/lamb.py) -----------------------------------------------
def _lowered_lamb(info):
    """lamb_update and the powers' Calls, for a float Param (and every output asked for,
    as update_lowered asks)."""
    outputs = ("ParamOut", "Moment1Out", "Moment2Out")
    if info.dtype("Param").name not in FLOAT_TYPES or \
            not all(info.has_output(slot) for slot in outputs):
        return None
    decay = info.attr("weight_decay")
    return (Call(lamb_update, ("Param", "Grad", "Moment1", "Moment2", "LearningRate",
                               "Beta1Pow", "Beta2Pow"), outputs,
                 (info.attr("beta1"), info.attr("beta2"), info.attr("epsilon"), decay,
                  bool(info.attr("always_adapt")) or decay != 0.0)),
            *_lowered_powers(info))


def _squared_norm(place, a):
    squares = place.unary("square", a, 1.0, None)
    return place.sum_axes(squares, list(range(a.ndim)), False).reshape((1,))


def _lamb(place):
    def run(ctx):
        values = read_state(ctx, ["Param", "Grad", "Moment1", "Moment2"],
                       ["LearningRate", "Beta1Pow", "Beta2Pow"])
        param, lr = values[0], values[4]
        decay = ctx.attr("weight_decay")
        m1, m2, direction = place.update(lamb_moments, *values[:4], *values[5:],
                                         ctx.attr("beta1"), ctx.attr("beta2"),
                                         ctx.attr("epsilon"), decay)
        # Paddle adapts a parameter's step only where it decays it, unless always_adapt
        adapt = bool(ctx.attr("always_adapt")) or decay != 0.0
        new = place.update(lamb_step, param, direction, lr, _squared_norm(place, param),
                           _squared_norm(place, direction), adapt)
        for slot, value in (("ParamOut", new), ("Moment1Out", m1), ("Moment2Out", m2)):
            ctx.set_output(slot, value)
        _advance_powers(ctx, place)
    return run


optimizer_op(
    "lamb", "LAMB: Adam's step r (bias-corrected, plus weight_decay * Param) scaled by the "
    "trust ratio ||Param|| / ||r||: Param -= lr * ratio * r.",
    None, _MOMENTS, _POWERS, _OUTPUTS,
    _BETAS + [Attr("epsilon", A.FLOAT, 1e-6, "keeps the division finite"),
              Attr("weight_decay", A.FLOAT, 0.01, "decay added to the step"),
              Attr("always_adapt", A.BOOLEAN, False, "use the trust ratio without decay too")],
    None, extra_inputs=[_UNUSED[0]], kernels={"cpu": _lamb(CPU), "cuda": _lamb(CUDA)},
    lowered=_lowered_lamb)
