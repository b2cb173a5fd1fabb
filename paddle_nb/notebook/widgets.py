"""Notebook widgets: ProgramView, ScopeView, DebuggerView and TrainingView (anywidget).

Each widget is a small ``anywidget.AnyWidget``: Python computes plain data (the models of
``program_model.py`` and ``scope_model.py``) into synced traitlets, and one ES module in
``views/`` (beside this file) draws it. The browser decides nothing: a click is either
a trait the page sets (the selected op) or a message (``model.send({cmd: "step"})``) that
Python answers by running the debugger and updating traits. So everything a widget shows
can be tested from Python, without a browser.

    view = pd.notebook.widgets.show(program)            # the program as code and graph
    dbg = DebuggerView.from_program(main, feed=..., fetch_list=[loss], startup=startup)
    dbg                                                  # then click Step, Continue, ...
    dbg.snapshot()                                       # a still copy of what it shows now

``user_names`` (program name -> the notebook name a ``%%paddle`` cell bound to it, from
``NotebookProgram.user_names()``) makes the views say ``x`` beside ``minibatch_0``; the
magic passes it, plain Python use leaves it out and sees program names only.
"""
from __future__ import annotations

import weakref
from pathlib import Path

import anywidget
import ipywidgets
import numpy as np
import traitlets as t

from ..core import registry
from ..core.attr_tensors import read_in_scope
from ..core.errors import PaddleNBError
from ..core.executor import Executor
from ..core.program import default_main_program
from ..core.scope import current as current_scope
from ..interactive.debugger import DEFAULT_HISTORY_BYTES, Debugger
from ..interactive.user_names import shown_name, user_name
from ..passes import FAST_PATH, apply as apply_passes
from .program_graph import GROUP_OVER, collapsible, default_collapsed
from .program_model import program_graph_text, program_model, program_svg
from .scope_model import scope_model


# --- the ES modules ---------------------------------------------------------------------
def views_dir() -> Path | None:
    """Where the ES modules are: the ``paddle_nb/notebook/views`` folder (None if it is
    gone)."""
    folder = Path(__file__).resolve().parent / "views"
    return folder if (folder / "program_view.js").is_file() else None


def _asset(name: str):
    """What anywidget loads for ``name``: the stylesheet's Path, or a view's module text
    with dom.js (the element builders every view shares) in front; or a module that says
    what is missing instead of failing at import time."""
    folder = views_dir()
    if folder is not None:
        if name.endswith(".css"):
            return folder / name
        return (folder / "dom.js").read_text(encoding="utf-8") + "\n" + \
            (folder / name).read_text(encoding="utf-8")
    if name.endswith(".css"):
        return ""
    return ("export default { render({ el }) { el.textContent = "
            f"'paddle_nb: notebook/views/{name} was not found (is the package installed?)'; }} }};")


# The text, not the Path: anywidget wraps a Path in a FileContents whose `changed` signal
# holds every instance of the class (a strong lambda each), so no view was ever freed.
_CSS = _asset("widgets.css")
_CSS = _CSS.read_text(encoding="utf-8") if isinstance(_CSS, Path) else _CSS


def view_asset(name: str) -> str:
    """The text a widget loads for ``name`` (a view's module, or the stylesheet): what the
    JupyterLab extension's *Paddle program* tab loads too (paddle_nb/lab/handlers.py)."""
    asset = _asset(name)
    return asset.read_text(encoding="utf-8") if isinstance(asset, Path) else asset


def _pair(loc) -> list:
    return [int(loc[0]), int(loc[1])] if loc is not None else []


