"""A scriptable step debugger: ``Executor.steps`` advanced by hand (docs/architecture.md,
decision 5).

The executor runs a program as a generator that yields one :class:`Step` per op, so a
debugger is that generator plus bookkeeping. This module is the engine only; a notebook
widget drives it through the commands below (it imports neither IPython nor widgets).

Stepping semantics, which every command follows:

* **The current op has already run.** The executor yields a Step *after* the op's kernel
  returned, so ``current.op``'s outputs are in ``current.scope`` and ``changed`` lists
  them. A breakpoint on op ``(b, i)`` stops with op ``i`` of block ``b`` just run.
* **A control-flow op comes after its insides.** A ``conditional_block``, ``recurrent`` or
  ``while`` op runs its sub-block from its kernel, so the sub-block's steps (depth 2, one
  more frame, in a kid scope named ``<type>@<index>/<name>``) come *before* the step of
  the owning op itself (depth 1), which is yielded when the whole construct is done.
  An RNN with T steps yields its step block's ops T times, then the ``recurrent`` op.
* **Depth** is ``len(step.frames)``: 1 for the global block, 2 inside a sub-block, ...
  ``step()`` takes exactly one step (entering sub-blocks); ``step_over()`` goes on until
  a step no deeper than the current one, so a control-flow op runs whole; ``step_out()``
  goes on until a step shallower than the current one: the op owning this block.
* ``step_over``/``step_out``/``cont``/``run_to`` all stop early at a breakpoint (as pdb
  and gdb do); ``run_to_end`` ignores breakpoints.

Every command returns the Step it stopped at, or ``None`` once the program has finished
(then ``results`` holds the fetched arrays, or ``error`` the exception that ended it).

**Stepping back** (``step_back()``) is time travel by copy-on-write records, never by
running kernels again (history.py keeps them): ``step_back`` undoes the newest record;
any later command first *replays* the records ahead of the cursor (a redo log: values are
put back, no kernel runs; breakpoints and the first bad value stop a replay as they stop a
run) and only at the live frontier advances the executor again. The records are bounded in
bytes (``history_bytes``, default 256 MiB): the oldest are dropped when over, and stepping
back past them raises a DebuggerError.

**The first bad value.** With ``check_nan_inf=True`` every step's outputs are checked
(float tensors, tensor arrays, SelectedRows); the first op that writes a NaN or Inf stops
whatever command ran, *with its scope alive* (unlike ``Executor.run(check_nan_inf=True)``,
which raises and deletes the run), and ``bad_value`` (bad_value.py) describes it: the op, its block
path, the output, the first bad element, the counts, the user's line that built the op and
its inputs. It stops once: stepping on continues the run (later NaNs follow from the first)
and ``bad_value`` stays until ``restart()``; ``step_back()`` works from there as anywhere.
"""
from __future__ import annotations

import numbers

from ..core.backward import is_forward, op_role
from ..core.errors import PaddleNBError
from ..core.executor import Executor, Step
from ..core.grad_maker import GRAD_SUFFIX, forward_name
from ..core.non_finite import check_feed_finite
from ..core.operator import Operator
from ..core.place import CPUPlace
from ..core.program import default_main_program
from ..core.scope import Scope
from .bad_value import BadValue, find_bad_value   # noqa: F401 (BadValue: the debugger API)
from .history import Timeline

_BACKWARD = 1          # op_role bit of gradient ops (257, the loss-grad fill, has it too)

DEFAULT_HISTORY_BYTES = 256 * 2 ** 20       # what step_back's records may hold: 256 MiB


class DebuggerError(PaddleNBError):
    """Misuse of the debugger: a breakpoint on a block or op that does not exist, a step
    back with nothing (or nothing kept) to go back to."""


