"""Errors that teach (DESIGN decision 8).

Every error raised by the framework is a :class:`PaddleNBError`. Errors about an op name
the op type, its block path (``block 0 > op 2 softmax``), the slot, what was expected
and what was given, and the line of user code that created the op. Nothing here imports
the rest of the package, so any module may raise these.
"""
from __future__ import annotations

import difflib
import os
import traceback

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LIBRARY_MARKERS = (
    _PACKAGE_DIR + os.sep,
    os.sep + "contextlib.py",
    os.sep + "IPython" + os.sep,
    os.sep + "ipykernel" + os.sep,     # the kernel's own frames above a notebook cell
    os.sep + "tornado" + os.sep,
    os.sep + "asyncio" + os.sep,
)


class PaddleNBError(Exception):
    """Base class of every error paddle_nb raises on purpose."""


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
