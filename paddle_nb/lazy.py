"""What paddle_nb loads on first use: the one home for it.

``import paddle_nb`` costs almost nothing (no numpy, numba, protobuf): the Jupyter server
imports ``paddle_nb.lab`` at start, and that runs ``paddle_nb/__init__.py`` first. The
heavy parts load here, each once, under one lock:

- ``public_api()``: ``paddle_nb/public_api.py``, everything ``pd.<name>`` offers (the ops
  registered, the Variable operators patched, the builders, io, passes, the debugger).
  The package's ``__getattr__`` calls :func:`attribute` for any name it does not hold
  yet, which loads the API and copies its names into the package, so ``pd.fc`` costs a
  dict lookup from then on;
- the widgets (anywidget) for the names in ``WIDGET_NAMES``, on their first use only;
- ``server_part()``: the Jupyter server's program-file work
  (``paddle_nb/lab/program_file.py``), on the *Paddle program* tab's first request.

A program may reach the core without any ``pd.<name>`` (``from paddle_nb.core.executor
import Executor``; ``import paddle_nb.io``); it must still find every op registered. The
core names no module above it, so the registry cannot import the ops: it calls
:func:`declare_ops` before it answers its first question, which runs the loader
``paddle_nb/__init__.py`` set with :func:`declare_ops_with` (the public API, whose first
import is the ops package). ``paddle_nb/__init__.py`` always runs before any core module,
so the loader is always set.

This module imports nothing of paddle_nb's at module level (the core imports it).
"""
from __future__ import annotations

import importlib
import sys
import threading
from typing import Callable

PUBLIC_API = "paddle_nb.public_api"
OPS = "paddle_nb.ops"             # the package whose import declares every op
WIDGETS = "paddle_nb.notebook.widgets"
SERVER_PART = "paddle_nb.lab.program_file"
# Names of the package that need the notebook extra (anywidget), not loaded with the API.
WIDGET_NAMES = frozenset({"show", "show_passes", "ProgramView", "ScopeView", "DebuggerView",
                          "TrainingView"})

# One lock for every load: a module half imported in one thread is never used by another
# (the Jupyter server opens tabs in worker threads). Re-entrant: loading the API asks the
# registry, which asks declare_ops, in the same thread.
_lock = threading.RLock()


def _load(module: str):
    with _lock:
        return importlib.import_module(module)


def public_api():
    """``paddle_nb/public_api.py``, imported (once)."""
    return _load(PUBLIC_API)


def server_part():
    """``paddle_nb/lab/program_file.py``: what the Jupyter server's routes call."""
    return _load(SERVER_PART)


def attribute(name: str, package: dict):
    """``paddle_nb.<name>`` for a name the package does not hold yet (its ``__getattr__``):
    a widget, or a name of the public API, whose names are then copied into ``package``
    (the package's globals)."""
    if name in WIDGET_NAMES:
        return getattr(_load(WIDGETS), name)
    if name.startswith("__") and name != "__all__":   # probes (__path__, __wrapped__)
        raise AttributeError(f"module 'paddle_nb' has no attribute {name!r}")
    api = public_api()
    with _lock:
        for key, value in vars(api).items():
            if not key.startswith("_"):
                package.setdefault(key, value)
    if name == "__all__":           # `from paddle_nb import *`: what it gave before
        return sorted(k for k in package if not k.startswith("_"))
    if name in package:
        return package[name]
    raise AttributeError(f"module 'paddle_nb' has no attribute {name!r}")


def names(package: dict) -> list[str]:
    """What ``dir(paddle_nb)`` lists: the package's own names, the API's, the widgets'."""
    api = public_api()
    return sorted(set(package) | {k for k in vars(api) if not k.startswith("_")}
                  | WIDGET_NAMES)


# --- the ops, for the core's registry --------------------------------------------------------
class _OpDeclarations:
    loader: Callable[[], object] | None = None
    done = False
    loading = False


_ops = _OpDeclarations()


def declare_ops_with(loader: Callable[[], object]) -> None:
    """Set what :func:`declare_ops` runs (``paddle_nb/__init__.py``: the public API)."""
    _ops.loader = loader


def declare_ops() -> None:
    """Load whatever declares the ops, once; the registry calls this before each answer
    (a flag test once they are loaded). A call from the thread that is loading them (an
    op module asking the registry while it is imported) returns at once; other threads
    wait until every op is registered."""
    if _ops.done:
        return
    if OPS in sys.modules:
        # The ops package is imported, or is being imported (an op module registering, in
        # the thread that imports them): the registry has, or is getting, every op. Loading
        # the API now would import the builders while one of them may be importing the ops
        # (``import paddle_nb.layers`` as a program's first line).
        return
    with _lock:
        if _ops.done or _ops.loading or _ops.loader is None:
            return
        _ops.loading = True
        try:
            _ops.loader()
            _ops.done = True
        finally:
            _ops.loading = False
