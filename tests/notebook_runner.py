"""Run a teaching notebook the way the tests do: the solutions filled in, a real kernel.

The notebooks in ``notebooks/`` tag their cells (Jupyter cell metadata ``tags``):

* ``exercise``   a code cell with ``...`` where the student's answer goes;
* ``self-check`` a code cell after it that calls ``paddle_nb.notebook.selfcheck.check``;
* ``solution``   a markdown cell (a collapsed ``<details>``) with the answer in one
  fenced ``python`` block; the runner puts that code in place of the exercise above it;
* ``result``     a code cell ending in ``measured(caption, {...})`` (notebook/measured.py): the
  numbers the prose states (an accuracy, a loss, a design doc example's outputs), which the
  student sees as a captioned table; ``results(nb)`` merges them (read from the output's
  machine-readable part) so the tests can compare them with what the notebook promises.

    python tests/notebook_runner.py notebooks/03_rnn.ipynb   # run one, print its results
    python tests/notebook_runner.py --as-is notebooks/03_rnn.ipynb   # as a student's Run All
"""
from __future__ import annotations

import copy
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

from paddle_nb.notebook.measured import MIME as MEASURED_MIME

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
_FENCE = re.compile(r"```python\n(.*?)```", re.S)


def tags(cell) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def solution_code(cell) -> str:
    """The code of a ``solution`` markdown cell (its one fenced python block)."""
    blocks = _FENCE.findall(cell.source)
    if len(blocks) != 1:
        raise ValueError(f"solution cell {cell.get('id')} needs exactly one ```python block, "
                         f"has {len(blocks)}")
    return blocks[0].rstrip("\n")


def exercises(nb) -> list[tuple[int, int]]:
    """(exercise cell index, its solution cell index) pairs: each exercise's solution is the
    next ``solution`` cell before the next exercise."""
    pairs, open_exercise = [], None
    for i, cell in enumerate(nb.cells):
        if "exercise" in tags(cell):
            if open_exercise is not None:
                raise ValueError(f"exercise cell {open_exercise} has no solution cell")
            open_exercise = i
        elif "solution" in tags(cell):
            if open_exercise is None:
                raise ValueError(f"solution cell {i} follows no exercise")
            pairs.append((open_exercise, i))
            open_exercise = None
    if open_exercise is not None:
        raise ValueError(f"exercise cell {open_exercise} has no solution cell")
    return pairs


def fill_solutions(nb):
    """A copy of ``nb`` with every exercise cell's source replaced by its solution."""
    nb = nbformat.from_dict(nb)
    for ex, sol in exercises(nb):
        nb.cells[ex].source = solution_code(nb.cells[sol])
    return nb


def execute(path: Path, passes=("solved",), timeout: int = 600):
    """Execute the notebook at ``path`` (cwd: its folder) with widget state stored;
    returns (executed notebook, seconds). Each of ``passes`` is one Run All in the same
    kernel: ``"as-is"`` with the exercises unanswered (``...``), as the student first meets
    them, or ``"solved"`` with every exercise's solution typed in. The executed notebook
    holds the cells of every pass in turn (``pass_cells`` splits them). A failing cell
    raises nbclient's CellExecutionError, which shows the cell and the traceback."""
    nb = nbformat.read(path, as_version=4)
    versions = {"as-is": nb.cells, "solved": fill_solutions(nb).cells}
    nb.cells = [nbformat.from_dict(copy.deepcopy(dict(c))) for p in passes for c in versions[p]]
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"{cell.get('id', 'cell')}-{i}"          # ids stay unique
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}},
                            store_widget_state=True)
    t0 = time.perf_counter()
    client.execute()
    return nb, time.perf_counter() - t0


def pass_cells(nb, passes: int) -> list[list]:
    """The executed cells of each of ``passes`` Run Alls, in order."""
    n = len(nb.cells) // passes
    return [nb.cells[i * n:(i + 1) * n] for i in range(passes)]


def results(cells) -> dict:
    """The merged values the ``result`` cells among ``cells`` displayed with ``measured``."""
    out = {}
    for cell in cells:
        if "result" not in tags(cell):
            continue
        shown = [o for o in cell.get("outputs", []) if o.get("output_type") == "execute_result"
                 and MEASURED_MIME in o.get("data", {})]
        if not shown:
            raise ValueError(f"result cell {cell.get('id')} must end with measured(caption, "
                             "{...}) (it displayed no measured values)")
        out.update(shown[-1]["data"][MEASURED_MIME])
    return out


def widget_models(nb) -> dict:
    """model id -> {model_name, state} of the widget state stored in the notebook."""
    state = nb.metadata.get("widgets", {}).get("application/vnd.jupyter.widget-state+json", {})
    return state.get("state", {})


if __name__ == "__main__":
    as_is = "--as-is" in sys.argv
    for arg in (a for a in sys.argv[1:] if a != "--as-is"):
        executed, seconds = execute(Path(arg).resolve(), ("as-is",) if as_is else ("solved",))
        print(f"{arg}: {seconds:.1f} s, {len(widget_models(executed))} widget models")
        if not as_is:
            print("  results:", results(executed.cells))
