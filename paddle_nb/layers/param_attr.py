"""``ParamAttr``: how a layer's parameter is named, initialised and whether it trains."""
from __future__ import annotations

from dataclasses import dataclass

from ..builders import arg_checks as check
from ..builders.initializer import Initializer
from ..optimizer.regularizer import WeightDecay


@dataclass
class ParamAttr:
    name: str | None = None
    initializer: Initializer | None = None
    trainable: bool = True
    regularizer: object = None      # an L1Decay / L2Decay for this parameter alone

    def __post_init__(self):
        check.text("ParamAttr", "name", self.name, optional=True)
        if self.initializer is not None and not isinstance(self.initializer, Initializer):
            raise check.refuse("ParamAttr", "initializer", "an Initializer "
                               "(pd.initializer.Constant(0.5), ...) or None", self.initializer)
        self.trainable = check.boolean("ParamAttr", "trainable", self.trainable)
        self.regularizer = WeightDecay.of("ParamAttr", "regularizer", self.regularizer)

    @staticmethod
    def of(value, builder: str = "ParamAttr.of", argument: str = "value") -> "ParamAttr | None":
        """Accept a ParamAttr, a name, an Initializer, or None; False means no parameter.
        ``builder`` and ``argument`` say whose argument it was, for the error."""
        if value is False:
            return None
        if value is None:
            return ParamAttr()
        if isinstance(value, ParamAttr):
            return value
        if isinstance(value, str) and value:
            return ParamAttr(name=value)
        if isinstance(value, Initializer):
            return ParamAttr(initializer=value)
        raise check.refuse(builder, argument, "a ParamAttr, a name, an Initializer, None, or "
                           "False (no parameter)", value)
