"""A PaddlePaddle program file opened from JupyterLab's file browser.

Double-clicking ``model.pdmodel`` (or a Fluid ``__model__``, or Paddle 3's ``model.json``
beside its ``model.pdiparams``) opens a *Paddle program* tab.
The tab draws the program with the notebook's own ProgramView (notebook/views/program_view.js),
but no kernel runs behind it: the Jupyter server holds the ProgramView object here, and
the tab sends it what a notebook's widget manager would send a kernel (trait changes, the
view's messages) through the handlers in ``handlers.py``. So what the tab shows is computed
by the same Python as in a notebook, and a program file can be read without starting a
kernel or importing anything into one.

The parameters come from the file beside the program when there is one: ``X.pdiparams``
for ``X.pdmodel`` (Paddle 2's combined file) and for ``X.json`` (Paddle 3's PIR program:
JSON text, which ``io/pir`` translates into the same Program), ``__params__`` or one file
per variable for a ``__model__`` (Fluid's). The tab lists them from their headers
(``parameters.py``: no tensor is held). A program that runs is one step away:
``notebook_file.py`` writes a notebook that loads both and opens the step debugger on them.

Everything read here comes from a user's folder, so it goes through the loaders' checks
(regular files only, size caps, program bytes checked before protobuf parses them), and a
path must stay inside the server's root folder.

**What the server holds.** :class:`OpenedPrograms` keeps each open program (its view and
the facts the tab shows) while a tab shows it: a tab says when it opens and closes (its
id, so two tabs on one file are counted apart), and a program no tab shows is freed at
once. Whatever tabs a browser lost without closing them (a reload) are bounded too: at
most ``KEEP_OPENED`` programs, and at most ``MAX_HELD_BYTES`` accounted for all of them,
the least recently used going first (a tab whose program went is given it again, anew,
on its next request).
"""
from __future__ import annotations

import json
import os
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ..core.errors import PaddleNBError, ProgramFormatError
from ..core.program import Program
from ..io.files import read_file
from ..io.pir import program_from_pir
from ..notebook.widgets import ProgramView, view_asset  # noqa: F401 (the asset route's)
from . import parameters, request_bodies
from .notebook_file import write_notebook

PIR_SUFFIX = ".json"               # Paddle 3's PIR programs (any .json may be tried)
PROGRAM_SUFFIXES = (".pdmodel", PIR_SUFFIX)
PROGRAM_NAMES = ("__model__",)
# A ProgramView's synced traits the tab reads (the widget's own layout traits are not).
VIEW_TRAITS = ("model", "svg", "graph_text", "selected", "highlight", "running",
               "breakpoints", "debug", "tab", "collapsed", "graph_groups")
KEEP_OPENED = 8                   # programs held at most, shown or not
MAX_HELD_BYTES = 1024 * 2 ** 20   # accounted for all of them (see OpenedProgram.held_bytes)
# What a program holds in this process for each byte of it we can count, measured on a
# program of 2,000 blocks (0.9 MB file, 8 MB of JSON state; 63 MB RSS in all): the parsed
# program (a SymbolTable and its dicts per block: 32 MB) and the view's dicts and strings.
PROGRAM_BYTES_HELD = 32
STATE_BYTES_HELD = 4


class ProgramFileError(PaddleNBError):
    """A program file the tab cannot open: outside the root, missing, not a program.
    ``status``: the HTTP status the route answers with."""

    def __init__(self, message: str, status: int = 400):
        super().__init__(message)
        self.status = status


def is_program_file(path: str) -> bool:
    name = os.path.basename(path)
    return name in PROGRAM_NAMES or name.endswith(PROGRAM_SUFFIXES)


def inside(root_dir: str, path: str) -> bool:
    """Whether ``path``, links followed, is in the folder ``root_dir``."""
    root = os.path.realpath(root_dir)
    return os.path.commonpath([root, os.path.realpath(path)]) == root


def resolve(root_dir: str, path: str) -> str:
    """The absolute path of ``path`` (relative to the server's root, as the file browser
    names it), refused when it leaves the root or is not a regular file."""
    if not isinstance(path, str) or not path or "\x00" in path:
        raise ProgramFileError(f"no program path given (got {path!r})")
    full = os.path.realpath(os.path.join(os.path.realpath(root_dir), path.lstrip("/")))
    if not inside(root_dir, full):
        raise ProgramFileError(f"{path}: outside the folder this server serves", 403)
    if not os.path.isfile(full):
        raise ProgramFileError(f"{path}: no such file", 404)
    return full


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