# --- ProgramView ------------------------------------------------------------------------
class ProgramView(anywidget.AnyWidget):
    """A program as nested code with an op detail pane and a graph tab.

    The graph draws each sub-block as a cluster inside its op's block; ``collapsed`` lists
    the blocks (ints) and op groups (names) drawn as one node, and ``graph_groups`` what
    can be collapsed (``program_graph.collapsible``). A program of more than
    ``GROUP_OVER`` (60) ops starts with its global block's ops in collapsed groups (layers,
    backward, optimize) and every sub-block collapsed. The page sets ``collapsed`` (a
    click on a collapsed node or a cluster's label, or a toggle); Python answers with a new
    ``svg``. A click on an op's node sets ``selected``, as a click on its code line does.

    ``source`` says where the program came from (``"cnn_infer.pdmodel"``): an op that
    records no creating line then says it was loaded from there. Given a
    ``pd.CompiledProgram``, the view shows its program and tags each op with the compiled
    segment it went into (``refresh()`` after a run reads them again). In a DebuggerView,
    ``next_op`` is the op the next Step runs (marked as the current line, as debuggers
    mark the line about to run) and ``highlight`` the op that ran last (marked apart)."""
    GROUP_OVER = GROUP_OVER
    _esm = _asset("program_view.js")
    _css = _CSS

    model = t.Dict().tag(sync=True)             # program_model(program)
    svg = t.Unicode("").tag(sync=True)          # graphviz drawing; "" without dot
    graph_text = t.Unicode("").tag(sync=True)   # the graph as text (the fallback)
    selected = t.List().tag(sync=True)          # [block, index] of the op in the detail pane
    highlight = t.List().tag(sync=True)         # [block, index] of the op that ran last
    next_op = t.List().tag(sync=True)           # [block, index] of the op that runs next
    failed = t.List().tag(sync=True)            # [block, index] of the op the run failed in
    running = t.List().tag(sync=True)           # ids "b0:1" of ops whose blocks are running
    breakpoints = t.List().tag(sync=True)       # [[block, index], ...]
    debug = t.Bool(False).tag(sync=True)        # the gutter toggles breakpoints
    tab = t.Unicode("code").tag(sync=True)      # "code" or "graph"
    collapsed = t.List().tag(sync=True)         # blocks (ints) and groups (names) shut
    graph_groups = t.List().tag(sync=True)      # collapsible(program, collapsed)

    def __init__(self, program=None, *, graph: bool | str = True,
                 user_names: dict | None = None, collapsed=None, source: str | None = None,
                 **kwargs):
        super().__init__(**kwargs)
        program = program if program is not None else default_main_program()
        # a pd.CompiledProgram (paddle_nb/compiler): its program, its segments marked
        self.compiled = program if getattr(program, "compiles_blocks", False) else None
        self.program = program.program if self.compiled is not None else program
        self.user_names = user_names
        self.source = source
        self.collapsed = list(collapsed) if collapsed is not None else \
            default_collapsed(self.program)
        self._graph = graph             # from here on a change of collapsed redraws
        self.refresh()

    def refresh(self) -> None:
        """Read the program again (after more ops were appended, or append_backward)."""
        with self.hold_sync():
            model = program_model(self.program, self.user_names, self.source)
            if self.compiled is not None:
                for block in model["blocks"]:
                    segments = self.compiled.segments(block["idx"])
                    for op in block["ops"]:
                        op["segment"] = segments.get(op["index"])
            self.model = model
            self.graph_text = program_graph_text(self.program)
            self._draw_graph()

    @t.observe("collapsed")
    def _collapsed_changed(self, _change) -> None:
        if hasattr(self, "_graph"):      # not while __init__ sets the first value
            self._draw_graph()

    def _draw_graph(self) -> None:
        # graph="on demand" (the sidebar's inspector, refreshed after every cell) runs dot
        # only while the graph tab is open, and when it is opened
        draw = self._graph is True or (self._graph == "on demand" and self.tab == "graph")
        with self.hold_sync():
            self.graph_groups = collapsible(self.program, self.collapsed)
            self.svg = (program_svg(self.program, self.user_names, self.collapsed) or "") \
                if draw else ""

    @t.observe("tab")
    def _tab_changed(self, change) -> None:
        if getattr(self, "_graph", None) == "on demand" and change["new"] == "graph":
            self._draw_graph()

    def toggle(self, key) -> None:
        """Collapse block ``key`` (int) or group ``key`` (name), or expand it: what a click
        on its node or cluster label does in the page."""
        self.collapsed = [k for k in self.collapsed if k != key] if key in self.collapsed \
            else [*self.collapsed, key]

    def select(self, block_idx: int, op_index: int) -> None:
        self.selected = [int(block_idx), int(op_index)]

    @property
    def selected_op(self) -> dict | None:
        """The model of the selected op (what the detail pane shows), or None."""
        if len(self.selected) != 2:
            return None
        b, i = self.selected
        return self.model["blocks"][b]["ops"][i]


