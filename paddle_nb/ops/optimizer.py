"""Optimizers as ops (Fluid's slots): sgd, momentum, adam.

Each reads a parameter, its gradient, the learning rate (a persistable 0-d or [1] tensor set
by the startup program) and its accumulators, and writes them back (``ParamOut`` is the same
variable as ``Param``). ``pd.optimizer.*.minimize`` appends one op per parameter.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..kernels.cpu import optimizer as K
from ..kernels.cuda import copy as CC
from ..kernels.cuda import optimizer as CK


def _same_as(ctx, pairs):
    for out_slot, in_slot in pairs:
        if ctx.has_output(out_slot):
            ctx.set_output(out_slot, ctx.shape(in_slot), ctx.dtype(in_slot))


def _check_state(ctx, like_param=(), one_element=()):
    """Param, Grad and the accumulators are float tensors of Param's shape; the learning
    rate and the beta powers hold one element (a 0-d or [1] tensor), as Paddle checks."""
    for slot in ("Param", "Grad", "LearningRate", *like_param, *one_element):
        ctx.require_dtype(slot, "float")
    for slot in ("Grad", *like_param):
        ctx.require_same_shape(slot, "Param")
    for slot in like_param:                  # written back in Param's type
        ctx.require_same_dtype(slot, "Param")
    for slot in ("LearningRate", *one_element):
        ctx.require_one_element(slot)


def _scalar(a: np.ndarray, dtype) -> float:
    return dtype.type(np.ravel(a)[0])


def _params(ctx):
    p, g = ctx.input("Param"), ctx.input("Grad")
    if p.shape != g.shape:
        raise ValueError(f"Grad has shape {list(g.shape)}, Param {list(p.shape)}")
    return p, g.astype(p.dtype, copy=False), _scalar(ctx.input("LearningRate"), p.dtype)


def _cuda_params(ctx):
    """Param, Grad in Param's dtype, LearningRate: all device arrays; the learning rate
    is read by the kernel on the device (no copy back to the host)."""
    p, g = ctx.input("Param"), ctx.input("Grad")
    if tuple(p.shape) != tuple(g.shape):
        raise ValueError(f"Grad has shape {list(g.shape)}, Param {list(p.shape)}")
    if g.dtype != p.dtype:
        g = CC.astype(g, p.dtype)
    return p, g, ctx.input("LearningRate")


_COMMON_IN = [Slot("Param", "the parameter"), Slot("Grad", "its gradient"),
              Slot("LearningRate", "the learning rate (a 1-element tensor)"),
              Slot("MasterParam", "fp32 copy for mixed precision (unused)", dispensable=True)]
_MULTI_PRECISION = Attr("multi_precision", A.BOOLEAN, False, "kept for Paddle compatibility",
                        extra=True)


# --- sgd ----------------------------------------------------------------------------------------
def _sgd(ctx):
    p, g, lr = _params(ctx)
    out = ctx.out("ParamOut", p.shape, p.dtype) if isinstance(p, np.ndarray) else None
    ctx.set_output("ParamOut", np.asarray(K.sgd(p, g, lr, out), dtype=p.dtype))


def _sgd_infer(ctx):
    _check_state(ctx)
    _same_as(ctx, [("ParamOut", "Param")])


register(OpDef(
    "sgd", _COMMON_IN, [Slot("ParamOut", "the updated parameter")], [_MULTI_PRECISION],
    comment="ParamOut = Param - LearningRate * Grad.",
    infer_shape=_sgd_infer,
    kernels={"cpu": _sgd, "cuda": lambda ctx: ctx.set_output("ParamOut", CK.sgd(
        *_cuda_params(ctx)))},
    grad=NO_GRADIENT))


# --- momentum -----------------------------------------------------------------------------------
def _momentum(ctx):
    p, g, lr = _params(ctx)
    if ctx.attr("rescale_grad") != 1.0:
        g = g * p.dtype.type(ctx.attr("rescale_grad"))
    if ctx.attr("regularization_method") == "l2_decay" and ctx.attr("regularization_coeff"):
        g = g + p.dtype.type(ctx.attr("regularization_coeff")) * p
    p_out, v_out = K.momentum(p, g, ctx.input("Velocity"), lr, p.dtype.type(ctx.attr("mu")),
                              ctx.attr("use_nesterov"))
    ctx.set_output("ParamOut", np.asarray(p_out, dtype=p.dtype))    # 0-d stays an array
    ctx.set_output("VelocityOut", np.asarray(v_out, dtype=p.dtype))


def _cuda_momentum(ctx):
    p, g, lr = _cuda_params(ctx)
    l2 = ctx.attr("regularization_coeff") \
        if ctx.attr("regularization_method") == "l2_decay" else 0.0
    p_out, v_out = CK.momentum(p, g, ctx.input("Velocity"), lr, ctx.attr("mu"),
                               ctx.attr("use_nesterov"), ctx.attr("rescale_grad"), l2)
    ctx.set_output("ParamOut", p_out)
    ctx.set_output("VelocityOut", v_out)


def _momentum_infer(ctx):
    _check_state(ctx, like_param=["Velocity"])
    _same_as(ctx, [("ParamOut", "Param"), ("VelocityOut", "Velocity")])


register(OpDef(
    "momentum", _COMMON_IN + [Slot("Velocity", "the running velocity")],
    [Slot("ParamOut", "the updated parameter"), Slot("VelocityOut", "the updated velocity")],
    [Attr("mu", A.FLOAT, 0.9, "the momentum"),
     Attr("use_nesterov", A.BOOLEAN, False, "Nesterov's look-ahead update"),
     Attr("regularization_method", A.STRING, "", "'' or 'l2_decay'"),
     Attr("regularization_coeff", A.FLOAT, 0.0, "the L2 decay coefficient"),
     Attr("rescale_grad", A.FLOAT, 1.0, "Grad is multiplied by this first"),
     _MULTI_PRECISION],
    comment="Velocity = mu * Velocity + Grad; Param -= LearningRate * Velocity.",
    infer_shape=_momentum_infer, kernels={"cpu": _momentum, "cuda": _cuda_momentum},
    grad=NO_GRADIENT))


# --- adam ---------------------------------------------------------------------------------------
def _adam(ctx):
    p, g, lr = _params(ctx)
    b1, b2 = p.dtype.type(ctx.attr("beta1")), p.dtype.type(ctx.attr("beta2"))
    b1p, b2p = ctx.input("Beta1Pow"), ctx.input("Beta2Pow")
    p_out, m1, m2 = K.adam(p, g, ctx.input("Moment1"), ctx.input("Moment2"), lr, b1, b2,
                           p.dtype.type(ctx.attr("epsilon")), _scalar(b1p, p.dtype),
                           _scalar(b2p, p.dtype))
    # numba widens "1 - beta_pow" to float64: store results in the parameter's dtype
    ctx.set_output("ParamOut", np.asarray(p_out, dtype=p.dtype))
    ctx.set_output("Moment1Out", np.asarray(m1, dtype=p.dtype))
    ctx.set_output("Moment2Out", np.asarray(m2, dtype=p.dtype))
    ctx.set_output("Beta1PowOut", (b1p * b1).astype(b1p.dtype))
    ctx.set_output("Beta2PowOut", (b2p * b2).astype(b2p.dtype))


def _cuda_adam(ctx):
    p, g, lr = _cuda_params(ctx)
    outs = CK.adam(p, g, ctx.input("Moment1"), ctx.input("Moment2"), lr, ctx.attr("beta1"),
                   ctx.attr("beta2"), ctx.attr("epsilon"), ctx.input("Beta1Pow"),
                   ctx.input("Beta2Pow"))
    for slot, value in zip(("ParamOut", "Moment1Out", "Moment2Out", "Beta1PowOut",
                            "Beta2PowOut"), outs):
        ctx.set_output(slot, value)


def _adam_infer(ctx):
    _check_state(ctx, like_param=["Moment1", "Moment2"], one_element=["Beta1Pow", "Beta2Pow"])
    _same_as(ctx, [("ParamOut", "Param"), ("Moment1Out", "Moment1"), ("Moment2Out", "Moment2"),
                   ("Beta1PowOut", "Beta1Pow"), ("Beta2PowOut", "Beta2Pow")])


_OPTIONAL = ["Beta1Tensor", "Beta2Tensor", "EpsilonTensor", "Moment2Max", "SkipUpdate"]
register(OpDef(
    "adam", _COMMON_IN + [Slot("Moment1", "running mean of Grad"),
                          Slot("Moment2", "running mean of Grad^2"),
                          Slot("Beta1Pow", "beta1^t"), Slot("Beta2Pow", "beta2^t")]
    + [Slot(n, "kept for Paddle compatibility (unused)", dispensable=True) for n in _OPTIONAL],
    [Slot("ParamOut", "the updated parameter"), Slot("Moment1Out", "updated Moment1"),
     Slot("Moment2Out", "updated Moment2"), Slot("Beta1PowOut", "Beta1Pow * beta1"),
     Slot("Beta2PowOut", "Beta2Pow * beta2")],
    [Attr("beta1", A.FLOAT, 0.9, "decay of the first moment"),
     Attr("beta2", A.FLOAT, 0.999, "decay of the second moment"),
     Attr("epsilon", A.FLOAT, 1e-8, "keeps the division finite"),
     Attr("lazy_mode", A.BOOLEAN, False, "kept for Paddle compatibility", extra=True),
     Attr("min_row_size_to_use_multithread", A.LONG, 1000, "kept for Paddle compatibility",
          extra=True),
     Attr("use_global_beta_pow", A.BOOLEAN, False, "kept for Paddle compatibility",
          extra=True),
     _MULTI_PRECISION],
    comment="Adam: Param -= lr * sqrt(1 - beta2^t) / (1 - beta1^t) * Moment1 / "
            "(sqrt(Moment2) + epsilon * sqrt(1 - beta2^t)).",
    infer_shape=_adam_infer, kernels={"cpu": _adam, "cuda": _cuda_adam}, grad=NO_GRADIENT))
