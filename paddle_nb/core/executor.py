"""The executor: a program's run is a sequence of single steps (DESIGN decision 5).

``Executor.steps(...)`` is a generator that runs one op per ``next()`` and yields a
:class:`Step` (block path, op index, the op, the scope it ran in); ``Executor.run`` just
drains it and returns the fetched values. The debugger is the same generator advanced by
hand. A block is prepared once (kernels resolved, slots and attributes read: seed 003's
``symbols_ready_``) and reused until the block changes.

Scopes follow Fluid: persistable variables (parameters) live in the scope you pass;
everything else lives in a kid "run" scope that is dropped when the run ends, with every
scope that sub-blocks made below it (seed 000: destroyed when the minibatch completes).
"""
from __future__ import annotations

import difflib
import inspect
import weakref
from dataclasses import dataclass

import numpy as np

from . import registry
from . import dtypes
from .errors import ExecutionError, FeedError, FetchError, PaddleNBError
from .operator import Operator
from .place import CPUPlace, is_place
from .program import Program, default_main_program
from .scope import Scope, current
from .symbol_table import var_dtype, var_shape
from .kernel_context import KernelContext
from .framework_pb2 import VarType


@dataclass(frozen=True)
class Frame:
    """One running block: the call stack of a run is its frames (the scope hierarchy *is*
    the stack). ``owner`` is the op (in the enclosing frame) that runs this block."""
    block_idx: int
    block_path: str
    scope: Scope
    owner: Operator | None = None


@dataclass
class Step:
    """One op that just ran: where it sits, what it is, the scope it ran in, and the stack
    of frames (outermost first) it ran under."""
    block_path: str
    op_index: int
    op: Operator
    scope: Scope
    frames: tuple = ()

    @property
    def block_idx(self) -> int:
        return self.op.block.idx

    @property
    def depth(self) -> int:
        """1 for the global block, 2 inside a sub-block, ..."""
        return len(self.frames)

    def __repr__(self):
        return f"<Step {self.block_path} > op {self.op_index} {self.op.type}>"


class PreparedOp:
    """An op bound once: its kernel, its slots' variable names and its attributes."""
    __slots__ = ("program", "index", "op", "op_def", "kernel", "inputs", "outputs", "attrs",
                 "where", "created_at", "output_set", "is_generator", "keep_scopes")

    def __init__(self, program, block, index: int, op: Operator, place, program_reads=()):
        self.program = program
        self.index = index
        self.op = op
        self.where = f"{block.path} > op {index} {op.type}"
        self.created_at = op.created_at
        try:
            op_def = registry.lookup(op.type)
        except PaddleNBError as e:
            raise ExecutionError(f"{self.where}: {e}") from None
        self.kernel = op_def.kernels.get(place.kind)
        if self.kernel is None:
            have = ", ".join(sorted(op_def.kernels)) or "none"
            raise ExecutionError(f"{self.where}: op {op.type} has no kernel for {place!r} "
                                 f"(it has: {have})")
        self.is_generator = inspect.isgeneratorfunction(self.kernel)
        self.inputs = op.inputs
        self.outputs = op.outputs
        attrs = {a.name: a.default for a in op_def.attrs}
        attrs.update(op.attrs)
        self.attrs = attrs
        self.output_set = frozenset(op.output_arg_names)
        self.op_def = op_def
        # A control-flow op keeps the scopes its sub-block ran in only when some op (its
        # gradient) reads the list of them: training keeps the "stack forest" until the run
        # ends, inference frees each scope as soon as the sub-block returns.
        self.keep_scopes = any(n in program_reads for n in self.output_set
                               if _is_scope_list(block, n))


class PreparedBlock:
    def __init__(self, program, block, place):
        self.version = block.table.version
        self.block = block
        reads = {n for b in program.blocks for o in b.ops for n in o.input_arg_names}
        self.ops = [PreparedOp(program, block, i, op, place, reads)
                    for i, op in enumerate(block.ops)]
        descs = block.table.vars.values()
        self.persistable = [d.name for d in descs if d.persistable]
        self.local = [d.name for d in descs if not d.persistable]
        self._skips: dict[frozenset, frozenset] = {}

    def skipped_for(self, fed: frozenset) -> frozenset:
        """Ops all of whose outputs are fed are skipped: a feed overrides the value a
        variable was declared with (and makes a program's own feed ops unnecessary)."""
        s = self._skips.get(fed)
        if s is None:
            s = self._skips[fed] = frozenset(
                p.index for p in self.ops if p.output_set and p.output_set <= fed)
        return s