def show(program=None) -> ProgramView:
    """A ProgramView of ``program`` (default: the default main program); the last
    expression of a cell displays it."""
    return ProgramView(program)


def show_passes(program=None, passes=None, keep=()) -> ipywidgets.HBox:
    """``program`` as written beside what ``pd.passes.apply`` makes of it (``passes``
    None: the passes Executor.run's fast path applies, ``pd.passes.FAST_PATH``), each
    in a ProgramView under a title that counts its ops."""
    program = program if program is not None else default_main_program()
    rewritten = apply_passes(program, passes=FAST_PATH if passes is None else passes, keep=keep)

    def titled(title, p):
        ops = ", ".join(f"block {b.idx}: {len(b.ops)}" for b in p.blocks)
        return ipywidgets.VBox([ipywidgets.HTML(f"<b>{title}</b> (ops in {ops})"),
                                ProgramView(p)],
                               layout=ipywidgets.Layout(flex="1 1 380px", min_width="0"))
    return _side_by_side(titled("as written", program),
                         titled(f"after {', '.join(passes or FAST_PATH)}", rewritten))


# --- ScopeView --------------------------------------------------------------------------
class ScopeView(anywidget.AnyWidget):
    """The scope forest below a scope, with values as stats, heatmaps and sparklines."""
    _esm = _asset("scope_view.js")
    _css = _CSS

    model = t.Dict().tag(sync=True)             # scope_model(scope, changed, current=...)

    def __init__(self, scope=None, *, max_preview: int = 16, user_names: dict | None = None,
                 **kwargs):
        super().__init__(**kwargs)
        self.scope = scope if scope is not None else current_scope()
        self.max_preview = max_preview
        self.user_names = user_names
        self.refresh()

    def refresh(self, changed=(), current=None) -> None:
        """Read the scopes again; ``changed`` names are highlighted (where they resolve
        from ``current``, the scope the last step ran in, whose node is marked)."""
        self.model = scope_model(self.scope, changed, self.max_preview, current=current,
                                 user_names=self.user_names)


# --- TrainingView -----------------------------------------------------------------------
LOG_SCALE_SPAN = 100    # largest / smallest loss from which the "auto" axis is logarithmic


def wants_log_scale(losses) -> bool:
    """Whether a loss curve reads better on a log axis: every loss is positive and the
    largest is more than LOG_SCALE_SPAN times the smallest. On a linear axis the first loss
    (2.3, say) then squashes everything after it into a flat line at the bottom, where the
    student cannot see whether training still improves (0.05 -> 0.01 is a fifth of the loss)."""
    finite = [v for v in losses if v is not None]
    if len(finite) < 2 or min(finite) <= 0:
        return False
    return max(finite) / min(finite) > LOG_SCALE_SPAN


