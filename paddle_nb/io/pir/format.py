"""The PIR file format: the JSON Paddle 3 writes (``model.json``), its types and attributes.

A PIR file is one JSON object::

    {"base_code": {"magic": "pir", "version": 4, "trainable": true},
     "program": {"regions": [{"#": "region_0", "blocks": [{"#": "block_0", "args": [],
                 "ops": [...]}]}]}}

An op is ``{"#": "<dialect>.<name>", "I": [operands], "O": [results], "A": [attributes],
"OA": [result attributes], "regions": [...]}``. Dialects are numbered: ``0`` builtin (its
types and attributes, ``0.combine`` / ``0.split``), ``1`` Paddle's operators (``1.matmul``,
``1.if``), ``2`` control flow (``2.yield``). A result is ``{"%": id, "TT": type}``; an
operand ``{"%": id}`` names the result (or block argument: negative ids) it reads, 0 for
none. A parameter is the short op ``{"#": "p", "A": [..., name], "O": result}``.

This module turns that JSON into Python values (:func:`parse`, :func:`decode_type`,
:func:`decode_attr`) and back (:func:`encode_type`, :func:`encode_attr`), and refuses
anything else with a :class:`ProgramFormatError` that says where and what.
"""
from __future__ import annotations

import json

import numpy as np

from ...core import limits as _limits
from ...core.errors import ProgramFormatError

MAGIC = "pir"
# The ``version`` each Paddle 3 release writes (measured: tests/fixtures/pir/versions/).
# A version is the format's, not Paddle's: several releases write the same one.
SUPPORTED_VERSIONS = {1: "paddlepaddle 3.0", 2: "paddlepaddle 3.1", 3: "paddlepaddle 3.2",
                      4: "paddlepaddle 3.3"}
WRITTEN_VERSION = 4            # what this package writes: paddlepaddle 3.3.1 reads it
MAX_INT_DIGITS = 20            # an int64 has at most 19 digits (and a sign)

# PIR's element types (builtin dialect) <-> numpy dtype names
_DTYPES = {"t_f32": "float32", "t_f64": "float64", "t_f16": "float16", "t_bf16": "uint16",
           "t_i8": "int8", "t_ui8": "uint8", "t_i16": "int16", "t_i32": "int32",
           "t_i64": "int64", "t_bool": "bool", "t_c64": "complex64", "t_c128": "complex128"}
_TYPE_OF_DTYPE = {v: k for k, v in _DTYPES.items()}
# Paddle's data-type strings (1.a_dtype, 1.a_scalar) <-> numpy dtype names
_PADDLE_DTYPES = {"float32": "float32", "float64": "float64", "float16": "float16",
                  "bfloat16": "uint16", "int8": "int8", "uint8": "uint8", "int16": "int16",
                  "int32": "int32", "int64": "int64", "bool": "bool",
                  "complex64": "complex64", "complex128": "complex128"}


class PirFormatError(ProgramFormatError):
    """A PIR file that is not what Paddle 3 writes (or not one this package reads)."""


# --- the file ---------------------------------------------------------------------------------
def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise PirFormatError(f"an integer of {len(text):,} digits ({text[:20]}...); PIR "
                             f"integers are at most 64 bits")
    return int(text)


