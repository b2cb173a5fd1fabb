"""What a PIR value is while it is translated, and small helpers the translator's parts share."""
from __future__ import annotations

from dataclasses import dataclass

from .format import PirFormatError


@dataclass
class Const:
    """A constant PIR passes as a value (``full_int_array``, ``full``) that Fluid usually
    takes as an attribute: made into a variable only where one is needed."""
    value: object
    dtype: str
    shape: list
    vid: int


@dataclass
class Defined:
    block: int          # the Fluid block whose scope holds it
    ref: object         # a variable name, a list of names (a vector), or a Const


VALUE_FIELD = {"int32": "int32_values", "int64": "int64_values", "float32": "fp32_values",
               "float64": "fp64_values", "bool": "bool_values"}


def fill_text(value) -> str:
    """A fill value as fill_constant's ``str_value`` (exact for large integers)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value)) if abs(value) < 2 ** 63 else repr(value)
    return str(value)


def const_dtype(attrs: dict, default: str, where: str) -> str:
    """A constant's dtype (``full``, ``full_int_array``): a real one; Paddle's
    ``undefined`` means "the input's", and a constant has no input."""
    dtype = attrs.get("dtype", default)
    if dtype == "undefined":
        raise PirFormatError(f"{where}: a constant's dtype is undefined; it should be a data "
                             f"type (float32, int64, ...)")
    return dtype


def is_id(vid) -> bool:
    """A value id: an int that fits the VarDesc attribute ``pir_id`` (32 bits)."""
    return type(vid) is int and -2 ** 31 <= vid < 2 ** 31


def count_of(x) -> str:
    return str(len(x)) if isinstance(x, list) else f"none ({type(x).__name__})"