class TrainingView(anywidget.AnyWidget):
    """A loss curve: call ``append(step, loss)`` in the training loop.

    ``scale`` is "auto" (logarithmic once the losses span more than LOG_SCALE_SPAN, see
    :func:`wants_log_scale`), "log" or "linear"; the page's log/linear button sets it."""
    _esm = _asset("training_view.js")
    _css = _CSS

    steps = t.List().tag(sync=True)
    losses = t.List().tag(sync=True)            # None for NaN / inf (JSON has neither)
    title = t.Unicode("loss").tag(sync=True)
    scale = t.Enum(["auto", "log", "linear"], "auto").tag(sync=True)
    log_y = t.Bool(False).tag(sync=True)        # what the page draws: the scale decided

    def __init__(self, **kwargs):
        # TrainingView(log_y=True) asks for a log axis: a choice, not "auto"
        if "log_y" in kwargs and "scale" not in kwargs:
            kwargs["scale"] = "log" if kwargs["log_y"] else "linear"
        super().__init__(**kwargs)
        self._choose_axis()

    @t.observe("scale", "losses")
    def _choose_axis(self, _change=None) -> None:
        self.log_y = self.scale == "log" or (self.scale == "auto" and
                                             wants_log_scale(self.losses))

    def append(self, step, loss) -> None:
        value = float(np.asarray(loss).reshape(-1)[0])
        # A new list each time: traitlets syncs on assignment, not on list.append.
        with self.hold_sync():
            self.steps = self.steps + [int(step)]
            self.losses = self.losses + [value if np.isfinite(value) else None]

    def clear(self) -> None:
        with self.hold_sync():
            self.steps, self.losses = [], []


# --- DebuggerView -----------------------------------------------------------------------
class DebuggerControls(anywidget.AnyWidget):
    """The debugger's button bar, status line, frame stack and results."""
    _esm = _asset("debugger_view.js")
    _css = _CSS

    status = t.Unicode("").tag(sync=True)
    state = t.Unicode("ready").tag(sync=True)   # ready | paused | finished | error
    frames = t.List().tag(sync=True)            # Debugger.frame_stack()
    results = t.List().tag(sync=True)           # [{name, user_name, text}] once finished
    still = t.Bool(False).tag(sync=True)        # a snapshot: no buttons, never updated
    can_step_back = t.Bool(False).tag(sync=True)   # the Back button is enabled
    alert = t.Unicode("").tag(sync=True)        # the first NaN/Inf (check_nan_inf), as text


