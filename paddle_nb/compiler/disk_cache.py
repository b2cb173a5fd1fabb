"""Compiled segments on disk, so that a second process compiles nothing.

A segment's source is written once to a file named by a hash of the source and of the
code it calls (every ``.py`` file of ``paddle_nb/kernels``, ``paddle_nb/ops`` and this
package: an edit to any gives new names), and compiled with numba's own disk cache
(``cache=True``), which keys it on that file and on the argument types. Its types are the
dtypes, ranks and layouts of the arrays, never their sizes: another batch size reuses the
machine code in memory and on disk.

The folder is ``$PADDLE_NB_CACHE_DIR/segments``, else ``~/.cache/paddle_nb/segments``
(a temporary folder where neither can be written: compiled again per process).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
import threading
from pathlib import Path

from numba import njit

_PACKAGE = Path(__file__).resolve().parent.parent
_STAMP: str | None = None
_LOADED: dict[str, object] = {}        # file name -> its compiled function, this process
_LOCK = threading.Lock()


def code_stamp() -> str:
    """A hash of the code a segment may call or inline (computed once per process)."""
    global _STAMP
    if _STAMP is None:
        h = hashlib.sha256()
        for folder in ("kernels", "ops", "compiler", "backends"):
            for path in sorted((_PACKAGE / folder).rglob("*.py")):
                h.update(str(path.relative_to(_PACKAGE)).encode())
                h.update(path.read_bytes())
        _STAMP = h.hexdigest()[:16]
    return _STAMP


def folder() -> Path:
    """Where segment files live (made on first use)."""
    base = os.environ.get("PADDLE_NB_CACHE_DIR")
    root = Path(base) if base else Path.home() / ".cache" / "paddle_nb"
    path = root / "segments"
    try:
        path.mkdir(parents=True, exist_ok=True)
        if os.access(path, os.W_OK):
            return path
    except OSError:
        pass
    path = Path(tempfile.gettempdir()) / f"paddle_nb_segments_{os.getuid()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def _origins(scope: dict) -> str:
    """Where each function the source calls is defined (``module.qualname`` and its file:
    a sub-block's compiled step is a segment file of its own): two sources alike but
    calling different functions of one name are different segments."""
    out = []
    for name, value in sorted(scope.items()):
        fn = getattr(value, "py_func", value)
        if callable(fn) and hasattr(fn, "__code__"):
            where = os.path.basename(fn.__code__.co_filename)
            out.append(f"{name}={fn.__module__}.{fn.__qualname__}@{where}")
    return ";".join(out)


def compiled(text: str, name: str, scope: dict):
    """The njit function ``name`` that ``text`` defines, calling ``scope``'s globals;
    one per distinct source (and functions it calls) in a process."""
    digest = hashlib.sha256((code_stamp() + text + _origins(scope)).encode()).hexdigest()[:24]
    file_name = f"segment_{digest}.py"
    fn = _LOADED.get(file_name)
    if fn is not None:
        return fn
    with _LOCK:
        fn = _LOADED.get(file_name)
        if fn is not None:
            return fn
        path = folder() / file_name
        if not path.exists() or path.read_text() != text:
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text)
            os.replace(tmp, path)          # whole or not at all, for another process
        globals_ = dict(scope)
        exec(compile(text, str(path), "exec"), globals_)   # noqa: S102 (our own source)
        py_func = globals_[name]
        py_func.__module__ = __name__         # a real module: numba imports it
        fn = njit(cache=True, error_model="numpy")(py_func)
        _LOADED[file_name] = fn
        return fn
