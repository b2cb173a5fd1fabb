"""The loss builders of ``pd.layer``, each appending the ops Paddle appends for it.

``cross_entropy`` is ``paddle.nn.functional.cross_entropy``: logits (or, with
``use_softmax=False``, probabilities), hard or soft labels, class weights, ``ignore_index``,
``label_smoothing``, ``axis`` and the three reductions, lowered exactly as Paddle 2.6
lowers it (tests/test_paddle_recipes.py compares the op lists and the numbers with
programs Paddle saved). Fluid's probability-only ``cross_entropy`` op stays available as
``pd.op.cross_entropy(X=prob, Label=label)``.
"""
from __future__ import annotations

import warnings

from ..builders import arg_checks as check
from ..builders.op_creators import op
from ..core import dtypes
from ..core.variable import Variable

_REDUCTIONS = ("mean", "sum", "none")


def softmax_with_cross_entropy(logits, label, soft_label: bool = False, axis: int = -1,
                               ignore_index: int = -100, return_softmax: bool = False,
                               use_softmax: bool = True):
    """Cross entropy of softmax(logits) against class indices (int64, last dim 1) or soft
    labels: the fused op, one loss per row."""
    builder = "softmax_with_cross_entropy"
    check.variable(builder, "logits", logits, dtype="float")
    check.variable(builder, "label", label)
    return_softmax = check.boolean(builder, "return_softmax", return_softmax)
    loss = op.softmax_with_cross_entropy(
        Logits=logits, Label=label, soft_label=check.boolean(builder, "soft_label", soft_label),
        axis=check.axis(builder, "axis", axis, len(logits.shape)),
        ignore_index=check.integer(builder, "ignore_index", ignore_index),
        numeric_stable_mode=True, use_softmax=check.boolean(builder, "use_softmax",
                                                            use_softmax))
    if not return_softmax:
        return loss
    block = loss.block                      # Softmax is an intermediate output: not returned
    return loss, block.var(block.ops[-1].output("Softmax")[0])


def _constant(value, dtype):
    return op.fill_constant(shape=[], value=float(value), dtype=dtypes.to_code(dtype),
                            str_value="")


def _mask(label, ignore_index, dtype):
    """cast(label != ignore_index, dtype), built as Paddle builds it."""
    differs = op.not_equal(X=label, Y=_constant(ignore_index, label.dtype), axis=-1)
    return op.cast(X=differs, in_dtype=dtypes.to_code("bool"), out_dtype=dtypes.to_code(dtype))


def _safe_divide(total, count):
    """total / (count + (count == 0)): a mean over nothing is 0, not NaN."""
    is_zero = op.equal(X=count, Y=_constant(0.0, count.dtype), axis=-1)
    bump = op.cast(X=is_zero, in_dtype=dtypes.to_code("bool"),
                   out_dtype=dtypes.to_code(count.dtype))
    return op.elementwise_div(X=total, Y=op.elementwise_add(X=count, Y=bump, axis=-1),
                              axis=-1)


def _sum(x):
    return op.reduce_sum(X=x, dim=[], keep_dim=False, reduce_all=False)


def _produced_by_softmax(x: Variable) -> bool:
    block = x.block
    return any(o.type == "softmax" and x.name in o.output("Out") for o in block.ops)


