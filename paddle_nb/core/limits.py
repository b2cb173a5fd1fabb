"""The limits on what a program, a file or a tensor may cost, and the checks kernels and
loaders make against them before they allocate.

They are module attributes: set one to change it (``paddle_nb.core.limits.MAX_TENSOR_BYTES
= 2 ** 30``), and every check reads the new value. Kept apart from ``validate.py`` (which
checks whole programs) so that the modules that run programs, read files and allocate
tensors import a leaf module, not the program checker.
"""
from __future__ import annotations

import math

from . import dtypes
from .errors import ExecutionError
from .framework_pb2 import VarType

MAX_TENSOR_BYTES = 2 ** 34       # 16 GiB: one tensor larger than this is refused
MAX_BLOCK_DEPTH = 100            # blocks nested deeper than this are refused at load time
MAX_LIST_LENGTH = 2 ** 24        # positions of a tensor array, columns of a fetch list
# Bytes from outside. Program bytes are checked by core/wire_check.py before protobuf parses
# them (a two-byte empty record costs hundreds of bytes once parsed); real Paddle programs
# are a few MB, with a few hundred blocks at most and about 20 records per op. paddle_nb.io
# refuses a file over its limit before reading it.
MAX_PROGRAM_BYTES = 2 ** 24      # 16 MiB: a larger ProgramDesc (or model file) is refused
MAX_PROGRAM_BLOCKS = 2 ** 16     # 65,536 blocks
MAX_PROGRAM_RECORDS = 2 ** 20    # fields in the blocks, variables and ops (about a million)
MAX_PARAMS_BYTES = MAX_TENSOR_BYTES + 2 ** 20   # a parameter file: one largest tensor + header
# A Paddle 3 PIR program (model.json) is JSON, several times bulkier than the same program in
# protobuf, and Python's parsed JSON takes about ten times the text's size again; real models
# are a few MB of JSON (the weights are in .pdiparams), so 64 MiB leaves room for the largest
# while bounding what parsing one may cost (under a GB).
MAX_PIR_BYTES = 2 ** 26
MAX_REPORTED = 30                # problems spelled out in an error message (all are kept)


def human_bytes(n: int) -> str:
    for unit, size in (("EiB", 2 ** 60), ("PiB", 2 ** 50), ("TiB", 2 ** 40), ("GiB", 2 ** 30),
                       ("MiB", 2 ** 20), ("KiB", 2 ** 10)):
        if n >= size:
            return f"{n / size:.1f} {unit}" if n < 2 ** 70 else f"about 2**{n.bit_length()} bytes"
    return f"{n} bytes"


def limit_text() -> str:
    return (f"the limit is paddle_nb.core.limits.MAX_TENSOR_BYTES = "
            f"{human_bytes(MAX_TENSOR_BYTES)}")


def item_size(code) -> int:
    try:
        return dtypes.to_numpy(code).itemsize
    except (TypeError, KeyError):
        return {VarType.BF16: 2, VarType.FP8_E4M3FN: 1, VarType.FP8_E5M2: 1,
                VarType.UINT16: 2, VarType.UINT32: 4, VarType.UINT64: 8}.get(code, 8)


def tensor_bytes(shape, itemsize: int) -> int:
    """Bytes of a tensor of ``shape``; unknown (-1) dims count as 1."""
    return math.prod(1 if int(d) < 0 else int(d) for d in shape) * itemsize


def check_tensor_size(shape, dtype, what: str) -> None:
    """For kernels, before they allocate: an :class:`ExecutionError` if ``shape`` has a
    negative dim or a tensor of it would be larger than :data:`MAX_TENSOR_BYTES`."""
    shape = [int(d) for d in shape]
    if any(d < 0 for d in shape):
        raise ExecutionError(f"{what}: shape {shape} has a negative dim; every dim of a value "
                             f"must be known (>= 0)")
    itemsize = dtype.itemsize if hasattr(dtype, "itemsize") else item_size(dtype)
    n = math.prod(shape) * itemsize
    if n > MAX_TENSOR_BYTES:
        raise ExecutionError(f"{what}: a tensor of shape {shape} ({itemsize}-byte elements) "
                             f"would take {human_bytes(n)}; {limit_text()}. Nothing was "
                             f"allocated.")


def check_list_index(i: int, what: str) -> None:
    """For kernels that grow a list up to position ``i`` (tensor arrays, fetch lists)."""
    if i >= MAX_LIST_LENGTH:
        raise ExecutionError(f"{what}: position {i} would grow the list to {i + 1} entries; "
                             f"the limit is paddle_nb.core.limits.MAX_LIST_LENGTH = "
                             f"{MAX_LIST_LENGTH}")
