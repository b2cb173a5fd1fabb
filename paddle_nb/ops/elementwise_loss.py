"""The kernels of a loss computed element by element from a prediction and a label:
log_loss (ops/log_loss.py), sigmoid_cross_entropy_with_logits and bce_loss
(ops/pointwise_losses.py).

Such a loss is two scalar functions under ``@pointwise``, ``loss(input, label[, param])``
and ``loss_grad(input, label, dOut[, param])``, the optional ``param`` a scalar read from an
attribute in the input's dtype (log_loss's epsilon, the ignored label). What is left of each
op kernel is the same for all of them, so it is written once here, for both places: the
forward writes the loss into the op's output buffer, the backward writes the input's
gradient (the label gets none, as in Paddle). In a compiled block (kernels/lowered.py) the
same two functions are fused into their neighbours' loops (:func:`lowered_elementwise_loss`).
"""
from __future__ import annotations

from ..kernels.lowered import Elementwise
from . import arrays


def elementwise_loss(loss, loss_grad, slots=("X", "Label"), out: str = "Out", param=None,
                     check=None):
    """``(forward, backward)``: each a function of a place that gives the op's kernel there.

    ``slots``: the input and the label; ``out``: the loss's slot; ``param(ctx, dtype)``: the
    trailing scalar argument of both functions (None: they take none); ``check(input)``:
    what the forward refuses before it computes (raises)."""
    first, second = slots

    def params(ctx, dtype) -> tuple:
        return () if param is None else (param(ctx, dtype),)

    def forward(place):
        def run(ctx):
            x, label = ctx.input(first), ctx.input(second)
            if check is not None:
                check(x)
            ctx.set_output(out, place.apply(loss, x, label, *params(ctx, x.dtype),
                                            out=ctx.out(out, x.shape, x.dtype),
                                            out_dtype=x.dtype))
        run.__name__ = f"{place.name}_{loss.__name__}"
        return run

    def backward(place):
        def run(ctx):
            x, label = ctx.input(first), ctx.input(second)
            dout = arrays.astype(ctx.input(f"{out}@GRAD"), x.dtype)
            ctx.set_output(f"{first}@GRAD", place.apply(loss_grad, x, label, dout,
                                                        *params(ctx, x.dtype), out=None,
                                                        out_dtype=x.dtype))
        run.__name__ = f"{place.name}_{loss_grad.__name__}"
        return run

    return forward, backward


def lowered_elementwise_loss(loss, loss_grad, slots=("X", "Label"), out: str = "Out",
                             param=None):
    """``(lowered, lowered_grad)``: the forward and the gradient op in a compiled block, the
    same scalar functions with the same ``param`` (elementwise_loss's arguments). A dOut of
    another dtype than the input's, which the kernel casts, stays in the interpreter (the
    compiler refuses an Elementwise whose ufunc would cast)."""
    first, second = slots

    def params(info) -> tuple:
        return () if param is None else (param(info, info.dtype(first)),)

    def lowered(info):
        return Elementwise(loss, (first, second), out, params(info))

    def lowered_grad(info):
        return Elementwise(loss_grad, (first, second, f"{out}@GRAD"), f"{first}@GRAD",
                           params(info))

    return lowered, lowered_grad
