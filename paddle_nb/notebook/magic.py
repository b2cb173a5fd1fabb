"""The ``%%paddle`` cell magic and ``%paddle`` line magic (an IPython extension).

    %load_ext paddle_nb

    %%paddle --run
    x = pd.minibatch([10, 20, 30])
    y = pd.layer.fc(x, 2)

The cell body is ordinary Python, run in the notebook's namespace while the named notebook
program (``--program``, default ``main``) is the default main/startup program and its scope
the current scope. Re-running a cell *replaces* what it built before, with the same names
(see :mod:`paddle_nb.interactive.session`). A cell is known by its Jupyter cell id when the
front end sends one, else by ``--cell NAME``, else by its source text (so an *edited* cell
in a front end without cell ids counts as a new cell).

Errors are shown short: the framework's message, which names the cell line
(``Cell In[3], line 4``) that made the op, and no traceback through the library; a failed
cell leaves the program as it was. Flags are checked by argparse: a bad one is a
``UsageError``. ``%%paddle?`` shows them all.
"""
from __future__ import annotations

import html
import linecache
import sys

import numpy as np
from IPython import get_ipython
from IPython.core.error import UsageError
from IPython.core.magic import Magics, line_cell_magic, magics_class
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

import paddle_nb    # the package, bound to ``pd`` in the notebook (this is its extension)

from ..core.errors import PaddleNBError, set_filename_label_hook
from ..core.executor import Executor
from ..core.framework_pb2 import VarType
from ..core.place import CPUPlace, CUDAPlace
from ..core.program import default_main_program
from ..core.variable import Variable
from ..interactive.debugger import Debugger
from ..interactive.session import Notebook, NotebookProgram
from .program_model import program_graph_text

SHOW_MODES = ("code", "tree", "graph", "scope", "none")
COMMANDS = ("status", "reset", "show")


