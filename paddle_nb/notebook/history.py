"""Moved to :mod:`paddle_nb.interactive.history` (the debugger's timeline, no IPython); this
old path re-exports it."""
from ..interactive.history import (EMPTY, SNAP_OVERHEAD, Record, ScopeEvent, Snap, Timeline,
                                   Write, copy_value, nbytes, snap_of)

__all__ = ["EMPTY", "SNAP_OVERHEAD", "Record", "ScopeEvent", "Snap", "Timeline", "Write",
           "copy_value", "nbytes", "snap_of"]
