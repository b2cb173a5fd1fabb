"""A cheap look at ProgramDesc bytes before protobuf parses them.

Why this exists: protobuf parses whatever it is given, and what a message costs is not its
size on the wire. An empty BlockDesc is two bytes (``0a 00``) but hundreds of bytes once
parsed, and more again when our checks look at it: 8 MB of empty blocks took 5 s and
1.5 GB, and 20 MB crashed the process inside protobuf (``FindInitializationErrors`` over
ten million blocks). Nothing after the parse can help with that, so this module walks the
wire format first, in plain Python, building nothing, and refuses with a
:class:`~paddle_nb.core.errors.ProgramFormatError`:

* more than ``MAX_PROGRAM_BYTES`` bytes;
* a varint that is cut off or longer than ten bytes, a length that runs past the end of its
  message, field number 0, wire types 6 and 7 (they do not exist), and groups (wire types
  3 and 4: framework.proto has none and Paddle never writes them; protobuf would nest them);
* more than ``MAX_PROGRAM_BLOCKS`` blocks, or more than ``MAX_PROGRAM_RECORDS`` records
  (fields) in the blocks, variables and ops. Each submessage is a record, so this bounds
  the messages protobuf will make.

The limits are module attributes of :mod:`paddle_nb.core.limits` (set them there).

What is walked. Only the messages that can hold a *repeated* submessage field: the
ProgramDesc (blocks), a block (vars, ops), a var (attrs, and its type, whose reader holds
LoDTensorDescs), an op (input and output slots, attributes), an attribute holding Scalars,
the op version map. Every other submessage (a slot, a TensorDesc, an attribute without
Scalars) holds a bounded number of messages, so it is one record, skipped with its length
prefix in one step. The walk only enters the fields listed in ``_WALK``, so its depth is
the schema's (at most ProgramDesc > block > var > type > reader): no recursion, and nothing
can nest deeper. Repeated numbers and strings inside the skipped messages are bounded only
by ``MAX_PROGRAM_BYTES`` (protobuf takes about 50 bytes of memory per byte of empty
strings: 16 MiB of them loads in about 1.5 s and 0.8 GB).

How it stays cheap. A first walk enters only the ProgramDesc and its blocks and counts
each var or op as at most ``length // 2`` records (a record takes two bytes or more). For
a real program that bound is within the limit and the walk is done: about 0.1 ms for
30 KB (the program's load takes 2 ms). Only when the bound is too high does a second walk
enter everything and count exactly; it stops at the limit, so even 16 MB of empty ops is
refused in about 0.3 s. What the walk lets through, protobuf still parses and checks; when
protobuf refuses the bytes, :func:`locate_fault` walks every message to say where.
"""
from __future__ import annotations

from . import limits as _limits
from .errors import ProgramFormatError

# --- which submessages to walk -----------------------------------------------------------------
# For each message the walk enters: key -> the name of the submessage that field holds. A key
# starts each record, a varint: field_number << 3 | wire type, 2 ("length-delimited") for a
# submessage. A name that is itself a key of _WALK is walked; any other name is counted and
# skipped. Fields not listed (strings, numbers, unknown fields) are skipped by wire type.
def _key(field: int) -> int:
    return field << 3 | 2


_WALK: dict[str, dict[int, str]] = {
    "ProgramDesc": {_key(1): "block", _key(4): "version", _key(5): "op_version_map"},
    "block": {_key(3): "var", _key(4): "op"},
    "var": {_key(2): "type", _key(7): "var attr"},
    "type": {_key(2): "selected_rows", _key(3): "lod_tensor", _key(4): "tensor_array",
             _key(5): "reader", _key(7): "tuple", _key(8): "string", _key(9): "strings",
             _key(10): "vocab", _key(11): "sparse_coo", _key(12): "sparse_csr"},
    "reader": {_key(1): "reader lod_tensor"},
    "op": {_key(1): "input", _key(2): "output", _key(4): "attr"},
    "attr": {_key(20): "scalar", _key(21): "scalars"},
    "op_version_map": {_key(1): "pair"},
}
# The first, shallow walk: only the top. What it does not enter it bounds (see _walk).
_TOP = {name: _WALK[name] for name in ("ProgramDesc", "block")}
# Every message, for finding where protobuf's parse failed (only then: see locate_fault).
_TENSOR = {_key(1): "tensor"}                    # LoDTensorDesc, LoDTensorArrayDesc
_ALL = {**_WALK, **{name: {} for name in (
    "version", "var attr", "selected_rows", "tensor", "tuple", "string", "strings", "vocab",
    "sparse_coo", "sparse_csr", "input", "output", "complex", "op_version")},
    "lod_tensor": _TENSOR, "tensor_array": _TENSOR, "reader lod_tensor": _TENSOR,
    "scalar": {_key(5): "complex"}, "scalars": {_key(5): "complex"},
    "pair": {_key(2): "op_version"}}