@magics_class
class PaddleMagics(Magics):
    """The magics and the notebook's programs (one instance per shell)."""

    def __init__(self, shell):
        super().__init__(shell)
        self.notebook = Notebook()

    @magic_arguments()
    @argument("command", nargs="*",
              help="line magic only: 'status' (programs and what each cell defined), "
                   "'reset [NAME]' (forget one program, or all), 'show [NAME]' (print it)")
    @argument("--program", "-p", default="main", metavar="NAME",
              help="the notebook program the cell builds into (default: main)")
    @argument("--run", "-r", action="store_true",
              help="initialise new parameters, run the program and show the values of the "
                   "variables the cell assigned (or --fetch); returns name -> array")
    @argument("--step", "-s", action="store_true",
              help="open the step debugger on the program")
    @argument("--place", choices=["cpu", "cuda"], default="cpu",
              help="where --run/--step run the kernels (default: cpu)")
    @argument("--check-nan-inf", action="store_true",
              help="check every op's outputs for NaN and Inf: --run raises at the first "
                   "op that makes one, --step stops there with its inputs and the line "
                   "that built it")
    @argument("--show", choices=SHOW_MODES, default=None,
              help="what to show after the cell: the program as code (the default for a "
                   "cell and for %%paddle show), the block tree, the dataflow graph, the "
                   "scope, or nothing (the default for %%paddle --run/--step and for "
                   "%%%%paddle --step, whose debugger shows the program; with --step, "
                   "graph opens the debugger's graph tab)")
    @argument("--fetch", "-f", default=None, metavar="A,B",
              help="names to fetch when running: notebook variables or program variables")
    @argument("--feed", default=None, metavar="EXPR",
              help="an expression in the notebook namespace giving the feed dict")
    @argument("--cell", default=None, metavar="NAME",
              help="name this cell (re-running a cell of the same name replaces it); "
                   "default: the Jupyter cell id, else the cell's source text")
    @line_cell_magic
    def paddle(self, line, cell=None):
        """Build a PaddlePaddle-style program in a notebook cell.

        %%paddle [--program NAME] [--run] [--show code|tree|graph|scope|none] ...
        <python building the program with pd.*>

        %paddle status | reset [NAME] | show [NAME] | --run [--program NAME]
        """
        args = parse_argstring(self.paddle, line)
        if args.run and args.step:
            raise UsageError("choose one of --run and --step")
        if cell is None:
            return self._line(args)
        if args.command:
            raise UsageError(f"%%paddle takes no command ({' '.join(args.command)!r}); "
                             f"use the line magic: %paddle {' '.join(args.command)}")
        prog, assigned = self._build(args, cell)
        return self._show_and_execute(prog, args, assigned,
                                      args.show or ("none" if args.step else "code"),
                                      self._cell_key(args, cell))

    def _show_and_execute(self, prog, args, assigned, show: str, key: str | None = None):
        if args.step:
            return self._step(prog, args, assigned, show, key)
        if show == "scope":            # the scope is worth seeing once the run filled it
            result = self._execute(prog, args, assigned, key)
            self._show(prog, show)
            return result
        self._show(prog, show)         # the program first: still shown if the run fails
        return self._execute(prog, args, assigned, key)

    def _step(self, prog, args, assigned, show: str, key: str | None):
        """``--step``: the debugger's view is the cell's output, and it shows the program
        (code and graph) and the scopes, so they are shown once, there: ``--show graph``
        opens its graph tab, ``code`` and ``scope`` add nothing; only the block tree,
        which it does not show, is printed (first: still shown if starting fails)."""
        if show == "tree":
            self._show(prog, show)
        result = self._execute(prog, args, assigned, key)
        if show == "graph" and getattr(result, "program_view", None) is not None:
            result.program_view.tab = "graph"
        return result

    # --- %paddle (line) --------------------------------------------------------------------
    def _line(self, args):
        command, rest = (args.command[0], args.command[1:]) if args.command else (None, [])
        if command is None:
            if not (args.run or args.step):
                raise UsageError("say what to do: %paddle status | reset [NAME] | "
                                 "show [NAME] | --run [--program NAME]")
            prog = self._existing(args.program)
            assigned = [n for key in prog.order for n in prog.cells[key].assigned]
            return self._show_and_execute(prog, args, list(dict.fromkeys(assigned)),
                                          args.show or "none")
        if command not in COMMANDS or len(rest) > 1:
            raise UsageError(f"unknown command {' '.join(args.command)!r}; use one of: "
                             "status, reset [NAME], show [NAME]")
        name = rest[0] if rest else None
        if command == "status":
            print(self.status())
        elif command == "reset":
            if name is not None:
                self._existing(name)
            self.notebook.reset(name)
            print(f"reset program {name!r}" if name else "reset every notebook program")
        else:
            self._show(self._existing(name or args.program), args.show or "code")
        return None

    def _existing(self, name: str) -> NotebookProgram:
        if name not in self.notebook.programs:
            known = ", ".join(self.notebook.programs) or "none yet"
            raise UsageError(f"no notebook program named {name!r} (programs: {known})")
        return self.notebook.programs[name]

    def status(self) -> str:
        """Every program, its size, and what each cell (in program order) defined."""
        if not self.notebook.programs:
            return "no notebook programs yet: run a %%paddle cell"
        lines = []
        for prog in self.notebook.programs.values():
            lines.append(prog.summary())
            for key in prog.order:
                rec = prog.cells[key]
                names = ", ".join(rec.assigned) or "-"
                extra = f", blocks {rec.blocks}" if rec.blocks else ""
                lines.append(f"  {rec.label or '?':>8} {_short_key(key)}: "
                             f"{rec.op_count()} ops (startup {rec.op_count('startup')}), "
                             f"{len(rec.var_names())} vars{extra}; names: {names}")
        return "\n".join(lines)

    # --- building ----------------------------------------------------------------------------
    def _build(self, args, cell: str):
        """Run the cell body into the program; on an error roll back and raise it short."""
        shell = self.shell
        try:
            code, filename = self._compile(cell)
        except SyntaxError as e:
            raise CellSyntaxError(e, shell) from e
        ns = shell.user_ns
        before = dict(ns)
        prog = self.notebook.program(args.program)
        label = f"In[{_cell_number(shell)}]"
        key = self._cell_key(args, cell)
        try:
            self.notebook.build(args.program, key,
                                lambda: exec(code, shell.user_global_ns, ns), label)
        except Exception as e:
            _restore_bindings(ns, before, prog)
            _shorten(e, self.shell, f"(nothing was kept: program {args.program!r} is as it "
                                    "was before this cell)")
            raise
        except BaseException:          # KeyboardInterrupt: rolled back, shown as usual
            _restore_bindings(ns, before, prog)
            raise
        assigned = [k for k, v in ns.items() if v is not before.get(k) and _belongs(v, prog)]
        prog.cells[key].assigned = assigned
        prog.cells[key].bound = {k: ns[k].name for k in assigned}   # the views show them
        return prog, assigned

    def _compile(self, cell: str):
        """Compile the body so tracebacks and ops say ``Cell In[n], line k``: the code is
        registered with IPython's compiler under this execution count, and padded by one
        line (the ``%%paddle`` line) so line k is line k of the cell as the user sees it.
        IPython syntax (``%magic``, ``!cmd``) in the body is transformed as in any cell."""
        lines = cell.splitlines()
        blank = next((i for i, s in enumerate(lines) if s.strip()), len(lines))
        body = self.shell.transform_cell("\n".join(lines[blank:]))
        source = "\n" * (1 + blank) + body
        filename = self.shell.compile.cache(source, _cell_number(self.shell))
        return self.shell.compile(source, filename, "exec"), filename

    def _cell_key(self, args, cell: str) -> str:
        if args.cell:
            return f"name:{args.cell}"
        cell_id = _jupyter_cell_id(self.shell)
        if cell_id:
            return f"id:{cell_id}"
        return "source:" + cell.strip()

    # --- showing -----------------------------------------------------------------------------
    def _show(self, prog: NotebookProgram, mode: str) -> None:
        if mode == "none":
            return
        if mode == "code":
            print(prog.main.to_code())
        elif mode == "scope":
            view = _widget("ScopeView", prog.scope, user_names=prog.user_names())
            display(view) if view is not None else print(prog.scope.tree())
        else:
            view = _widget("ProgramView", prog.main, graph=mode == "graph",
                           user_names=prog.user_names())
            if view is not None:
                display(view)
            elif mode == "tree":
                print(block_tree(prog.main))
            else:
                print(program_graph_text(prog.main))

    # --- running -----------------------------------------------------------------------------
    def _execute(self, prog: NotebookProgram, args, assigned, key: str | None = None):
        """Run (or step) ``prog``; ``key`` is the running cell's (None for %paddle --run)."""
        if not (args.run or args.step):
            return None
        place = CUDAPlace(0) if args.place == "cuda" else CPUPlace()
        try:
            feed = self._feed(args.feed)
            fetch = self._fetch(prog, args.fetch, assigned, feed)
            prog.initialize(Executor(place))
            if args.step:
                return self._debugger(prog, feed, fetch, place, args.check_nan_inf, key)
            values = Executor(place).run(prog.main, feed=feed, fetch_list=list(fetch.values()),
                                         scope=prog.scope, check_nan_inf=args.check_nan_inf)
        except PaddleNBError as e:
            note = f"(the cell's ops were kept in program {prog.name!r}; running it failed)"
            _shorten(e, self.shell, note + _other_cell_note(prog, e, key))
            raise
        return RunResult(zip(fetch, values))

    def _feed(self, expr: str | None) -> dict:
        if expr is None:
            return {}
        if len(expr) > 1 and expr[0] == expr[-1] and expr[0] in "'\"":
            expr = expr[1:-1]          # IPython's argument split keeps the quotes
        try:
            feed = eval(expr, self.shell.user_global_ns, self.shell.user_ns)  # noqa: S307
        except Exception as e:  # noqa: BLE001 (a user expression: say which)
            raise UsageError(f"--feed {expr!r}: {type(e).__name__}: {e}") from None
        if not isinstance(feed, dict):
            raise UsageError(f"--feed must give a dict of name -> array, got "
                             f"{type(feed).__name__}")
        return feed

    def _fetch(self, prog: NotebookProgram, spec: str | None, assigned, feed) -> dict:
        """Shown name -> program variable name. ``--fetch`` names may be notebook names
        bound to Variables or program variable names; by default, the Variables the cell
        assigned that live in the global block and have a value when the program runs."""
        ns, gb = self.shell.user_ns, prog.main.global_block()
        if spec:
            out = {}
            for name in (s.strip() for s in spec.split(",") if s.strip()):
                value = ns.get(name)
                out[name] = value.name if _belongs(value, prog) else name
            return out
        written = {n for op in gb.ops for n in op.output_arg_names}
        fed = {k if isinstance(k, str) else getattr(k, "name", k) for k in feed}
        out = {}
        for name in assigned:
            v = ns.get(name)
            if not _belongs(v, prog) or not gb.has_var(v.name):
                continue
            desc = gb.table.vars[v.name]
            if desc.type.type == VarType.LOD_TENSOR and (
                    desc.persistable or v.name in written or v.name in fed):
                out[name] = v.name
        return out

    def _debugger(self, prog: NotebookProgram, feed, fetch, place, check_nan_inf=False,
                  key: str | None = None):
        dbg = Debugger(prog.main, feed, list(fetch.values()), prog.scope, place,
                       check_nan_inf=check_nan_inf)
        # a step that fails on an op an earlier cell built says which cell, as --run does
        view = _widget("DebuggerView", dbg, user_names=prog.user_names(),
                       error_note=lambda e: _other_cell_note(prog, e, key))
        # kept on the program too: pd.notebook.program().debugger, for code that drives it
        prog.debugger = view if view is not None else dbg
        if view is not None:
            return view
        print(debugger_summary(prog, dbg, fetch))
        return dbg