class DebuggerView(ipywidgets.VBox):
    """A Debugger with buttons: the program (the op that runs next marked as the current
    line, the op that ran last marked apart, breakpoints in the gutter) next to the scope
    forest (values the last op wrote highlighted).

    Every click reaches :meth:`handle_message` as ``{"cmd": ...}``; it runs the debugger
    command and then :meth:`update` copies the debugger's state into the views.
    ``error_note(error)``, if given, returns a line to add under an error that ended the
    run (the ``%%paddle`` magic's: which cell built the failing op, and how to fix it)."""

    COMMANDS = {"step": "step", "step_over": "step_over", "step_out": "step_out",
                "continue": "cont", "run_to_end": "run_to_end"}

    def __init__(self, debugger, *, user_names: dict | None = None, error_note=None,
                 **kwargs):
        self.debugger = debugger
        self.user_names = user_names
        self.error_note = error_note
        self._planner = None       # an Executor that knows which fed ops a run skips
        self.controls = DebuggerControls()
        self.program_view, self.scope_view = _panes(debugger, user_names)
        self.program_view.debug = True
        self.last_error: BaseException | None = None
        for w in (self.controls, self.program_view):
            w.on_msg(lambda _widget, content, _buffers: self.handle_message(content))
        super().__init__([self.controls, _side_by_side(self.program_view, self.scope_view)],
                         **kwargs)
        self.update()

    @classmethod
    def from_program(cls, program=None, feed=None, fetch_list=None, startup=None, place=None,
                     scope=None, user_names: dict | None = None, check_nan_inf: bool = False,
                     history_bytes: int | None = None) -> "DebuggerView":
        return cls(Debugger(program=program, feed=feed, fetch_list=fetch_list, scope=scope,
                            place=place, startup=startup, check_nan_inf=check_nan_inf,
                            history_bytes=DEFAULT_HISTORY_BYTES if history_bytes is None
                            else history_bytes), user_names=user_names)

    def snapshot(self) -> ipywidgets.VBox:
        """A still copy of what this view shows now (the op just run, the frames, the scope
        values), without buttons and never updated again.

        A notebook that drives the debugger from code displays one per stop it talks about:
        the live view shows only the latest state (after *Run All*, "finished"), so the
        prose of an earlier stop would describe something no output shows."""
        controls = DebuggerControls(status=self.controls.status, state=self.controls.state,
                                    frames=list(self.controls.frames),
                                    results=list(self.controls.results), still=True,
                                    alert=self.controls.alert)
        program_view, scope_view = _panes(self.debugger, self.user_names, graph=False)
        live = self.program_view
        with program_view.hold_sync():
            for name in ("model", "svg", "graph_text", "selected", "highlight", "next_op",
                         "failed", "running", "breakpoints", "tab", "collapsed",
                         "graph_groups"):
                setattr(program_view, name, getattr(live, name))
        scope_view.model = self.scope_view.model
        return ipywidgets.VBox([controls, _side_by_side(program_view, scope_view)])

    # What a test (or a curious student) reads back.
    highlight = property(lambda self: self.program_view.highlight)    # the op that ran last
    next_op = property(lambda self: self.program_view.next_op)        # the op that runs next
    frames = property(lambda self: self.controls.frames)
    status = property(lambda self: self.controls.status)

    def handle_message(self, content: dict) -> None:
        """Run one command from the page: a button (``{"cmd": "step"}``), a gutter click
        (``{"cmd": "toggle_breakpoint", "block": 0, "index": 3}``), ``run_to`` (same
        fields), ``restart``, ``step_back`` (the Back button) or ``select_frame``
        (``index`` into the frame stack)."""
        cmd = content.get("cmd")
        d = self.debugger
        self.last_error = None
        try:
            if cmd in self.COMMANDS:
                if not d.finished:
                    getattr(d, self.COMMANDS[cmd])()
            elif cmd == "restart":
                d.restart()
            elif cmd == "step_back":
                d.step_back()
            elif cmd == "toggle_breakpoint":
                loc = (int(content["block"]), int(content["index"]))
                (d.remove_breakpoint if loc in d.breakpoints else d.add_breakpoint)(*loc)
            elif cmd == "run_to":
                d.run_to(int(content["block"]), int(content["index"]))
            elif cmd == "select_frame":
                self._select_frame(int(content["index"]))
                return
            else:
                raise ValueError(f"unknown debugger command {cmd!r}")
        except Exception as e:     # noqa: BLE001 (shown in the status line, kept for code)
            self.last_error = e
        self.update()

    def _select_frame(self, index: int) -> None:
        """Show the op that runs frame ``index`` (or, for the innermost, the current op)."""
        stack = self.debugger.frame_stack()
        if index + 1 < len(stack):
            inner = stack[index + 1]
            if inner["owner_index"] is not None:
                self.program_view.select(stack[index]["block_idx"], inner["owner_index"])
        elif self.debugger.location() is not None:
            self.program_view.select(*self.debugger.location())

    def update(self) -> None:
        """Copy the debugger's state into the three views."""
        d = self.debugger
        step = d.current
        stack = d.frame_stack()
        # the error that ended the run shows at the end; after a step back, the step does
        error = self.last_error or (d.error if d.finished else None)
        coming, coming_text = next_op_of(d, self._skipped)
        with self.program_view.hold_sync(), self.controls.hold_sync():
            self.program_view.highlight = _pair(d.location())
            self.program_view.next_op = coming
            self.program_view.failed = _failed_at(error)
            self.program_view.breakpoints = sorted(_pair(b) for b in d.breakpoints)
            self.program_view.running = [f"b{outer['block_idx']}:{inner['owner_index']}"
                                         for outer, inner in zip(stack, stack[1:])
                                         if inner["owner_index"] is not None]
            self.controls.frames = stack
            if error is not None:
                note = self.error_note(error) if self.error_note is not None else ""
                self.controls.state = "error"
                self.controls.status = _error_text(error) + (f"\n{note.strip()}" if note
                                                             else "")
            elif d.finished:
                self.controls.state = "finished"
                self.controls.status = f"finished — {_steps(d.steps_taken)}"
            elif step is None:
                self.controls.state = "ready"
                self.controls.status = f"ready — next: {coming_text} (press Step)"
            else:
                self.controls.state = "paused"
                self.controls.status = (f"ran {_ran(step)} (step {d.steps_taken}) — next: "
                                        f"{coming_text}") + _tensor_attrs(step)
            if d.redo_count and not d.finished and error is None:
                # the view shows an earlier point of the run; the live run is further on
                them = "it" if d.redo_count == 1 else "them"
                self.controls.status += (f" — {_steps(d.redo_count)} behind the live run: "
                                         f"stepping forward replays {them}")
            if d.history_dropped:
                self.controls.status += (f"\nhistory: the first {_steps(d.history_dropped)} "
                                         f"can no longer be undone (history_bytes="
                                         f"{d.history_bytes})")
            self.controls.can_step_back = d.can_step_back
            bad = d.bad_value
            self.controls.alert = "" if bad is None else str(bad) + (
                "" if d.steps_taken == bad.step else
                f"\n  (the debugger is at step {d.steps_taken} now)")
            # the results stay when stepping back from the end
            self.controls.results = _results(d, self.user_names) if d.results else []
        self.scope_view.refresh(changed=d.changed, current=step.scope if step else None)
        _moved(self)       # the sidebar's inspector follows the debugger that moved

    def _skipped(self) -> frozenset:
        """Indices of the global block's ops this run skips: the executor skips an op all of
        whose outputs are fed (a saved model's feed ops), so the next op is past them. Its
        own rule, asked of an Executor (one per view: it caches the prepared block)."""
        d = self.debugger
        fed = frozenset(k if isinstance(k, str) else getattr(k, "name", str(k))
                        for k in (d.feed or {}))
        if not fed:
            return frozenset()
        try:
            if self._planner is None or self._planner.place is not d.place:
                self._planner = Executor(d.place)
            return self._planner.prepare(d.program, 0).skipped_for(fed)
        except PaddleNBError:       # the run itself says what is wrong with the program
            return frozenset()


