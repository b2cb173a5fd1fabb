"""A PaddlePaddle program file opened from JupyterLab's file browser.

Double-clicking ``model.pdmodel`` (or a Fluid ``__model__``) opens a *Paddle program* tab.
The tab draws the program with the notebook's own ProgramView (notebook/views/program_view.js),
but no kernel runs behind it: the Jupyter server holds the ProgramView object here, and
the tab sends it what a notebook's widget manager would send a kernel (trait changes, the
view's messages) through the handlers in ``handlers.py``. So what the tab shows is computed
by the same Python as in a notebook, and a program file can be read without starting a
kernel or importing anything into one.

The parameters come from the file beside the program when there is one: ``X.pdiparams``
for ``X.pdmodel`` (Paddle 2's combined file), ``__params__`` or one file per variable for a
``__model__`` (Fluid's). A program that runs is one step away: :func:`notebook_for` writes
a notebook that loads both and opens the step debugger on them.

Everything read here comes from a user's folder, so it goes through the loaders' checks
(regular files only, size caps, program bytes checked before protobuf parses them), and a
path must stay inside the server's root folder.
"""
from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import PaddleNBError
from ..core.program import Program
from ..core.scope import Scope
from ..io.files import read_file
from ..io.variables import is_persistable, load_vars

PROGRAM_SUFFIXES = (".pdmodel",)
PROGRAM_NAMES = ("__model__",)
# A ProgramView's synced traits the tab reads (the widget's own layout traits are not).
VIEW_TRAITS = ("model", "svg", "graph_text", "selected", "highlight", "running",
               "breakpoints", "debug", "tab", "collapsed", "graph_groups")
# Opened programs kept (by path and modification time), so a tab's clicks reach the view
# that drew it; the oldest is dropped past this many.
KEEP_OPENED = 8


class ProgramFileError(PaddleNBError):
    """A program file the tab cannot open: outside the root, missing, not a program."""


def is_program_file(path: str) -> bool:
    name = os.path.basename(path)
    return name in PROGRAM_NAMES or name.endswith(PROGRAM_SUFFIXES)


def resolve(root_dir: str, path: str) -> str:
    """The absolute path of ``path`` (relative to the server's root, as the file browser
    names it), refused when it leaves the root or is not a regular file."""
    if not isinstance(path, str) or not path or "\x00" in path:
        raise ProgramFileError(f"no program path given (got {path!r})")
    root = os.path.realpath(root_dir)
    full = os.path.realpath(os.path.join(root, path.lstrip("/")))
    if os.path.commonpath([root, full]) != root:
        raise ProgramFileError(f"{path}: outside the folder this server serves")
    if not os.path.isfile(full):
        raise ProgramFileError(f"{path}: no such file")
    return full


def params_source(model_path: str) -> tuple[str, str | None] | None:
    """(folder, combined file name or None for one file per variable) of the parameters
    beside a program file, or None where there are none."""
    folder, name = os.path.split(model_path)
    if name.endswith(".pdmodel"):
        combined = name[:-len(".pdmodel")] + ".pdiparams"
        return (folder, combined) if os.path.isfile(os.path.join(folder, combined)) else None
    if os.path.isfile(os.path.join(folder, "__params__")):
        return folder, "__params__"
    others = [n for n in os.listdir(folder) if n != name and not n.startswith(".")]
    return (folder, None) if others else None


def feeds_and_fetches(program: Program) -> tuple[list[dict], list[str]]:
    """The inputs (name, shape, dtype) in feed-op column order, and the fetched names; a
    program without feed ops (a training program saved whole) feeds its data variables."""
    gb = program.global_block()
    feeds, fetches = [], []
    for op in gb.ops:
        if op.type == "feed" and op.output("Out"):
            feeds.append((op.attr("col", 0), op.output("Out")[0]))
        elif op.type == "fetch" and op.input("X"):
            fetches.append((op.attr("col", 0), op.input("X")[0]))
    names = [n for _, n in sorted(feeds)] if feeds else \
        [v.name for v in gb.vars.values() if v.desc.need_check_feed]
    out = []
    for n in names:
        var = gb.var(n) if gb.has_var(n) else None
        out.append({"name": n, "shape": list(var.shape) if var is not None else [],
                    "dtype": str(np.dtype(var.dtype)) if var is not None else "float32"})
    return out, [n for _, n in sorted(fetches)]


