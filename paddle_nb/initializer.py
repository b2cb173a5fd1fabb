"""Initializers: each puts one op in the startup program that fills a parameter.

The parameter is declared in both programs (main: where it is used; startup: where it is
filled), persistable in both, so running the startup program once fills the scope and
every run of the main program finds the values there. Arguments are checked when the
initializer is made (``Uniform(1, -1)`` is refused there, not when a layer uses it).
"""
from __future__ import annotations

import math

import numpy as np

from . import arg_checks as check
from .core import dtypes


def _seed(builder: str, seed) -> int:
    """0 means "the program's random_seed"; the ops store it as a 32-bit int."""
    return check.integer(builder, "seed", seed, 0, 2**31 - 1)


class Initializer:
    def __call__(self, var, block):
        raise NotImplementedError


class Constant(Initializer):
    def __init__(self, value: float = 0.0):
        if isinstance(value, (bool, np.bool_)):      # a bool parameter's value
            self.value = float(value)
        else:
            self.value = check.number("Constant", "value", value)

    def __call__(self, var, block):
        return block.append_op("fill_constant", outputs={"Out": [var]},
                               attrs={"shape": list(var.shape), "value": self.value,
                                      "dtype": dtypes.to_code(var.dtype)})


class Uniform(Initializer):
    def __init__(self, low: float = -1.0, high: float = 1.0, seed: int = 0):
        self.low = check.number("Uniform", "low", low)
        self.high = check.number("Uniform", "high", high, low=self.low)   # Paddle: high >= low
        self.seed = _seed("Uniform", seed)

    def __call__(self, var, block):
        seed = self.seed or block.program.random_seed
        return block.append_op("uniform_random", outputs={"Out": [var]},
                               attrs={"shape": list(var.shape), "min": self.low,
                                      "max": self.high, "seed": seed,
                                      "dtype": dtypes.to_code(var.dtype)})


class Normal(Initializer):
    def __init__(self, loc: float = 0.0, scale: float = 1.0, seed: int = 0):
        self.loc = check.number("Normal", "loc", loc)
        self.scale = check.number("Normal", "scale", scale, low=0)    # a standard deviation
        self.seed = _seed("Normal", seed)

    def __call__(self, var, block):
        seed = self.seed or block.program.random_seed
        return block.append_op("gaussian_random", outputs={"Out": [var]},
                               attrs={"shape": list(var.shape), "mean": self.loc,
                                      "std": self.scale, "seed": seed,
                                      "dtype": dtypes.to_code(var.dtype)})


class XavierUniform(Initializer):
    """Glorot uniform: U(-a, a), a = sqrt(6 / (fan_in + fan_out))."""
    def __init__(self, seed: int = 0):
        self.seed = _seed("XavierUniform", seed)

    def __call__(self, var, block):
        shape = list(var.shape)
        fan_in = shape[0] if shape else 1
        fan_out = int(np.prod(shape[1:])) if len(shape) > 1 else fan_in
        a = math.sqrt(6.0 / (fan_in + fan_out))
        return Uniform(-a, a, self.seed)(var, block)


class NumpyArray(Initializer):
    """Fill with a fixed value (``pd.var(0.314, param=True)``): an ``assign_value`` op."""
    def __init__(self, value):
        array = np.asarray(value) if not isinstance(value, str) else None
        if array is None or array.dtype.kind not in "biuf":
            raise check.refuse("NumpyArray", "value", "numbers (a number, a list or an array)",
                               value)
        self.value = array

    def __call__(self, var, block):
        from .ops.fill import assign_value_attrs   # noqa: PLC0415
        return block.append_op("assign_value", outputs={"Out": [var]},
                               attrs=assign_value_attrs(self.value.astype(var.dtype)))


ConstantInitializer, UniformInitializer, NormalInitializer = Constant, Uniform, Normal
XavierInitializer = XavierUniform
