"""What notebooks import keeps working after a module moves.

The debugger, its timeline, the first bad value, the ``%%paddle`` session and the user's
names moved from ``paddle_nb/notebook/`` to ``paddle_nb/interactive/`` (they need no
IPython); the course's notebooks, notebooks that "Open in a notebook" wrote to users'
disks (``paddle_nb/lab/notebook_file.py``) and users' own code import the old paths.
"""
from __future__ import annotations

import ast
import importlib
import json
import pathlib
import subprocess
import sys
from types import SimpleNamespace

import pytest

from paddle_nb.lab import notebook_file

ROOT = pathlib.Path(__file__).resolve().parent.parent

MOVED = {   # old path: (new path, the names the old path still gives)
    "paddle_nb.notebook.debugger": ("paddle_nb.interactive.debugger",
                                    ["Debugger", "DebuggerError", "DEFAULT_HISTORY_BYTES",
                                     "BadValue", "find_bad_value"]),
    "paddle_nb.notebook.history": ("paddle_nb.interactive.history",
                                   ["Timeline", "Record", "Snap", "copy_value", "nbytes"]),
    "paddle_nb.notebook.bad_value": ("paddle_nb.interactive.bad_value",
                                     ["BadValue", "find_bad_value"]),
    "paddle_nb.notebook.session": ("paddle_nb.interactive.session",
                                   ["Notebook", "NotebookProgram", "CellRecord", "CellNames"]),
    "paddle_nb.notebook.user_names": ("paddle_nb.interactive.user_names",
                                      ["user_name", "shown_name", "user_names_of"]),
}


@pytest.mark.parametrize("old", sorted(MOVED))
def test_a_moved_module_is_still_importable_from_its_old_path(old):
    new, names = MOVED[old]
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(old_module, name) is getattr(new_module, name), (old, name)


def _imports(source: str) -> list[tuple[str, list[str]]]:
    """``(module, names)`` of every ``from paddle_nb... import ...`` in ``source``."""
    try:
        tree = ast.parse(source)
    except SyntaxError:          # a cell with IPython syntax (%%paddle): its lines
        return [x for line in source.splitlines() if line.startswith("from paddle_nb")
                for x in _imports(line)]
    return [(n.module, [a.name for a in n.names]) for n in ast.walk(tree)
            if isinstance(n, ast.ImportFrom) and (n.module or "").startswith("paddle_nb")]


def _resolves(module: str, name: str) -> bool:
    """``from module import name`` works: a name in the module, or a submodule."""
    imported = importlib.import_module(module)
    if hasattr(imported, name):
        return True
    try:
        importlib.import_module(f"{module}.{name}")
    except ModuleNotFoundError:
        return False
    return True


def _notebook_imports() -> list[tuple[str, list[str]]]:
    found = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                found += _imports("".join(cell["source"]))
    return found


def test_every_import_of_the_course_notebooks_resolves():
    found = _notebook_imports()
    assert any(m == "paddle_nb.notebook.selfcheck" for m, _ in found)     # the scan works
    for module, names in found:
        for name in names:
            assert _resolves(module, name), f"{module}.{name} (a notebook imports it)"


@pytest.mark.parametrize("name", ["m.pdmodel", "model.json"])
def test_the_imports_of_a_notebook_open_in_a_notebook_writes_resolve(name):
    """The server's "Open in a notebook" writes cells that import the views by path."""
    opened = SimpleNamespace(full_path=f"/data/{name}", feeds=[], fetches=[],
                             params_file=None, params=[])
    cells = notebook_file.notebook_for(opened)["cells"]
    found = [x for c in cells if c["cell_type"] == "code" for x in _imports(c["source"])]
    assert any(m == "paddle_nb.notebook.widgets" for m, _ in found), found
    for module, names in found:
        for name in names:
            assert _resolves(module, name), f"{module}.{name} (a written notebook imports it)"


def test_pd_notebook_is_there_without_ipython():
    """``pd.notebook.program()`` is the course's way to the cells' programs: the package
    gives ``pd.notebook`` with the API, and importing it loads no IPython."""
    code = ("import sys, paddle_nb as pd; pd.notebook.program; pd.Debugger; "
            "print([m for m in ('IPython', 'anywidget', 'ipywidgets') if m in sys.modules])")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