class CellSyntaxError(Exception):
    """A cell body that is not Python. IPython shows a SyntaxError with every frame it went
    through (here: the magic's); this shows it as for a plain cell. ``__cause__`` is the
    SyntaxError."""

    def __init__(self, error: SyntaxError, shell):
        super().__init__(str(error))
        self._lines = shell.SyntaxTB.structured_traceback(type(error), error, [])

    def _render_traceback_(self):
        return self._lines


# --- results -------------------------------------------------------------------------------
class RunResult(dict):
    """What ``%%paddle --run`` returns: name -> numpy array, displayed as a small table."""

    def rows(self):
        for name, a in self.items():
            a = np.asarray(a)
            values = np.array2string(a, precision=4, threshold=12, edgeitems=2,
                                     max_line_width=70).replace("\n", "")
            yield name, str(tuple(a.shape)), str(a.dtype), values

    def __repr__(self):
        rows = [("name", "shape", "dtype", "values"), *self.rows()]
        widths = [max(len(r[i]) for r in rows) for i in range(3)]
        return "\n".join("  ".join(c.ljust(w) for c, w in zip(r[:3], widths)) + "  " + r[3]
                         for r in rows)

    def _repr_pretty_(self, p, cycle):
        p.text(repr(self))

    def _repr_html_(self):
        cells = "".join("<tr>" + "".join(f"<td><code>{html.escape(c)}</code></td>" for c in r)
                        + "</tr>" for r in self.rows())
        return ("<table><tr><th>name</th><th>shape</th><th>dtype</th><th>values</th></tr>"
                f"{cells}</table>")


