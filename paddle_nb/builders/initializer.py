"""Initializers: each puts one op in the startup program that fills a parameter.

The parameter is declared in both programs (main: where it is used; startup: where it is
filled), persistable in both, so running the startup program once fills the scope and
every run of the main program finds the values there. Arguments are checked when the
initializer is made (``Uniform(1, -1)`` is refused there, not when a layer uses it).
"""
from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..ops.fill import assign_value_attrs
from . import arg_checks as check


def _seed(builder: str, seed) -> int:
    """0 means "the program's random_seed"; the ops store it as a 32-bit int."""
    return check.integer(builder, "seed", seed, 0, 2**31 - 1)


def _fill(block, op_type: str, var, **attrs):
    """Append ``op_type`` (fill_constant, uniform_random, gaussian_random) writing ``var``:
    its shape, ``attrs`` and its dtype."""
    return block.append_op(op_type, outputs={"Out": [var]},
                           attrs={"shape": list(var.shape), **attrs,
                                  "dtype": dtypes.to_code(var.dtype)})


class Initializer:
    """Puts the op that fills a parameter ``var`` into the startup program's ``block``."""
    def __call__(self, var, block):
        raise NotImplementedError


class Constant(Initializer):
    def __init__(self, value: float = 0.0):
        if isinstance(value, (bool, np.bool_)):      # a bool parameter's value
            self.value = float(value)
        else:
            self.value = check.number("Constant", "value", value)

    def __call__(self, var, block):
        return _fill(block, "fill_constant", var, value=self.value)


class Uniform(Initializer):
    def __init__(self, low: float = -1.0, high: float = 1.0, seed: int = 0):
        self.low = check.number("Uniform", "low", low)
        self.high = check.number("Uniform", "high", high, low=self.low)   # Paddle: high >= low
        self.seed = _seed("Uniform", seed)

    def __call__(self, var, block):
        return _fill(block, "uniform_random", var, min=self.low, max=self.high,
                     seed=self.seed or block.program.random_seed)


class Normal(Initializer):
    def __init__(self, loc: float = 0.0, scale: float = 1.0, seed: int = 0):
        self.loc = check.number("Normal", "loc", loc)
        self.scale = check.number("Normal", "scale", scale, low=0)    # a standard deviation
        self.seed = _seed("Normal", seed)

    def __call__(self, var, block):
        return _fill(block, "gaussian_random", var, mean=self.loc, std=self.scale,
                     seed=self.seed or block.program.random_seed)


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
        return block.append_op("assign_value", outputs={"Out": [var]},
                               attrs=assign_value_attrs(self.value.astype(var.dtype)))


ConstantInitializer, UniformInitializer, NormalInitializer = Constant, Uniform, Normal
XavierInitializer = XavierUniform
