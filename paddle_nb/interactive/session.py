"""The notebook's live programs: a symbol table that survives re-running cells.

A ``%%paddle`` cell is ordinary Python that appends ops and variables to a program. Run as
a script, running it twice would append everything twice (``fc_0`` then ``fc_1``). In a
notebook the user means "this cell is now *this* code", so a :class:`NotebookProgram`
remembers, per cell, what the cell added (a :class:`CellRecord`) and, when the cell runs
again, takes it out before the new version goes in:

* **ops** are remembered by identity (the ``OpDesc`` messages themselves), in every block
  of the main and the startup program;
* **variables** by (block, name); a variable another cell's op still uses is put back
  after the re-run if the new version does not declare it again (that cell would break);
* **blocks** the cell's control flow created: block indices are positions in the
  ProgramDesc, so a block in the middle cannot go. Its ops and variables are removed and
  it is left *empty*; empty blocks at the end of the program are dropped;
* **names** stay stable: each program has its own name generator; a cell starts from the
  counters it first ran with (so ``fc_0.w_0`` is ``fc_0.w_0`` again) and skips every name
  another cell already has.

Ops of a cell stay together in the global block, and cells are ordered by what they read:
a cell that reads a variable another cell declared comes after it, whatever order the
cells ran in (otherwise re-running a defining cell would put its ops after their users).

A cell that fails changes nothing: the programs (every block, op and variable message),
the records and the name counters are restored to what they were before it ran.
This module knows nothing about IPython; :mod:`paddle_nb.notebook.magic` drives it.
"""
from __future__ import annotations

import collections
import dataclasses

from ..core import unique_name
from ..core.errors import BuildError
from ..core.program import Program, program_guard
from ..core.scope import Scope, scope_guard
from ..core.symbol_table import var_shape
from .user_names import user_names_of

MAIN, STARTUP = "main", "startup"


class CellNames(unique_name.UniqueNameGenerator):
    """Fluid's ``key_N`` counters, skipping ``taken`` names and recording what it made."""

    def __init__(self):
        super().__init__()
        self.taken: set[str] = set()
        self.made: set[str] = set()

    def __call__(self, key: str) -> str:
        while True:
            name = super().__call__(key)
            if name not in self.taken:
                self.made.add(name)
                return name


@dataclasses.dataclass
class CellRecord:
    """What one cell added to a notebook program, to take it out again.

    ``ops`` and ``vars`` map "main"/"startup" to ``[(block index, OpDesc or VarDesc)]``;
    ``blocks`` are the main program's blocks the cell created; ``made`` the names the
    generator gave it; ``start_counters`` the name counters before it first ran;
    ``assigned`` the notebook names it bound to Variables, and ``bound`` which Variable each
    (notebook name -> program variable name: the views show ``x`` beside ``minibatch_0``);
    ``label`` where it last ran."""
    key: str
    label: str = ""
    ops: dict = dataclasses.field(default_factory=dict)
    vars: dict = dataclasses.field(default_factory=dict)
    blocks: list = dataclasses.field(default_factory=list)
    made: set = dataclasses.field(default_factory=set)
    start_counters: dict = dataclasses.field(default_factory=dict)
    assigned: list = dataclasses.field(default_factory=list)
    bound: dict = dataclasses.field(default_factory=dict)

    def var_names(self) -> set[str]:
        return {d.name for entries in self.vars.values() for _, d in entries}

    def op_count(self, which: str = MAIN) -> int:
        return len(self.ops.get(which, []))


