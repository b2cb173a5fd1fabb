"""Moved to :mod:`paddle_nb.interactive.session` (the ``%%paddle`` cells' model, no IPython);
this old path re-exports it."""
from ..interactive.session import MAIN, STARTUP, CellNames, CellRecord, Notebook, NotebookProgram

__all__ = ["MAIN", "STARTUP", "CellNames", "CellRecord", "Notebook", "NotebookProgram"]
