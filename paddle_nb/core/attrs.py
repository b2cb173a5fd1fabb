"""Operator attributes: Python values <-> ``OpDesc.Attr`` messages.

An attribute's type is the ``AttrType`` its OpProto declares; attributes an op
does not declare (Paddle's ``op_role``, ``op_callstack``, ...) keep whatever type the
message carries, so a program read from Paddle is written back unchanged.
"""
from __future__ import annotations

import numpy as np

from .framework_pb2 import AttrType, OpDesc

INT, FLOAT, STRING, INTS, FLOATS, STRINGS = (AttrType.INT, AttrType.FLOAT, AttrType.STRING,
                                             AttrType.INTS, AttrType.FLOATS, AttrType.STRINGS)
BOOLEAN, BOOLEANS, BLOCK, LONG, BLOCKS, LONGS = (AttrType.BOOLEAN, AttrType.BOOLEANS,
                                                 AttrType.BLOCK, AttrType.LONG,
                                                 AttrType.BLOCKS, AttrType.LONGS)
FLOAT64S, VAR, VARS, FLOAT64 = AttrType.FLOAT64S, AttrType.VAR, AttrType.VARS, AttrType.FLOAT64
SCALAR, SCALARS = AttrType.SCALAR, AttrType.SCALARS

# Which field of OpDesc.Attr holds a value of each type.
_FIELD = {
    INT: "i", FLOAT: "f", STRING: "s", INTS: "ints", FLOATS: "floats", STRINGS: "strings",
    BOOLEAN: "b", BOOLEANS: "bools", BLOCK: "block_idx", LONG: "l", BLOCKS: "blocks_idx",
    LONGS: "longs", FLOAT64S: "float64s", VAR: "var_name", VARS: "vars_name",
    FLOAT64: "float64", SCALAR: "scalar", SCALARS: "scalars",
}
_REPEATED = {INTS, FLOATS, STRINGS, BOOLEANS, BLOCKS, LONGS, FLOAT64S, VARS, SCALARS}
LIST_TYPES = frozenset(_REPEATED)

TYPE_NAMES = {v: k.lower() for k, v in AttrType.items()}


def read(attr: OpDesc.Attr):
    """The Python value of one attribute message."""
    t = attr.type
    if t == SCALAR:
        return _read_scalar(attr.scalar)
    if t == SCALARS:
        return [_read_scalar(s) for s in attr.scalars]
    value = getattr(attr, _FIELD[t])
    return list(value) if t in _REPEATED else value


def _read_scalar(s):
    field = {1: "b", 2: "i", 3: "r"}.get(s.type)
    if field is None:
        return complex(s.c.r, s.c.i)
    return getattr(s, field)


def write(attr: OpDesc.Attr, type_: int, value) -> None:
    """Store ``value`` in ``attr`` as ``type_``; a TypeError/ValueError if it does not fit."""
    attr.type = type_
    field = _FIELD[type_]
    if type_ == SCALAR:
        raise TypeError("writing a SCALAR attribute is not supported; use FLOAT/INT")
    if type_ == SCALARS:                       # set_value's ``values`` (Paddle 2.6)
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"expected a list for a scalars attribute, got {value!r}")
        del attr.scalars[:]
        for v in value:
            _write_scalar(attr.scalars.add(), v)
        return
    if type_ in _REPEATED:
        convert = _ELEMENT[type_]
        if isinstance(value, (str, bytes)) or not hasattr(value, "__iter__"):
            raise TypeError(f"expected a list for a {TYPE_NAMES[type_]} attribute, got {value!r}")
        target = getattr(attr, field)
        del target[:]
        target.extend(convert(v) for v in value)
    else:
        setattr(attr, field, _ELEMENT[type_](value))