class _ProgramState:
    """Everything needed to put a Program back exactly as it was (a failed cell).

    The Python views users hold (Variables in the namespace) point at the block objects
    and the VarDesc messages, so those are restored *in place*, never replaced."""

    def __init__(self, program: Program):
        self.program = program
        self.blocks = list(program.blocks)
        self.current = program.current_block_idx
        self.tables = []
        for b in self.blocks:
            t = b.table
            self.tables.append((t, list(t.ops), dict(t.vars), t.header.SerializeToString(),
                                [d.SerializeToString() for d in t.ops],
                                [d.SerializeToString() for d in t.vars.values()]))

    def restore(self) -> None:
        replaced = {b.idx: b.table.version for b in self.program.blocks}
        self.program.blocks[:] = self.blocks
        self.program.current_block_idx = self.current
        for table, ops, vars_, header, op_bytes, var_bytes in self.tables:
            table.ops[:] = ops
            table.vars.clear()
            table.vars.update(vars_)
            for msg, data in [(table.header, header), *zip(ops, op_bytes),
                              *zip(vars_.values(), var_bytes)]:
                msg.Clear()
                msg.ParseFromString(data)
            # Executors cache a prepared block by index and version: make sure no cache
            # made for the block that stood at this index during the failed cell matches.
            table.version = max(table.version, replaced.get(table.idx, 0)) + 1