def block_tree(program) -> str:
    """The block tree as text: each block under the op that owns it."""
    lines = []

    def walk(block, depth, owner):
        n_ops, n_vars = len(block.table.ops), len(block.table.vars)
        what = f"{owner}  " if owner else ""
        empty = "  (empty: left by a re-run cell)" if block.idx and not n_ops and not n_vars \
            else ""
        lines.append(f"{'  ' * depth}block {block.idx}  {what}{n_ops} ops, {n_vars} vars{empty}")
        for i, op in enumerate(block.ops):
            for sub in op.sub_block_indices():
                if 0 <= sub < program.num_blocks:
                    walk(program.block(sub), depth + 1, f"{op.type}@{i}")

    walk(program.global_block(), 0, "")
    owned = {i for b in program.blocks for op in b.ops for i in op.sub_block_indices()}
    for b in program.blocks[1:]:
        if b.idx not in owned:
            walk(b, 0, "(no owner)")
    return "\n".join(lines)


def debugger_summary(prog: NotebookProgram, dbg, fetch: dict) -> str:
    lines = [f"Debugger on program {prog.name!r} (fetch: {', '.join(fetch) or 'nothing'}); "
             "it is this cell's result: dbg = _ ; dbg.step(), dbg.step_over(), "
             "dbg.step_out(), dbg.cont(), dbg.add_breakpoint(block, op)"]
    for b in prog.main.blocks:
        for i, op in enumerate(b.ops):
            lines.append(f"  block {b.idx} op {i}: {op.type}")
    return "\n".join(lines[:41] + (["  ..."] if len(lines) > 41 else []))


