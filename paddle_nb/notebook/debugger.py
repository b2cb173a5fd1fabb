"""Moved to :mod:`paddle_nb.interactive.debugger` (it needs no IPython); this old path, which
notebooks and scripts import, re-exports it."""
from ..interactive.bad_value import BadValue, find_bad_value
from ..interactive.debugger import DEFAULT_HISTORY_BYTES, Debugger, DebuggerError

__all__ = ["BadValue", "DEFAULT_HISTORY_BYTES", "Debugger", "DebuggerError", "find_bad_value"]