@dataclass
class OpenedProgram:
    """One program file as the tab shows it: the program, the facts about its parameters,
    and the ProgramView that draws it. Its view is used by one thread at a time (``lock``:
    the server answers requests on a pool of threads)."""
    path: str                       # as the file browser names it
    full_path: str
    root_dir: str
    program: Program
    program_bytes: int
    feeds: list
    fetches: list
    stamp: tuple = ()               # the files as they were read (reopened when changed)
    params: list = field(default_factory=list)
    params_file: str | None = None
    params_note: str = ""
    view: object = None
    holders: set = field(default_factory=set)     # ids of the tabs showing it
    held_bytes: int = 0             # accounted (PROGRAM_BYTES_HELD, STATE_BYTES_HELD)
    last_used: float = field(default_factory=time.monotonic)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def state(self) -> dict:
        """What the tab draws: the ProgramView's traits and the file's facts."""
        traits = {name: getattr(self.view, name) for name in VIEW_TRAITS}
        return {"path": self.path, "traits": traits, "feeds": self.feeds,
                "fetches": self.fetches, "params": self.params,
                "params_file": self.params_file, "params_note": self.params_note,
                "ops": sum(len(b.table.ops) for b in self.program.blocks),
                "blocks": len(self.program.blocks)}

    def state_json(self) -> str:
        """:meth:`state` as the route sends it; what the program holds is recounted."""
        text = json.dumps(self.state())
        self.held_bytes = self.program_bytes * PROGRAM_BYTES_HELD + len(text) * STATE_BYTES_HELD
        return text

    def apply(self, changes: dict) -> None:
        """Trait changes the page made (a click selecting an op, a tab switch), checked
        (request_bodies.view_changes: the traits the page may set, their types)."""
        changes = request_bodies.view_changes(changes)
        with self.view.hold_sync():
            for name, value in changes.items():
                setattr(self.view, name, value)

    def message(self, content: dict) -> None:
        """A message the page sent the view (``model.send``), as a kernel would get it."""
        self.view._handle_custom_msg(request_bodies.view_message(content), [])

    def close(self) -> None:
        """Let the view go: a widget is kept in ipywidgets' registry of every widget until
        it is closed, so without this no closed tab's view was ever freed."""
        if self.view is not None:
            self.view.layout.close()       # the view's own child widget, registered too
            self.view.close()


def _stamp(full: str) -> tuple:
    """What says the files changed: the program's and its parameter file's times and
    sizes."""
    st = os.stat(full)
    stamp = (st.st_mtime_ns, st.st_size)
    source = parameters.params_source(full)
    if source is not None and source[1] is not None:
        p = os.stat(os.path.join(*source))
        stamp += (p.st_mtime_ns, p.st_size)
    return stamp


def _load_params(opened: OpenedProgram) -> None:
    source = parameters.params_source(opened.full_path)
    if source is None:
        opened.params_note = "no parameter file beside the program"
        return
    folder, filename = source
    opened.params_file = filename
    try:
        opened.params = parameters.summaries(opened.program, folder, filename,
                                             lambda p: inside(opened.root_dir, p))
    except PaddleNBError as e:
        opened.params_note = f"parameters not loaded: {e}"
        return
    opened.params_note = (f"{len(opened.params)} persistable tensors in "
                          f"{filename or 'one file per variable'}")


def _read_program(full: str, path: str) -> tuple[Program, int]:
    """The program in the file and its size as a ProgramDesc (what PROGRAM_BYTES_HELD
    counts): a ProgramDesc's bytes, or a PIR ``.json`` translated (its JSON text, a few
    times bulkier, is not what the server holds afterwards)."""
    pir = full.endswith(PIR_SUFFIX)
    try:
        if not pir:
            data = read_file(full, "the program", "MAX_PROGRAM_BYTES")
            return Program.from_bytes(data), len(data)
        program = program_from_pir(bytes(read_file(full, "the PIR program", "MAX_PIR_BYTES")))
        return program, len(program.to_bytes())
    except ProgramFormatError as e:
        if pir:      # any .json may be opened with the tab: say what it was read as
            raise ProgramFileError(f"{path} (read as a Paddle 3 PIR program, the model.json "
                                   f"paddle.jit.save writes): {e}") from None
        raise ProgramFileError(f"{path}: {e}") from None
    except PaddleNBError as e:
        raise ProgramFileError(f"{path}: {e}") from None


