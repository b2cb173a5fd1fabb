"""The places' backends (paddle_nb/backends): the old import path still works, and the
layer sits where its docstring says, between the kernels and the op families."""
from __future__ import annotations

import ast
import pathlib

import paddle_nb.backends as backends

PACKAGE = pathlib.Path(backends.__file__).resolve().parent.parent


def test_the_old_path_paddle_nb_ops_places_gives_the_same_classes():
    """Notebooks (the course's, and those "Open in a notebook" wrote) import it so."""
    from paddle_nb.ops import places    # noqa: PLC0415 (the old path is what is tested)
    assert places.CPU is backends.CPU and places.CUDA is backends.CUDA
    assert places.CPU.name == "cpu" and places.CUDA.name == "cuda"


def _imported(path: pathlib.Path) -> set[str]:
    """The paddle_nb modules ``path`` imports, anywhere in it, as dotted names."""
    package = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            base = package.split(".")[:len(package.split(".")) - node.level + 1] \
                if node.level else []
            found.add(".".join(base + ([node.module] if node.module else [])))
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return {name for name in found if name.startswith("paddle_nb")}


def test_backends_import_kernels_and_core_only_and_kernels_nothing_of_the_package_above():
    for path in sorted((PACKAGE / "backends").glob("*.py")):
        above = {m for m in _imported(path)
                 if not m.startswith(("paddle_nb.kernels", "paddle_nb.core",
                                      "paddle_nb.backends"))}
        assert not above, f"{path.name} imports {sorted(above)}"
    for path in sorted((PACKAGE / "kernels").rglob("*.py")):
        above = {m for m in _imported(path) if not m.startswith("paddle_nb.kernels")}
        assert not above, f"kernels/{path.relative_to(PACKAGE / 'kernels')} imports {above}"
