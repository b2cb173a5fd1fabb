"""The Paddle inspector: the widget JupyterLab's right sidebar shows (extension/ in the
repository is the sidebar itself).

It follows the kernel's live state across cells, so a learner need not scroll back to the
output of the cell that made a view:
- the **program**: the one the last ``%%paddle`` cell built into (with the notebook's
  names), else the default main program of plain Python code;
- the **debugger**: the latest step debugger a cell opened (``%%paddle --step`` or a
  ``DebuggerView``), the op it runs next and the one it ran last marked in the program
  (as in its view) and its frames listed;
- the **scopes**: the debugger's scope while one is open, else the program's scope.

The sidebar asks the kernel for :func:`sidebar_model_id` (a silent request, only in a kernel
that has imported paddle_nb) and draws that widget with the notebook's own widget manager.
The widget refreshes itself after every cell (IPython's ``post_run_cell``) and whenever a
debugger view moves (:func:`debugger_moved`, which the views call: ``widgets.py`` is the
layer below and names no module above it), from the kernel: the page never asks twice.
"""
from __future__ import annotations

import html

import ipywidgets
from IPython import get_ipython

from ..core.program import default_main_program
from ..core.scope import current as current_scope
from .magic import get_notebook
from .widgets import ProgramView, ScopeView, debugger_moved_last, follow_debugger_moves

_inspector: InspectorView | None = None


def _notebook_program():
    """The NotebookProgram the last %%paddle cell built into, or None (no magic loaded,
    no cell run yet)."""
    try:
        programs = get_notebook().programs
    except (RuntimeError, AttributeError):    # no magic loaded; no IPython shell at all
        return None
    live = [p for p in programs.values() if p.main.global_block().ops or p.cells]
    return live[-1] if live else None


class InspectorView(ipywidgets.VBox):
    """What the sidebar shows; :meth:`refresh` reads the kernel's state again."""

    def __init__(self, **kwargs):
        self.title = ipywidgets.HTML(layout=ipywidgets.Layout(margin="0 0 4px 0"))
        self.debugger_line = ipywidgets.HTML()
        self.program_view = ProgramView(default_main_program(), graph="on demand")
        self.scope_view = ScopeView(current_scope())
        super().__init__([self.title, self.program_view, self.debugger_line, self.scope_view],
                         **kwargs)
        self.add_class("pd-inspector")
        self.refresh()

    def _debugger(self):
        """The DebuggerView that moved last (or that the last --step cell opened)."""
        view = debugger_moved_last()
        if view is None:
            prog = _notebook_program()
            view = getattr(prog, "debugger", None) if prog is not None else None
        return view if hasattr(view, "debugger") else None

    def refresh(self, program_too: bool = True) -> None:
        """Read the kernel's state again; ``program_too=False`` (a debugger step) skips
        reading the program, which a step does not change."""
        prog = _notebook_program()
        program = prog.main if prog is not None else default_main_program()
        names = prog.user_names() if prog is not None else None
        scope = prog.scope if prog is not None else current_scope()
        view = self._debugger()
        d = view.debugger if view is not None else None
        if d is not None and d.program is not program:
            program, names, scope = d.program, view.user_names, d.scope
        pv = self.program_view
        with pv.hold_sync():
            if pv.program is not program or pv.user_names != names:
                pv.program, pv.user_names, program_too = program, names, True
            if program_too:
                pv.refresh()
            # the debugger view's marks: the op that runs next, the one that ran last
            marks = view.program_view if view is not None else None
            for name in ("highlight", "next_op", "failed"):
                setattr(pv, name, list(getattr(marks, name)) if marks is not None else [])
        step = d.current if d is not None else None
        self.scope_view.scope, self.scope_view.user_names = scope, names
        self.scope_view.refresh(changed=d.changed if d is not None else (),
                                current=step.scope if step is not None else None)
        ops = sum(len(b.ops) for b in program.blocks)
        source = f"%%paddle program {html.escape(prog.name)!s}" if prog is not None and \
            program is prog.main else "the debugger's program" if d is not None and \
            program is d.program else "default main program"
        self.title.value = (f"<b>Paddle inspector</b> — {source}: {ops} op"
                            f"{'' if ops == 1 else 's'} in {len(program.blocks)} block"
                            f"{'' if len(program.blocks) == 1 else 's'}")
        self.debugger_line.value = _debugger_text(view)


def _debugger_text(view) -> str:
    if view is None:
        return "<div class='pd-inspector-debugger'>no debugger open</div>"
    d = view.debugger
    status = html.escape(view.status or "")
    frames = " › ".join(html.escape(f["block_path"]) for f in d.frame_stack())
    return (f"<div class='pd-inspector-debugger'><b>debugger</b>: {status}"
            + (f"<br><span class='pd-inspector-frames'>{frames}</span>" if frames else "")
            + "</div>")


def inspector() -> InspectorView:
    """The kernel's inspector, made on first use (refreshed after every cell from then)."""
    global _inspector
    if _inspector is None:
        _inspector = InspectorView()
        shell = get_ipython()
        if shell is not None:
            shell.events.register("post_run_cell", _after_cell)
    return _inspector


def _after_cell(_result=None) -> None:
    if _inspector is not None:
        _inspector.refresh()


def sidebar_model_id() -> str:
    """The widget model id the sidebar renders (what its silent request evaluates)."""
    view = inspector()
    view.refresh()
    return view.model_id


def debugger_moved(view) -> None:
    """Called after each command of a DebuggerView (``widgets.follow_debugger_moves``): the
    inspector follows that debugger (the program is read again only when it is another
    program than the one shown)."""
    if _inspector is not None:
        _inspector.refresh(program_too=_inspector.program_view.program is not
                           view.debugger.program)


follow_debugger_moves(debugger_moved)