def parse(data) -> dict:
    """The JSON object of a PIR file (bytes or str), its ``base_code`` checked. Refused: more
    than ``paddle_nb.core.limits.MAX_PIR_BYTES``, text that is not JSON, integers wider
    than 64 bits, nesting deeper than Python's parser takes, another magic or version."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        size = len(data)
        if size > _limits.MAX_PIR_BYTES:
            raise PirFormatError(_too_large(size))
        try:
            data = bytes(data).decode("utf-8")
        except UnicodeDecodeError as e:
            raise PirFormatError(f"this is not a PIR program: byte {e.start} is not UTF-8 "
                                 f"(a PIR file is JSON text)") from None
    elif not isinstance(data, str):
        raise PirFormatError(f"a PIR program is JSON text (str or bytes), got "
                             f"{type(data).__name__}")
    if len(data) > _limits.MAX_PIR_BYTES:
        raise PirFormatError(_too_large(len(data)))
    try:
        doc = json.loads(data, parse_int=_bounded_int)
    except RecursionError:
        raise PirFormatError("this PIR file nests deeper than can be read (thousands of "
                             "levels of JSON); no program Paddle writes does") from None
    except json.JSONDecodeError as e:
        raise PirFormatError(f"this is not a PIR program: not JSON ({e.msg} at line "
                             f"{e.lineno}, column {e.colno})") from None
    except ValueError as e:              # Python's own limit on digits in an int
        raise PirFormatError(f"this is not a PIR program Paddle writes: {e}") from None
    check_base_code(doc)
    return doc


def _too_large(size: int) -> str:
    return (f"the PIR program is {_limits.human_bytes(size)} ({size:,} bytes), more than the "
            f"limit paddle_nb.core.limits.MAX_PIR_BYTES = "
            f"{_limits.human_bytes(_limits.MAX_PIR_BYTES)}; nothing was parsed. If the file "
            f"is right, raise the limit")


def check_base_code(doc) -> None:
    if not isinstance(doc, dict) or not isinstance(doc.get("base_code"), dict):
        raise PirFormatError("this is not a PIR program: a PIR file is a JSON object with "
                             "\"base_code\" and \"program\" (Paddle 3's model.json); "
                             f"this is {_kind(doc)}")
    base = doc["base_code"]
    if base.get("magic") != MAGIC:
        raise PirFormatError(f"this is not a PIR program: base_code.magic is "
                             f"{base.get('magic')!r}, expected {MAGIC!r}")
    version = base.get("version")
    if type(version) is not int or version not in SUPPORTED_VERSIONS:
        known = ", ".join(f"{v} ({who})" for v, who in SUPPORTED_VERSIONS.items())
        raise PirFormatError(f"PIR version {version!r} is not one this package reads; it "
                             f"reads versions {known}")
    if not isinstance(doc.get("program"), dict):
        raise PirFormatError(f"this PIR file has no \"program\" object (it has "
                             f"{sorted(doc)})")


def _kind(x) -> str:
    if isinstance(x, dict):
        return f"an object with keys {sorted(x)[:8]}"
    return f"a JSON {type(x).__name__}"


# --- types ------------------------------------------------------------------------------------
class TensorType:
    """A value's type: a dense tensor (``0.t_dtensor``), a tensor array
    (``1.t_tensor_array``), a vector of types (``0.t_vec``), or none (``NULL``)."""
    __slots__ = ("kind", "dtype", "shape", "items")

    def __init__(self, kind: str, dtype: str | None = None, shape=None, items=()):
        self.kind, self.dtype, self.shape, self.items = kind, dtype, shape, tuple(items)

    def __repr__(self):
        return f"TensorType({self.kind}, {self.dtype}, {self.shape})"


def _dims(dims, where: str) -> list[int]:
    if not isinstance(dims, list) or not all(type(d) is int and -2 ** 63 <= d < 2 ** 63
                                             for d in dims):
        raise PirFormatError(f"{where}: the dims {dims!r:.80} should be a list of sizes (-1 "
                             f"for unknown; each an int64)")
    if len(dims) > 64:
        raise PirFormatError(f"{where}: {len(dims)} dims; a tensor has at most 64 here")
    # Paddle writes an unknown size times a known one as their product (flattening
    # [-1, 3, 4] gives [-12]): any negative size is unknown.
    return [-1 if d < 0 else d for d in dims]


def decode_type(t, where: str) -> TensorType:
    if not isinstance(t, dict) or not isinstance(t.get("#"), str):
        raise PirFormatError(f"{where}: a type is {{\"#\": name, \"D\": data}}, got {t!r:.80}")
    name, data = t["#"], t.get("D")
    if name == "NULL":
        return TensorType("null")
    if name in ("0.t_dtensor", "1.t_tensor_array"):
        if not isinstance(data, list) or len(data) < 2:
            raise PirFormatError(f"{where}: {name} holds [dtype, dims, layout, ...], got "
                                 f"{data!r:.80}")
        elem = decode_type(data[0], where)
        kind = "tensor" if name == "0.t_dtensor" else "array"
        return TensorType(kind, elem.dtype, _dims(data[1], where))
    if name == "0.t_vec":
        if not isinstance(data, list):
            raise PirFormatError(f"{where}: 0.t_vec holds a list of types, got {data!r:.80}")
        return TensorType("vector", items=[decode_type(x, where) for x in data])
    dialect, _, short = name.partition(".")
    if dialect == "0" and short in _DTYPES:
        return TensorType("scalar", _DTYPES[short])
    raise PirFormatError(f"{where}: the type {name!r} is not one this package reads (dense "
                         f"tensors, tensor arrays and vectors of them)")


def encode_dtype(dtype: str) -> dict:
    return {"#": "0." + _TYPE_OF_DTYPE[dtype]}


def encode_tensor_type(dtype: str, shape, array: bool = False) -> dict:
    dims = [int(d) for d in shape]
    if array:
        return {"#": "1.t_tensor_array", "D": [encode_dtype(dtype), dims, "NCHW"]}
    return {"#": "0.t_dtensor", "D": [encode_dtype(dtype), dims, "NCHW", [], 0]}


# --- attributes -------------------------------------------------------------------------------
def decode_attr(a, where: str):
    """A PIR attribute as a Python value: bool, int, float, str, a list, a numpy dtype name
    (``1.a_dtype``), a list of ints (``1.a_intarray``), a scalar (``1.a_scalar``)."""
    if not isinstance(a, dict) or not isinstance(a.get("#"), str):
        raise PirFormatError(f"{where}: an attribute is {{\"#\": kind, \"D\": data}}, got "
                             f"{a!r:.80}")
    kind, data = a["#"], a.get("D")
    check = _ATTR_CHECKS.get(kind)
    if check is None:
        raise PirFormatError(f"{where}: the attribute kind {kind!r} is not one this package "
                             f"reads ({', '.join(sorted(_ATTR_CHECKS))})")
    return check(data, where)


def _want(ok: bool, data, what: str, where: str):
    if not ok:
        raise PirFormatError(f"{where}: expected {what}, got {data!r:.80}")
    return data


def _float(data, where):
    if data is None:                     # Paddle's JSON writes NaN as null
        return float("nan")
    return float(_want(type(data) in (int, float), data, "a number", where))


def _int(data, where):
    return _want(type(data) is int, data, "an integer", where)


def _scalar(data, where):
    _want(isinstance(data, list) and len(data) >= 2 and data[0] in _PADDLE_DTYPES, data,
          "[dtype, value] (a 1.a_scalar)", where)
    dtype = _PADDLE_DTYPES[data[0]]
    if dtype.startswith("complex"):
        return complex(_float(data[1], where), _float(data[2] if len(data) > 2 else 0, where))
    if dtype == "bool":
        return bool(data[1])
    return _float(data[1], where) if dtype.startswith(("float", "uint16")) \
        else _int(data[1], where)


def _paddle_dtype(data, where):
    """A ``1.a_dtype``: a numpy dtype name, or ``"undefined"``: Paddle writes
    ``Undefined(ALL_DTYPE)`` where an op's dtype is "the same as its input's" (``sum``)."""
    if data in ("Undefined(ALL_DTYPE)", "undefined"):
        return "undefined"
    _want(isinstance(data, str) and data in _PADDLE_DTYPES, data,
          f"a data type ({', '.join(_PADDLE_DTYPES)} or undefined)", where)
    return _PADDLE_DTYPES[data]