def _summary(name: str, a) -> dict:
    a = np.asarray(a)
    entry = {"name": name, "shape": list(a.shape), "dtype": str(a.dtype)}
    if a.size and a.dtype.kind in "fiub":
        entry.update(min=float(a.min()), max=float(a.max()))
    return entry


@dataclass
class OpenedProgram:
    """One program file as the tab shows it: the program, its parameters in a scope of
    its own, and the ProgramView that draws it."""
    path: str                       # as the file browser names it
    full_path: str
    program: Program
    scope: Scope
    feeds: list
    fetches: list
    params: list = field(default_factory=list)
    params_file: str | None = None
    params_note: str = ""
    view: object = None

    def state(self) -> dict:
        """What the tab draws: the ProgramView's traits and the file's facts."""
        traits = {name: getattr(self.view, name) for name in VIEW_TRAITS}
        return {"path": self.path, "traits": traits, "feeds": self.feeds,
                "fetches": self.fetches, "params": self.params,
                "params_file": self.params_file, "params_note": self.params_note,
                "ops": sum(len(b.ops) for b in self.program.blocks),
                "blocks": len(self.program.blocks)}

    def apply(self, changes: dict) -> None:
        """Trait changes the page made (a click selecting an op, a tab switch)."""
        unknown = sorted(set(changes) - set(VIEW_TRAITS))
        if unknown:
            raise ProgramFileError(f"the program view has no trait {', '.join(unknown)}")
        with self.view.hold_sync():
            for name, value in changes.items():
                setattr(self.view, name, value)

    def message(self, content: dict) -> None:
        """A message the page sent the view (``model.send``), as a kernel would get it."""
        self.view._handle_custom_msg(content, [])


def _load_params(opened: OpenedProgram) -> None:
    source = params_source(opened.full_path)
    if source is None:
        opened.params_note = "no parameter file beside the program"
        return
    folder, filename = source
    opened.params_file = filename
    try:
        load_vars(None, folder, opened.program, predicate=is_persistable, filename=filename,
                  scope=opened.scope)
    except PaddleNBError as e:
        opened.params_note = f"parameters not loaded: {e}"
        return
    gb = opened.program.global_block()
    opened.params = [_summary(v.name, opened.scope.find_var(v.name).get())
                     for v in gb.vars.values() if is_persistable(v) and
                     opened.scope.find_var(v.name) is not None]
    opened.params_note = (f"{len(opened.params)} persistable tensors loaded from "
                          f"{filename or 'one file per variable'}")


def load(root_dir: str, path: str) -> OpenedProgram:
    """Read, check and parse the program at ``path`` and load its parameters."""
    from ..notebook.widgets import ProgramView   # noqa: PLC0415 (needs the notebook extra)
    full = resolve(root_dir, path)
    if not is_program_file(full):
        raise ProgramFileError(f"{path}: not a program file (a .pdmodel or __model__)")
    try:
        program = Program.from_bytes(read_file(full, "the program", "MAX_PROGRAM_BYTES"))
    except PaddleNBError as e:
        raise ProgramFileError(f"{path}: {e}") from None
    feeds, fetches = feeds_and_fetches(program)
    opened = OpenedProgram(path=path, full_path=full, program=program, scope=Scope(),
                           feeds=feeds, fetches=fetches)
    _load_params(opened)
    opened.view = ProgramView(program)
    return opened


