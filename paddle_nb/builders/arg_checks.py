"""Checking a builder's arguments before it builds anything (issue 20: "builders accept
nonsense silently").

``pd.layer.fc(x, "3")`` should not build a layer whose weight is a string of columns: every
public builder (layers, math operators, optimizers, initializers, control flow) checks its
arguments here first, so the error names the builder and the argument, what was expected
and what was given, and nothing has been appended to the program yet::

    fc: argument size must be an int >= 1, got str '3'

Each helper returns the value in the form the builder goes on to use (an ``int``, a list,
a dtype code). What Paddle accepts is accepted: numpy integers as sizes, negative axes
counted from the end, ``-1`` (and ``0``, "keep this dim") in reshape shapes, ``None`` for
a batch dimension. ``bool`` is an int subclass in Python, but ``True`` is never a size, an
axis or a number here.
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from ..core.errors import BuildError
from ..core.framework_pb2 import VarType
from ..core.variable import Variable


# --- the message -----------------------------------------------------------------------------
def shown(value) -> str:
    """``str '3'``, ``float 3.5``, ``Variable x``: the given value as an error shows it."""
    if isinstance(value, Variable):
        return f"Variable {value.name!r} ({value.dtype}{list(value.shape)})"
    text = repr(value)
    if len(text) > 60:
        text = text[:57] + "..."
    return f"{type(value).__name__} {text}"


def refuse(builder: str, name: str, expected: str, value) -> BuildError:
    """The error to raise: ``builder: argument name must be expected, got value``."""
    return BuildError(f"{builder}: argument {name} must be {expected}, got {shown(value)}")


# --- numbers -----------------------------------------------------------------------------
def is_int(value) -> bool:
    """A Python or numpy integer, and not a bool (True is not a size)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def is_number(value) -> bool:
    """A real number (int or float, Python or numpy), and not a bool."""
    return isinstance(value, (int, float, np.integer, np.floating)) \
        and not isinstance(value, (bool, np.bool_))


def integer(builder: str, name: str, value, low: int | None = None,
            high: int | None = None) -> int:
    """``value`` as an int in [low, high] (either bound may be open-ended)."""
    if not is_int(value) or (low is not None and value < low) \
            or (high is not None and value > high):
        if low is not None and high is not None:
            want = f"an int in [{low}, {high}]"
        elif low is not None:
            want = f"an int >= {low}"
        else:
            want = "an int" if high is None else f"an int <= {high}"
        raise refuse(builder, name, want, value)
    return int(value)


def positive_int(builder: str, name: str, value) -> int:
    """A size or a count: an int >= 1."""
    return integer(builder, name, value, low=1)


def number(builder: str, name: str, value, *, low=None, high=None, low_open=False,
           high_open=False) -> float:
    """``value`` as a float within the bounds given (``low_open``: ``> low``, else ``>=``).
    NaN is refused wherever a bound is given (it compares false with every bound)."""
    ok = is_number(value)
    if ok and low is not None:
        ok = value > low if low_open else value >= low
    if ok and high is not None:
        ok = value < high if high_open else value <= high
    if not ok:
        if low is not None and high is not None:
            want = (f"a number in {'(' if low_open else '['}{low}, {high}"
                    f"{')' if high_open else ']'}")
        elif low is not None:
            want = f"a number {'>' if low_open else '>='} {low}"
        elif high is not None:
            want = f"a number {'<' if high_open else '<='} {high}"
        else:
            want = "a number"
        raise refuse(builder, name, want, value)
    return float(value)


def boolean(builder: str, name: str, value) -> bool:
    """A flag: True or False (numpy's bool too; not 1 or "yes")."""
    if not isinstance(value, (bool, np.bool_)):
        raise refuse(builder, name, "True or False", value)
    return bool(value)


def one_of(builder: str, name: str, value, choices, *, optional: bool = False):
    """One of ``choices`` (or None when ``optional``), listing them when it is not."""
    if (optional and value is None) or (isinstance(value, str) and value in choices):
        return value
    listed = ", ".join(repr(c) for c in choices) + (" or None" if optional else "")
    raise refuse(builder, name, f"one of {listed}", value)


def text(builder: str, name: str, value, *, optional: bool = False) -> str | None:
    """A name: a non-empty str (or None when ``optional``)."""
    if optional and value is None:
        return None
    if not isinstance(value, str) or not value:
        raise refuse(builder, name, "a non-empty str" + (" or None" if optional else ""),
                     value)
    return value


def function(builder: str, name: str, value, *, optional: bool = False):
    """Something to call (a branch, a loop body), or None when ``optional``."""
    if (optional and value is None) or callable(value):
        return value
    raise refuse(builder, name, "a function" + (" or None" if optional else ""), value)


def data_type(builder: str, name: str, value) -> int:
    """A dtype in any spelling (``'float32'``, ``np.float32``, a VarType code) -> its code."""
    try:
        return dtypes.to_code(value)
    except TypeError:
        raise refuse(builder, name, f"a dtype ({', '.join(sorted(dtypes._FROM_NAME))})",
                     value) from None


