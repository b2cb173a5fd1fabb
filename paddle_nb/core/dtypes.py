"""Data types: the protobuf ``VarType.Type`` codes and the numpy dtypes behind them."""
from __future__ import annotations

import numpy as np

from .framework_pb2 import VarType

# VarType.Type code -> numpy dtype, for the element types a tensor can hold.
_TO_NUMPY = {
    VarType.BOOL: np.dtype(np.bool_),
    VarType.INT16: np.dtype(np.int16),
    VarType.INT32: np.dtype(np.int32),
    VarType.INT64: np.dtype(np.int64),
    VarType.FP16: np.dtype(np.float16),
    VarType.FP32: np.dtype(np.float32),
    VarType.FP64: np.dtype(np.float64),
    VarType.UINT8: np.dtype(np.uint8),
    VarType.INT8: np.dtype(np.int8),
    VarType.COMPLEX64: np.dtype(np.complex64),
    VarType.COMPLEX128: np.dtype(np.complex128),
}
_FROM_NUMPY = {v: k for k, v in _TO_NUMPY.items()}

_NAMES = {
    VarType.BOOL: "bool", VarType.INT16: "int16", VarType.INT32: "int32",
    VarType.INT64: "int64", VarType.FP16: "float16", VarType.FP32: "float32",
    VarType.FP64: "float64", VarType.UINT8: "uint8", VarType.INT8: "int8",
    VarType.BF16: "bfloat16", VarType.COMPLEX64: "complex64",
    VarType.COMPLEX128: "complex128",
}
_FROM_NAME = {v: k for k, v in _NAMES.items()}

# Variable kinds (VarType.type) that hold something other than one tensor.
KIND_NAMES = {
    VarType.LOD_TENSOR: "tensor", VarType.SELECTED_ROWS: "selected_rows",
    VarType.FEED_MINIBATCH: "feed_list", VarType.FETCH_LIST: "fetch_list",
    VarType.STEP_SCOPES: "step_scopes", VarType.LOD_TENSOR_ARRAY: "tensor_array",
    VarType.READER: "reader", VarType.RAW: "raw", VarType.STRING: "string",
}


def to_code(dtype) -> int:
    """Any spelling of a dtype (``'float32'``, ``np.float32``, a VarType code) -> code."""
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, bool):
        if int(dtype) not in _NAMES:
            raise TypeError(f"unknown VarType data type code {dtype}")
        return int(dtype)
    if isinstance(dtype, str) and dtype in _FROM_NAME:
        return _FROM_NAME[dtype]
    try:
        return _FROM_NUMPY[np.dtype(dtype)]
    except (TypeError, KeyError):
        raise TypeError(f"unsupported dtype {dtype!r}; use one of {sorted(_FROM_NAME)}") from None


def to_numpy(code: int) -> np.dtype:
    try:
        return _TO_NUMPY[code]
    except KeyError:
        raise TypeError(f"data type {name(code)} has no numpy equivalent here") from None


def name(code: int) -> str:
    return _NAMES.get(code, f"dtype#{code}")