# Fields that are not repeated: named without an index in error messages.
_SINGLE = {"version", "op_version_map", "type", "selected_rows", "lod_tensor", "tensor_array",
           "reader", "tuple", "string", "strings", "vocab", "sparse_coo", "sparse_csr",
           "scalar", "tensor", "complex", "op_version"}
# An attribute is walked only if it may hold Scalars (field 21, repeated): only then can
# it hold many messages. Its key is two bytes, and an attribute without them has none.
_SCALARS_KEY = b"\xaa\x01"


class _BadWire(Exception):
    """A fault at a byte offset; the caller says where it is. ``where`` is given when the
    walk knows it (limits passed), else it is found by walking down again."""

    def __init__(self, at: int, what: str, where: str | None = None):
        super().__init__(what)
        self.at, self.what, self.where = at, what, where


def _varint(data, pos: int, end: int) -> tuple[int, int]:
    """The varint at ``pos`` and the position after it."""
    value = shift = 0
    start = pos
    while True:
        if pos >= end:
            raise _BadWire(start, "a number (varint) is cut off by the end of its message")
        b = data[pos]
        pos += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, pos
        shift += 7
        if shift >= 70:
            raise _BadWire(start, "a number (varint) is longer than 10 bytes")


def _limit(name: str) -> str:
    return (f"the limit is paddle_nb.core.limits.{name} = {getattr(_limits, name):,}; "
            f"raise it if the program is real")


def _error(data, e: _BadWire) -> ProgramFormatError:
    where = _where(data, e.at) if e.where is None else e.where
    return ProgramFormatError(f"these {len(data):,} bytes are not a ProgramDesc: {e.what} "
                              f"(at byte {e.at:,}{', in ' + where if where else ''})")


def check_program_bytes(data: bytes) -> None:
    """Raise :class:`ProgramFormatError` if ``data`` is too large, malformed on the wire, or
    holds more blocks or records than the limits allow. Cheap: see the module docstring."""
    if len(data) > _limits.MAX_PROGRAM_BYTES:
        raise ProgramFormatError(f"these {len(data):,} bytes are too many for a ProgramDesc; "
                                 f"{_limit('MAX_PROGRAM_BYTES')}")
    try:
        # First only the top: the blocks, each var and op taken in one step. A record takes
        # at least two bytes, so a var or op of L bytes holds at most L // 2 records. When
        # that bound keeps within the limit (it does for any real program of a few MB) the
        # vars and ops need not be entered; otherwise walk them too and count exactly.
        if not _walk(data, _TOP):
            _walk(data, _WALK)
    except _BadWire as e:
        raise _error(data, e) from None


def locate_fault(data: bytes) -> str | None:
    """After protobuf refused ``data``: the first fault on the wire and where it is
    (``... at byte 9,721, in block 2 > op 1 > input 0``), walking every message; None if
    the wire format is sound (then the fault is in what the fields hold)."""
    try:
        _walk(data, _ALL, count=False)
    except _BadWire as e:
        return str(_error(data, e))
    return None


