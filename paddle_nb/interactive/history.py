"""The debugger's timeline: copy-on-write records of what each step changed, so that
``Debugger.step_back`` can undo steps and later commands can replay them.

Time travel here is by records, never by running kernels again (a run's generator cannot be
rewound, and a dropout mask must come out the same):

- **Before each op** runs (``Executor.steps(before_op=...)``, passed down to sub-blocks) the
  timeline copies the current value of each variable the op will overwrite, if it holds no
  copy of it yet. **At each Step** it copies what the step wrote. Copies are kept per
  variable and shared between records (one step's *after* is the next writer's *before*),
  so a control-flow op's *before* is the value as of the previous Step, after its inner
  steps.
- **Scopes.** The run scope's observer (``Scope._observer``, inherited by its kids) reports
  each scope made and each scope about to be deleted, which is copied first: undoing a step
  detaches the scopes it made and revives the ones it deleted, values and all. From its
  deletion on, a scope's values live only in those copies (counted, dropped with the
  record): the timeline forgets its variables and their live values.
- **Values set outside any op** (an RNN's ``x[t]`` in its step scope, the locals a sub-block
  declares) are found by scanning the sub-block scopes of this step and the last.
- **The end of the run** has a record too (the run scope deleted, parameters put back after
  an error), so stepping back from the end works and the results stay.

Records ahead of the cursor are the redo log. They are bounded by ``history_bytes``: every
copy counts once, plus ``SNAP_OVERHEAD``; past it the oldest records are dropped.
"""
from __future__ import annotations

import numpy as np

from ..core.grad_maker import EMPTY_VAR
from ..core.selected_rows import SelectedRows

SNAP_OVERHEAD = 64                        # bytes counted per copied value besides its data


class Snap:
    """A copy of one variable's value (kind None: it held nothing), shared by the records
    that need it."""
    __slots__ = ("var", "value", "kind", "nbytes", "refs")

    def __init__(self, var, value, kind, nbytes):
        self.var, self.value, self.kind, self.nbytes, self.refs = var, value, kind, nbytes, 0


EMPTY = Snap(None, None, None, 0)
EMPTY.refs = 1                            # never counted, never released


class Write:
    """One variable a step changed: its copies before and after, and (scope, name) when
    the step made the variable (undoing the step takes it out again)."""
    __slots__ = ("var", "before", "after", "created")

    def __init__(self, var, before, after, created):
        self.var, self.before, self.after, self.created = var, before, after, created


class ScopeEvent:
    """A scope made ("new") or deleted ("gone", with its variables and their copies)."""
    __slots__ = ("kind", "scope", "parent", "vars", "contents")

    def __init__(self, kind, scope, parent, vars_=None, contents=()):
        self.kind, self.scope, self.parent = kind, scope, parent
        self.vars, self.contents = vars_, contents


class Record:
    """What one move forward did: its Step (None for the end of the run), the variables it
    wrote and the scopes it made or deleted."""
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
        seen.pop(id(EMPTY), None)
        return list(seen.values())


class _Observer:
    """Told by the run's scopes when a kid is made or a scope is about to be deleted."""

    def __init__(self, timeline):
        self.timeline, self.active = timeline, True

    def scope_created(self, kid) -> None:
        if self.active:
            self.timeline.scope_created(kid)

    def scope_destroying(self, scope) -> None:
        if self.active:
            self.timeline.scope_destroying(scope)