class NotebookProgram:
    """One named program of the notebook: main + startup + the scope it runs in."""

    def __init__(self, name: str):
        self.name = name
        self.main, self.startup = Program(), Program()
        self.scope = Scope(name=f"program {name}")
        self.names = CellNames()
        self.cells: dict[str, CellRecord] = {}
        self.order: list[str] = []               # cell keys, in the global block's op order
        self._retired: dict[int, int] = {}       # popped block index -> its last version
        self.debugger = None     # the DebuggerView (or Debugger) the last --step opened

    def programs(self) -> dict[str, Program]:
        return {MAIN: self.main, STARTUP: self.startup}

    # --- building a cell -------------------------------------------------------------------
    def build(self, key: str, execute, label: str = "") -> CellRecord:
        """Run ``execute()`` (the cell body) as cell ``key``, replacing its previous version.

        On any exception everything is rolled back and the exception propagates."""
        saved = [_ProgramState(p) for p in self.programs().values()]
        saved_cells, saved_order = dict(self.cells), list(self.order)
        saved_counters = collections.Counter(self.names.counters)
        old = self.cells.pop(key, None)
        try:
            if old is not None:
                self._take_out(old)
            # Start from the counters the cell first ran with: same code, same names.
            start = dict(old.start_counters) if old else dict(self.names.counters)
            self.names.counters = collections.defaultdict(int, start)
            self.names.made = set()
            self.names.taken = self._names_in_use()
            before = {w: _contents(p) for w, p in self.programs().items()}
            n_blocks = self.main.num_blocks
            with program_guard(self.main, self.startup), unique_name.guard(self.names), \
                    scope_guard(self.scope):
                execute()
            if self.main.current_block_idx != 0:
                raise BuildError(f"the cell left block {self.main.current_block_idx} open "
                                 "(create_block() without rollback()); nothing was kept")
            record = CellRecord(key, label, start_counters=start, made=set(self.names.made),
                                blocks=list(range(n_blocks, self.main.num_blocks)))
            for which, program in self.programs().items():
                record.ops[which], record.vars[which] = _added(program, before[which])
            for idx in record.blocks:
                self._fresh_version(self.main.block(idx).table)
            if old is not None:
                self._keep_used_vars(old, record)
        except BaseException:
            for state in saved:
                state.restore()
            self.cells, self.order = saved_cells, saved_order
            self.names.counters = collections.defaultdict(int, saved_counters)
            raise
        # Later cells continue after every name any version has used.
        for k, n in saved_counters.items():
            self.names.counters[k] = max(self.names.counters[k], n)
        self.cells[key] = record
        if key not in self.order:
            self.order.append(key)
        self._order_cells()
        # A re-run cell means new parameters (as re-running ``model = Net()`` would): drop
        # the values its startup ops made, so the next run initialises them again.
        self.scope.erase_vars({n for _, d in record.ops[STARTUP] for v in d.outputs
                               for n in v.arguments})
        return record

    def forget(self, key: str) -> None:
        """Take a cell's ops, variables and blocks out of the program (a cell that moved
        to another program)."""
        old = self.cells.pop(key, None)
        if old is None:
            return
        self._take_out(old)
        self._keep_used_vars(old, None)
        self.order.remove(key)

    # --- taking a cell out ------------------------------------------------------------------
    def _take_out(self, record: CellRecord) -> None:
        for which, program in self.programs().items():
            for idx, desc in record.ops.get(which, []):
                if idx < program.num_blocks:
                    table = program.block(idx).table
                    pos = next((i for i, d in enumerate(table.ops) if d is desc), None)
                    if pos is not None:
                        table.remove_op(pos)
            for idx, desc in record.vars.get(which, []):
                if idx < program.num_blocks and \
                        program.block(idx).table.vars.get(desc.name) is desc:
                    program.block(idx).table.remove_var(desc.name)
        # Its blocks are empty now. Only trailing ones can go: indices must not move.
        mine = set(record.blocks)
        blocks = self.main.blocks
        while len(blocks) > 1 and blocks[-1].idx in mine and not blocks[-1].table.ops \
                and not blocks[-1].table.vars:
            gone = blocks.pop()
            self._retired[gone.idx] = max(self._retired.get(gone.idx, 0), gone.table.version)
        self.main.current_block_idx = 0

    def _keep_used_vars(self, old: CellRecord, new: CellRecord | None) -> None:
        """Put back variables of ``old`` that some op still uses and nobody declares now
        (another cell reads them); they stay in the cell's record for next time."""
        for which, program in self.programs().items():
            used = {n for b in program.blocks for op in b.table.ops
                    for n in _arg_names(op)}
            for idx, desc in old.vars.get(which, []):
                if desc.name in used and idx < program.num_blocks and \
                        program.find_var_block(desc.name) is None:
                    program.block(idx).table.add_var_desc(desc)
                    if new is not None:
                        new.vars[which].append((idx, desc))

    def _names_in_use(self) -> set[str]:
        """Names a cell being (re)built must not be given: other cells' generated names and
        every variable still declared in the programs."""
        taken = {n for p in self.programs().values() for b in p.blocks for n in b.table.vars}
        for record in self.cells.values():
            taken |= record.made
        return taken

    def _fresh_version(self, table) -> None:
        # A new block may reuse the index of a dropped one; an Executor that prepared the
        # dropped one caches it by (index, version), so the new version must differ.
        retired = self._retired.get(table.idx)
        if retired is not None:
            table.version += retired + 1

    # --- cell order ---------------------------------------------------------------------------
    def _order_cells(self) -> None:
        """Order cells so that each comes after the cells whose variables it reads (stable:
        the current order wherever it already works; a cycle keeps the current order),
        then lay out each program's global-block ops cell by cell in that order."""
        declared_by = {}
        for key in self.order:
            for _, desc in self.cells[key].vars.get(MAIN, []):
                declared_by.setdefault(desc.name, key)
        needs = {}
        for key in self.order:
            reads = {n for _, d in self.cells[key].ops.get(MAIN, []) for n in _input_names(d)}
            needs[key] = {declared_by[n] for n in reads if n in declared_by} - {key}
        ordered, remaining = [], list(self.order)
        while remaining:
            ready = next((k for k in remaining if not needs[k] & set(remaining)), remaining[0])
            remaining.remove(ready)
            ordered.append(ready)
        self.order = ordered
        for which, program in self.programs().items():
            table = program.global_block().table
            owner = {id(d): key for key in ordered
                     for idx, d in self.cells[key].ops.get(which, []) if idx == 0}
            rank = {key: i for i, key in enumerate(ordered)}
            # sorted() is stable: ops keep their order within a cell; ops of no cell first.
            new = sorted(table.ops, key=lambda d: rank.get(owner.get(id(d)), -1) + 1)
            if any(a is not b for a, b in zip(new, table.ops)):
                table.ops[:] = new
                table.touch()

    # --- running ----------------------------------------------------------------------------
    def initialize(self, executor) -> list[str]:
        """Run the startup ops whose outputs the scope does not hold yet (or holds with
        another shape): parameters keep their trained values across runs, and new ones
        are initialised. Returns the names initialised."""
        startup = Program.from_desc(self.startup.desc)
        startup.random_seed = self.startup.random_seed
        table = startup.global_block().table
        for i in range(len(table.ops) - 1, -1, -1):
            if all(self._holds(n, table.vars.get(n)) for v in table.ops[i].outputs
                   for n in v.arguments):
                table.remove_op(i)
        names = [n for d in table.ops for v in d.outputs for n in v.arguments]
        if names:
            executor.run(startup, scope=self.scope)
        return names

    def _holds(self, name: str, desc) -> bool:
        var = self.scope.find_local_var(name)
        if var is None or not var.is_initialized():
            return False
        dims = (var_shape(desc) if desc is not None else None) or []
        shape = getattr(var.get(), "shape", None)
        return not dims or min(dims) < 0 or shape is None or list(shape) == dims

    # --- reading ----------------------------------------------------------------------------
    def user_names(self) -> dict[str, str]:
        """``{program variable name: the notebook name(s) the cells bound to it}``, e.g.
        ``{"minibatch_0": "x", "rnn_0.mem_0": "h, h_prev"}``, for the views to show the
        user's names beside the program's (cells in program order; variables still in the
        program only, so a name a re-run cell no longer binds is gone)."""
        declared = {n for b in self.main.blocks for n in b.table.vars}
        return user_names_of((user, name) for key in self.order
                             for user, name in self.cells[key].bound.items()
                             if name in declared)

    def summary(self) -> str:
        n_ops = sum(len(b.table.ops) for b in self.main.blocks)
        n_vars = sum(len(b.table.vars) for b in self.main.blocks)
        empty = [b.idx for b in self.main.blocks[1:] if not b.table.ops and not b.table.vars]
        text = (f"program {self.name!r}: {self.main.num_blocks} block(s), {n_ops} ops, "
                f"{n_vars} vars; startup {len(self.startup.global_block().table.ops)} ops; "
                f"scope {len(self.scope.local_var_names())} vars")
        if empty:
            text += f"; empty blocks left by re-run cells: {empty}"
        return text

    def __repr__(self):
        return f"<NotebookProgram {self.summary()}>"


