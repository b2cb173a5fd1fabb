"""Errors that teach (docs/architecture.md, decision 9).

Every error raised by the framework is a :class:`PaddleNBError`. Errors about an op name
the op type, its block path (``block 0 > op 2 softmax``), the slot, what was expected
and what was given, and the line of user code that created the op. Nothing here imports
the rest of the package, so any module may raise these.

Every one pickles (``PaddleNBError.__reduce__``), so it crosses a process boundary (a Ray
actor's error arrives on the driver) with its message and its attributes; the op it
failed in travels as an :class:`OpDescription`.
"""
from __future__ import annotations

import dataclasses
import difflib
import enum
import os
import traceback
from dataclasses import dataclass, field

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARY_MARKERS = (
    _PACKAGE_DIR + os.sep,
    os.sep + "contextlib.py",
    os.sep + "IPython" + os.sep,
    os.sep + "ipykernel" + os.sep,     # the kernel's own frames above a notebook cell
    os.sep + "tornado" + os.sep,
    os.sep + "asyncio" + os.sep,
)


@dataclass(frozen=True)
class OpDescription:
    """What a pickled error keeps of the op it failed in (``failed_op``): the Operator
    itself is a view into a Program (protobuf messages, the block tree) that another
    process cannot rebuild, so its type, where it sat and its slots travel as plain
    values."""
    type: str
    where: str | None = None           # "block 0 > op 2 softmax", as the message says it
    block_idx: int | None = None
    index: int | None = None           # the op's position in its block
    created_at: str | None = None      # the user's line that created the op
    inputs: dict = field(default_factory=dict)
    outputs: dict = field(default_factory=dict)
    # The OpDesc stays in the process that raised: code that matches ``failed_op.desc``
    # against its own ops (the notebook magic's "which cell built it") finds no match.
    desc = None

    @classmethod
    def of(cls, op) -> "OpDescription":
        """Describe an Operator (duck-typed: this module imports nothing of the package).
        Each part is taken on its own, so one that cannot be read (an op since removed
        from its block has no index) leaves that part None, not the error unpicklable."""
        def part(read):
            try:
                return read()
            except Exception:     # noqa: BLE001 (a description must not fail)
                return None
        type_ = str(part(lambda: op.type) or "?")
        block_idx = part(lambda: int(op.block.idx))
        index = part(lambda: int(op.idx))
        path = part(lambda: str(op.block.path))
        where = f"{path} > op {index} {type_}" if path is not None and index is not None \
            else None
        return cls(type_, where, block_idx, index, part(lambda: op.created_at),
                   part(lambda: dict(op.inputs)) or {}, part(lambda: dict(op.outputs)) or {})

    def __str__(self):
        return self.where or f"op {self.type}"


def _looks_like_op(value) -> bool:
    """An Operator (core/operator.py), recognized without importing it."""
    return hasattr(value, "desc") and hasattr(value, "block") and hasattr(value, "type") \
        and not isinstance(value, OpDescription)


# What crosses a process boundary as it is: plain data. Decided by type, not by trying
# pickle: core/ is on the loading paths, which import no pickle at all
# (tests/test_hostile_programs.py). Anything else an error holds is an op (described) or is
# left out.
_PLAIN = (type(None), bool, int, float, complex, str, bytes, enum.Enum)
_UNPICKLABLE = object()


def _portable(value):
    """``value`` as it can cross a process boundary: plain data (numbers, strings, numpy
    values, dataclasses of them, containers of them) as it is, an op described, anything
    else ``_UNPICKLABLE``."""
    if isinstance(value, _PLAIN) or isinstance(value, PaddleNBError):
        return value
    if _looks_like_op(value):
        return OpDescription.of(value)
    if type(value).__module__.partition(".")[0] == "numpy":     # scalars, arrays, dtypes
        # numpy's dtype equality (an object array cannot travel), not a type check
        return value if getattr(value, "dtype", None) != object else _UNPICKLABLE  # noqa: E721
    if isinstance(value, dict):
        items = [(_portable(k), _portable(v)) for k, v in value.items()]
        if any(k is _UNPICKLABLE or v is _UNPICKLABLE for k, v in items):
            return _UNPICKLABLE
        return _same_or_rebuilt(value, items, dict)
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_portable(v) for v in value]
        if any(i is _UNPICKLABLE for i in items):
            return _UNPICKLABLE
        return _same_or_rebuilt(value, items, type(value))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        parts = [getattr(value, f.name) for f in dataclasses.fields(value)]
        return value if all(_portable(v) is v for v in parts) else _UNPICKLABLE
    return _UNPICKLABLE


def _same_or_rebuilt(value, items, kind):
    """A container whose items all crossed unchanged is kept; one holding an op (now a
    description) is rebuilt, when it is a plain list, tuple, set or dict."""
    flat = [x for pair in items for x in pair] if kind is dict else items
    original = [x for pair in value.items() for x in pair] if kind is dict else list(value)
    if all(a is b for a, b in zip(flat, original)):
        return value
    if type(value) in (list, tuple, set, frozenset, dict):
        return kind(items)
    return _UNPICKLABLE


def _rebuild_error(cls, args, state):
    """The other half of ``PaddleNBError.__reduce__``: the error without running its
    ``__init__`` (a subclass's may take other arguments), its attributes set as sent."""
    error = cls.__new__(cls, *args)
    error.args = args
    error.__dict__.update(state)
    return error