def _write_scalar(s, v) -> None:
    """One Scalar message: a bool, an integer (LONG) or a float (FLOAT64), as Paddle
    writes them."""
    if isinstance(v, (bool, np.bool_)):
        s.type, s.b = 1, bool(v)
    elif isinstance(v, (int, np.integer)):
        s.type, s.i = 2, int(v)
    elif isinstance(v, (float, np.floating)):
        s.type, s.r = 3, float(v)
    else:
        raise TypeError(f"expected a bool, an integer or a float, got {v!r}")


def _to_int(v):
    if isinstance(v, (bool, np.bool_)):
        return int(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return int(v)
    raise TypeError(f"expected an integer, got {v!r}")


def _to_block(v):
    """A sub-block attribute: a Block (anything with ``idx``) or its index."""
    return _to_int(v.idx if hasattr(v, "idx") and hasattr(v, "table") else v)


def _to_float(v):
    if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, str):
        return float(v)
    raise TypeError(f"expected a number, got {v!r}")


def _to_str(v):
    if not isinstance(v, str):
        raise TypeError(f"expected a string, got {v!r}")
    return v


def _to_bool(v):
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    raise TypeError(f"expected True or False, got {v!r}")


_ELEMENT = {
    INT: _to_int, FLOAT: _to_float, STRING: _to_str, INTS: _to_int, FLOATS: _to_float,
    STRINGS: _to_str, BOOLEAN: _to_bool, BOOLEANS: _to_bool, BLOCK: _to_block, LONG: _to_int,
    BLOCKS: _to_block, LONGS: _to_int, FLOAT64S: _to_float, VAR: _to_str, VARS: _to_str,
    FLOAT64: _to_float,
}


def guess_type(value) -> int:
    """The AttrType for a value of an attribute no OpProto declares."""
    if isinstance(value, (bool, np.bool_)):
        return BOOLEAN
    if hasattr(value, "idx") and hasattr(value, "table"):      # a Block
        return BLOCK
    if isinstance(value, (int, np.integer)):
        return INT if -2**31 <= int(value) < 2**31 else LONG
    if isinstance(value, (float, np.floating)):
        return FLOAT
    if isinstance(value, str):
        return STRING
    if isinstance(value, (list, tuple)):
        if value and all(hasattr(v, "idx") and hasattr(v, "table") for v in value):
            return BLOCKS
        if all(isinstance(v, (bool, np.bool_)) for v in value) and value:
            return BOOLEANS
        if all(isinstance(v, (int, np.integer)) for v in value):
            return INTS
        if all(isinstance(v, (int, float, np.integer, np.floating)) for v in value):
            return FLOATS
        if all(isinstance(v, str) for v in value):
            return STRINGS
    raise TypeError(f"cannot store {value!r} as an op attribute")


def format_value(value) -> str:
    """Short text of an attribute value for printing programs."""
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, list) and len(value) > 8:
        return "[" + ", ".join(format_value(v) for v in value[:8]) + f", ... ({len(value)})]"
    if isinstance(value, list):
        return "[" + ", ".join(format_value(v) for v in value) + "]"
    return repr(value)


# Attributes Paddle adds to every op for its own bookkeeping: kept, not printed, and read
# only through Operator (attr, attrs, created_at), which takes one of a type Paddle never
# writes (a tool's slip: op_role as a string, op_callstack as an int) as absent, so that
# such a program still opens, prints and runs; Program.from_desc and validate() warn about
# it, naming op and attribute (bookkeeping_problems). Each name maps to the types Paddle
# writes it as, the first being the one set_attr writes.
BOOKKEEPING = {
    "op_role": (INT, LONG),          # a bit set: 0 forward, 1 backward, 2 optimize, ...
    "op_role_var": (STRINGS,),         # parameter and gradient names of an update
    "op_callstack": (STRINGS,),        # the Python lines that built the op
    "op_namescope": (STRING,),         # the name scope it was built in, "/linear_1/"
    "op_device": (STRING,),            # the device it was pinned to
    "with_quant_attr": (BOOLEAN,),     # it carries quantization attributes
    "is_test": (BOOLEAN,),             # inference mode
}
BOOKKEEPING_ATTRS = frozenset(BOOKKEEPING)