def cross_entropy(input, label, weight=None, ignore_index: int = -100,  # noqa: A002
                  reduction: str = "mean", soft_label: bool = False, axis: int = -1,
                  use_softmax: bool = True, label_smoothing: float = 0.0, name=None):
    """``paddle.nn.functional.cross_entropy`` (module docstring). ``input``: logits, or
    probabilities with ``use_softmax=False``; ``label``: class indices (input's rank, or
    one less) or, with ``soft_label``, a distribution per row; ``weight``: one weight per
    class; ``reduction``: "mean", "sum" or "none"."""
    b = "cross_entropy"
    check.variable(b, "input", input, dtype="float")
    check.variable(b, "label", label)
    rank = len(input.shape)
    axis = check.axis(b, "axis", axis, rank)
    reduction = check.one_of(b, "reduction", reduction, _REDUCTIONS)
    soft_label = check.boolean(b, "soft_label", soft_label)
    use_softmax = check.boolean(b, "use_softmax", use_softmax)
    ignore_index = check.integer(b, "ignore_index", ignore_index)
    smoothing = check.number(b, "label_smoothing", label_smoothing, low=0, high=1)
    if weight is not None:
        check.variable(b, "weight", weight, dtype="float")
    if use_softmax and _produced_by_softmax(input):
        warnings.warn(f"cross_entropy: {input.name} is a softmax's output, and "
                      "use_softmax=True applies softmax again; pass use_softmax=False if "
                      "it holds probabilities", stacklevel=2)
    pos = axis % rank                      # (the ops get axis as given, as Paddle's do)
    classes = input.shape[pos]
    label_rank = len(label.shape)
    if label_rank not in (rank, rank - 1):
        raise check.refuse(b, "label", f"a tensor of rank {rank - 1} or {rank} (input "
                           f"{input.name} has rank {rank})", label)
    squeezed = label_rank == rank - 1
    if squeezed:
        label = op.unsqueeze2(X=label, axes=[axis])
    if smoothing > 0:                       # a smoothed one-hot distribution per row
        if squeezed:
            label = op.squeeze2(X=label, axes=[axis])
        one_hot = op.one_hot_v2(X=label, depth=classes, dtype=dtypes.to_code(input.dtype),
                                allow_out_of_range=False) if not soft_label else label
        smooth = op.label_smooth(X=one_hot, epsilon=smoothing)
        label = op.cast(X=smooth, in_dtype=dtypes.to_code(smooth.dtype),
                        out_dtype=dtypes.to_code(input.dtype))
        soft_label = True
    loss = softmax_with_cross_entropy(input, label, soft_label, axis, ignore_index,
                                      use_softmax=use_softmax)
    weights = None
    if weight is not None:
        if soft_label:                      # each row's weight: its label . weight
            as_w = op.cast(X=label, in_dtype=dtypes.to_code(label.dtype),
                           out_dtype=dtypes.to_code(weight.dtype))
            picked = op.matmul_v2(X=as_w, Y=weight, trans_x=False, trans_y=True)
            weights = op.reshape2(X=picked, shape=list(loss.shape))
            loss = op.cast(X=loss, in_dtype=dtypes.to_code(loss.dtype),
                           out_dtype=dtypes.to_code(weights.dtype))
        else:                               # weight[label], 0 where the label is ignored
            if pos != rank - 1:
                raise check.refuse(b, "axis", "the last axis when class weights are given "
                                   "with hard labels (move the classes last)", axis)
            valid = op.elementwise_mul(X=_mask(label, ignore_index, label.dtype), Y=label,
                                       axis=-1)
            keep = _mask(label, ignore_index, input.dtype)
            if len(keep.shape) > 1 and keep.shape[pos] == 1:
                keep = op.squeeze2(X=keep, axes=[axis])
            picked = op.elementwise_mul(X=op.gather_nd(X=weight, Index=valid), Y=keep, axis=-1)
            weights = op.reshape2(X=picked, shape=list(label.shape))
        loss = op.elementwise_mul(X=loss, Y=weights, axis=-1)
    if reduction == "sum":
        return _sum(loss)
    if reduction == "mean":
        if ignore_index >= 0 and not soft_label:     # the mean over the rows not ignored
            total = _sum(loss)
            if weights is None:
                return _safe_divide(total, _sum(_mask(label, ignore_index, total.dtype)))
            kept = op.elementwise_mul(X=_mask(label, ignore_index, weights.dtype), Y=weights,
                                      axis=-1)
            return _safe_divide(total, _sum(kept))
        if weights is not None:
            return _safe_divide(_sum(loss), _sum(weights))
        return op.reduce_mean(X=loss, dim=[], keep_dim=False, reduce_all=True)
    if squeezed:
        loss = op.squeeze2(X=loss, axes=[axis])
    return loss


def square_error_cost(input, label):  # noqa: A002
    """(input - label)^2, elementwise (Fluid builds it from elementwise_sub and square)."""
    check.variable("square_error_cost", "input", input)
    check.variable("square_error_cost", "label", label)
    return op.square(X=op.elementwise_sub(X=input, Y=label, axis=-1))


def mse_loss(input, label, reduction: str = "mean"):  # noqa: A002
    """``paddle.nn.functional.mse_loss``: mean (or sum, or none) of (input - label)^2."""
    reduction = check.one_of("mse_loss", "reduction", reduction, _REDUCTIONS)
    squares = square_error_cost(input, label)
    if reduction == "mean":
        return op.reduce_mean(X=squares, dim=[], keep_dim=False, reduce_all=True)
    return _sum(squares) if reduction == "sum" else squares


__all__ = ["cross_entropy", "softmax_with_cross_entropy", "square_error_cost", "mse_loss"]
