"""Gradient clipping as Paddle builds it: ops between the backward pass and the updates.

- ``ClipGradByValue(max, min=-max)``: a ``clip`` op per gradient;
- ``ClipGradByNorm(clip_norm)``: a ``clip_by_norm`` op per gradient (each scaled on its own);
- ``ClipGradByGlobalNorm(clip_norm)``: all gradients scaled by one factor,
  clip_norm / max(global_norm, clip_norm), where global_norm = sqrt(sum of every
  gradient's squared L2 norm): ``squared_l2_norm`` per gradient, ``sum``, ``sqrt``,
  ``fill_constant`` (clip_norm), ``elementwise_max``, ``elementwise_div``, and an
  ``elementwise_mul`` per gradient, in place.
Pass one as an optimizer's ``grad_clip=``.
"""
from __future__ import annotations

import math

from ..builders import arg_checks as check
from ..core import dtypes, unique_name
from ..core.backward import OP_ROLE_OPTIMIZE

_ROLE = {"op_role": OP_ROLE_OPTIMIZE}


def _positive(builder: str, name: str, value) -> float:
    value = check.number(builder, name, value, low=0, low_open=True)
    if not math.isfinite(value):
        raise check.refuse(builder, name, "a finite number > 0", value)
    return float(value)


def _new(block, op_type, shape, dtype):
    """A temporary named as Paddle names it (``clip_0.tmp_0``)."""
    return block.create_var(unique_name.generate_within(unique_name.generate(op_type), "tmp"),
                            shape, dtype, stop_gradient=True)


class GradientClip:
    def append(self, block, params_grads):
        """Append the clipping ops; return [(param, clipped gradient)]."""
        raise NotImplementedError


class ClipGradByValue(GradientClip):
    """Each gradient element clipped to [min, max] (min defaults to -max)."""

    def __init__(self, max, min=None):     # noqa: A002 (Paddle's argument names)
        self.max = check.number("ClipGradByValue", "max", max)
        self.min = -self.max if min is None else check.number("ClipGradByValue", "min", min)
        if not self.min <= self.max:
            raise check.refuse("ClipGradByValue", "min", f"a number <= max ({self.max})", min)

    def append(self, block, params_grads):
        clipped = []
        for param, grad in params_grads:
            out = _new(block, "clip", grad.shape, grad.dtype)
            block.append_op("clip", {"X": [grad]}, {"Out": [out]},
                            {"min": self.min, "max": self.max, **_ROLE})
            clipped.append((param, out))
        return clipped


class ClipGradByNorm(GradientClip):
    """Each gradient scaled down to L2 norm clip_norm if it is longer."""

    def __init__(self, clip_norm):
        self.clip_norm = _positive("ClipGradByNorm", "clip_norm", clip_norm)

    def append(self, block, params_grads):
        clipped = []
        for param, grad in params_grads:
            out = _new(block, "clip_by_norm", grad.shape, grad.dtype)
            block.append_op("clip_by_norm", {"X": [grad]}, {"Out": [out]},
                            {"max_norm": self.clip_norm, **_ROLE})
            clipped.append((param, out))
        return clipped


class ClipGradByGlobalNorm(GradientClip):
    """Every gradient times clip_norm / max(global_norm, clip_norm)."""

    def __init__(self, clip_norm, group_name: str = "default_group"):
        self.clip_norm = _positive("ClipGradByGlobalNorm", "clip_norm", clip_norm)
        self.group_name = check.text("ClipGradByGlobalNorm", "group_name", group_name)

    def append(self, block, params_grads):
        squares = []
        for _, grad in params_grads:
            sq = _new(block, "squared_l2_norm", [1], grad.dtype)
            block.append_op("squared_l2_norm", {"X": [grad]}, {"Out": [sq]}, dict(_ROLE))
            squares.append(sq)
        dtype = params_grads[0][1].dtype
        total, norm, limit, larger, factor = (_new(block, t, [1], dtype) for t in (
            "add_n", "sqrt", "fill_constant", "elementwise_max", "elementwise_div"))
        block.append_op("sum", {"X": squares}, {"Out": [total]}, dict(_ROLE))
        block.append_op("sqrt", {"X": [total]}, {"Out": [norm]}, dict(_ROLE))
        block.append_op("fill_constant", {}, {"Out": [limit]},
                        {"shape": [1], "value": self.clip_norm, "dtype": dtypes.to_code(dtype),
                         "str_value": repr(self.clip_norm), **_ROLE})
        block.append_op("elementwise_max", {"X": [limit], "Y": [norm]}, {"Out": [larger]},
                        {"axis": -1, **_ROLE})
        block.append_op("elementwise_div", {"X": [limit], "Y": [larger]}, {"Out": [factor]},
                        {"axis": -1, **_ROLE})
        for _, grad in params_grads:
            block.append_op("elementwise_mul", {"X": [grad], "Y": [factor]}, {"Out": [grad]},
                            {"axis": -1, **_ROLE})
        return list(params_grads)


GradientClipByValue, GradientClipByNorm, GradientClipByGlobalNorm = (   # Fluid's names
    ClipGradByValue, ClipGradByNorm, ClipGradByGlobalNorm)
