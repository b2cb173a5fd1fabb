"""Elementwise builders: activations (``relu``, ``sigmoid``...), ``scale``, ``cast``, the
arithmetic of two operands (``elementwise_add``...; a number becomes a ``fill_constant``
of the other's dtype), comparisons (``greater_than``, ``less_than``...) and logic.

``axis`` is Fluid's broadcast axis: -1 aligns Y with X's last dimensions, ``k`` puts Y's
first dimension at X's ``k``-th.
"""
from __future__ import annotations

from ..builders import arg_checks as check
from ..core import dtypes, registry
from ..core.variable import Variable
from .base import append, current_block, fill_constant


def _one_input(op_type: str):
    """The builder ``pd.layer.<op_type>(x)``: the op on one Variable, its output new."""
    def build(x):
        check.variable(op_type, "x", x)
        return append(op_type, {"X": [x]})
    build.__name__ = build.__qualname__ = op_type
    return build


relu, sigmoid, tanh, exp, log, square = map(_one_input, (
    "relu", "sigmoid", "tanh", "exp", "log", "square"))


def scale(x, scale: float = 1.0, bias: float = 0.0, bias_after_scale: bool = True):
    check.variable("scale", "x", x)
    return append("scale", {"X": [x]}, {
        "scale": check.number("scale", "scale", scale),
        "bias": check.number("scale", "bias", bias),
        "bias_after_scale": check.boolean("scale", "bias_after_scale", bias_after_scale)})


def cast(x, dtype):
    check.variable("cast", "x", x)
    code = check.data_type("cast", "dtype", dtype)
    return append("cast", {"X": [x]}, {"in_dtype": dtypes.to_code(x.dtype), "out_dtype": code},
                  out_dtype=dtypes.name(code))


# --- two operands ----------------------------------------------------------------------------
def _as_var(value, like: Variable | None = None) -> Variable:
    """A Variable for ``value`` (already checked by ``check.variable_or_number``): itself,
    or a constant made by fill_constant."""
    if isinstance(value, Variable):
        return value
    dtype = like.dtype if like is not None else "float32"
    return fill_constant([1], dtype, float(value))


def _operands(builder: str, x, y) -> tuple[Variable, Variable]:
    """``x`` and ``y`` as Variables, numbers made constants of the other's dtype; both are
    checked before either constant is built."""
    check.variable_or_number(builder, "x", x)
    check.variable_or_number(builder, "y", y)
    x = _as_var(x, y if isinstance(y, Variable) else None)
    return x, _as_var(y, x)


def _binary(op_type, x, y, axis=-1, builder=None):
    """``op_type`` on two operands; ``builder`` is the name the user called it by."""
    builder = builder or op_type
    axis = check.integer(builder, "axis", axis, low=-1)
    x, y = _operands(builder, x, y)
    out_dtype = registry.lookup(op_type).out_dtype
    return append(op_type, {"X": [x], "Y": [y]}, {"axis": axis}, out_dtype=out_dtype)


def add(x, y, axis: int = -1):
    return _binary("elementwise_add", x, y, axis, "add")


def elementwise_add(x, y, axis: int = -1):
    return _binary("elementwise_add", x, y, axis)


def elementwise_sub(x, y, axis: int = -1):
    return _binary("elementwise_sub", x, y, axis)


def elementwise_mul(x, y, axis: int = -1):
    return _binary("elementwise_mul", x, y, axis)


def elementwise_div(x, y, axis: int = -1):
    return _binary("elementwise_div", x, y, axis)


def add_scalar(x, y):
    """The design docs' ``layer.add_scalar(x, y)``: x plus a scalar (a number or a [1] var)."""
    check.variable("add_scalar", "x", x)
    if check.is_number(y):
        return scale(x, 1.0, float(y))
    check.variable("add_scalar", "y", y, one_element=True, hint=", or a number")
    return _binary("elementwise_add", x, y, builder="add_scalar")


# --- comparisons and logic -------------------------------------------------------------------
def greater_than(x, y):
    return _binary("greater_than", x, y)


larger_than = greater_than          # the Block and Scope design's name


def less_than(x, y, cond: Variable | None = None):
    """x < y; with ``cond``, the result is written into that (existing) bool variable,
    which is how a While body updates its condition."""
    if cond is None:
        return _binary("less_than", x, y)
    check.variable("less_than", "cond", cond, dtype="bool")
    x, y = _operands("less_than", x, y)
    current_block().append_op("less_than", {"X": [x], "Y": [y]}, {"Out": [cond]}, {"axis": -1})
    return cond


def equal(x, y):
    return _binary("equal", x, y)


def not_equal(x, y):
    return _binary("not_equal", x, y)


def logical_and(x, y):
    check.variable("logical_and", "x", x)
    check.variable("logical_and", "y", y)
    return append("logical_and", {"X": [x], "Y": [y]}, out_dtype="bool")


def logical_or(x, y):
    check.variable("logical_or", "x", x)
    check.variable("logical_or", "y", y)
    return append("logical_or", {"X": [x], "Y": [y]}, out_dtype="bool")


def logical_not(x):
    check.variable("logical_not", "x", x)
    return append("logical_not", {"X": [x]}, out_dtype="bool")