_ATTR_CHECKS = {
    "0.a_bool": lambda d, w: _want(type(d) is bool, d, "true or false", w),
    "0.a_i32": _int, "0.a_i64": _int, "0.a_index": _int,
    "0.a_f32": _float, "0.a_f64": _float,
    "0.a_str": lambda d, w: _want(isinstance(d, str), d, "a string", w),
    "0.a_tensorname": lambda d, w: _want(isinstance(d, str), d, "a string", w),
    "0.a_array": lambda d, w: [decode_attr(x, w) for x in _want(isinstance(d, list), d,
                                                                 "a list", w)],
    "0.a_type": lambda d, w: decode_type(d, w),
    "0.a_c64": lambda d, w: complex(*_want(isinstance(d, list) and len(d) == 2, d,
                                           "[real, imag]", w)),
    "0.a_c128": lambda d, w: complex(*_want(isinstance(d, list) and len(d) == 2, d,
                                            "[real, imag]", w)),
    "1.a_intarray": lambda d, w: [_int(x, w) for x in _want(isinstance(d, list), d,
                                                            "a list of ints", w)],
    "1.a_dtype": lambda d, w: _paddle_dtype(d, w),
    "1.a_layout": lambda d, w: _want(isinstance(d, str), d, "a layout name", w),
    "1.a_place": lambda d, w: _want(isinstance(d, list), d, "[type, device, name]", w),
    "1.a_scalar": _scalar,
}


def encode_attr(value, kind: str) -> dict:
    """``value`` as the attribute ``kind`` (a key of the table above)."""
    if kind == "0.a_array":
        raise ValueError("encode arrays with encode_array")
    if kind == "1.a_dtype":
        value = _PADDLE_DTYPE_NAMES.get(value, value)
    if kind in ("0.a_f32", "0.a_f64"):
        value = float(value)
        value = None if np.isnan(value) else value
    if kind == "1.a_scalar":
        dtype = value[0]
        value = [_PADDLE_DTYPE_NAMES.get(dtype, dtype), value[1]]
    return {"#": kind, "D": value}


def encode_array(values, kind: str) -> dict:
    return {"#": "0.a_array", "D": [encode_attr(v, kind) for v in values]}


_PADDLE_DTYPE_NAMES = {v: k for k, v in _PADDLE_DTYPES.items()}