class Debugger:
    """Step through one run of ``program``; see the module docstring for the semantics.

    ``Debugger(program, feed, fetch_list, scope, place, startup, check_nan_inf,
    history_bytes, transport)``: the defaults are the default main program, a fresh Scope,
    the CPU, no NaN check and 256 MiB of step-back records; ``transport`` is given to the
    executor, for a transpiled trainer program (``pd.distributed.LocalCluster.debugger``).
    ``startup`` is run into the scope once here (again on
    ``restart(rerun_startup=True)``). A bad feed or fetch raises here, from
    the executor. The arguments stay as attributes; a new ``feed`` is used from the next
    ``restart()``. Not thread-safe: one widget drives one debugger.
    """

    def __init__(self, program=None, feed=None, fetch_list=None, scope=None, place=None,
                 startup=None, check_nan_inf: bool = False,
                 history_bytes: int = DEFAULT_HISTORY_BYTES, transport=None):
        self.program = program if program is not None else default_main_program()
        self.feed, self.fetch_list = feed, fetch_list
        self.scope = scope if scope is not None else Scope()
        self.place = place if place is not None else CPUPlace()
        self.startup = startup
        self.check_nan_inf = bool(check_nan_inf)
        self.history_bytes = int(history_bytes)
        self.transport = transport   # a transpiled trainer program's (Executor(transport=))
        self._breakpoints: set[tuple[int, int]] = set()
        if startup is not None:
            Executor(self.place).run(startup, scope=self.scope)
        self._gen = self._timeline = None
        self._start()

    # --- state (read-only) ---------------------------------------------------------------
    current = property(lambda self: self._current,
                       doc="The Step the cursor is at (its op has run); None before the "
                           "first step and at the end of the run.")
    finished = property(lambda self: self._ended and
                        self._timeline.pos == self._timeline.frontier,
                        doc="The run has ended and the cursor is at its end (step_back() "
                            "leaves the end: then finished is False again).")
    results = property(lambda self: self._results,
                       doc="The fetched arrays once the run ended without error, else None "
                           "(kept when you step back from the end).")
    error = property(lambda self: self._error,
                     doc="The exception that ended the run (a kernel's ExecutionError, a "
                         "KeyboardInterrupt), else None.")
    steps_taken = property(lambda self: self._timeline.pos - (1 if self.finished else 0),
                           doc="Steps from the start of the run to the cursor: stepping "
                               "back lowers it, stepping (or replaying) raises it.")
    changed = property(lambda self: list(self._changed),
                       doc="Output names of the current op that now hold a value (after a "
                           "step back: what that step wrote, as when it was first reached).")
    history = property(lambda self: self._timeline.trail[:self.steps_taken],
                       doc="(block_idx, op_index, op_type) of every step from the start to "
                           "the cursor; the steps ahead of it (after step_back) are in "
                           "``redo_count``.")
    breakpoints = property(lambda self: set(self._breakpoints))
    bad_value = property(lambda self: self._bad,
                         doc="The first NaN/Inf of this run (check_nan_inf), a BadValue; "
                             "None until one was found.")
    redo_count = property(lambda self: len(self._timeline.trail) - self.steps_taken,
                          doc="Steps ahead of the cursor that commands replay (after "
                              "step_back) before the program runs on.")
    history_dropped = property(lambda self: self._timeline.dropped,
                               doc="How many of the oldest steps can no longer be undone "
                                   "(their records went over history_bytes).")

    @property
    def can_step_back(self) -> bool:
        """Is there a kept record to undo (step_back() would move)?"""
        return self._timeline.pos > self._timeline.dropped

    @property
    def history_bytes_held(self) -> int:
        """Bytes the step-back records hold now (copied values, each counted once)."""
        return self._timeline.held

    @property
    def fetch_names(self) -> list[str]:
        """The program names of the fetched variables, in the order of ``results`` (the
        fetch list may hold Variables or names, or be one of them)."""
        items = self.fetch_list if isinstance(self.fetch_list, (list, tuple)) \
            else [] if self.fetch_list is None else [self.fetch_list]
        return [i if isinstance(i, str) else getattr(i, "name", str(i)) for i in items]

    @property
    def frames(self) -> tuple:
        """The current step's frames, outermost first; () before the first step and after
        the end."""
        return self._current.frames if self._current is not None else ()

    def location(self):
        """(block_idx, op_index) of the current op, or None."""
        c = self._current
        return (c.block_idx, c.op_index) if c is not None else None

    def frame_stack(self) -> list[dict]:
        """The frames as plain dicts, outermost first, for a widget to display."""
        out = []
        for f in self.frames:
            out.append({"block_idx": f.block_idx, "block_path": f.block_path,
                        "scope_name": f.scope.name,
                        "owner_type": f.owner.type if f.owner is not None else None,
                        "owner_index": _index_of(f.owner)})
        return out

    # --- commands ------------------------------------------------------------------------
    def step(self) -> Step | None:
        """Run exactly one op; a control-flow op's sub-block is entered, not run whole."""
        return self._run_until(lambda s: True)

    def step_over(self) -> Step | None:
        """Run until a step no deeper than the current one. The next op, if it owns a
        sub-block, runs whole (its inner steps are deeper). Before the first step this is
        depth 1, so the first op is stepped over too."""
        depth = self._current.depth if self._current is not None else 1
        return self._run_until(lambda s: s.depth <= depth)

    def step_out(self) -> Step | None:
        """Run until the op that owns the current block has finished (a step shallower than
        the current one). In the global block there is nothing to leave: like cont()."""
        depth = self._current.depth if self._current is not None else 1
        if depth <= 1:
            return self.cont()
        return self._run_until(lambda s: s.depth < depth)

    def cont(self) -> Step | None:
        """Run until an op on a breakpoint has run, or to the end."""
        return self._run_until(lambda s: False)

    def run_to(self, block_idx: int, op_index: int) -> Step | None:
        """cont() with a temporary breakpoint on op ``op_index`` of block ``block_idx``."""
        target = self._check_location(block_idx, op_index)
        return self._run_until(lambda s: (s.block_idx, s.op_index) == target)

    def run_to_end(self):
        """Run every remaining op, ignoring breakpoints (not the first bad value under
        check_nan_inf); return ``results`` (None while stopped before the end)."""
        self._run_until(lambda s: False, use_breakpoints=False)
        return self._results if self.finished else None

    def step_back(self, count: int = 1) -> Step | None:
        """Go back ``count`` steps: every variable the later ops wrote holds its earlier
        value again, scopes made since are gone and scopes deleted since are back. Returns
        the Step the cursor is at then (None: back at the start, before the first op).
        Forward commands replay the undone steps from the records before running on.

        Raises DebuggerError, changing nothing, when there is no step to go back to (no op
        has run) or when the step was dropped from the history (``history_bytes``)."""
        if not _is_index(count) or count < 1:
            raise DebuggerError(f"step_back(count): count is a number of steps >= 1, "
                                f"got {count!r}")
        tl = self._timeline
        if tl.pos == 0:
            raise DebuggerError("nothing to step back to: no op has run yet (this is the "
                                "start of the run)")
        if tl.pos - count < tl.dropped:
            kept = tl.pos - tl.dropped - (1 if self.finished else 0)
            raise DebuggerError(
                f"history dropped: the records of the oldest {tl.dropped} steps went over "
                f"history_bytes={self.history_bytes} ({_human(self.history_bytes)}), so only "
                f"the last {max(kept, 0)} steps can be undone from here; raise "
                f"history_bytes=... (Debugger(..., history_bytes=...)) to keep more")
        for _ in range(count):
            tl.undo_last()
        self._sync_current()
        return self._current

    def restart(self, rerun_startup: bool = False) -> None:
        """Abandon this run and start a new one with the same feed. Parameters in the scope
        keep their (perhaps already updated) values unless ``rerun_startup`` re-initialises
        them with the startup program; after a step back they keep the values they have at
        the cursor. Breakpoints stay; the step-back history and ``bad_value`` go."""
        self._close()
        self._timeline.discard(keep=self.scope)
        if rerun_startup and self.startup is not None:
            Executor(self.place).run(self.startup, scope=self.scope)
        self._start()

    # --- breakpoints ---------------------------------------------------------------------
    def add_breakpoint(self, block_idx: int, op_index: int) -> None:
        self._breakpoints.add(self._check_location(block_idx, op_index))

    def remove_breakpoint(self, block_idx: int, op_index: int) -> None:
        """Remove a breakpoint; removing one that is not set is not an error (a toggle)."""
        self._breakpoints.discard(self._check_location(block_idx, op_index))

    def clear_breakpoints(self) -> None:
        self._breakpoints.clear()

    # --- backward ops --------------------------------------------------------------------
    def forward_op_of(self, grad_op: Operator) -> Operator | None:
        """The forward op that backward op ``grad_op`` differentiates, or None.

        Found by names alone, so it works for programs Paddle saved: a grad op reads the
        gradient ``y@GRAD`` (or ``y@GRAD@RENAME@k``) of each forward output ``y`` it needs,
        and the forward op is the one that writes ``y``, in the grad op's block or, for a
        gradient block, in the block it differentiates (``forward_block_idx``). An op
        whose type plus ``_grad`` is the grad op's type wins over other writers."""
        if not op_role(grad_op) & _BACKWARD:
            return None
        block = grad_op.block
        if block.forward_block_idx >= 0:
            block = block.program.block(block.forward_block_idx)
        wanted = {forward_name(n) for n in grad_op.input_arg_names if GRAD_SUFFIX in n}
        writers = [op for op in block.ops
                   if is_forward(op) and wanted.intersection(op.output_arg_names)]
        for op in writers:
            if op.type + "_grad" == grad_op.type:
                return op
        return writers[0] if writers else None

    # --- the engine ----------------------------------------------------------------------
    # The timeline (history.py) holds one record per move forward: a step's, and at the
    # end one for what ending did. Records ahead of its cursor are the redo log.
    def _start(self) -> None:
        # A fresh Executor per run: prepared blocks cache each op's kernel, and a kernel
        # swapped in the registry since (a patched one restored) must be picked up.
        # steps() checks feed and fetch before it returns, so a bad one raises here.
        self._current, self._changed = None, []
        self._ended, self._results, self._error, self._bad = False, None, None, None
        self._timeline = Timeline(self.history_bytes)
        if self.check_nan_inf:
            check_feed_finite(self.feed)
        self._exe = Executor(self.place, transport=self.transport)
        self._gen = self._exe.steps(self.program, self.feed, self.fetch_list, self.scope,
                                    check_nan_inf=False,
                                    before_op=self._timeline.before_op)

    def _close(self) -> None:
        # Closing the generator runs the executor's finally: the run scope is deleted,
        # and with it every kid scope a sub-block made below it (not recorded: the
        # timeline stops listening first).
        if self._timeline is not None:
            self._timeline.close()
        if self._gen is not None:
            self._gen.close()
            self._gen = None

    def _advance_live(self):
        """One next() on the executor's generator; the new record, or None at the end."""
        try:
            step = next(self._gen)
        except StopIteration as done:
            self._end(results=done.value)
            return None
        except BaseException as e:
            # A kernel's error (already located by the executor) or a KeyboardInterrupt:
            # the generator is dead, its run scope gone; record it and let it propagate.
            self._end(error=e)
            raise
        rec = self._timeline.record(step)
        if self.check_nan_inf and self._bad is None:
            self._bad = find_bad_value(step, len(self._timeline.trail))
        return rec

    def _end(self, results=None, error=None) -> None:
        self._gen = None
        self._timeline.record_end()
        self._ended, self._results, self._error = True, results, error
        self._sync_current()

    def _forward(self):
        """One move forward: replay the next record, or run the next op at the frontier.
        The record moved over, or None at the end."""
        rec = self._timeline.redo_next()
        if rec is not None:
            return rec
        if self._gen is None:
            return None
        return self._advance_live()

    def _sync_current(self) -> None:
        step = None if self.finished else self._timeline.step_at_cursor()
        self._current = step
        if step is None:
            self._changed = []
            return
        names = dict.fromkeys(step.op.output_arg_names if step.wrote is None
                              else step.wrote)                # ordered, no repeats
        self._changed = [n for n in names if _has_value(step.scope, n)]

    def _advance(self) -> Step | None:
        """One move forward (replayed or run), with the bookkeeping: the Step, or None at
        the end."""
        rec = self._forward()
        self._sync_current()
        return rec.step if rec is not None else None

    def _run_until(self, stop, use_breakpoints: bool = True) -> Step | None:
        try:
            while True:
                step = self._advance()
                if step is None:
                    return None
                bad = self._bad is not None and self._bad.step == self.steps_taken
                if bad or stop(step) or (use_breakpoints and
                                         (step.block_idx, step.op_index) in self._breakpoints):
                    return step
        except KeyboardInterrupt as e:
            # Also when it arrived between two steps, with the generator merely suspended:
            # close it so no half-run scopes are left behind, and restart() can begin anew.
            # (The run scope's deletion is recorded, so step_back works from there too.)
            # During a replay the generator is not touched: the run goes on from there.
            tl = self._timeline
            if not self._ended and self._gen is not None and tl.pos == tl.frontier:
                self._gen.close()
                self._end(error=e)
            raise

    def _check_location(self, block_idx, op_index) -> tuple[int, int]:
        blocks = self.program.blocks
        if not _is_index(block_idx) or not 0 <= block_idx < len(blocks):
            raise DebuggerError(f"no block {block_idx!r}: this program has blocks 0.."
                                f"{len(blocks) - 1}")
        ops = blocks[block_idx].ops
        if not _is_index(op_index) or not 0 <= op_index < len(ops):
            raise DebuggerError(f"no op {op_index!r} in block {block_idx}: it has "
                                f"{len(ops)} ops" + (f" (0..{len(ops) - 1})" if ops else ""))
        return (int(block_idx), int(op_index))     # numpy ints too, stored as int

    def __repr__(self):
        where = "finished" if self.finished else (repr(self._current) if self._current
                                                  else "not started")
        return f"<Debugger {where}, {self.steps_taken} step{'' if self.steps_taken == 1 else 's'}>"


def _human(n: int) -> str:
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "bytes" else f"{n:.1f} {unit}"
        n /= 1024
    return str(n)


def _is_index(i) -> bool:
    return isinstance(i, numbers.Integral) and not isinstance(i, bool)


def _has_value(scope: Scope, name: str) -> bool:
    var = scope.find_var(name)
    return var is not None and var.is_initialized()


def _index_of(op: Operator | None):
    if op is None:
        return None
    try:
        return op.idx
    except ValueError:          # the op was removed from its block since
        return None
