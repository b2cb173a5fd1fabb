"""The tensor format.

One tensor, as Paddle's ``LoDTensor`` serialization writes it (all numbers little-endian):

    uint32   version              always 0
    uint64   lod_levels           0 for parameters; per level: uint64 nbytes, then nbytes
                                  of uint64 offsets (read and checked, then dropped: a scope
                                  holds plain arrays)
    uint32   tensor version       always 0
    int32    desc_size            the size of the next message
    bytes    VarType.TensorDesc   protobuf: data_type (a VarType code), dims
    bytes    data                 prod(dims) * itemsize bytes, C order

A variable saved on its own is one tensor in a file named after it. A name with '/' (made
by ``pd.namespace``, e.g. ``model_a/W``) is saved as ``model_a/W`` under the directory, in a
subdirectory, as Paddle does. A *combined* file (Paddle's ``save_combine``, the
``.pdiparams`` of an inference model) is several tensors back to back in sorted-name
order. The names are not stored, so a combined file is only meaningful together with the
program that lists the variables; the dtype and shape checks below catch most mix-ups.

An inference model is two files: the ProgramDesc bytes (``model.pdmodel``), pruned to the
targets with ``feed`` ops first and ``fetch`` ops last, and the combined file of the
persistable tensors it uses (``model.pdiparams``). PaddlePaddle's files load as they are.
"""
from __future__ import annotations

import math
import struct

import numpy as np
from google.protobuf.message import DecodeError

from ..core import dtypes
from ..core.errors import IOFormatError
from ..core.framework_pb2 import VarType

# --- the tensor format ----------------------------------------------------------------------
U32, U64, I32 = struct.Struct("<I"), struct.Struct("<Q"), struct.Struct("<i")


def serialize_tensor(array) -> bytes:
    """One array in Paddle's tensor format (see the module docstring)."""
    array = np.asarray(array)
    desc = VarType.TensorDesc(data_type=dtypes.to_code(array.dtype), dims=array.shape)
    meta = desc.SerializeToString()
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return b"".join([U32.pack(0), U64.pack(0),          # version, no LoD
                     U32.pack(0), I32.pack(len(meta)), meta, data])


class BadTensor(Exception):
    """A fault found while parsing; the caller adds which file and which variable."""


class Reader:
    """The bytes of one file, read front to back; a short read says what was cut off."""

    def __init__(self, data: bytes, path: str):
        self.data = memoryview(data)
        self.path = path
        self.pos = 0

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int, what: str) -> memoryview:
        if n > self.remaining():
            raise BadTensor(f"the file ends {self.remaining()} bytes into the {n} bytes of {what} "
                       f"(it is truncated, or the bytes before were not what they claim)")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def number(self, fmt: struct.Struct, what: str) -> int:
        return fmt.unpack(self.take(fmt.size, what))[0]


def read_tensor(r: Reader) -> np.ndarray:
    """Parse one tensor at the reader's position; raises BadTensor with the fault."""
    version = r.number(U32, "the version")
    if version != 0:
        raise BadTensor(f"it starts with version {version}, but a Paddle tensor starts with 0 "
                   f"(this is not a tensor file, or it is corrupt)")
    levels = r.number(U64, "the LoD level count")
    if levels > r.remaining() // 8:        # each level needs at least its 8-byte size
        raise BadTensor(f"it claims {levels} LoD levels, more than the rest of the file could "
                   f"hold (corrupt)")
    for level in range(levels):
        nbytes = r.number(U64, f"the size of LoD level {level}")
        if nbytes % 8:
            raise BadTensor(f"LoD level {level} has {nbytes} bytes, not a whole number of "
                       f"uint64 offsets (corrupt)")
        r.take(nbytes, f"LoD level {level}")
    tensor_version = r.number(U32, "the tensor version")
    if tensor_version != 0:
        raise BadTensor(f"tensor version {tensor_version}, expected 0 (corrupt)")
    size = r.number(I32, "the TensorDesc size")
    if size < 0:
        raise BadTensor(f"the TensorDesc size is {size} (corrupt)")
    desc = VarType.TensorDesc()
    try:
        desc.ParseFromString(bytes(r.take(size, "the TensorDesc")))
    except (DecodeError, RuntimeError, ValueError) as e:
        raise BadTensor(f"the TensorDesc does not parse ({e}); the file is corrupt") from None
    if not desc.HasField("data_type"):       # proto2 'required', but parsing does not check
        raise BadTensor("the TensorDesc has no data_type (corrupt)")
    dims = list(desc.dims)
    if any(d < 0 for d in dims):
        raise BadTensor(f"the TensorDesc has dims {dims}; a stored tensor has no -1 (corrupt)")
    try:
        dtype = dtypes.to_numpy(desc.data_type)
    except TypeError as e:
        raise BadTensor(str(e)) from None
    nbytes = math.prod(dims) * dtype.itemsize
    raw = r.take(nbytes, f"the data of a {dtypes.name(desc.data_type)}{dims} tensor")
    # astype copies: the array owns its memory, native byte order, writable.
    return np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype).reshape(dims)


def parse_tensors(data: bytes, path: str = "<bytes>") -> list[np.ndarray]:
    """Every tensor in ``data`` (one tensor file, or a combined one), in file order."""
    r, out = Reader(data, path), []
    while r.remaining():
        start = r.pos
        try:
            out.append(read_tensor(r))
        except BadTensor as e:
            raise IOFormatError(f"{path}: tensor {len(out) + 1} (at byte {start}): {e}") from None
    return out
