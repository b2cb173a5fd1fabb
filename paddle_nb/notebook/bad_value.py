"""Moved to :mod:`paddle_nb.interactive.bad_value` (the debugger's, no IPython); this old path
re-exports it."""
from ..interactive.bad_value import BadValue, find_bad_value

__all__ = ["BadValue", "find_bad_value"]