# --- helpers ---------------------------------------------------------------------------------
def _widget(name: str, *args, **kwargs):
    """A view from :mod:`paddle_nb.notebook.widgets` (``ProgramView``, ``ScopeView``,
    ``DebuggerView``), or None where it cannot be had (no anywidget installed): the caller
    then prints text."""
    # anywidget may be missing (the views need it, the magic does not): imported here, on
    # each call, so that the magic works without it and its text fallback can be tested
    try:
        from .widgets import DebuggerView, ProgramView, ScopeView   # noqa: PLC0415 (anywidget optional)
    except ImportError:
        return None
    views = {"DebuggerView": DebuggerView, "ProgramView": ProgramView, "ScopeView": ScopeView}
    return views[name](*args, **kwargs)


def _jupyter_cell_id(shell) -> str | None:
    """The cell id JupyterLab / Notebook 7 / VS Code send with each execute request."""
    kernel = getattr(shell, "kernel", None)
    if kernel is None:
        return None
    try:
        return (kernel.get_parent().get("metadata") or {}).get("cellId")
    except Exception:  # noqa: BLE001 (no request in flight, an older kernel...)
        return None


def _short_key(key: str) -> str:
    kind, _, rest = key.partition(":")
    if kind == "source":
        first = rest.strip().splitlines()[0] if rest.strip() else ""
        return repr(first[:30] + ("..." if len(first) > 30 else ""))
    return f"{kind} {rest[:12]}"


def _belongs(value, prog: NotebookProgram) -> bool:
    """Is ``value`` a Variable of this notebook program's main program?"""
    return isinstance(value, Variable) and value.block.program is prog.main


def _restore_bindings(ns: dict, before: dict, prog: NotebookProgram) -> None:
    """Undo the failed cell's assignments of Variables (they were rolled back with the
    program); other Python assignments stay, as after any failing cell."""
    for name in [k for k, v in ns.items() if v is not before.get(k) and _belongs(v, prog)]:
        if name in before:
            ns[name] = before[name]
        else:
            del ns[name]


def _cell_frames(tb, shell):
    """(label, line number, code) of each traceback entry in notebook cell code."""
    out = []
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        label = shell.compile.format_code_name(filename)
        if label is not None:
            out.append((f"{label[0]} {label[1]}", tb.tb_lineno,
                        linecache.getline(filename, tb.tb_lineno).strip()))
        tb = tb.tb_next
    return out


def _other_cell_note(prog: NotebookProgram, e: BaseException, key: str | None) -> str:
    """Where the failing op of a run (or of a --step debugger's step) came from when that
    is not the running cell: a bad op kept from an earlier cell fails every later run, and
    the fix belongs in that cell. Re-running that cell replaces its ops only where the
    cell is known again after an edit (a Jupyter cell id, or --cell NAME); a cell known
    by its source text is a new cell once edited, so the note says so."""
    op = getattr(e, "failed_op", None)
    if op is None:
        return ""
    for cell_key, record in prog.cells.items():
        if any(desc is op.desc for _, desc in record.ops.get("main", [])):
            if cell_key == key:
                return ""
            label = record.label or _short_key(cell_key)
            if cell_key.startswith("source:"):
                fix = (f"this front end sends no cell ids, so that cell, edited, would be a "
                       f"new cell and leave this op in the program: %paddle reset "
                       f"{prog.name}, then run the fixed cells (a cell named with "
                       f"%%paddle --cell NAME replaces itself when run again, edited or not).")
            else:
                fix = (f"fix that cell and run it again (its ops are replaced), or "
                       f"%paddle reset {prog.name} to start the program over.")
            return (f"\nThe failing op comes from another cell, {label}, not this one "
                    f"(its {op.type} op): {fix}")
    return ""