# --- who follows the debugger views ---------------------------------------------------------
# The sidebar's inspector shows the debugger view that moved last. It is the module above
# this one (it shows these views), so it asks to be told (``follow_debugger_moves``) rather
# than being called by name; the view that moved last is kept here, so an inspector made
# after it moved still finds it.
_moved_last = None           # weakref to the DebuggerView that moved last
_followers: list = []        # called with each DebuggerView that moved


def follow_debugger_moves(callback) -> None:
    """Call ``callback(view)`` after every command a DebuggerView runs (and when one opens)."""
    if callback not in _followers:
        _followers.append(callback)


def debugger_moved_last():
    """The DebuggerView that moved last, or None (none yet, or it is gone)."""
    return _moved_last() if _moved_last is not None else None


def _moved(view) -> None:
    global _moved_last
    _moved_last = weakref.ref(view)
    for callback in _followers:
        callback(view)


# --- where the debugger is: the op that ran last, the op that runs next -------------------
def _where(block_idx: int, op_index: int, op_type: str) -> str:
    return f"block {block_idx} > op {op_index} {op_type}"


def _ran(step) -> str:
    """The step just taken: its op, or for an inner step of a fused op (one cell of the rnn
    op) its frame's path, which says which cell."""
    if step.frames and step.frames[-1].owner == step.op:
        return step.frames[-1].block_path
    return _where(step.block_idx, step.op_index, step.op.type)


def _tensor_attrs(step) -> str:
    """The attributes tensors gave the op that ran, as its kernel read them (the program
    shows only the attribute's build-time placeholder, shape=[2, -1, 16])."""
    try:
        given = read_in_scope(step.op, registry.lookup(step.op.type), step.scope)
    except PaddleNBError:
        return ""
    return "".join(f"\n  {name} = {value} (from {slot})"
                   for name, (value, slot) in given.items())


