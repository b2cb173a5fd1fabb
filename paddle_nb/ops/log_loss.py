"""log_loss: the negative log likelihood of binary labels under predicted probabilities,
and its gradient (the slots and attributes ``F.log_loss(input, label, epsilon)`` saves in
Paddle 2.6.2: Predicted, Labels -> Loss, elementwise).

    Loss = -Labels * log(Predicted + epsilon) - (1 - Labels) * log(1 - Predicted + epsilon)

``epsilon`` keeps the logarithms finite at probabilities of exactly 0 or 1. The gradient
reaches Predicted only (Paddle's log_loss_grad writes no Labels@GRAD). The math is two
scalar functions under ``@pointwise``, and ops/elementwise_loss.py makes its kernels.
"""
from __future__ import annotations

import math

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.lazy_ufunc import FLOAT_3
from ..kernels.pointwise import pointwise
from .elementwise_loss import elementwise_loss, lowered_elementwise_loss
from ..backends import CPU, CUDA

PREDICTED = Slot("Predicted", "the predicted probabilities")
FLOAT_4 = ["float32(float32, float32, float32, float32)",
           "float64(float64, float64, float64, float64)"]
LABELS = Slot("Labels", "the labels (0 or 1, or probabilities), Predicted's shape")


@pointwise(FLOAT_3, fastmath=False, params=1)
def log_loss(p, label, epsilon):
    return -label * math.log(p + epsilon) - (1 - label) * math.log(1 - p + epsilon)


@pointwise(FLOAT_4, fastmath=False, params=1)
def log_loss_grad(p, label, dout, epsilon):
    return dout * ((1 - label) / (1 - p + epsilon) - label / (p + epsilon))


def _infer(ctx):
    ctx.require_dtype("Predicted", "float")
    ctx.require_same_dtype("Labels", "Predicted")
    ctx.require_same_shape("Labels", "Predicted")
    ctx.set_output("Loss", ctx.shape("Predicted"), ctx.dtype("Predicted"))


def _epsilon(ctx, dtype):
    return dtype.type(ctx.attr("epsilon"))


make, make_grad = elementwise_loss(log_loss, log_loss_grad, ("Predicted", "Labels"), "Loss",
                                   param=_epsilon)
lowered, lowered_grad = lowered_elementwise_loss(log_loss, log_loss_grad,
                                                 ("Predicted", "Labels"), "Loss", _epsilon)


def _epsilon_ok(value) -> str | None:
    if isinstance(value, float) and not (value >= 0 and math.isfinite(value)):
        return f"epsilon={value}; expected a small finite number >= 0"
    return None


register(OpDef(
    "log_loss", [PREDICTED, LABELS], [Slot("Loss", "the loss of each element")],
    [Attr("epsilon", A.FLOAT, 1e-4, "added inside the logarithms", check=_epsilon_ok)],
    comment="Loss = -Labels log(Predicted + eps) - (1 - Labels) log(1 - Predicted + eps).",
    infer_shape=_infer, kernels={"cpu": make(CPU), "cuda": make(CUDA)}, lowered=lowered,
    grad=Grad(reads=["Predicted", "Labels"], writes=["Predicted"],
              kernel=make_grad(CPU), cuda_kernel=make_grad(CUDA), lowered=lowered_grad)))
