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
from dataclasses import dataclass

import numpy as np
from google.protobuf.message import DecodeError

from ..core import dtypes
from ..core import limits as _limits
from ..core.errors import IOFormatError
from ..core.framework_pb2 import VarType
from ..core.limits import human_bytes

# --- the tensor format ----------------------------------------------------------------------
U32, U64, I32 = struct.Struct("<I"), struct.Struct("<Q"), struct.Struct("<i")
# Header sanity limits: past them a header is corrupt, so they are not meant to be raised.
MAX_TENSOR_RANK = 64           # numpy's own limit on dims (Paddle's tensors have at most 9)
MAX_LOD_LEVELS = 64            # sequences nested in sequences; real programs use 1 or 2
MAX_DESC_BYTES = 2 ** 16       # a TensorDesc of 64 dims takes under 1 KiB


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

    def skip(self, n: int, what: str) -> None:
        self.take(n, what)

    def number(self, fmt: struct.Struct, what: str) -> int:
        return fmt.unpack(self.take(fmt.size, what))[0]


class FileReader(Reader):
    """An open file read front to back without holding it: ``take`` reads the few bytes
    asked for, ``skip`` only moves on (a tensor's data is never read). For listing the
    tensors of a parameter file of any size (:func:`read_header`)."""

    def __init__(self, f, size: int, path: str):
        self.f, self.size, self.path = f, size, path
        self.pos = 0

    def remaining(self) -> int:
        return self.size - self.pos

    def take(self, n: int, what: str) -> memoryview:
        self.skip(n, what)
        self.f.seek(self.pos - n)
        data = self.f.read(n)
        if len(data) != n:
            raise BadTensor(f"the file ended while {what} was read (did it shrink meanwhile?)")
        return memoryview(data)

    def skip(self, n: int, what: str) -> None:
        if n > self.remaining():
            raise BadTensor(f"the file ends {self.remaining()} bytes into the {n} bytes of "
                            f"{what} (it is truncated, or the bytes before were not what "
                            f"they claim)")
        self.pos += n


@dataclass(frozen=True)
class TensorHeader:
    """What a tensor's bytes say before its data (checked): enough to list the tensor."""
    dtype: np.dtype
    dims: list[int]
    nbytes: int              # of the data that follows
    kind: str                # "FP32[6, 1, 3, 3] tensor", as errors name it

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.dims)

    @property
    def ndim(self) -> int:
        return len(self.dims)


def read_header(r: Reader) -> TensorHeader:
    """Parse one tensor's header at the reader's position, its LoD levels skipped, up to
    its data; raises BadTensor with the fault."""
    version = r.number(U32, "the version")
    if version != 0:
        raise BadTensor(f"it starts with version {version}, but a Paddle tensor starts with 0 "
                        f"(this is not a tensor file, or it is corrupt)")
    levels = r.number(U64, "the LoD level count")
    if levels > MAX_LOD_LEVELS:
        raise BadTensor(f"it claims {levels:,} LoD levels; a tensor has at most "
                        f"{MAX_LOD_LEVELS} (corrupt)")
    for level in range(levels):
        nbytes = r.number(U64, f"the size of LoD level {level}")
        if nbytes % 8:
            raise BadTensor(f"LoD level {level} has {nbytes} bytes, not a whole number of "
                            f"uint64 offsets (corrupt)")
        r.skip(nbytes, f"LoD level {level}")
    tensor_version = r.number(U32, "the tensor version")
    if tensor_version != 0:
        raise BadTensor(f"tensor version {tensor_version}, expected 0 (corrupt)")
    size = r.number(I32, "the TensorDesc size")
    if not 0 <= size <= MAX_DESC_BYTES:
        raise BadTensor(f"the TensorDesc size is {size:,}, expected 0..{MAX_DESC_BYTES:,} "
                        f"(corrupt)")
    desc = VarType.TensorDesc()
    try:
        desc.ParseFromString(bytes(r.take(size, "the TensorDesc")))
    except (DecodeError, RuntimeError, ValueError) as e:
        raise BadTensor(f"the TensorDesc does not parse ({e}); the file is corrupt") from None
    if not desc.HasField("data_type"):       # proto2 'required', but parsing does not check
        raise BadTensor("the TensorDesc has no data_type (corrupt)")
    if len(desc.dims) > MAX_TENSOR_RANK:     # before making a list of them
        raise BadTensor(f"the TensorDesc has {len(desc.dims):,} dims; a tensor has at most "
                        f"{MAX_TENSOR_RANK} (corrupt)")
    dims = list(desc.dims)
    if any(d < 0 for d in dims):
        raise BadTensor(f"the TensorDesc has dims {dims}; a stored tensor has no -1 (corrupt)")
    try:
        dtype = dtypes.to_numpy(desc.data_type)
    except TypeError:
        raise BadTensor(f"the TensorDesc's data_type is {VarType.Type.Name(desc.data_type)} "
                        f"({desc.data_type}), which is not an element type a tensor can hold "
                        f"here ({_element_types()})") from None
    kind = f"{dtypes.name(desc.data_type)}{dims} tensor"
    # The size the shape asks for, before anything is allocated. Dims of 0 are left out, so
    # that [2**62, 0] (no data, but a shape numpy cannot hold) is refused too.
    asked = math.prod(d for d in dims if d) * dtype.itemsize
    if asked > _limits.MAX_TENSOR_BYTES:
        what = (f"a {kind} ({human_bytes(asked)})" if 0 not in dims else
                f"an empty {kind} whose other dims would take {human_bytes(asked)}")
        raise BadTensor(f"the TensorDesc asks for {what}; the limit is "
                        f"paddle_nb.core.limits.MAX_TENSOR_BYTES = "
                        f"{human_bytes(_limits.MAX_TENSOR_BYTES)} (corrupt, or raise the limit)")
    return TensorHeader(dtype, dims, math.prod(dims) * dtype.itemsize, kind)


def read_tensor(r: Reader) -> np.ndarray:
    """Parse one tensor at the reader's position; raises BadTensor with the fault."""
    header = read_header(r)
    raw = r.take(header.nbytes, f"the data of a {header.kind}")
    return elements(raw, header.dtype).reshape(header.dims)


def elements(raw, dtype: np.dtype) -> np.ndarray:
    """Tensor data bytes (a whole number of elements: all of a tensor's, or a chunk) as a
    flat array that owns its memory, in native byte order."""
    if dtype == np.bool_:                    # a byte other than 0 or 1 is not a numpy bool
        return np.frombuffer(raw, np.uint8) != 0
    # astype copies: the array owns its memory, native byte order, writable.
    return np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype)


def _element_types() -> str:
    """The data types a loaded tensor can have, for error messages."""
    names = []
    for code in VarType.Type.values():
        try:
            dtypes.to_numpy(code)
        except TypeError:
            continue
        names.append(dtypes.name(code))
    return ", ".join(names)


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
