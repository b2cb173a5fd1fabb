"""A scriptable step debugger: ``Executor.steps`` advanced by hand (DESIGN decision 5).

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

**Stepping back** (``step_back()``) is time travel by copy-on-write records, not by
re-running: the executor calls the debugger just before each op runs (``before_op``), and
the debugger copies the current value of each of the op's outputs it has no copy of yet;
when the op's Step arrives it copies what the op wrote. So each step's *record* holds,
for every variable the step changed, its value before the step (the value as of the
previous step: for a control-flow op, after its inner steps) and after it. A record also
holds the scopes made and deleted since the step before (a scope a control-flow op deletes
when it finishes is copied first, so stepping back into it shows its values again), and
values a kernel set outside any op (an RNN's ``x[t]`` in its step scope). ``step_back``
undoes the newest record; any later command first *replays* the records ahead of the
cursor (a redo log: values are put back, no kernel runs; breakpoints and the first bad
value stop a replay as they stop a run) and only at the live frontier advances the
executor again. The records are bounded in bytes (``history_bytes``, default 256 MiB): the
oldest are dropped when over, and stepping back past them raises a DebuggerError.

**The first bad value.** With ``check_nan_inf=True`` every step's outputs are checked
(float tensors, tensor arrays, SelectedRows); the first op that writes a NaN or Inf stops
whatever command ran, *with its scope alive* (unlike ``Executor.run(check_nan_inf=True)``,
which raises and deletes the run), and ``bad_value`` describes it: the op, its block
path, the output, the first bad element, the counts, the user's line that built the op and
its inputs. It stops once: stepping on continues the run (later NaNs follow from the first)
and ``bad_value`` stays until ``restart()``; ``step_back()`` works from there as anywhere.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from ..core.backward import is_forward, op_role
from ..core.errors import FeedError, PaddleNBError
from ..core.executor import (Executor, Step, _all_finite, _count_non_finite, _float_arrays)
from ..core.grad_maker import EMPTY_VAR, GRAD_SUFFIX, forward_name
from ..core.operator import Operator
from ..core.place import CPUPlace
from ..core.program import default_main_program
from ..core.scope import _LIVE, Scope
from ..core.selected_rows import SelectedRows

_BACKWARD = 1          # op_role bit of gradient ops (257, the loss-grad fill, has it too)

DEFAULT_HISTORY_BYTES = 256 * 2 ** 20       # what step_back's records may hold: 256 MiB
_SNAP_OVERHEAD = 64                          # bytes counted per copied value besides data


class DebuggerError(PaddleNBError):
    """Misuse of the debugger: a breakpoint on a block or op that does not exist, a step
    back with nothing (or nothing kept) to go back to."""


@dataclass
class BadValue:
    """The first NaN/Inf of a run under ``check_nan_inf``: where, what, and from what.

    ``index`` is the first bad element's index in the output (``item``: the tensor array's
    item, else None); ``inputs`` one dict per input variable with a value: ``slot``,
    ``name``, ``kind`` and, for tensors, ``dtype``, ``shape``, ``min``/``max`` (over the
    finite values), ``nan``, ``inf`` and ``values`` (the list, for at most 16 elements)."""
    step: int                       # steps_taken at the bad step
    block_idx: int
    op_index: int
    op_type: str
    block_path: str
    scope_name: str
    slot: str
    name: str
    item: int | None
    index: tuple
    value: float
    nan: int
    inf: int
    dtype: str
    shape: list
    created_at: str | None
    inputs: list = field(default_factory=list)

    @property
    def location(self) -> tuple[int, int]:
        return (self.block_idx, self.op_index)

    def __str__(self) -> str:
        what = repr(self.name) if self.item is None else f"item {self.item} of {self.name!r}"
        at = ", ".join(map(str, self.index))
        lines = [f"first NaN/Inf at step {self.step}: {self.block_path} > op {self.op_index} "
                 f"{self.op_type} (scope {self.scope_name!r})",
                 f"  output {self.slot} ({what}): {self.nan} NaN and {self.inf} Inf in "
                 f"{self.dtype}{self.shape}; the first at [{at}] = {self.value}",
                 f"  built at: {self.created_at or '(not recorded)'}"]
        for i in self.inputs:
            lines.append(f"  input {i['slot']} ({i['name']!r}): {_input_text(i)}")
        return "\n".join(lines)


class Debugger:
    """Step through one run of ``program``; see the module docstring for the semantics.

    ``Debugger(program, feed, fetch_list, scope, place, startup, check_nan_inf,
    history_bytes)``: the defaults are the default main program, a fresh Scope, the CPU,
    no NaN check and 256 MiB of step-back records. ``startup`` is run into the scope once
    here (again on ``restart(rerun_startup=True)``). A bad feed or fetch raises here, from
    the executor. The arguments stay as attributes; a new ``feed`` is used from the next
    ``restart()``. Not thread-safe: one widget drives one debugger.
    """

    def __init__(self, program=None, feed=None, fetch_list=None, scope=None, place=None,
                 startup=None, check_nan_inf: bool = False,
                 history_bytes: int = DEFAULT_HISTORY_BYTES):
        self.program = program if program is not None else default_main_program()
        self.feed, self.fetch_list = feed, fetch_list
        self.scope = scope if scope is not None else Scope()
        self.place = place if place is not None else CPUPlace()
        self.startup = startup
        self.check_nan_inf = bool(check_nan_inf)
        self.history_bytes = int(history_bytes)
        self._breakpoints: set[tuple[int, int]] = set()
        if startup is not None:
            Executor(self.place).run(startup, scope=self.scope)
        self._gen = None
        self._observer = None
        self._records: list[_Record] = []
        self._start()

    # --- state (read-only) ---------------------------------------------------------------
    current = property(lambda self: self._current,
                       doc="The Step the cursor is at (its op has run); None before the "
                           "first step and at the end of the run.")
    finished = property(lambda self: self._ended and self._pos == self._frontier,
                        doc="The run has ended and the cursor is at its end (step_back() "
                            "leaves the end: then finished is False again).")
    results = property(lambda self: self._results,
                       doc="The fetched arrays once the run ended without error, else None "
                           "(kept when you step back from the end).")
    error = property(lambda self: self._error,
                     doc="The exception that ended the run (a kernel's ExecutionError, a "
                         "KeyboardInterrupt), else None.")
    steps_taken = property(lambda self: self._pos - (1 if self.finished else 0),
                           doc="Steps from the start of the run to the cursor: stepping "
                               "back lowers it, stepping (or replaying) raises it.")
    changed = property(lambda self: list(self._changed),
                       doc="Output names of the current op that now hold a value (after a "
                           "step back: what that step wrote, as when it was first reached).")
    history = property(lambda self: self._trail[:self.steps_taken],
                       doc="(block_idx, op_index, op_type) of every step from the start to "
                           "the cursor; the steps ahead of it (after step_back) are in "
                           "``redo_count``.")
    breakpoints = property(lambda self: set(self._breakpoints))
    bad_value = property(lambda self: self._bad,
                         doc="The first NaN/Inf of this run (check_nan_inf), a BadValue; "
                             "None until one was found.")
    redo_count = property(lambda self: len(self._trail) - self.steps_taken,
                          doc="Steps ahead of the cursor that commands replay (after "
                              "step_back) before the program runs on.")
    history_dropped = property(lambda self: self._dropped,
                               doc="How many of the oldest steps can no longer be undone "
                                   "(their records went over history_bytes).")

    @property
    def can_step_back(self) -> bool:
        """Is there a kept record to undo (step_back() would move)?"""
        return self._pos > self._dropped

    @property
    def history_bytes_held(self) -> int:
        """Bytes the step-back records hold now (copied values, each counted once)."""
        return self._held

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
        if self._pos == 0:
            raise DebuggerError("nothing to step back to: no op has run yet (this is the "
                                "start of the run)")
        if self._pos - count < self._dropped:
            kept = self._pos - self._dropped - (1 if self.finished else 0)
            raise DebuggerError(
                f"history dropped: the records of the oldest {self._dropped} steps went over "
                f"history_bytes={self.history_bytes} ({_human(self.history_bytes)}), so only "
                f"the last {max(kept, 0)} steps can be undone from here; raise "
                f"history_bytes=... (Debugger(..., history_bytes=...)) to keep more")
        for _ in range(count):
            self._pos -= 1
            self._undo(self._records[self._pos - self._dropped])
        self._sync_current()
        return self._current

    def restart(self, rerun_startup: bool = False) -> None:
        """Abandon this run and start a new one with the same feed. Parameters in the scope
        keep their (perhaps already updated) values unless ``rerun_startup`` re-initialises
        them with the startup program; after a step back they keep the values they have at
        the cursor. Breakpoints stay; the step-back history and ``bad_value`` go."""
        self._close()
        self._discard_history()
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
    # The timeline is a list of records, one per move forward: a step's, and at the end
    # one for what ending did (the run scope deleted, parameters put back after an error).
    # ``_pos`` counts the records applied (the oldest ``_dropped`` no longer kept);
    # ``_frontier`` is how many there are. Records ahead of ``_pos`` are the redo log.
    def _start(self) -> None:
        # A fresh Executor per run: prepared blocks cache each op's kernel, and a kernel
        # swapped in the registry since (a patched one restored) must be picked up.
        # steps() checks feed and fetch before it returns, so a bad one raises here.
        self._current, self._changed = None, []
        self._ended, self._results, self._error, self._bad = False, None, None, None
        self._records, self._trail = [], []
        self._pos = self._dropped = self._held = 0
        self._base_step = None          # the step at position _dropped (its record dropped)
        self._known: dict = {}          # variable -> (its copy as of the last step, value)
        self._events: list = []         # scopes made / deleted since the last step
        self._new_scopes: set = set()
        self._seq: dict = {}            # scope -> the order it was made in (display order)
        self._seen_vars: dict = {}      # a scope made in this run -> its variables seen
        self._prev_kids: tuple = ()     # the sub-block scopes of the last live step
        self._observer = _Observer(self)
        self._run_scope = None
        if self.check_nan_inf:
            _check_feed_finite(self.feed)
        self._exe = Executor(self.place)
        self._gen = self._exe.steps(self.program, self.feed, self.fetch_list, self.scope,
                                    check_nan_inf=False, before_op=self._before_op)

    @property
    def _frontier(self) -> int:
        return self._dropped + len(self._records)

    def _close(self) -> None:
        # Closing the generator runs the executor's finally: the run scope is deleted,
        # and with it every kid scope a sub-block made below it (not recorded: the
        # observer is off first).
        if self._observer is not None:
            self._observer.active = False
        if self._gen is not None:
            self._gen.close()
            self._gen = None

    def _discard_history(self) -> None:
        """Delete the scopes of this run that the records kept alive: scopes brought back
        by stepping back from the end, and scopes made by steps that were undone."""
        seen = [ev.scope for rec in self._records for ev in rec.events]
        if self._run_scope is not None:
            seen.append(self._run_scope)
        for scope in seen:
            if scope.alive and scope is not self.scope:
                parent = scope.parent
                if parent is not None and any(k is scope for k in parent._kids):
                    parent.delete_scope(scope)
                else:
                    scope._destroy()
        self._records, self._known = [], {}

    def _before_op(self, op, scope, frames) -> None:
        """Executor.steps' hook, just before ``op`` runs in ``scope``: make sure each
        variable it will overwrite has a copy of its current value (copy-on-write)."""
        if self._run_scope is None:          # the first op: watch the run scope from now
            self._run_scope = frames[0].scope
            self._run_scope._observer = self._observer
        known = self._known
        for name in op.output_arg_names:
            if name == EMPTY_VAR:
                continue
            var = scope.find_var(name)
            if var is None:
                continue                     # the kernel creates it: absent before
            k = known.get(var)
            if k is None or k[0] is None:
                known[var] = (_snap(var), var._value)

    def _scope_created(self, kid) -> None:
        self._seq[kid] = len(self._seq)
        self._seen_vars[kid] = set()
        self._new_scopes.add(kid)
        self._events.append(_Event("new", kid, kid.parent))

    def _scope_destroying(self, scope) -> None:
        contents = []
        for var in list(scope._vars.values()):
            k = self._known.get(var)
            snap = k[0] if k is not None and k[0] is not None and k[1] is var._value \
                else _snap(var)
            contents.append((var, snap))
        self._events.append(_Event("gone", scope, scope.parent, dict(scope._vars), contents))

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
        return self._record(step)

    def _record(self, step: Step):
        known, seen, writes, handled = self._known, self._seen_vars, [], set()
        if step.wrote is None:
            for name in dict.fromkeys(step.op.output_arg_names):
                var = step.scope.find_var(name) if name != EMPTY_VAR else None
                if var is None or var in handled:
                    continue
                handled.add(var)
                k = known.get(var)
                before = k[0] if k is not None and k[0] is not None else _EMPTY
                after = _snap(var)
                # made by the kernel, or declared since the last step in a watched scope
                new = k is None or var not in seen.get(var.scope, (var,))
                if before is _EMPTY and after is _EMPTY and not new:
                    continue
                writes.append(_Write(var, before, after, (var.scope, name) if new else None))
        # values a kernel set outside any op (an RNN's x[t], a fused cell's values), and
        # variables declared since the last step (a sub-block declares its locals in the
        # scope it runs in, a kept step scope too): in the sub-block scopes of this step
        # and the last, and in scopes made since then
        kids = tuple(f.scope for f in step.frames[1:])
        scan = list(dict.fromkeys(self._prev_kids + kids +
                                  tuple(s for s in self._new_scopes if s.alive)))
        for scope in scan:
            if not scope.alive:
                continue
            had = seen.get(scope, ())
            for name, var in list(scope._vars.items()):
                if var in handled:
                    continue
                k = known.get(var)
                new = var not in had
                if k is not None and k[1] is var._value and not new:
                    continue
                before = k[0] if k is not None and k[0] is not None else _EMPTY
                writes.append(_Write(var, before, _snap(var), (scope, name) if new else None))
                handled.add(var)
            seen[scope] = set(scope._vars.values())
        for w in writes:
            s_ = seen.get(w.var.scope)
            if s_ is not None:
                s_.add(w.var)
        for w in writes:
            known[w.var] = (w.after, w.var._value)
        rec = _Record(step, writes, self._events)
        self._events, self._new_scopes, self._prev_kids = [], set(), kids
        self._trail.append((step.block_idx, step.op_index, step.op.type))
        self._append(rec)
        if self.check_nan_inf and self._bad is None:
            bad = _find_bad_value(step, len(self._trail))
            if bad is not None:
                self._bad = bad
        return rec

    def _end(self, results=None, error=None) -> None:
        self._gen = None
        # Writes outside any op while the run ended: Executor.steps puts the parameters
        # back when a run fails. (A variable of a deleted scope is the scope's business.)
        writes = []
        for var, (snap, live) in list(self._known.items()):
            if var._value is not live and var.scope.alive and snap is not None:
                writes.append(_Write(var, snap, _snap(var), None))
        for w in writes:
            self._known[w.var] = (w.after, w.var._value)
        self._observer.active = False
        rec = _Record(None, writes, self._events)
        self._events, self._new_scopes = [], set()
        self._ended, self._results, self._error = True, results, error
        self._append(rec)
        self._sync_current()

    def _append(self, rec) -> None:
        """Add a live record at the frontier (the cursor is there) and keep the records
        within history_bytes, dropping the oldest."""
        self._records.append(rec)
        self._pos += 1
        for snap in rec.snaps():
            if snap.refs == 0:
                self._held += snap.nbytes
            snap.refs += 1
        while self._held > self.history_bytes and self._records:
            old = self._records.pop(0)
            self._dropped += 1
            self._base_step = old.step
            for snap in old.snaps():
                snap.refs -= 1
                if snap.refs == 0:
                    self._held -= snap.nbytes
                    k = self._known.get(snap.var)
                    if k is not None and k[0] is snap:     # no copy held for it any more
                        self._known[snap.var] = (None, k[1])

    def _forward(self):
        """One move forward: replay the next record, or run the next op at the frontier.
        The record moved over, or None at the end."""
        if self._pos < self._frontier:
            rec = self._records[self._pos - self._dropped]
            self._redo(rec)
            self._pos += 1
            return rec
        if self._gen is None:
            return None
        return self._advance_live()

    def _undo(self, rec) -> None:
        for w in reversed(rec.writes):
            self._put(w.var, w.before)
            if w.created is not None:
                scope, name = w.created
                if scope._vars.get(name) is w.var:
                    del scope._vars[name]
        for ev in reversed(rec.events):
            if ev.kind == "new":
                _detach(ev.scope)
            else:
                self._revive(ev)

    def _redo(self, rec) -> None:
        for ev in rec.events:
            if ev.kind == "new":
                self._attach(ev.scope, ev.parent)
            else:
                _bury(ev.scope)
        for w in rec.writes:
            if w.created is not None:
                scope, name = w.created
                scope._vars[name] = w.var
            self._put(w.var, w.after)

    def _put(self, var, snap) -> None:
        var._value, var._kind = _copy(snap.value, snap.kind), snap.kind
        self._known[var] = (snap, var._value)

    def _attach(self, scope, parent) -> None:
        kids, seq = parent._kids, self._seq
        if any(k is scope for k in kids):
            return
        mine = seq.get(scope, -1)
        at = sum(1 for k in kids if seq.get(k, -1) <= mine)
        kids.insert(at, scope)

    def _revive(self, ev) -> None:
        scope = ev.scope
        scope._vars = dict(ev.vars)
        scope._parent = ev.parent
        for var, snap in ev.contents:
            self._put(var, snap)
        scope.alive = True
        _LIVE.add(scope)
        if ev.parent is not None:
            self._attach(scope, ev.parent)

    def _sync_current(self) -> None:
        if self._pos == 0 or self.finished:
            step = None
        else:
            i = self._pos - 1 - self._dropped
            step = self._records[i].step if i >= 0 else self._base_step
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
            if not self._ended and self._gen is not None and self._pos == self._frontier:
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


# --- the records ---------------------------------------------------------------------------
class _Snap:
    """A copy of one variable's value (kind None: it held nothing), shared by the records
    that need it (the after of one step is the before of the next writer's)."""
    __slots__ = ("var", "value", "kind", "nbytes", "refs")

    def __init__(self, var, value, kind, nbytes):
        self.var, self.value, self.kind, self.nbytes, self.refs = var, value, kind, nbytes, 0


_EMPTY = _Snap(None, None, None, 0)
_EMPTY.refs = 1                          # never counted, never released


class _Write:
    __slots__ = ("var", "before", "after", "created")

    def __init__(self, var, before, after, created):
        # created: (scope, name) when the kernel made the variable (it goes on undo)
        self.var, self.before, self.after, self.created = var, before, after, created


class _Event:
    __slots__ = ("kind", "scope", "parent", "vars", "contents")

    def __init__(self, kind, scope, parent, vars_=None, contents=()):
        self.kind, self.scope, self.parent = kind, scope, parent
        self.vars, self.contents = vars_, contents


class _Record:
    __slots__ = ("step", "writes", "events")

    def __init__(self, step, writes, events):
        self.step, self.writes, self.events = step, writes, events

    def snaps(self):
        """The distinct copies this record refers to."""
        seen = {}
        for w in self.writes:
            seen[id(w.before)] = w.before
            seen[id(w.after)] = w.after
        for ev in self.events:
            for _, snap in ev.contents:
                seen[id(snap)] = snap
        seen.pop(id(_EMPTY), None)
        return list(seen.values())


class _Observer:
    """Told by the run's scopes when a kid is made or a scope is about to be deleted."""

    def __init__(self, debugger):
        self.debugger, self.active = debugger, True

    def scope_created(self, kid) -> None:
        if self.active:
            self.debugger._scope_created(kid)

    def scope_destroying(self, scope) -> None:
        if self.active:
            self.debugger._scope_destroying(scope)


def _snap(var) -> _Snap:
    kind = var._kind
    if kind is None:
        return _EMPTY
    value = _copy(var._value, kind)
    return _Snap(var, value, kind, _nbytes(value) + _SNAP_OVERHEAD)


def _copy(value, kind):
    """An independent copy of a variable's value (to keep, or to put back): arrays are
    copied (device arrays to the host: a CUDA kernel context moves them back on first
    read), a tensor array item by item, a list of scopes as a list; scalars, strings,
    scopes and ops are immutable or shared as they are."""
    if kind is None:
        return None
    if value.__class__ is np.ndarray:
        return value.copy()
    if value.__class__ is SelectedRows:
        host = value.to_host()
        return SelectedRows(np.array(host.rows, copy=True), np.array(host.value, copy=True),
                            host.height)
    if hasattr(value, "copy_to_host") and not isinstance(value, np.ndarray):
        return value.copy_to_host()
    if isinstance(value, list):
        if kind == "scopes":
            return list(value)
        return [_copy(v, "tensor") if v is not None else None for v in value]
    if isinstance(value, np.ndarray):      # a subclass
        return np.array(value, copy=True)
    return value


def _nbytes(value) -> int:
    if isinstance(value, list):
        return sum(_nbytes(v) for v in value)
    if value.__class__ is SelectedRows:
        return int(value.rows.nbytes) + int(value.value.nbytes)
    return int(getattr(value, "nbytes", 0) or 0)


def _detach(scope) -> None:
    parent = scope._parent
    if parent is not None:
        parent._kids[:] = [k for k in parent._kids if k is not scope]


def _bury(scope) -> None:
    """What Scope._destroy does to one scope (its kids have events of their own), without
    telling the observer: replaying a deletion the records already hold."""
    _detach(scope)
    scope.alive = False
    for v in scope._vars.values():
        v._value, v._kind = None, None
    scope._vars = {}
    scope._parent = None
    _LIVE.discard(scope)


# --- the first bad value -------------------------------------------------------------------
def _find_bad_value(step: Step, number: int) -> BadValue | None:
    if step.wrote is None:
        pairs = [(slot, n) for slot, names in step.op.outputs.items() for n in names
                 if n != EMPTY_VAR]
    else:
        pairs = [("cell", n) for n in step.wrote]
    for slot, name in pairs:
        var = step.scope.find_var(name)
        if var is None or var._kind is None:
            continue
        for item, a in _float_arrays(var._value):
            if _all_finite(a):
                continue
            nan, inf = _count_non_finite(a)
            flat = int(np.flatnonzero(~np.isfinite(a))[0])
            index = tuple(int(i) for i in np.unravel_index(flat, a.shape))
            return BadValue(
                step=number, block_idx=step.block_idx, op_index=step.op_index,
                op_type=step.op.type, block_path=step.block_path,
                scope_name=step.scope.name, slot=slot, name=name, item=item, index=index,
                value=float(a.reshape(-1)[flat]), nan=nan, inf=inf, dtype=str(a.dtype),
                shape=[int(d) for d in a.shape], created_at=step.op.created_at,
                inputs=_inputs_of(step))
    return None


def _inputs_of(step: Step) -> list[dict]:
    out = []
    for slot, names in step.op.inputs.items():
        for n in names:
            var = step.scope.find_var(n) if n != EMPTY_VAR else None
            if var is None or var._kind is None:
                continue
            entry = {"slot": slot, "name": n, "kind": var._kind}
            value = var._value
            if value.__class__ is SelectedRows:
                value = value.to_host().to_dense()
            elif hasattr(value, "copy_to_host") and not isinstance(value, np.ndarray):
                value = value.copy_to_host()
            if isinstance(value, np.ndarray):
                entry.update(_summary(value))
            elif isinstance(value, list):
                entry["items"] = len(value)
            out.append(entry)
    return out


def _summary(a: np.ndarray) -> dict:
    s = {"dtype": str(a.dtype), "shape": [int(d) for d in a.shape]}
    if a.dtype.kind in "fiub" and a.size:
        if a.dtype.kind == "f":
            finite = a[np.isfinite(a)]
            s["nan"], s["inf"] = _count_non_finite(a)
        else:
            finite = a
            s["nan"] = s["inf"] = 0
        if finite.size:
            s["min"], s["max"] = float(finite.min()), float(finite.max())
    if a.size <= 16:
        s["values"] = a.tolist()
    return s


def _input_text(i: dict) -> str:
    if "shape" not in i:
        return f"a {i['kind']}" + (f" of {i['items']} items" if "items" in i else "")
    text = f"{i['dtype']}{i['shape']}"
    if "values" in i:
        text += f" = {np.array2string(np.asarray(i['values']), precision=4)}"
    elif "min" in i:
        text += f", min {i['min']:.4g}, max {i['max']:.4g}"
    if i.get("nan") or i.get("inf"):
        text += f" (already {i['nan']} NaN and {i['inf']} Inf)"
    return text


def _check_feed_finite(feed) -> None:
    for key, value in (feed or {}).items():
        name = key if isinstance(key, str) else getattr(key, "name", key)
        try:
            a = np.asarray(value)
        except (TypeError, ValueError):
            continue                      # the executor says what is wrong with it
        if a.dtype.kind == "f" and a.size and not _all_finite(a):
            nan, inf = _count_non_finite(a)
            raise FeedError(f"feed {name!r} has {nan} NaN and {inf} Inf values "
                            f"(check_nan_inf is on)")


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
