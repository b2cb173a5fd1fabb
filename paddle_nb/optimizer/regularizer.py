"""Weight decay as Paddle builds it: ops that add the decay's gradient to a parameter's
gradient before the update (``pd.regularizer.L2Decay(coeff)``, ``L1Decay(coeff)``).

L2: Grad += coeff * Param (a ``scale`` and a ``sum``); L1: Grad += coeff * sign(Param)
(``sign``, ``scale``, ``sum``). An optimizer takes one as ``weight_decay=`` (a number
means L2), a parameter as ``ParamAttr(regularizer=...)``, which wins over the optimizer's.
Momentum folds an optimizer-wide L2 decay into its own op instead (base.py).
"""
from __future__ import annotations

import math

from ..builders import arg_checks as check
from ..core.backward import OP_ROLE_OPTIMIZE
from ..core.framework_pb2 import VarType
from ..core.program import Program


class WeightDecay:
    kind = ""

    def __init__(self, coeff: float = 0.0):
        builder = type(self).__name__
        self.coeff = check.number(builder, "coeff", coeff, low=0)
        if not math.isfinite(self.coeff):
            raise check.refuse(builder, "coeff", "a finite number >= 0", coeff)

    @staticmethod
    def of(builder: str, name: str, value) -> "WeightDecay | None":
        """None, an L1Decay/L2Decay, or a number (an L2 decay of that coefficient)."""
        if value is None or isinstance(value, WeightDecay):
            return value
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise check.refuse(builder, name, "an L1Decay, an L2Decay, a number (L2) or None",
                               value)
        return L2Decay(value)

    def append(self, block, param, grad):
        """Append the ops adding this decay's gradient to ``grad``; return the gradient
        variable the update reads (``grad`` itself, summed in place, as Paddle does; for a
        SelectedRows gradient a new dense ``<grad>@NEWGRAD@``, Paddle's name: the sum of
        rows and a dense term is dense)."""
        term = self._term(block, param)
        out = grad
        if grad.type == VarType.SELECTED_ROWS:
            out = block.create_var(grad.name + "@NEWGRAD@", param.shape, param.dtype)
        block.append_op("sum", {"X": [grad, term]}, {"Out": [out]},
                        {"op_role": OP_ROLE_OPTIMIZE})
        return out

    def _scaled(self, block, x):
        out = block.create_var(None, x.shape, x.dtype, stop_gradient=True)
        block.append_op("scale", {"X": [x]}, {"Out": [out]},
                        {"scale": self.coeff, "bias": 0.0, "bias_after_scale": True,
                         "op_role": OP_ROLE_OPTIMIZE})
        return out

    def __repr__(self):
        return f"{type(self).__name__}({self.coeff})"


class L2Decay(WeightDecay):
    """Grad += coeff * Param."""
    kind = "l2_decay"

    def _term(self, block, param):
        return self._scaled(block, param)


class L1Decay(WeightDecay):
    """Grad += coeff * sign(Param)."""
    kind = "l1_decay"

    def _term(self, block, param):
        sign = block.create_var(None, param.shape, param.dtype, stop_gradient=True)
        block.append_op("sign", {"X": [param]}, {"Out": [sign]}, {"op_role": OP_ROLE_OPTIMIZE})
        return self._scaled(block, sign)


def set_decay(program: Program, param_name: str, decay: WeightDecay | None) -> None:
    """Record a parameter's own decay (``ParamAttr(regularizer=...)``). Like Paddle's, it
    lives with the Python program, not in the ProgramDesc (a saved program has its decay
    ops already)."""
    if decay is not None:
        program.param_decays[param_name] = decay


def decay_of(param) -> WeightDecay | None:
    return param.block.program.param_decays.get(param.name)


L1DecayRegularizer, L2DecayRegularizer = L1Decay, L2Decay      # Fluid's names
