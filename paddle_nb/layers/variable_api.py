"""The Framework design's variable API: ``pd.variable.new/tensor/int/float/bool/string``.

They declare variables in the current block; a value becomes the variable's value (an
``assign_value`` op, or the startup program for ``estimated=True`` tensors, which are
parameters "updated by the backward algorithm").
"""
from __future__ import annotations

import builtins

import numpy as np

from ..builders import arg_checks as check
from ..core import unique_name
from ..core.framework_pb2 import VarType
from ..core.program import default_main_program
from .base import create_parameter
from .declare import var


def new(name: str | None = None):
    """A variable of not yet known type (VarType RAW)."""
    check.text("variable.new", "name", name, optional=True)
    block = default_main_program().current_block()
    return block.create_var(name or unique_name.generate("var"), type=VarType.RAW)


def tensor(name: str | None = None, value=None, *, shape=None, dtype="float32",
           estimated: builtins.bool = False):
    """A tensor variable, optionally with a value; ``estimated=True`` makes it a trainable
    parameter (its value is set by the startup program)."""
    check.text("variable.tensor", "name", name, optional=True)
    estimated = check.boolean("variable.tensor", "estimated", estimated)
    if value is None:
        if estimated:       # a parameter is made now, so its shape must be known
            shape = check.shape("variable.tensor", "shape", shape)
            return create_parameter(shape, dtype, name=name)
        if shape is not None:
            shape = check.shape("variable.tensor", "shape", shape, batch=True)
        check.data_type("variable.tensor", "dtype", dtype)
        return default_main_program().current_block().create_var(
            name or unique_name.generate("tensor"), shape, dtype)
    return var(np.asarray(value), shape, dtype, param=estimated, name=name)


def int(name: str | None = None, value: builtins.int = 0):
    check.text("variable.int", "name", name, optional=True)
    value = check.integer("variable.int", "value", value, -2**63, 2**63 - 1)   # an int64
    return var(value, [1], "int64", name=name)


def float(name: str | None = None, value: builtins.float = 0.0):
    check.text("variable.float", "name", name, optional=True)
    return var(check.number("variable.float", "value", value), [1], "float32", name=name)


def bool(name: str | None = None, value: builtins.bool = False):
    check.text("variable.bool", "name", name, optional=True)
    return var(check.boolean("variable.bool", "value", value), [1], "bool", name=name)
