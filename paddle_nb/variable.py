"""Seed 004's variable API: ``pd.variable.new/tensor/int/float/bool/string``.

They declare variables in the current block; a value becomes the variable's value (an
``assign_value`` op, or the startup program for ``estimated=True`` tensors, which are
parameters "updated by the backward algorithm").
"""
from __future__ import annotations

import builtins

import numpy as np

from . import layers as L
from .core import unique_name
from .core.framework_pb2 import VarType
from .core.program import default_main_program


def new(name: str | None = None):
    """A variable of not yet known type (VarType RAW)."""
    block = default_main_program().current_block()
    return block.create_var(name or unique_name.generate("var"), type=VarType.RAW)


def tensor(name: str | None = None, value=None, *, shape=None, dtype="float32",
           estimated: builtins.bool = False):
    """A tensor variable, optionally with a value; ``estimated=True`` makes it a trainable
    parameter (its value is set by the startup program)."""
    if value is None:
        if estimated:
            return L.create_parameter(shape, dtype, name=name)
        return default_main_program().current_block().create_var(
            name or unique_name.generate("tensor"), shape, dtype)
    return L.var(np.asarray(value), shape, dtype, param=estimated, name=name)


def int(name: str | None = None, value: builtins.int = 0):
    return L.var(value, [1], "int64", name=name)


def float(name: str | None = None, value: builtins.float = 0.0):
    return L.var(value, [1], "float32", name=name)


def bool(name: str | None = None, value: builtins.bool = False):
    return L.var(value, [1], "bool", name=name)