class PaddleNBError(Exception):
    """Base class of every error paddle_nb raises on purpose.

    Pickles with its message (``args``) and its attributes (the location an executor adds:
    ``failed_op``, and a subclass's own, such as IndexRangeError's ``slot``, ``value``,
    ``position``, ``low``, ``high``): the op becomes an :class:`OpDescription`; an
    attribute that is not plain data (a front end's rendering hook) is left out and named
    in ``unpicklable_attributes``. The error is rebuilt without its ``__init__``. This is
    the one place that decides it, for every subclass, wherever it is defined."""

    def __reduce__(self):
        args = tuple(str(a) if p is _UNPICKLABLE else p
                     for a, p in ((a, _portable(a)) for a in self.args))
        state, dropped = {}, []
        for name, value in self.__dict__.items():
            portable = _portable(value)
            if portable is _UNPICKLABLE:
                dropped.append(name)
            else:
                state[name] = portable
        if dropped:
            state["unpicklable_attributes"] = tuple(dropped)
        return _rebuild_error, (type(self), args, state)


class BuildError(PaddleNBError):
    """Misuse of the builder API found while the program is being described."""


class ShapeError(BuildError):
    """An op's inputs do not fit together (found by shape inference at append time)."""


class UnknownOpError(BuildError, KeyError):
    """An op type that is not in the registry."""

    def __str__(self):  # KeyError would print the message repr'd, with quotes
        return self.args[0] if self.args else ""


class ProgramFormatError(PaddleNBError, ValueError):
    """Bytes that are not a ProgramDesc."""


class IOFormatError(PaddleNBError, ValueError):
    """A file that cannot be loaded: missing, truncated, corrupt, or not matching the program."""


class SaveError(PaddleNBError):
    """A variable that cannot be saved: no value in the scope, or not the declared tensor."""



class ScopeError(PaddleNBError):
    """Misuse of the Scope hierarchy."""


class ExecutionError(PaddleNBError):
    """Something went wrong while running ops."""


class IndexRangeError(ExecutionError, IndexError):
    """A tensor value used as an index (a class label, an id, a branch mask, an array
    position) is out of range: found by the kernel's check before it wrote anything.
    ``slot``, ``value``, ``position`` and ``low``/``high`` say which and where."""


class FeedError(ExecutionError, ValueError):
    """A feed that does not match the program's declaration."""


class FetchError(ExecutionError, KeyError):
    """A fetch target that cannot be fetched."""

    def __str__(self):
        return self.args[0] if self.args else ""


# Files inside the package that are user code as far as errors go: their lines are the
# ones a reader wants to see (the tour and the examples build programs as a user would).
_USER_CODE = (os.path.join(_PACKAGE_DIR, "tour.py"),
              os.path.join(_PACKAGE_DIR, "examples") + os.sep)


def _is_library_frame(filename: str) -> bool:
    if filename.startswith(_USER_CODE):
        return False
    return filename.startswith("<frozen") or any(m in filename for m in _LIBRARY_MARKERS)


# --- where a frame is, for the reader ---------------------------------------------------
# The notebook front end installs a hook that names the code IPython compiled for a cell
# (``Cell In[3]``) instead of its temporary file name; the core itself never imports
# IPython. The hook takes a filename and returns a label, or None for an ordinary file.
_filename_label_hook = None


def set_filename_label_hook(hook) -> None:
    """Install (or, with None, remove) ``hook(filename) -> str | None``."""
    global _filename_label_hook
    _filename_label_hook = hook


def _location(frame) -> str:
    """``File "f.py", line 3, in g``, or ``Cell In[3], line 2`` for a notebook cell."""
    label = _filename_label_hook(frame.filename) if _filename_label_hook else None
    if label:
        return f"{label}, line {frame.lineno}" + (
            "" if frame.name == "<module>" else f", in {frame.name}")
    return f'File "{frame.filename}", line {frame.lineno}, in {frame.name}'


def user_line() -> str:
    """The innermost stack frame outside paddle_nb, as ``File "f.py", line 3, in g: code``.

    Recorded on every op when it is created (like Paddle's ``op_callstack``) so that
    errors found later, at shape inference or at run time, can point at the user's code.
    """
    for frame in reversed(traceback.extract_stack()[:-1]):
        if not _is_library_frame(frame.filename):
            code = (frame.line or "").strip()
            return f"{_location(frame)}: {code}"
    return "<unknown>"


def user_stack(limit: int = 4) -> list[str]:
    """A few user frames, innermost last, in the ``op_callstack`` attribute's format."""
    frames = [f for f in traceback.extract_stack()[:-1] if not _is_library_frame(f.filename)]
    lines = []
    for frame in frames[-limit:]:
        lines.append(f"  {_location(frame)}\n    {(frame.line or '').strip()}")
    return lines


def did_you_mean(name: str, candidates, cutoff: float = 0.6) -> str:
    """``"; did you mean a, b?"`` for the (up to three) candidates closest to ``name``, or
    ``""``: the hint every "unknown name" error ends with."""
    close = difflib.get_close_matches(str(name), list(candidates), n=3, cutoff=cutoff)
    return f"; did you mean {', '.join(close)}?" if close else ""