class Executor:
    def __init__(self, place=None):
        place = place if place is not None else CPUPlace()
        if not is_place(place):
            raise ExecutionError(f"Executor needs a place (pd.CPUPlace() or pd.CUDAPlace(0)), "
                                 f"got {place!r}")
        self.place = place
        self._prepared: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    # --- preparing ------------------------------------------------------------------------
    def prepare(self, program: Program, block_idx: int = 0) -> PreparedBlock:
        """The block bound to kernels, cached until the block changes."""
        per_program = self._prepared.setdefault(program, {})
        block = program.block(block_idx)
        pb = per_program.get(block_idx)
        if pb is None or pb.version != block.table.version or pb.block.table is not block.table:
            pb = per_program[block_idx] = PreparedBlock(program, block, self.place)
        return pb

    # --- running ---------------------------------------------------------------------------
    def run(self, program: Program | None = None, feed: dict | None = None,
            fetch_list=None, scope: Scope | None = None, return_numpy: bool = True):
        """Run ``program`` once and return the fetched values as numpy arrays."""
        gen = self.steps(program, feed, fetch_list, scope)
        while True:
            try:
                next(gen)
            except StopIteration as done:
                return done.value

    def steps(self, program: Program | None = None, feed: dict | None = None,
              fetch_list=None, scope: Scope | None = None, training: bool = False):
        """A generator that runs one op per step and yields a :class:`Step` after each;
        its return value (``StopIteration.value``) is the list of fetched arrays.
        Everything is checked before anything is written, so a bad feed or fetch changes
        nothing."""
        program = program if program is not None else default_main_program()
        if not isinstance(program, Program):
            raise ExecutionError(f"run needs a Program, got {type(program).__name__}")
        scope = scope if scope is not None else current()
        fetch_names = self._fetch_names(program, fetch_list)
        feed = self._check_feed(program, feed or {})
        prepared = self.prepare(program, 0)
        return self._run_global(prepared, program, feed, fetch_names, scope, training)

    def _run_global(self, prepared, program, feed, fetch_names, scope, training):
        run_scope = scope.new_scope("run")
        try:
            for name in prepared.persistable:
                scope.var(name)
            for name in prepared.local:
                run_scope.var(name)
            for name, value in feed.items():
                run_scope.find_var(name).set(value)
            skip = prepared.skipped_for(frozenset(feed))
            yield from self._run_block(prepared, run_scope, skip, training, ())
            return [self._fetch(run_scope, name) for name in fetch_names]
        finally:
            if run_scope.parent is scope:
                scope.delete_scope(run_scope)

    def run_sub_block(self, program, block_idx: int, scope: Scope, training: bool = False,
                      frames: tuple = (), owner: Operator | None = None):
        """Run a sub-block in ``scope`` (made by the op that owns it): its local variables
        are created there, and names it does not declare are found in enclosing scopes."""
        prepared = self.prepare(program, block_idx)
        for name in prepared.local:
            scope.var(name)
        return self._run_block(prepared, scope, frozenset(), training, frames, owner)

    def _run_block(self, prepared: PreparedBlock, scope: Scope, skip, training, frames,
                   owner: Operator | None = None):
        path = prepared.block.path
        frames = frames + (Frame(prepared.block.idx, path, scope, owner),)
        for pop in prepared.ops:
            if pop.index in skip:
                continue
            ctx = KernelContext(pop, scope, self, self.place, training, frames)
            try:
                if pop.is_generator:
                    yield from pop.kernel(ctx)
                else:
                    pop.kernel(ctx)
            except Exception as e:            # noqa: BLE001 (re-raised with context)
                raise _located(e, pop) from (None if isinstance(e, PaddleNBError) else e)
            yield Step(path, pop.index, pop.op, scope, frames)

    # --- feed and fetch checks --------------------------------------------------------------
    def _fetch_names(self, program: Program, fetch_list) -> list[str]:
        if fetch_list is None:
            return []
        if not isinstance(fetch_list, (list, tuple)):
            fetch_list = [fetch_list]
        names = []
        gb = program.global_block()
        for item in fetch_list:
            name = item if isinstance(item, str) else getattr(item, "name", None)
            if not isinstance(name, str):
                raise FetchError(f"fetch_list items are Variables or names, got {item!r}")
            if not gb.has_var(name):
                owner = program.find_var_block(name)
                if owner is not None:
                    raise FetchError(
                        f"cannot fetch {name!r}: it is declared only in {owner.path}, a "
                        f"sub-block whose scope is gone when the run ends; fetch an output of "
                        f"the op that owns that block instead")
                every = [n for b in program.blocks for n in b.table.vars]
                close = difflib.get_close_matches(name, every, n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise FetchError(f"cannot fetch {name!r}: no block of this program declares "
                                 f"it{hint}")
            names.append(name)
        return names

    def _check_feed(self, program: Program, feed: dict) -> dict:
        if not isinstance(feed, dict):
            raise FeedError(f"feed must be a dict of name -> array, got {type(feed).__name__}")
        gb = program.global_block()
        checked = {}
        for key, value in feed.items():
            name = key if isinstance(key, str) else getattr(key, "name", key)
            desc = gb.table.vars.get(name)
            if desc is None:
                data = [d.name for d in gb.table.vars.values()
                        if not d.persistable and not any(name in o.output_arg_names
                                                         for o in gb.ops)]
                close = difflib.get_close_matches(str(name), list(gb.table.vars), n=3)
                hint = f"; did you mean {', '.join(close)}?" if close else ""
                raise FeedError(f"cannot feed {name!r}: the global block declares no such "
                                f"variable{hint} (variables no op writes: {data[:10]})")
            checked[name] = _convert_feed(name, desc, value)
        return checked

    def _fetch(self, scope: Scope, name: str):
        var = scope.find_var(name)
        if var is None or not var.is_initialized():
            raise FetchError(f"cannot fetch {name!r}: it is declared, but nothing in this run "
                             f"wrote it and it was not fed")
        value = var.get()
        if hasattr(value, "copy_to_host"):
            return value.copy_to_host()
        return np.array(value, copy=True)


def _convert_feed(name: str, desc, value) -> np.ndarray:
    want_code = var_dtype(desc)
    shape = var_shape(desc)
    if want_code is None or desc.type.type != VarType.LOD_TENSOR:
        raise FeedError(f"cannot feed {name!r}: it is not a tensor variable")
    want = dtypes.to_numpy(want_code)
    if isinstance(value, np.ndarray):
        if value.dtype != want:
            raise FeedError(f"feed {name!r}: expected dtype {want}, given {value.dtype} "
                            f"(convert it with .astype('{want}'))")
        array = value
    else:
        try:
            array = np.asarray(value, dtype=want)
        except (TypeError, ValueError) as e:
            raise FeedError(f"feed {name!r}: cannot convert {type(value).__name__} to "
                            f"{want}: {e}") from None
    if shape:
        ok = len(shape) == array.ndim and all(d < 0 or d == g for d, g in zip(shape, array.shape))
        if not ok:
            raise FeedError(f"feed {name!r}: expected shape {shape} (-1 = any size), given "
                            f"{list(array.shape)}")
    return array


def _is_scope_list(block, name: str) -> bool:
    v = block.table.find_var(name)
    return v is not None and v.type.type == VarType.STEP_SCOPES


def _located(e: Exception, pop: PreparedOp) -> Exception:
    """``e`` with the op's block path and creating line, once (inner blocks add it first)."""
    if getattr(e, "_paddle_nb_located", False):
        return e
    text = f"{pop.where}: {e if isinstance(e, PaddleNBError) else f'{type(e).__name__}: {e}'}"
    if pop.created_at:
        text += f"\n  op created at: {pop.created_at}"
    new = type(e)(text) if isinstance(e, PaddleNBError) else ExecutionError(text)
    new._paddle_nb_located = True
    return new
