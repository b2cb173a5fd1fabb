"""Variables with values: ``pd.data`` (filled by the feed), ``pd.var`` (a constant of the
program, or with ``param=True`` a trainable parameter), the Block and Scope design's
``pd.minibatch`` and ``pd.sequence`` (a batch dimension first), and ``assign`` (a copy,
or numbers as an ``assign_value`` op).

A value given here becomes an ``assign_value`` op that runs unless the feed supplies the
variable (a parameter's value is its initializer in the startup program).
"""
from __future__ import annotations

import numpy as np

from ..builders import arg_checks as check
from ..builders.initializer import NumpyArray
from ..core import dtypes, unique_name
from ..core.errors import BuildError
from ..core.program import default_main_program
from ..core.variable import Variable
from ..ops.fill import assign_value_attrs
from .base import append, create_parameter, current_block


def data(name: str, shape, dtype="float32", lod_level: int = 0) -> Variable:
    """A variable the feed fills. ``None`` or ``-1`` in ``shape`` is the batch dimension."""
    check.text("data", "name", name)
    shape = check.shape("data", "shape", shape, batch=True)
    check.data_type("data", "dtype", dtype)
    lod_level = check.integer("data", "lod_level", lod_level, low=0)
    gb = default_main_program().global_block()
    v = gb.create_var(name, shape, dtype, stop_gradient=True, lod_level=lod_level)
    v.desc.need_check_feed = True
    return v


def _declare_with_value(value, shape, dtype, name, prefix, param, lod_level=0, batch=False):
    builder = prefix if prefix != "param" else "var"
    array = _values(builder, "value" if builder == "var" else "values", value, dtype)
    if shape is not None:
        shape = check.shape(builder, "shape", shape, batch=batch)
    check.text(builder, "name", name, optional=True)
    if array.ndim == 0:
        array = array.reshape(1)
    if batch and array.ndim == 1:
        array = array.reshape(-1, 1)           # the design's minibatch([10, 20, 30]): [None, 1]
    declared = list(shape) if shape is not None else list(array.shape)
    if batch and shape is None:
        declared[0] = -1
    if param:
        return create_parameter(declared, dtype, name=name or unique_name.generate(prefix),
                                initializer=NumpyArray(array))
    block = current_block()
    v = block.create_var(name or unique_name.generate(prefix), declared, dtype,
                         stop_gradient=True, lod_level=lod_level)
    # The value becomes an assign_value op: it runs unless the feed supplies this name.
    block.append_op("assign_value", outputs={"Out": [v]}, attrs=assign_value_attrs(array))
    v.set_shape(declared)     # keep the batch dimension open (-1): feeds may differ in size
    return v


def _values(builder: str, name: str, value, dtype) -> np.ndarray:
    """``value`` (a number, a nested list, an array) as an array of ``dtype``."""
    code = check.data_type(builder, "dtype", dtype)
    if isinstance(value, Variable):
        raise check.refuse(builder, name, "numbers (a number, a list or an array), not a "
                           "Variable: use it directly, or pd.layers.assign(x) for a copy", value)
    try:
        array = np.asarray(value, dtype=dtypes.to_numpy(code))
    except (TypeError, ValueError, OverflowError):
        raise check.refuse(builder, name, f"numbers that fit {dtypes.name(code)} (a number, "
                           f"a list or an array)", value) from None
    return array


def var(value=None, shape=None, dtype="float32", *, param: bool = False, name=None) -> Variable:
    """A variable with a value (the design docs' ``var(1)``, ``var(0.314, param=True)``).

    Without ``param`` the value is a constant of the program, used unless a feed overrides
    it; with ``param=True`` it is a trainable parameter that the startup program sets."""
    param = check.boolean("var", "param", param)
    if value is None:
        if shape is None:
            raise BuildError("pd.var needs a value or a shape")
        if param:
            return create_parameter(shape, dtype, name=name)
        shape = check.shape("var", "shape", shape, batch=True)
        check.data_type("var", "dtype", dtype)
        check.text("var", "name", name, optional=True)
        return current_block().create_var(name or unique_name.generate("var"), shape, dtype)
    return _declare_with_value(value, shape, dtype, name, "param" if param else "var", param)


def minibatch(values=None, shape=None, dtype="float32", *, name=None,
              lod_level: int = 0) -> Variable:
    """A batch of instances, batch dimension first (the Block and Scope design's
    ``minibatch([10, 20, 30])`` has shape [None, 1]). With ``values`` it runs without a feed."""
    lod_level = check.integer("minibatch", "lod_level", lod_level, low=0)
    if values is None:
        if shape is None:
            raise BuildError("pd.minibatch needs values or a shape")
        check.text("minibatch", "name", name, optional=True)
        return data(name or unique_name.generate("minibatch"), shape, dtype, lod_level)
    return _declare_with_value(values, shape, dtype, name, "minibatch", False, lod_level,
                               batch=True)


def sequence(values=None, shape=None, dtype="float32", *, name=None) -> Variable:
    """A sequence batch (the Block and Scope design's RNN input): a minibatch with lod_level 1."""
    check.text("sequence", "name", name, optional=True)
    return minibatch(values, shape, dtype, name=name or unique_name.generate("sequence"),
                     lod_level=1)


def assign(x, output: Variable | None = None):
    """A copy of ``x``; with ``output``, the copy is written into that (existing) variable,
    which is how a branch or a loop body updates a variable outside its block. ``x`` may
    also be numbers (a list, an array), which become an ``assign_value`` op, as in Paddle."""
    check.variable("assign", "output", output, optional=True)
    if not isinstance(x, Variable):
        array = _values("assign", "x", x, output.dtype if output is not None else
                        np.asarray(x).dtype if isinstance(x, np.ndarray) else "float32")
        if output is None:
            return var(array, dtype=array.dtype)
        current_block().append_op("assign_value", outputs={"Out": [output]},
                                  attrs=assign_value_attrs(array))
        return output
    check.variable("assign", "x", x)
    if output is None:
        return append("assign", {"X": [x]})
    current_block().append_op("assign", {"X": [x]}, {"Out": [output]})
    return output