def _walk(data, enter: dict, count: bool = True) -> bool:
    """Walk the messages named in ``enter`` (name -> fields, as in _WALK), counting their
    records; raise _BadWire at the first fault, or when blocks or records pass their
    limits (records only with ``count``). Returns False as soon as the messages of _WALK
    that ``enter`` leaves out *could* hold more records than the limit (``length // 2``
    each), True when the count is known to be within it."""
    max_blocks = _limits.MAX_PROGRAM_BLOCKS
    max_records = _limits.MAX_PROGRAM_RECORDS if count else float("inf")
    records = blocks = 0
    could_hold = 0                                # records the skipped vars and ops may hold
    # The messages being walked, outermost first: (where to go on, end, name). The schema
    # bounds its depth (ProgramDesc > block > var > type > reader), so no recursion.
    stack = []
    pos, end, kind = 0, len(data), "ProgramDesc"
    fields = enter[kind]
    while True:
        if pos >= end:                            # this message is done: back to its parent
            if not stack:
                return True
            pos, end, kind = stack.pop()
            fields = enter[kind]
            continue
        at = pos
        key = data[pos]                           # almost every key is one byte
        pos += 1
        if key >= 0x80:
            key, pos = _varint(data, at, end)
        wire = key & 7
        if key < 8:
            raise _BadWire(at, "field number 0 does not exist")
        records += 1
        if records > max_records:
            # Name the block (it is the last one counted) rather than walking again.
            top = stack[1][2] if len(stack) > 1 else kind
            raise _BadWire(at, f"more than {max_records:,} records (fields) in its blocks, "
                               f"variables and ops; {_limit('MAX_PROGRAM_RECORDS')}",
                           f"block {blocks - 1}" if top == "block" else "")
        if wire == 2:                             # length-delimited: a length, then bytes
            if pos < end and data[pos] < 0x80:
                length = data[pos]
                pos += 1
            else:
                length, pos = _varint(data, pos, end)
            if length > end - pos:
                raise _BadWire(at, f"field {key >> 3} of the {kind} claims {length:,} bytes, "
                                   f"but its message has {end - pos:,} left (truncated, or "
                                   f"not a ProgramDesc)")
            child = fields.get(key)
            if child is not None:                 # a submessage
                if child == "block":
                    blocks += 1
                    if blocks > max_blocks:
                        raise _BadWire(at, f"more than {max_blocks:,} blocks; "
                                           f"{_limit('MAX_PROGRAM_BLOCKS')}", "")
                if child in enter:
                    # An attribute can hold many messages only in its Scalars (field 21).
                    if (child != "attr" or enter is _ALL
                            or data.find(_SCALARS_KEY, pos, pos + length) >= 0):
                        stack.append((pos + length, end, kind))
                        end, kind = pos + length, child
                        fields = enter[kind]
                        continue
                elif child in _WALK:
                    could_hold += length // 2
                    if records + could_hold > max_records:
                        return False
            pos += length
        elif wire == 0:                           # a varint
            start = pos
            while True:
                if pos >= end:
                    raise _BadWire(at, f"field {key >> 3} of the {kind} is cut off")
                pos += 1
                if data[pos - 1] < 0x80:
                    break
                if pos - start == 10:
                    raise _BadWire(at, "a number (varint) is longer than 10 bytes")
        elif wire == 1 or wire == 5:              # fixed 8 or 4 bytes
            pos += 8 if wire == 1 else 4
            if pos > end:
                raise _BadWire(at, f"field {key >> 3} of the {kind} is cut off")
        elif wire == 3 or wire == 4:
            raise _BadWire(at, f"field {key >> 3} of the {kind} is a group (wire type {wire}); "
                               f"framework.proto has no groups")
        else:
            raise _BadWire(at, f"wire type {wire} does not exist (key {key})")


# --- where a byte is, for the error message ------------------------------------------------------
def _where(data, offset: int) -> str:
    """``block 3 > op 17 > attr 2``: the messages around ``offset``, found by walking down
    from the top again (only for an error, so the walk above stays lean). The records
    before ``offset`` in each enclosing message were read once already."""
    path, pos, end, kind = [], 0, len(data), "ProgramDesc"
    try:
        while kind in _ALL:
            fields, seen, inside = _ALL[kind], {}, None
            while pos < min(end, offset + 1):
                key, pos = _varint(data, pos, end)
                wire = key & 7
                if wire == 0:
                    _, pos = _varint(data, pos, end)
                elif wire == 1 or wire == 5:
                    pos += 8 if wire == 1 else 4
                elif wire == 2:
                    length, pos = _varint(data, pos, end)
                    child = fields.get(key)
                    if child is not None:
                        index = seen.get(key, 0)
                        seen[key] = index + 1
                        if pos <= offset < pos + length:    # the record around the offset
                            inside = (child if child in _SINGLE else f"{child} {index}",
                                      pos, pos + length, child)
                            break
                    pos += length
                else:
                    break
            if inside is None:
                break
            label, pos, end, kind = inside
            path.append(label)
    except _BadWire:
        pass
    return " > ".join(path)