def next_op_of(d, skipped=frozenset) -> tuple[list, str]:
    """``([block, index], what to call it)`` of the op debugger ``d`` runs next: what its
    next Step (or a replay) starts with. ``[]`` when no single op is next: the run has
    ended, or the next thing is the end of the run. ``skipped()`` gives the global block's
    ops the run skips (fed outputs).

    Read from the program and the frames, so it holds for a replay too: the next op of the
    block; after the last op of a sub-block, the op that runs that block (it runs it again,
    or finishes); after an inner step of a fused op (the rnn op's cells, whose frame's
    owner is the op itself), that op again. A control-flow op is next before its
    block's ops: it starts first, and Step stops inside it."""
    if d.finished:
        return [], ""
    step = d.current
    if step is not None and step.depth > 1:
        if step.frames[-1].owner == step.op:       # an inner step of the op itself
            here = _where(step.block_idx, step.op_index, step.op.type)
            return [step.block_idx, step.op_index], f"{here} goes on (or finishes)"
        ops = d.program.block(step.block_idx).ops
        if step.op_index + 1 < len(ops):
            i = step.op_index + 1
            return [step.block_idx, i], _where(step.block_idx, i, ops[i].type)
        stack = d.frame_stack()
        owner, outer = stack[-1]["owner_index"], stack[-2]["block_idx"]
        if owner is None:
            return [], f"back to the op that runs block {step.block_idx}"
        owner_type = d.program.block(outer).ops[owner].type
        return [outer, owner], (f"back to {_where(outer, owner, owner_type)}, which runs "
                                f"block {step.block_idx}")
    ops = d.program.global_block().ops
    skip = skipped()
    for i in range(step.op_index + 1 if step is not None else 0, len(ops)):
        if i not in skip:
            return [0, i], _where(0, i, ops[i].type)
    return [], "the end of the run"


def _failed_at(error) -> list:
    """[block, index] of the op a located run error failed in, else []."""
    op = getattr(error, "failed_op", None)
    if op is None:
        return []
    if getattr(op, "desc", None) is None:   # an OpDescription: the error crossed processes
        return [op.block_idx, op.index] if None not in (op.block_idx, op.index) else []
    try:
        return [op.block.idx, op.idx]
    except ValueError:              # the op was removed from its block since
        return []


def _steps(n: int) -> str:
    return f"{n} step" if n == 1 else f"{n} steps"


def _error_text(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def _panes(debugger, user_names, graph: bool = True) -> tuple:
    """The program and scope panes of a DebuggerView (or of its snapshot)."""
    # Side by side where there is room (both fit a ~1000 px notebook: 520 + 340 px and the
    # gap), the scopes below the program where there is not. Each pane may shrink below
    # its content (min_width 0) and clips and scrolls what is wider inside its own box
    # (overflow), so a long op line scrolls in the code pane and is never painted under
    # the scope pane. The classes carry the same rules in widgets.css (.pd-panes).
    program_view = ProgramView(debugger.program, graph=graph, user_names=user_names,
                               layout=_pane_layout("1 1 520px"))
    scope_view = ScopeView(debugger.scope, user_names=user_names,
                           layout=_pane_layout("1 1 340px"))
    program_view.add_class("pd-pane-program")
    scope_view.add_class("pd-pane-scope")
    return program_view, scope_view


def _pane_layout(flex: str) -> ipywidgets.Layout:
    return ipywidgets.Layout(flex=flex, min_width="0", max_width="100%", overflow="auto")


def _side_by_side(program_view, scope_view) -> ipywidgets.HBox:
    box = ipywidgets.HBox([program_view, scope_view],
                          layout=ipywidgets.Layout(width="100%", flex_flow="row wrap",
                                                   align_items="flex-start",
                                                   grid_gap="8px"))
    box.add_class("pd-panes")
    return box


def _results(d, user_names=None) -> list[dict]:
    """The fetched values as the page lists them: the user's name (where a notebook cell
    bound one) beside the program's, and the value as numpy prints it."""
    out = []
    for name, value in zip(d.fetch_names, d.results):
        text = np.array2string(np.asarray(value), precision=4, threshold=20, edgeitems=2)
        out.append({"name": name, "user_name": user_name(name, user_names),
                    "shown": shown_name(name, user_names), "text": text})
    return out