def load(root_dir: str, path: str) -> OpenedProgram:
    """Read, check and parse the program at ``path`` and list its parameters."""
    full = resolve(root_dir, path)
    if not is_program_file(full):
        raise ProgramFileError(f"{path}: not a program file (a .pdmodel, a Paddle 3 "
                               f"model.json or a __model__)")
    stamp = _stamp(full)
    program, program_bytes = _read_program(full, path)
    feeds, fetches = feeds_and_fetches(program)
    opened = OpenedProgram(path=path, full_path=full, root_dir=root_dir, program=program,
                           program_bytes=program_bytes, feeds=feeds, fetches=fetches,
                           stamp=stamp)
    _load_params(opened)
    opened.view = ProgramView(program, source=os.path.basename(full))
    opened.state_json()           # counts what it holds
    return opened


class OpenedPrograms:
    """The programs the tabs show, by path; reopened when the file changed on disk, freed
    when no tab shows them, bounded in number and size (see the module doc)."""

    def __init__(self, root_dir: str, keep: int = KEEP_OPENED,
                 max_held_bytes: int = MAX_HELD_BYTES):
        self.root_dir = root_dir
        self.keep, self.max_held_bytes = keep, max_held_bytes
        self._lock = threading.Lock()
        self._opened: dict[str, OpenedProgram] = {}
        self._loading: dict[str, threading.Lock] = {}   # one load of a path at a time

    def get(self, path: str, tab: str = "") -> OpenedProgram:
        """The program at ``path``, loaded now unless it is held and unchanged; ``tab``
        (a tab's id): that tab shows it from now on."""
        full = resolve(self.root_dir, path)
        try:
            stamp = _stamp(full)
        except OSError as e:
            raise ProgramFileError(f"{path}: {e.strerror or e}", 404) from None
        with self._lock:
            gate = self._loading.setdefault(path, threading.Lock())
        with gate:                     # a second tab on the same file waits for this load
            with self._lock:
                kept = self._opened.get(path)
                if kept is not None and kept.stamp == stamp:
                    return self._use(kept, tab)
            opened = load(self.root_dir, path)
            with self._lock:
                old = self._opened.pop(path, None)
                if old is not None:    # changed on disk: its tabs show the new one
                    opened.holders |= old.holders
                    old.close()
                self._opened[path] = opened
                return self._use(opened, tab)

    def _use(self, opened: OpenedProgram, tab: str) -> OpenedProgram:
        if tab:
            opened.holders.add(tab)
        opened.last_used = time.monotonic()
        self._evict(keep=opened)
        return opened

    def release(self, path: str, tab: str) -> int:
        """Tab ``tab`` no longer shows ``path``; the program is freed when no tab does.
        Returns how many tabs still show it."""
        with self._lock:
            opened = self._opened.get(path)
            if opened is None:
                return 0
            opened.holders.discard(tab)
            if opened.holders:
                return len(opened.holders)
            del self._opened[path]
            self._loading.pop(path, None)
        opened.close()
        return 0

    def held(self) -> dict:
        """What is held, for a person (and the tests): programs, tabs, bytes accounted."""
        with self._lock:
            return {"programs": len(self._opened),
                    "tabs": sum(len(o.holders) for o in self._opened.values()),
                    "held_bytes": sum(o.held_bytes for o in self._opened.values())}

    def recount(self) -> None:
        """After an answer changed what a program holds (a new svg): keep within bounds."""
        with self._lock:
            self._evict(keep=None)

    def _evict(self, keep: OpenedProgram | None) -> None:
        """Free programs past the bounds: those no tab shows first, then the least
        recently used; never ``keep`` (the one being answered). Called with the lock."""
        def over() -> bool:
            return len(self._opened) > self.keep or \
                sum(o.held_bytes for o in self._opened.values()) > self.max_held_bytes
        order = sorted(self._opened.items(), key=lambda kv: (bool(kv[1].holders),
                                                             kv[1].last_used))
        for path, opened in order:
            if not over():
                break
            if opened is keep:
                continue
            del self._opened[path]
            self._loading.pop(path, None)
            opened.close()

    def notebook(self, path: str) -> str:
        """Write the notebook that runs ``path`` (notebook_file.write_notebook)."""
        opened = self.get(path)
        with opened.lock:
            return write_notebook(opened)