def _is_ours(e: BaseException) -> bool:
    """A paddle_nb error, or an interrupt the executor located (and undid the run of)."""
    return isinstance(e, PaddleNBError) or \
        isinstance(e, KeyboardInterrupt) and getattr(e, "_paddle_nb_noted", False)


def _shorten(e: BaseException, shell, note: str | None = None) -> None:
    """Make IPython show ``e`` short (its ``_render_traceback_`` hook): a paddle_nb error
    or a located interrupt as its message, the user's cell line and its notes (the library
    frames under it say nothing a student can act on); anything else as a traceback that
    starts in the cell, without the magic's and the builders' frames above it."""
    tb = e.__traceback__
    if _is_ours(e):
        lines = [f"{type(e).__name__}: {e}" if str(e) else type(e).__name__]
        frames = _cell_frames(tb, shell)
        if frames and "Cell In[" not in str(e):
            label, lineno, code = frames[-1]
            lines.append(f"  at {label}, line {lineno}: {code}")
        lines += list(getattr(e, "__notes__", []))
    else:
        while tb is not None and shell.compile.format_code_name(
                tb.tb_frame.f_code.co_filename) is None:
            tb = tb.tb_next
        lines = shell.InteractiveTB.structured_traceback(type(e), e, tb or e.__traceback__,
                                                         tb_offset=0)
    lines = [*lines, note] if note else lines
    try:
        e._render_traceback_ = lambda: lines
    except AttributeError:   # an exception type without a __dict__: shown as usual
        pass


def _show_short(shell, etype, value, tb, tb_offset=None):
    """IPython's handler (``set_custom_exc``) for errors raised in plain cells: a
    paddle_nb error from a direct ``exe.run``, an interrupt during training, shown short as
    in ``%%paddle`` cells; other interrupts as usual."""
    if _is_ours(value) and getattr(value, "_render_traceback_", None) is None:
        _shorten(value, shell)
    shell.showtraceback(running_compiled_code=True)   # uses _render_traceback_ where set


def _cell_number(shell) -> int:
    """The number the running cell is shown with (``[8]``). Not ``shell.execution_count``:
    IPython 9 counts on to the next cell before this one runs. The cell's own code was
    compiled under its number, and that code is on the stack, below the magic."""
    frame = sys._getframe(1)
    while frame is not None:
        name = shell.compile.format_code_name(frame.f_code.co_filename)
        if name and name[1].startswith("In[") and name[1][3:-1].isdigit():
            return int(name[1][3:-1])
        frame = frame.f_back
    return shell.execution_count


def _cell_labeler(shell):
    def label(filename: str) -> str | None:
        data = shell.compile.format_code_name(filename)
        return f"{data[0]} {data[1]}" if data else None
    return label


def get_notebook(shell=None) -> Notebook:
    """The notebook programs of ``shell`` (default: the running IPython)."""
    if shell is None:
        shell = get_ipython()
    return _magics(shell).notebook


def _magics(shell) -> PaddleMagics:
    for m in shell.magics_manager.registry.values():
        if isinstance(m, PaddleMagics):
            return m
    raise RuntimeError("the paddle_nb extension is not loaded: %load_ext paddle_nb")


def load_ipython_extension(ip) -> None:
    """Register ``%%paddle``/``%paddle`` (once per shell), name cell code in errors, and
    bind ``pd`` to paddle_nb, as PaddlePaddle's design docs write it, unless the notebook already
    has a ``pd`` of its own (pandas, say: then ``import paddle_nb as pd`` is the user's)."""
    try:
        _magics(ip)
    except RuntimeError:
        ip.register_magics(PaddleMagics(ip))
    set_filename_label_hook(_cell_labeler(ip))
    ip.set_custom_exc((PaddleNBError, KeyboardInterrupt), _show_short)
    ip.user_ns.setdefault("pd", paddle_nb)
    # print(pd.default_main_program()) in a plain cell showed an empty block and no why
    default_main_program().empty_hint = (
        "empty: %%paddle cells build into the notebook's own program; "
        "print(pd.notebook.program().main) shows it")


def unload_ipython_extension(ip) -> None:
    set_filename_label_hook(None)
    ip.set_custom_exc((), None)
    default_main_program().empty_hint = None