class Notebook:
    """Every named program of one notebook (one IPython shell)."""

    def __init__(self):
        self.programs: dict[str, NotebookProgram] = {}

    def program(self, name: str = "main") -> NotebookProgram:
        if name not in self.programs:
            self.programs[name] = NotebookProgram(name)
        return self.programs[name]

    def build(self, program: str, key: str, execute, label: str = "") -> CellRecord:
        """Build cell ``key`` into ``program``; a cell that moved from another program is
        first taken out of that one (a cell is in one program at a time)."""
        target = self.program(program)
        record = target.build(key, execute, label)
        for other in self.programs.values():
            if other is not target and key in other.cells:
                other.forget(key)
        return record

    def reset(self, name: str | None = None) -> None:
        if name is None:
            self.programs.clear()
        else:
            self.programs.pop(name, None)


# --- helpers ------------------------------------------------------------------------------
def _contents(program: Program) -> list[tuple[set, set]]:
    """Per block: the ids of its OpDesc messages and its variable names."""
    return [({id(d) for d in b.table.ops}, set(b.table.vars)) for b in program.blocks]


def _added(program: Program, before) -> tuple[list, list]:
    ops, vars_ = [], []
    for b in program.blocks:
        old_ops, old_vars = before[b.idx] if b.idx < len(before) else (set(), set())
        ops += [(b.idx, d) for d in b.table.ops if id(d) not in old_ops]
        vars_ += [(b.idx, d) for n, d in b.table.vars.items() if n not in old_vars]
    return ops, vars_


def _input_names(op) -> list[str]:
    return [n for v in op.inputs for n in v.arguments]


def _arg_names(op) -> list[str]:
    return _input_names(op) + [n for v in op.outputs for n in v.arguments]

