"""``ParamAttr``: how a layer's parameter is named, initialised and whether it trains."""
from __future__ import annotations

from dataclasses import dataclass

from .initializer import Initializer


@dataclass
class ParamAttr:
    name: str | None = None
    initializer: Initializer | None = None
    trainable: bool = True

    @staticmethod
    def of(value) -> "ParamAttr | None":
        """Accept a ParamAttr, a name, an Initializer, or None; False means no parameter."""
        if value is False:
            return None
        if value is None:
            return ParamAttr()
        if isinstance(value, ParamAttr):
            return value
        if isinstance(value, str):
            return ParamAttr(name=value)
        if isinstance(value, Initializer):
            return ParamAttr(initializer=value)
        raise TypeError(f"expected a ParamAttr, a name or an Initializer, got {value!r}")
