"""Moved to :mod:`paddle_nb.interactive.user_names` (below the views that use it); this old
path re-exports it."""
from ..interactive.user_names import shown_name, user_name, user_names_of

__all__ = ["shown_name", "user_name", "user_names_of"]
