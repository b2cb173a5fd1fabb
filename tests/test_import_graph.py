"""The package's imports form layers: no import circle between its modules, imports inside
functions included, and the low layers never reach up.

An import circle held open by a function-level import works until someone moves that
import, and it hides which module is built on which; so the scan reads every ``import``
statement of every module, wherever it stands, and resolves relative imports. The
layers are the ones docs/architecture.md draws: ``kernels/`` imports only numba and numpy;
``core/`` imports only itself, the kernels and ``lazy.py``; nothing below the front end
imports it.
"""
from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest

PACKAGE = pathlib.Path(__file__).resolve().parent.parent / "paddle_nb"


def _modules() -> dict[str, pathlib.Path]:
    """Dotted module name -> file, for every .py file of the package."""
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported(module: str, path: pathlib.Path, node) -> list[str]:
    """The package's modules an import statement names (the deepest existing module of
    each name: ``from .core import registry`` is core.registry, ``import numpy`` nothing)."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        if node.level:
            base = module.split(".")
            if path.name != "__init__.py":
                base = base[:-1]
            base = base[:len(base) - (node.level - 1)]
            prefix = ".".join(base + ([node.module] if node.module else []))
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{alias.name}" if f"{prefix}.{alias.name}" in MODULES else prefix
                 for alias in node.names]
    found = []
    for name in names:
        while name and name not in MODULES:
            name = name.rpartition(".")[0]
        if name and name != module:
            found.append(name)
    return found


def _graph() -> dict[str, dict[str, int]]:
    """module -> {imported module: line of the first import of it}, every import counted."""
    graph = {}
    for module, path in MODULES.items():
        edges: dict[str, int] = {}
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(module, path, node):
                    edges.setdefault(target, node.lineno)
        graph[module] = edges
    return graph


GRAPH = _graph()


def _circles(graph) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative: the package is deeper than Python's recursion limit would like)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, targets = work[-1]
            advanced = False
            for target in targets:
                if target not in index:
                    index[target] = low[target] = counter
                    counter += 1
                    stack.append(target)
                    on_stack.add(target)
                    work.append((target, iter(graph[target])))
                    advanced = True
                    break
                if target in on_stack:
                    low[node] = min(low[node], index[target])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def _explain(component: list[str]) -> str:
    members = set(component)
    lines = [f"import circle of {len(component)} modules:"]
    for module in component:
        for target, line in sorted(GRAPH[module].items()):
            if target in members:
                lines.append(f"  {MODULES[module].relative_to(PACKAGE.parent)}:{line} "
                             f"imports {target}")
    return "\n".join(lines)


def test_the_scan_sees_the_package():
    assert len(MODULES) > 200 and "paddle_nb.core.executor" in MODULES
    assert "paddle_nb.core.registry" in GRAPH["paddle_nb.core.executor"] or \
        "paddle_nb.core.prepared" in GRAPH["paddle_nb.core.executor"]


def test_the_scan_finds_a_circle_through_a_function_level_import():
    graph = {"a": {"b": 1}, "b": {"c": 1}, "c": {"a": 1}, "d": {"a": 1}}
    assert _circles(graph) == [["a", "b", "c"]]
    assert _circles({"a": {"b": 1}, "b": {}}) == []


def test_no_import_circle_in_the_package():
    circles = _circles(GRAPH)
    assert not circles, "\n".join(_explain(c) for c in circles)


def _top(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


@pytest.mark.parametrize("layer, allowed", [
    ("kernels", {"kernels"}),
    ("core", {"core", "kernels", "lazy"}),
])
def test_a_low_layer_imports_nothing_above_it(layer, allowed):
    reaching_up = [f"{MODULES[m].relative_to(PACKAGE.parent)}:{line} imports {target}"
                   for m, edges in GRAPH.items() if _top(m) == layer
                   for target, line in edges.items() if _top(target) not in allowed]
    assert not reaching_up, "\n".join(reaching_up)


def test_the_packages_form_layers():
    """Folded to the package's folders (core, ops, layers, notebook, ...), the imports are
    still without a circle: each folder is built on the ones below it only."""
    folders: dict[str, dict[str, int]] = {}
    for module, edges in GRAPH.items():
        mine = folders.setdefault(_top(module) or "paddle_nb", {})
        for target, line in edges.items():
            if _top(target) != _top(module):
                mine.setdefault(_top(target) or "paddle_nb", line)
    for folder in list(folders.values()):
        for target in folder:
            folders.setdefault(target, {})
    assert not _circles(folders), _circles(folders)


# The AST scan cannot see an import made through ``lazy.py`` (the registry loads the ops on
# its first question; ``pd.<name>`` loads the public API): a program whose first line
# imports one folder must work too, with nothing imported before it.
FOLDERS = sorted({m.split(".")[1] for m in MODULES if m.count(".") >= 1
                  and MODULES[m].name == "__init__.py" and m.count(".") == 1})


@pytest.mark.parametrize("folder", FOLDERS)
def test_each_folder_imports_first_in_a_fresh_process(folder):
    result = subprocess.run([sys.executable, "-c", f"import paddle_nb.{folder}"],
                            capture_output=True, text=True, timeout=120,
                            cwd=PACKAGE.parent)
    assert result.returncode == 0, result.stderr[-2000:]