class OpenedPrograms:
    """The programs the tabs show, by path; reopened when the file changed on disk."""

    def __init__(self, root_dir: str):
        self.root_dir = root_dir
        self._lock = threading.Lock()
        self._opened: dict[str, tuple[float, OpenedProgram]] = {}

    def get(self, path: str) -> OpenedProgram:
        full = resolve(self.root_dir, path)
        stamp = os.stat(full).st_mtime_ns
        with self._lock:
            kept = self._opened.get(path)
            if kept is not None and kept[0] == stamp:
                return kept[1]
        opened = load(self.root_dir, path)
        with self._lock:
            self._opened[path] = (stamp, opened)
            while len(self._opened) > KEEP_OPENED:
                self._opened.pop(next(iter(self._opened)))
        return opened


# --- the notebook that runs it -------------------------------------------------------------
def _feed_line(feed: dict) -> str:
    shape = tuple(1 if d is None or d < 0 else int(d) for d in feed["shape"]) or (1,)
    kind = np.dtype(feed["dtype"]).kind
    value = (f"rng.standard_normal({shape}).astype(np.{feed['dtype']})" if kind == "f" else
             f"np.zeros({shape}, np.{feed['dtype']})")
    return f"    {feed['name']!r}: {value},"


def notebook_for(opened: OpenedProgram) -> dict:
    """A notebook (nbformat 4, as a dict) that loads the program and its parameters and
    opens the step debugger on a made-up input; it lives beside the program file."""
    import nbformat   # noqa: PLC0415 (the notebook extra)
    name = os.path.basename(opened.full_path)
    v4 = nbformat.v4
    if opened.feeds and opened.fetches and opened.params_file is not None:
        load_code = (
            f"program, feed_names, fetch_targets = pd.io.load_inference_model(\n"
            f"    '.', exe, model_filename={name!r}, params_filename={opened.params_file!r},\n"
            f"    scope=scope)")
    else:
        load_code = (
            f"program = pd.Program.from_bytes(open({name!r}, 'rb').read())\n"
            + (f"pd.io.load_persistables(exe, '.', program, filename={opened.params_file!r}, "
               f"scope=scope)\n" if opened.params else "")
            + f"fetch_targets = {opened.fetches!r}")
    feed_lines = "\n".join(_feed_line(f) for f in opened.feeds)
    cells = [
        v4.new_markdown_cell(
            f"# {name}\n\nThe program in `{name}`"
            + (f" with its parameters from `{opened.params_file}`" if opened.params else "")
            + ", loaded by paddle_nb. Run the cells, then step through it with the "
            "debugger's buttons (Step, Back, Over, Out, Continue)."),
        v4.new_code_cell(
            "import numpy as np\nimport paddle_nb as pd\n"
            "from paddle_nb.notebook.widgets import DebuggerView, ProgramView\n\n"
            "exe = pd.Executor(pd.CPUPlace())\nscope = pd.Scope()\n" + load_code
            + "\nProgramView(program)"),
        v4.new_markdown_cell("A made-up input of the shapes the program declares (-1, the "
                             "batch, taken as 1): put real data here."),
        v4.new_code_cell("rng = np.random.default_rng(0)\nfeed = {\n" + feed_lines + "\n}"),
        v4.new_code_cell("dbg = DebuggerView.from_program(program, feed=feed, "
                         "fetch_list=fetch_targets, scope=scope)\ndbg"),
    ]
    nb = v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    return nb


def write_notebook(opened: OpenedProgram) -> str:
    """Write :func:`notebook_for` beside the program (``X.ipynb`` for ``X.pdmodel``,
    ``model.ipynb`` for ``__model__``) unless a notebook of that name exists, which is
    kept as the user left it; returns its path as the file browser names it."""
    import nbformat   # noqa: PLC0415
    folder, name = os.path.split(opened.full_path)
    stem = "model" if name in PROGRAM_NAMES else os.path.splitext(name)[0]
    target = os.path.join(folder, stem + ".ipynb")
    if not os.path.exists(target):
        nbformat.write(nbformat.from_dict(notebook_for(opened)), target)
    rel_folder = os.path.dirname(opened.path.lstrip("/"))
    return f"{rel_folder}/{stem}.ipynb" if rel_folder else f"{stem}.ipynb"