class Timeline:
    """The records of one run and the cursor among them.

    ``pos`` counts the records applied (the oldest ``dropped`` of them no longer kept);
    ``frontier`` is how many there are; ``trail`` is (block, op, type) per step taken."""

    def __init__(self, history_bytes: int):
        self.history_bytes = history_bytes
        self.records: list[Record] = []
        self.trail: list = []
        self.pos = self.dropped = self.held = 0
        self.base_step = None           # the step at position ``dropped`` (record dropped)
        self._known: dict = {}          # variable -> (its copy as of the last step, value)
        self._events: list = []         # scopes made / deleted since the last step
        self._new_scopes: set = set()
        self._seq: dict = {}            # scope -> the order it was made in (display order)
        self._seen_vars: dict = {}      # a scope made in this run -> its variables seen
        self._prev_kids: tuple = ()     # the sub-block scopes of the last live step
        self.observer = _Observer(self)
        self.run_scope = None

    @property
    def frontier(self) -> int:
        return self.dropped + len(self.records)

    def step_at_cursor(self):
        """The Step of the last record applied (None at the start)."""
        if self.pos == 0:
            return None
        i = self.pos - 1 - self.dropped
        return self.records[i].step if i >= 0 else self.base_step

    # --- recording, as the run goes -------------------------------------------------------
    def before_op(self, op, scope, frames) -> None:
        """Executor.steps' hook, just before ``op`` runs in ``scope``: make sure each
        variable it will overwrite has a copy of its current value (copy-on-write)."""
        if self.run_scope is None:           # the first op: watch the run scope from now
            self.run_scope = frames[0].scope
            self.run_scope._observer = self.observer
        known = self._known
        for name in op.output_arg_names:
            if name == EMPTY_VAR:
                continue
            var = scope.find_var(name)
            if var is None:
                continue                     # the kernel creates it: absent before
            k = known.get(var)
            if k is None or k[0] is None:
                known[var] = (snap_of(var), var._value)

    def scope_created(self, kid) -> None:
        self._seq[kid] = len(self._seq)
        self._seen_vars[kid] = set()
        self._new_scopes.add(kid)
        self._events.append(ScopeEvent("new", kid, kid.parent))

    def scope_destroying(self, scope) -> None:
        variables = scope.local_vars()
        contents = []
        for var in variables.values():
            k = self._known.get(var)
            snap = k[0] if k is not None and k[0] is not None and k[1] is var._value \
                else snap_of(var)
            contents.append((var, snap))
        self._events.append(ScopeEvent("gone", scope, scope.parent, variables, contents))
        self._forget(scope, variables)

    def _forget(self, scope, variables) -> None:
        """Stop tracking a scope that is being deleted: its values live on only as the
        copies its "gone" event holds (counted in ``held``). ``_known`` keeps each
        variable's live value to tell whether it changed; left there, a deleted step
        scope's last value (a While's body output) would outlive the scope and the
        records, one per loop step, uncounted. Undoing the deletion puts them back
        (``_put``)."""
        known = self._known
        for var in variables.values():
            known.pop(var, None)
        self._seen_vars.pop(scope, None)

    def record(self, step) -> Record:
        """The record of a live step, appended at the frontier."""
        known, seen, writes, handled = self._known, self._seen_vars, [], set()
        if step.wrote is None:
            for name in dict.fromkeys(step.op.output_arg_names):
                var = step.scope.find_var(name) if name != EMPTY_VAR else None
                if var is None or var in handled:
                    continue
                handled.add(var)
                k = known.get(var)
                before = k[0] if k is not None and k[0] is not None else EMPTY
                after = snap_of(var)
                # made by the kernel, or declared since the last step in a watched scope
                new = k is None or var not in seen.get(var.scope, (var,))
                if before is EMPTY and after is EMPTY and not new:
                    continue
                writes.append(Write(var, before, after, (var.scope, name) if new else None))
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
            variables = scope.local_vars()
            for name, var in variables.items():
                if var in handled:
                    continue
                k = known.get(var)
                new = var not in had
                if k is not None and k[1] is var._value and not new:
                    continue
                before = k[0] if k is not None and k[0] is not None else EMPTY
                writes.append(Write(var, before, snap_of(var), (scope, name) if new else None))
                handled.add(var)
            seen[scope] = set(variables.values())
        for w in writes:
            s_ = seen.get(w.var.scope)
            if s_ is not None:
                s_.add(w.var)
        for w in writes:
            known[w.var] = (w.after, w.var._value)
        rec = Record(step, writes, self._events)
        self._events, self._new_scopes, self._prev_kids = [], set(), kids
        self.trail.append((step.block_idx, step.op_index, step.op.type))
        self._append(rec)
        return rec

    def record_end(self) -> Record:
        """The record of the run's end: writes outside any op while it ended
        (Executor.steps puts the parameters back when a run fails; a variable of a deleted
        scope is the scope's business)."""
        writes = []
        for var, (snap, live) in list(self._known.items()):
            if var._value is not live and var.scope.alive and snap is not None:
                writes.append(Write(var, snap, snap_of(var), None))
        for w in writes:
            self._known[w.var] = (w.after, w.var._value)
        self.observer.active = False
        rec = Record(None, writes, self._events)
        self._events, self._new_scopes = [], set()
        self._append(rec)
        return rec

    def _append(self, rec) -> None:
        """Add a live record at the frontier (the cursor is there) and keep the records
        within history_bytes, dropping the oldest."""
        self.records.append(rec)
        self.pos += 1
        for snap in rec.snaps():
            if snap.refs == 0:
                self.held += snap.nbytes
            snap.refs += 1
        while self.held > self.history_bytes and self.records:
            old = self.records.pop(0)
            self.dropped += 1
            self.base_step = old.step
            for snap in old.snaps():
                snap.refs -= 1
                if snap.refs == 0:
                    self.held -= snap.nbytes
                    k = self._known.get(snap.var)
                    if k is not None and k[0] is snap:     # no copy held for it any more
                        self._known[snap.var] = (None, k[1])
            for ev in old.events:       # deleted for good: no record left can revive it
                if ev.kind == "gone":
                    self._seq.pop(ev.scope, None)

    # --- moving ---------------------------------------------------------------------------
    def redo_next(self) -> Record | None:
        """Replay the record ahead of the cursor (None at the frontier)."""
        if self.pos >= self.frontier:
            return None
        rec = self.records[self.pos - self.dropped]
        for ev in rec.events:
            if ev.kind == "new":
                self._attach(ev.scope)
            else:
                self._forget(ev.scope, ev.scope.local_vars())
                ev.scope.bury()
        for w in rec.writes:
            if w.created is not None:
                scope, name = w.created
                scope.put_var(name, w.var)
            self._put(w.var, w.after)
        self.pos += 1
        return rec

    def undo_last(self) -> None:
        """Undo the record before the cursor."""
        self.pos -= 1
        rec = self.records[self.pos - self.dropped]
        for w in reversed(rec.writes):
            self._put(w.var, w.before)
            if w.created is not None:
                scope, name = w.created
                if scope.find_local_var(name) is w.var:
                    scope.erase_vars([name])
        for ev in reversed(rec.events):
            if ev.kind == "new":
                ev.scope.detach()
            else:
                ev.scope.revive(ev.parent, ev.vars)
                for var, snap in ev.contents:
                    self._put(var, snap)
                if ev.parent is not None:
                    self._attach(ev.scope)

    def _put(self, var, snap) -> None:
        var._value, var._kind = copy_value(snap.value, snap.kind), snap.kind
        self._known[var] = (snap, var._value)

    def _attach(self, scope) -> None:
        seq, mine = self._seq, self._seq.get(scope, -1)
        scope.attach(lambda kid: seq.get(kid, -1) <= mine)

    def close(self) -> None:
        """Stop recording (the run is being abandoned)."""
        self.observer.active = False

    def discard(self, keep) -> None:
        """Delete the scopes of this run that the records kept alive (scopes brought back
        by stepping back from the end, scopes made by steps that were undone), except
        ``keep`` (the debugger's own scope)."""
        seen = [ev.scope for rec in self.records for ev in rec.events]
        if self.run_scope is not None:
            seen.append(self.run_scope)
        for scope in seen:
            if scope.alive and scope is not keep:
                parent = scope.parent
                if parent is not None and any(k is scope for k in parent.kids):
                    parent.delete_scope(scope)
                else:
                    scope._destroy()
        self.records, self._known = [], {}


# --- copies -----------------------------------------------------------------------------------
def snap_of(var) -> Snap:
    """A copy of ``var``'s value now (EMPTY when it holds none)."""
    kind = var._kind
    if kind is None:
        return EMPTY
    value = copy_value(var._value, kind)
    return Snap(var, value, kind, nbytes(value) + SNAP_OVERHEAD)


def copy_value(value, kind):
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
        return [copy_value(v, "tensor") if v is not None else None for v in value]
    if isinstance(value, np.ndarray):      # a subclass
        return np.array(value, copy=True)
    return value


def nbytes(value) -> int:
    if isinstance(value, list):
        return sum(nbytes(v) for v in value)
    if value.__class__ is SelectedRows:
        return int(value.rows.nbytes) + int(value.value.nbytes)
    return int(getattr(value, "nbytes", 0) or 0)
