"""Working with a program a step or a cell at a time, without IPython or widgets.

- ``debugger.py``: the step debugger (``pd.Debugger``), ``Executor.steps`` driven by hand;
  ``history.py`` its timeline of copy-on-write records (stepping back), ``bad_value.py``
  the first NaN or Inf it stops at;
- ``session.py``: the model of a notebook's ``%%paddle`` cells, a program that survives
  re-running them; ``user_names.py`` the names the cells bound (``x`` for ``minibatch_0``),
  read the same way by every view.

This package depends on the core only. The notebook front end (``paddle_nb/notebook/``:
the magic, the widgets, the sidebar's inspector) is the layer above it and drives it; the
old paths ``paddle_nb.notebook.debugger`` and the like re-export what moved here.
"""
from .bad_value import BadValue
from .debugger import DEFAULT_HISTORY_BYTES, Debugger, DebuggerError
from .session import CellRecord, Notebook, NotebookProgram

__all__ = ["BadValue", "CellRecord", "DEFAULT_HISTORY_BYTES", "Debugger", "DebuggerError",
           "Notebook", "NotebookProgram"]