# --- variables ---------------------------------------------------------------------------
_FLOAT_NAMES = ("float16", "float32", "float64", "bfloat16")


_NOT_TENSORS = (VarType.LOD_TENSOR_ARRAY, VarType.STEP_SCOPES)


def variable(builder: str, name: str, value, *, dtype: str | None = None,
             one_element: bool = False, optional: bool = False,
             hint: str = "") -> Variable | None:
    """A tensor Variable (None when ``optional``); with ``dtype`` ("bool", "int", "float")
    of that kind of element, with ``one_element`` holding one value (shape [] or [1]: a
    condition, a counter). A -1 dim is refused for ``one_element``: a batch is not one
    value. ``hint`` is added to what the error says was expected."""
    if optional and value is None:
        return None
    kinds = {"bool": ("bool",), "float": _FLOAT_NAMES,
             "int": ("int8", "int16", "int32", "int64", "uint8")}
    ok = isinstance(value, Variable) and value.type not in _NOT_TENSORS
    if ok and dtype is not None:
        ok = value.dtype in kinds[dtype]
    if ok and one_element:
        ok = all(d == 1 for d in value.shape)
    if not ok:
        want = "a " + (f"{dtype} " if dtype else "") + "Variable"
        if one_element:
            want += " holding one value (shape [] or [1])"
        raise refuse(builder, name, want + (" or None" if optional else "") + hint, value)
    return value


def variables(builder: str, name: str, values) -> list[Variable]:
    """A non-empty list (or tuple) of Variables."""
    if not isinstance(values, (list, tuple)) or not values \
            or not all(isinstance(v, Variable) for v in values):
        raise refuse(builder, name, "a non-empty list of Variables", values)
    return list(values)


def variable_or_number(builder: str, name: str, value):
    """An operand: a Variable, or a number (or bool) that becomes a constant."""
    if isinstance(value, Variable) or is_number(value) or isinstance(value, (bool, np.bool_)):
        return value
    raise refuse(builder, name, "a Variable or a number", value)


def tensor_array(builder: str, name: str, value, *, optional: bool = False):
    """A tensor array (``pd.create_array``), or None when ``optional``."""
    if optional and value is None:
        return None
    if not isinstance(value, Variable) or value.type != VarType.LOD_TENSOR_ARRAY:
        raise refuse(builder, name, "a tensor array (pd.create_array)"
                     + (" or None" if optional else ""), value)
    return value


# --- axes and shapes ---------------------------------------------------------------------
def axis(builder: str, name: str, value, rank: int) -> int:
    """An axis of a rank-``rank`` tensor: in [-rank, rank - 1], negatives counted from the
    end as Paddle counts them (a 0-d tensor has axis 0 = -1). Returned as given."""
    rank = max(rank, 1)
    return integer(builder, name, value, -rank, rank - 1)


def axes(builder: str, name: str, values, rank: int) -> list[int]:
    """One axis or a list of distinct axes (``[0, -2]``) of a rank-``rank`` tensor."""
    items = [values] if is_int(values) else values
    if not isinstance(items, (list, tuple)) or not all(is_int(a) for a in items):
        raise refuse(builder, name, "an int or a list of ints", values)
    items = [axis(builder, name, a, rank) for a in items]
    if len({a % max(rank, 1) for a in items}) != len(items):
        raise refuse(builder, name, "distinct axes", values)
    return items


def permutation(builder: str, name: str, value, rank: int) -> list[int]:
    """A permutation of a rank-``rank`` tensor's axes; negatives are counted from the end
    (Paddle's transpose accepts ``[0, -1, 1]``) and returned as their positive axis."""
    want = f"a permutation of {list(range(rank))}"
    if not isinstance(value, (list, tuple)) or not all(is_int(a) for a in value):
        raise refuse(builder, name, want, value)
    perm = [int(a) + rank if -rank <= a < 0 else int(a) for a in value]
    if sorted(perm) != list(range(rank)):
        raise refuse(builder, name, want, value)
    return perm


def shape(builder: str, name: str, value, *, batch: bool = False,
          reshape: bool = False) -> list[int]:
    """A list (or tuple) of dims. Each dim is an int >= 0; with ``batch`` (a declared
    input) ``None`` or ``-1`` is a dim the feed decides; with ``reshape`` (a target shape)
    one dim may be ``-1`` (inferred) and ``0`` copies the input's dim."""
    if batch:
        want = "a list of ints >= 0, with None or -1 for a dim the feed decides"
    elif reshape:
        want = "a list of ints >= 0 with at most one -1 (0 keeps the input's dim)"
    else:
        want = "a list of ints >= 0"
    items = value.tolist() if isinstance(value, np.ndarray) and value.ndim == 1 else value
    if not isinstance(items, (list, tuple)):
        raise refuse(builder, name, want, value)
    dims = []
    for d in items:
        if d is None and batch:
            d = -1
        if not is_int(d) or d < (-1 if batch or reshape else 0):
            raise refuse(builder, name, want, value)
        dims.append(int(d))
    if reshape and dims.count(-1) > 1:
        raise refuse(builder, name, want, value)
    return dims
