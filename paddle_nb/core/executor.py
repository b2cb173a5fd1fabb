"""The executor: a program's run is a sequence of single steps (DESIGN decision 5).

``Executor.steps(...)`` is a generator that runs one op per ``next()`` and yields a
:class:`Step` (block path, op index, the op, the scope it ran in); ``Executor.run`` just
drains it and returns the fetched values. The debugger is the same generator advanced by
hand. A block is prepared once (kernels resolved, slots and attributes read: the Block and
Scope design's ``symbols_ready_``) and reused until the block changes.

Scopes follow Fluid: persistable variables (parameters) live in the scope you pass;
everything else lives in a kid "run" scope that is dropped when the run ends, with every
scope that sub-blocks made below it (in the Block and Scope design, destroyed when the minibatch
completes).

Faults (docs/robustness.md):

* A run is all or nothing for the scope you pass. When it raises (a kernel's error, a
  non-finite value under ``check_nan_inf``, a KeyboardInterrupt), every persistable variable
  of the global block is put back to the value it held before the run, the run scope and
  every kid scope below it are deleted, and the next run starts clean. This relies on
  kernels returning new arrays instead of writing into their inputs (kernels/cpu/optimizer.py
  says so). Closing a ``steps()`` generator early (the Debugger's restart) is not a fault:
  ops that already ran keep their effects.
* ``check_nan_inf`` (per Executor, or per run) checks every float output of every op as
  soon as the op has run and raises an ExecutionError naming the first op that made a NaN
  or Inf. With the check off it costs one test of a local boolean per op.
* Thread safety: one Executor and one Program may be shared by threads that run in
  separate scopes. Prepared blocks are built under a lock and published whole; the
  per-feed plans of a prepared block are computed and then published with one dict store.
  Prepared blocks are cached on the program (keyed weakly by executor), so neither keeps
  the other alive.
"""
from __future__ import annotations

import inspect
import numbers
import threading
import weakref
from dataclasses import dataclass

import numpy as np

from . import registry
from . import dtypes
from . import runtime_shapes
from . import validate
from . import fast_path
from .errors import (ExecutionError, FeedError, FetchError, IndexRangeError, PaddleNBError,
                     did_you_mean)
from .non_finite import all_finite, check_feed_finite, count_non_finite, float_arrays
from .attr_tensors import RunTimeAttrs
from .operator import Operator
from .place import CPUPlace, is_place
from .program import Program, default_main_program
from .scope import Scope, current
from .selected_rows import SelectedRows
from .symbol_table import var_dtype, var_shape
from .kernel_context import CudaKernelContext, KernelContext
from .framework_pb2 import VarType
from .grad_maker import EMPTY_VAR
from ..kernels.check import IndexOutOfRange
from ..kernels.cpu.threads import keep_products_serial


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
    # what the step wrote, where that is not its op's outputs: a fused op's inner step
    # (one cell of the rnn op) writes the names it shows in its own scope
    wrote: tuple | None = None

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
                 "where", "created_at", "output_set", "is_generator", "keep_scopes",
                 "output_pairs", "infer_shape", "checked_inputs", "input_list",
                 # the compiled path's (core/fast_path.py): slots by number, output buffers
                 "in_ix", "out_ix", "sig_ix", "buffers", "data_sized", "memo",
                 "tensor_attrs")

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
        # attributes that tensors give at run time (core/attr_tensors.py): ctx.attr reads
        # them; None for most ops, so the hot paths test it without a call
        self.tensor_attrs = RunTimeAttrs(op_def, op.inputs) or None
        self.output_set = frozenset(op.output_arg_names)
        # (slot, name) of every output, for the NaN/Inf check
        self.output_pairs = tuple((slot, n) for slot, names in self.outputs.items()
                                  for n in names if n != EMPTY_VAR)
        self.op_def = op_def
        # The allocation guard (runtime_shapes.py): the op's shape inference, run again on
        # the values before the kernel, once per signature of its inputs' shapes/dtypes.
        self.infer_shape = op_def.infer_shape
        self.checked_inputs = None
        self.input_list = tuple(n for names in op.inputs.values() for n in names)
        # A control-flow op keeps the scopes its sub-block ran in only when some op (its
        # gradient) reads the list of them: training keeps the "stack forest" until the run
        # ends, inference frees each scope as soon as the sub-block returns.
        self.keep_scopes = any(n in program_reads for n in self.output_set
                               if _is_scope_list(block, n))
        self.buffers = threading.local()    # each thread its own (fast_path.out)
        self.memo = {}              # a kernel's glue, resolved once (KernelContext.resolved)
        self.data_sized = False     # an output sized by the data itself (seen at run time)


class PreparedBlock:
    def __init__(self, program, block, place):
        self.version = block.table.version
        self.block = block
        self.path = block.path        # walks the parent block's ops: once, not per run
        blocks = program.blocks
        reads = {n for b in blocks for o in b.ops for n in o.input_arg_names}
        self.ops = [PreparedOp(program, block, i, op, place, reads)
                    for i, op in enumerate(block.ops)]
        # the compiled path's environment (core/fast_path.py), and what it needs to skip
        # the allocation guard op by op when the block's entry shapes are ones it passed
        self.names, self.entry_ix = fast_path.bind_slots(self.ops)
        self.all_inferable = all(p.infer_shape is not None for p in self.ops)
        self.passed_entry = None
        # an op whose CPU kernels split across the cores (a convolution): the run keeps
        # its products on the calling thread (kernels/cpu/threads.py)
        self.uses_cores = place.kind == "cpu" and any(p.op_def.uses_cores for p in self.ops)
        descs = block.table.vars.values()
        self.persistable = [d.name for d in descs if d.persistable]
        self.local = [d.name for d in descs if not d.persistable]
        # Data variables this block's ops read: declared here, not persistable, and written
        # by no op of the program, so only a feed can give them a value (global block only:
        # a sub-block's reads from outside are inputs of the op that owns it).
        self.data_reads: dict[str, tuple[PreparedOp, str]] = {}
        if block.idx == 0:
            written = {n for b in blocks for o in b.ops for n in o.output_arg_names}
            data = {d.name for d in descs if not d.persistable and d.name not in written
                    and d.type.type == VarType.LOD_TENSOR}
            for pop in self.ops:
                for slot, names in pop.inputs.items():
                    for n in names:
                        if n in data and n not in self.data_reads:
                            self.data_reads[n] = (pop, slot)
        # fed names -> (ops to skip, data variables missing). Computed whole, then published
        # with one dict store: threads that race compute the same value, and a reader sees
        # either no entry or a complete one.
        self._plans: dict[frozenset, tuple[frozenset, tuple]] = {}
        # fed name -> (numpy dtype, declared shape), filled by the first good feed of it
        self.feed_specs: dict[str, tuple] = {}

    def plan_for(self, fed: frozenset) -> tuple[frozenset, tuple]:
        """(indices of the ops to skip, names of data variables read but not fed). Ops all
        of whose outputs are fed are skipped: a feed overrides the value a variable was
        declared with (and makes a program's own feed ops unnecessary)."""
        plan = self._plans.get(fed)
        if plan is None:
            skip = frozenset(p.index for p in self.ops if p.output_set and p.output_set <= fed)
            missing = tuple(n for n in self.data_reads if n not in fed)
            plan = self._plans[fed] = (skip, missing)
        return plan

    def skipped_for(self, fed: frozenset) -> frozenset:
        return self.plan_for(fed)[0]


# The attribute of a Program holding its prepared blocks: {executor (weakly): {idx: block}}.
_CACHE_ATTR = "_prepared_by_executor"


def _scheduled_learning_rate(program) -> dict:
    """{learning-rate variable: its value now} for a program built with a scheduler
    (pd.optimizer.lr), which Paddle's executor writes before each run too; {} otherwise.
    It goes in like a feed: a run that fails puts the old value back."""
    scheduler = program.lr_scheduler
    if scheduler is None or not program.global_block().has_var(scheduler.var_name):
        return {}
    var = program.global_block().var(scheduler.var_name)
    return {var.name: np.asarray(scheduler(), dtype=var.dtype).reshape(var.shape)}


class Executor:
    """Runs programs on ``place``. ``check_nan_inf=True`` checks every float output of every
    op for NaN and Inf (a run's own ``check_nan_inf=`` overrides it).

    ``transport`` is how the communication ops of a transpiled trainer program (``send``,
    ``send_barrier``, ``recv``, ``fetch_barrier``: ops/distributed.py) reach the parameter
    servers; their kernels read it as ``ctx.executor.transport``. It implements
    ``paddle_nb.distributed.transport.Transport``; ``pd.distributed.LocalCluster`` makes
    executors with one. Without one (None) those ops refuse to run."""

    def __init__(self, place=None, check_nan_inf: bool = False, transport=None):
        place = place if place is not None else CPUPlace()
        if not is_place(place):
            raise ExecutionError(f"Executor needs a place (pd.CPUPlace() or pd.CUDAPlace(0)), "
                                 f"got {place!r}")
        if place.kind == "cuda":
            _require_cuda(place)
        self.place = place
        self.check_nan_inf = bool(check_nan_inf)
        self.transport = transport
        self._lock = threading.Lock()
        # On CUDA, kernels read device arrays (host values move there on first read).
        self._context = CudaKernelContext if place.kind == "cuda" else KernelContext
        self._flat_context = fast_path.FlatCudaContext if place.kind == "cuda" \
            else fast_path.FlatContext

    # --- preparing ------------------------------------------------------------------------
    def prepare(self, program: Program, block_idx: int = 0) -> PreparedBlock:
        """The block bound to kernels, cached until the block changes.

        The cache hangs on the program, keyed weakly by executor: a prepared block refers
        to its program (through its ops), so a cache held by the executor and keyed weakly
        by program would keep every program it ever ran alive. This way each dies with the
        other. Safe from several threads: a lookup that finds a current PreparedBlock takes
        no lock; building one happens under the executor's lock, and the finished block is
        stored in one step."""
        block = program.block(block_idx)
        cache = program.__dict__.get(_CACHE_ATTR)
        per_program = cache.get(self) if cache is not None else None
        if per_program is not None:
            pb = per_program.get(block_idx)
            if pb is not None and pb.version == block.table.version and \
                    pb.block.table is block.table:
                return pb
        with self._lock:
            cache = program.__dict__.setdefault(_CACHE_ATTR, weakref.WeakKeyDictionary())
            per_program = cache.get(self)
            if per_program is None:
                per_program = cache[self] = {}
            pb = per_program.get(block_idx)
            if pb is None or pb.version != block.table.version or \
                    pb.block.table is not block.table:
                pb = PreparedBlock(program, block, self.place)
                per_program[block_idx] = pb
            return pb

    # --- running ---------------------------------------------------------------------------
    def run(self, program: Program | None = None, feed: dict | None = None,
            fetch_list=None, scope: Scope | None = None, return_numpy: bool = True,
            check_nan_inf: bool | None = None):
        """Run ``program`` once and return the fetched values as numpy arrays. If it
        raises, the scope's persistable variables are as they were before the run.
        Without ``check_nan_inf`` this is the compiled path (core/fast_path.py), on a
        rewritten copy of the program where a pass applies."""
        check = self.check_nan_inf if check_nan_inf is None else bool(check_nan_inf)
        program = program if program is not None else default_main_program()
        try:                              # an interrupt anywhere in here gets the note
            rewritten = None
            if not check and fast_path.rewrite is not None and isinstance(program, Program):
                rewritten = _rewritten(program, feed, fetch_list)
            if rewritten is not None:
                try:
                    return self._drain(rewritten, feed, fetch_list, scope, check_nan_inf)
                except Exception:       # noqa: BLE001 (undone; the program as written
                    pass                # runs again and raises in terms of its own ops)
            return self._drain(program, feed, fetch_list, scope, check_nan_inf)
        except KeyboardInterrupt as e:    # one that arrived between ops says so too
            _note_interrupt(e, None)
            raise

    def _drain(self, program, feed, fetch_list, scope, check_nan_inf):
        gen = self.steps(program, feed, fetch_list, scope, check_nan_inf=check_nan_inf,
                         _stepping=False)
        while True:
            try:
                next(gen)
            except StopIteration as done:
                return done.value

    def steps(self, program: Program | None = None, feed: dict | None = None,
              fetch_list=None, scope: Scope | None = None, training: bool = False,
              check_nan_inf: bool | None = None, _stepping: bool = True,
              before_op=None):
        """A generator that runs one op per step and yields a :class:`Step` after each;
        its return value (``StopIteration.value``) is the list of fetched arrays.
        Everything is checked before anything is written, so a bad feed or fetch changes
        nothing; a data variable the program reads but the feed lacks is a FeedError at the
        first step, before any op runs.

        ``before_op(op, scope, frames)``, if given, is called just before each op's kernel
        runs (a control-flow op's too, before its sub-block's ops), with the scope it runs
        in and the frames it runs under: the debugger copies what the op will overwrite."""
        program = program if program is not None else default_main_program()
        if not isinstance(program, Program):
            raise ExecutionError(f"run needs a Program, got {type(program).__name__}")
        scope = scope if scope is not None else current()
        check = self.check_nan_inf if check_nan_inf is None else bool(check_nan_inf)
        fetch_names = self._fetch_names(program, fetch_list)
        _check_once(program)
        prepared = self.prepare(program, 0)
        feed = self._check_feed(program, prepared, feed or {})
        if check:
            check_feed_finite(feed)
        return self._run_global(prepared, program, feed, fetch_names, scope, training, check,
                                _stepping, before_op)

    def _run_global(self, prepared, program, feed, fetch_names, scope, training, check=False,
                    stepping=True, before_op=None):
        # A data variable the program reads but the feed lacks is an error at the first
        # step, before anything is written (not in steps() itself: a debugger may be made
        # for a program it is not given a feed for yet, to look at it).
        skip, missing = prepared.plan_for(frozenset(feed))
        if missing:
            raise _missing_feed_error(prepared, missing)
        run_scope = scope.new_scope("run")
        saved = None
        try:
            # What every persistable held before the run, to put back if the run fails
            # (the values themselves: kernels make new arrays, they do not write in place).
            saved = [(v, v._value, v._kind) for v in map(scope.var, prepared.persistable)]
            run_scope.declare(prepared.local)
            feed = {**_scheduled_learning_rate(program), **feed}
            if self.place.kind == "cuda":       # the only host -> device copies of a run
                from ..kernels.cuda import device   # noqa: PLC0415
                feed = {name: device.to_device(value) for name, value in feed.items()}
            for name, value in feed.items():
                run_scope.find_var(name).set(value)
            keep_products_serial(prepared.uses_cores)
            if stepping or check:
                yield from self._run_block(prepared, run_scope, skip, training, (), None,
                                           check, stepping, before_op)
            else:
                yield from self._run_flat(prepared, run_scope, skip, training, (), None)
            return [self._fetch(run_scope, name, feed) for name in fetch_names]
        except GeneratorExit:
            raise                       # closed early (a debugger's restart): not a fault
        except BaseException:
            if saved is not None:
                for var, value, kind in saved:
                    var._value, var._kind = value, kind
            raise
        finally:
            if run_scope.parent is scope:
                scope.delete_scope(run_scope)

    def run_sub_block(self, program, block_idx: int, scope: Scope, training: bool = False,
                      frames: tuple = (), owner: Operator | None = None,
                      check_nan_inf: bool = False, stepping: bool = True, before_op=None):
        """Run a sub-block in ``scope`` (made by the op that owns it): its local variables
        are created there, and names it does not declare are found in enclosing scopes."""
        prepared = self.prepare(program, block_idx)
        scope.declare(prepared.local)
        if stepping or check_nan_inf:
            return self._run_block(prepared, scope, (), training, frames, owner,
                                   check_nan_inf, stepping, before_op)
        return self._run_flat(prepared, scope, (), training, frames, owner)

    # The block loop. ``stepping`` is off for ``run`` (nobody looks at single steps, so
    # no Step is made and nothing is yielded: the loop is a generator that finishes in one
    # ``next``); the debugger and ``steps`` turn it on. Sub-blocks inherit both switches
    # through the kernel context. Two tests per op on local booleans cost ~50 ns.
    def _run_block(self, prepared: PreparedBlock, scope: Scope, skip, training, frames,
                   owner: Operator | None = None, check: bool = False,
                   stepping: bool = True, before_op=None):
        path = prepared.path
        frames = frames + (Frame(prepared.block.idx, path, scope, owner),)
        place, context = self.place, self._context
        ops = prepared.ops if not skip else [p for p in prepared.ops if p.index not in skip]
        block = prepared.block
        for pop in ops:
            ctx = context(pop, scope, self, place, training, frames, check, stepping)
            if before_op is not None:         # the debugger's copy-on-write (step_back)
                ctx.before_op = before_op
                before_op(pop.op, scope, frames)
            try:
                if pop.infer_shape is not None:    # size the outputs before allocating
                    sig = runtime_shapes.signature(pop, scope)
                    if sig != pop.checked_inputs:
                        pop.data_sized = not runtime_shapes.check_outputs(pop, scope, block)
                        pop.checked_inputs = sig
                if pop.is_generator:
                    yield from pop.kernel(ctx)
                else:
                    pop.kernel(ctx)
            except Exception as e:            # noqa: BLE001 (re-raised with context)
                raise _located(e, pop) from (None if isinstance(e, PaddleNBError) else e)
            except KeyboardInterrupt as e:    # say where it arrived; keep the type
                _note_interrupt(e, pop)
                raise
            if check:
                bad = _first_non_finite(pop, scope)
                if bad is not None:
                    raise _non_finite_error(pop, scope, *bad)
            if stepping:
                yield Step(path, pop.index, pop.op, scope, frames)

    # The compiled path (core/fast_path.py): the same ops in the same scopes, with names
    # bound to Variables once per block run and no Step bookkeeping. A generator, for
    # callers that ``yield from`` a block, that finishes in its first ``next``.
    def _run_flat(self, prepared: PreparedBlock, scope: Scope, skip, training, frames,
                  owner: Operator | None = None):
        frames = frames + (Frame(prepared.block.idx, prepared.path, scope, owner),)
        run = fast_path.BlockRun(scope, self, self.place, training, frames, prepared.names)
        env, context, signature = run.env, self._flat_context, fast_path.signature
        ops = prepared.ops if not skip else [p for p in prepared.ops if p.index not in skip]
        entry = guard = None
        if prepared.all_inferable:
            entry = (skip, fast_path.entry_signature(prepared.entry_ix, env))
            guard = entry != prepared.passed_entry
        pop = None
        try:
            for pop in ops:
                if guard is not False and pop.infer_shape is not None:
                    sig = signature(pop, env)      # size the outputs before allocating
                    if sig != pop.checked_inputs:
                        pop.data_sized = not runtime_shapes.check_outputs(
                            pop, scope, prepared.block)
                        pop.checked_inputs = sig
                    if pop.data_sized:
                        entry = None               # data-sized outputs: guard every run
                if pop.is_generator:
                    for _ in pop.kernel(context(pop, run)):
                        pass                       # sub-blocks yield no steps here
                else:
                    pop.kernel(context(pop, run))
        except Exception as e:                # noqa: BLE001 (re-raised with context)
            raise _located(e, pop) from (None if isinstance(e, PaddleNBError) else e)
        except KeyboardInterrupt as e:
            _note_interrupt(e, pop)
            raise
        if guard:
            prepared.passed_entry = entry
        return
        yield       # unreachable: makes this a generator

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
                raise FetchError(f"cannot fetch {name!r}: no block of this program declares "
                                 f"it{did_you_mean(name, every)}")
            if gb.table.vars[name].type.type == VarType.STEP_SCOPES:
                raise FetchError(
                    f"cannot fetch {name!r}: it holds the step scopes a control-flow op kept "
                    f"for its gradient, and they are deleted when the run ends; fetch the "
                    f"tensors you want from them instead (or step through the run with "
                    f"exe.steps / pd.Debugger to look inside the scopes while they live)")
            names.append(name)
        return names

    def _check_feed(self, program: Program, prepared: PreparedBlock, feed: dict) -> dict:
        if not isinstance(feed, dict):
            raise FeedError(f"feed must be a dict of name -> array, got {type(feed).__name__}")
        gb = program.global_block()
        specs = prepared.feed_specs
        checked = {}
        for key, value in feed.items():
            name = key if isinstance(key, str) else getattr(key, "name", key)
            spec = specs.get(name)
            # The common case, without reading the protobuf: an array of the declared
            # dtype and a fitting shape (what a training loop feeds every step).
            if spec is not None and value.__class__ is np.ndarray and value.dtype == spec[0] \
                    and _shape_fits(spec[1], value.shape) and \
                    value.nbytes <= validate.MAX_TENSOR_BYTES:
                checked[name] = value
                continue
            desc = gb.table.vars.get(name)
            if desc is None:
                written = {n for o in gb.ops for n in o.output_arg_names}
                data = [d.name for d in gb.table.vars.values()
                        if not d.persistable and d.name not in written]
                raise FeedError(f"cannot feed {name!r}: the global block declares no such "
                                f"variable{did_you_mean(name, gb.table.vars)} (variables no "
                                f"op writes: {data[:10]})")
            if desc.persistable:
                what = "a parameter" if desc.is_parameter else "persistable"
                raise FeedError(
                    f"cannot feed {name!r}: it is {what}, so it lives in the scope across runs "
                    f"and a feed would last one run. Set it in the scope instead "
                    f"(scope.find_var({name!r}).set(array)), or load it with "
                    f"pd.io.load_persistables")
            checked[name] = _convert_feed(name, desc, value)
            specs[name] = (dtypes.to_numpy(var_dtype(desc)), tuple(var_shape(desc) or ()))
        return checked

    def _fetch(self, run_scope: Scope, name: str, feed: dict):
        var = run_scope.find_var(name)
        if var is None or not var.is_initialized():
            raise FetchError(f"cannot fetch {name!r}: it is declared, but nothing in this run "
                             f"wrote it and it was not fed")
        value = var.get()
        if value.__class__ is SelectedRows:
            # Paddle 2.6.2's fetch refuses a SelectedRows ("The Variable type must be
            # TensorArray"); here it comes back as what it is, copied to the host: rows,
            # value, height (.to_dense() for the dense tensor).
            return value.to_host()
        if hasattr(value, "copy_to_host"):
            return value.copy_to_host()
        # A large run-scope array that a kernel allocated is handed over without a copy:
        # the run scope dies now, so nobody else holds it. Anything else is copied, so
        # changing the result never changes a parameter (a view, a value of an outer
        # scope) or a feed. Small arrays are copied anyway: cheaper than making sure.
        if value.__class__ is np.ndarray and value.nbytes >= _NO_COPY_BYTES and \
                value.base is None and \
                var.scope is run_scope and not _is_fed(value, feed) and \
                not _held_outside(value, run_scope):
            return value
        return np.array(value, copy=True)


# The attribute of a Program holding its rewritten copies for the compiled path:
# {names kept: (program version, copy or None)}.
_REWRITE_ATTR = "_rewritten_for_run"


def _rewritten(program: Program, feed, fetch_list):
    """The compiled path's copy of ``program`` (fast_path.rewrite) keeping what this run
    feeds and fetches, made once per program version and set of names; None when no pass
    changes the program (or a pass fails: the program runs as written)."""
    names = set()
    for key in (feed or {}):
        names.add(key if isinstance(key, str) else getattr(key, "name", None))
    items = fetch_list if isinstance(fetch_list, (list, tuple)) else \
        ([] if fetch_list is None else [fetch_list])
    for item in items:
        names.add(item if isinstance(item, str) else getattr(item, "name", None))
    keep = frozenset(n for n in names if isinstance(n, str))
    cache = program.__dict__.setdefault(_REWRITE_ATTR, {})
    version = program.version
    hit = cache.get(keep)
    if hit is not None and hit[0] == version:
        return hit[1]
    try:
        # a program that talks to parameter servers is not run twice (a failed run of the
        # copy would have sent its gradients already): it runs as written
        copy = None if _talks_to_servers(program) else fast_path.rewrite(program, keep)
    except Exception:                 # noqa: BLE001 (a pass that cannot: run as written)
        copy = None
    if len(cache) >= 8:               # a loop fetching ever other names: keep it bounded
        cache.clear()
    cache[keep] = (version, copy)
    return copy


def _talks_to_servers(program: Program) -> bool:
    """Does an op of ``program`` use the executor's transport (OpDef.remote)?"""
    return any(registry.is_registered(op.type) and registry.lookup(op.type).remote
               for b in program.blocks for op in b.ops)


# The attribute of a Program holding the version its run-time checks last passed at.
_CHECKED_ATTR = "_checked_before_run"


def _check_once(program: Program) -> None:
    """Block references and attribute types (validate.check_before_run), once per version
    of the program: a loaded program is checked at its first run, an edited one again."""
    version = program.version
    if program.__dict__.get(_CHECKED_ATTR) != version:
        validate.check_before_run(program)
        program.__dict__[_CHECKED_ATTR] = version


def _convert_feed(name: str, desc, value) -> np.ndarray:
    want_code = var_dtype(desc)
    shape = var_shape(desc)
    if want_code is None or desc.type.type != VarType.LOD_TENSOR:
        raise FeedError(f"cannot feed {name!r}: it is not a tensor variable")
    try:
        want = dtypes.to_numpy(want_code)
    except TypeError:
        raise FeedError(f"cannot feed {name!r}: its declared data type "
                        f"{dtypes.name(want_code)} is not a tensor element type") from None
    if isinstance(value, np.ndarray):
        if value.dtype != want:
            raise FeedError(f"feed {name!r}: expected dtype {want}, given {value.dtype} "
                            f"(convert it with .astype('{want}'))")
        array = value
    else:
        array = _array_from_python(name, value, want)
    if shape:
        if not _shape_fits(shape, array.shape):
            raise FeedError(f"feed {name!r}: expected shape {shape} (-1 = any size), given "
                            f"{list(array.shape)}")
    if array.nbytes > validate.MAX_TENSOR_BYTES:
        # nbytes is the logical size: a broadcast view (np.broadcast_to, zero strides) is a
        # few bytes of memory, but every op that reads it makes a result of this size
        view = (f" (a view with strides {array.strides}: it takes little memory itself, "
                f"but every op that reads it makes a result of this size)"
                if 0 in array.strides and array.size > 1 else "")
        raise FeedError(f"feed {name!r}: shape {list(array.shape)} ({array.dtype}) is "
                        f"{validate.human_bytes(array.nbytes)} as a tensor{view}; "
                        f"{validate._limit_text()}")
    return array


_NO_COPY_BYTES = 1 << 16


def _is_fed(value, feed: dict) -> bool:
    return any(value is v for v in feed.values())


def _held_outside(value, run_scope: Scope) -> bool:
    """Does a scope above the run scope hold ``value`` (an op like assign can pass a
    parameter's array on unchanged)? Parameters are few: an identity scan is cheap."""
    scope = run_scope.parent
    while scope is not None:
        if any(v._value is value for v in list(scope._vars.values())):
            return True
        scope = scope.parent
    return False


def _shape_fits(declared, given) -> bool:
    """A declared shape (-1 = any size; empty = not declared) admits ``given``."""
    return not declared or (len(declared) == len(given) and
                            all(d < 0 or d == g for d, g in zip(declared, given)))


def _array_from_python(name: str, value, want: np.dtype) -> np.ndarray:
    """A list, scalar or other array-like as an array of ``want``; refuses what is not
    numbers (None, a dict, an arbitrary object, strings) and conversions that would change
    a value (1.5 or 300 into an int8, 2 into a bool)."""
    what = type(value).__name__
    try:
        natural = np.asarray(value)
    except (TypeError, ValueError) as e:          # ragged nested lists, broken __array__
        raise FeedError(f"feed {name!r}: cannot convert {what} to {want}: {e}") from None
    kind = natural.dtype.kind
    if kind in "OV":
        if natural.ndim and all(isinstance(v, numbers.Number) for v in natural.flat):
            raise FeedError(f"feed {name!r}: cannot convert {what} to {want}: it holds "
                            f"numbers no fixed-size type holds (too large?): "
                            f"{natural.ravel()[:3].tolist()}")
        raise FeedError(f"feed {name!r}: cannot convert {what} to {want}: a feed is a numpy "
                        f"array, a (nested) list of numbers or a number; {what} is not "
                        f"array-like" + (" (a list of other objects)" if natural.ndim else ""))
    if kind in "USMmc":
        raise FeedError(f"feed {name!r}: cannot convert {what} to {want}: it holds "
                        f"{natural.dtype} values, not real numbers")
    try:
        array = natural.astype(want)
    except (TypeError, ValueError) as e:
        raise FeedError(f"feed {name!r}: cannot convert {what} to {want}: {e}") from None
    if want.kind in "biu" and natural.dtype != want:
        with np.errstate(invalid="ignore"):
            lossless = np.array_equal(array.astype(natural.dtype), natural)
        if not lossless:
            bad = natural.ravel()[np.flatnonzero(array.astype(natural.dtype).ravel()
                                                 != natural.ravel())[:3]]
            raise FeedError(f"feed {name!r}: {want} cannot hold the given values exactly "
                            f"(e.g. {', '.join(map(repr, bad.tolist()))}); convert them "
                            f"yourself (np.asarray(v).astype('{want}')) if that is meant")
    return array


def _missing_feed_error(prepared: PreparedBlock, missing) -> FeedError:
    """Located at the first op that reads a missing data variable, as the kernel's own error
    would be, with the other missing ones listed."""
    name = missing[0]
    pop, slot = prepared.data_reads[name]
    example = ", ".join(f"{n!r}: ..." for n in missing)
    text = (f"{pop.where}: input slot {slot}: variable {name!r} has no value: it is a data "
            f"variable (no op writes it, so only a feed can) and the feed does not have it; "
            f"pass exe.run(..., feed={{{example}}})")
    for other in missing[1:]:
        o_pop, o_slot = prepared.data_reads[other]
        text += f"\n  also not fed: {other!r}, read by {o_pop.where} (slot {o_slot})"
    if pop.created_at:
        text += f"\n  op created at: {pop.created_at}"
    e = FeedError(text)
    e._paddle_nb_located = True
    e.failed_op = pop.op
    return e


# --- the NaN/Inf check ------------------------------------------------------------------------
def _first_non_finite(pop: PreparedOp, scope: Scope):
    """(slot, name, item, nan, inf) of the op's first output holding a NaN or Inf, or None."""
    ndarray = np.ndarray
    for slot, name in pop.output_pairs:
        var = scope.find_var(name)
        if var is None:
            continue
        value = var._value
        if value.__class__ is ndarray:            # the common case, without a generator
            if value.dtype.kind != "f" or not value.size or all_finite(value):
                continue
            return (slot, name, None) + count_non_finite(value)
        for item, a in float_arrays(value):
            if not all_finite(a):
                return (slot, name, item) + count_non_finite(a)
    return None


def _non_finite_error(pop: PreparedOp, scope: Scope, slot, name, item, nan, inf):
    what = f"var {name!r}" if item is None else f"item {item} of tensor array {name!r}"
    lines = [f"{pop.where}: output {slot} ({what}) has {nan} NaN and {inf} Inf values"]
    if scope.name != "run":
        lines.append(f"  in scope {scope.name!r}")
    shown = 0
    for in_slot, names in pop.inputs.items():
        for n in names:
            var = scope.find_var(n) if n != EMPTY_VAR else None
            if var is None or var._kind is None or shown >= 8:
                continue
            arrays = list(float_arrays(var._value))
            if not arrays:
                continue
            shown += 1
            a = arrays[0][1] if len(arrays) == 1 else None
            if a is None:
                lines.append(f"  input {in_slot} ({n!r}): a tensor array of {len(arrays)}")
            elif all_finite(a):
                lines.append(f"  input {in_slot} ({n!r}): {a.dtype}{list(a.shape)}, finite, "
                             f"min {a.min():.4g}, max {a.max():.4g}")
            else:
                i_nan, i_inf = count_non_finite(a)
                lines.append(f"  input {in_slot} ({n!r}): {a.dtype}{list(a.shape)} already "
                             f"had {i_nan} NaN and {i_inf} Inf values (not made by an op of "
                             f"this run: fed, loaded or left in the scope)")
    if pop.created_at:
        lines.append(f"  op created at: {pop.created_at}")
    e = ExecutionError("\n".join(lines))
    e._paddle_nb_located = True
    e.failed_op = pop.op
    e.op_where, e.output_slot, e.var_name, e.nan_count, e.inf_count = \
        pop.where, slot, name, nan, inf
    return e


def _note_interrupt(e: BaseException, pop: PreparedOp | None) -> None:
    """Say where a KeyboardInterrupt arrived, once (at the innermost op; ``pop`` None: in
    Executor.run outside every op, while it checked the feed, set up or fetched)."""
    if not getattr(e, "_paddle_nb_noted", False) and hasattr(e, "add_note"):
        where = pop.where if pop is not None else "Executor.run, between ops"
        try:
            e.add_note(f"paddle_nb: interrupted in {where}; the run was undone "
                       f"(parameters keep their values from before it)")
            e._paddle_nb_noted = True
        except (AttributeError, TypeError):
            pass


def _require_cuda(place) -> None:
    """A clear error now, not a numba one at the first kernel, when CUDA cannot run."""
    from ..kernels.cuda import device   # noqa: PLC0415 (numba.cuda only when asked for)
    why = device.why_unavailable()
    if why is not None:
        raise ExecutionError(f"cannot run on {place!r}: {why}")
    count = device.device_count()
    if not 0 <= place.device_id < count:
        raise ExecutionError(f"cannot run on {place!r}: numba sees {count} CUDA device(s), "
                             f"numbered 0 to {count - 1}")


def _is_scope_list(block, name: str) -> bool:
    v = block.table.find_var(name)
    return v is not None and v.type.type == VarType.STEP_SCOPES


def _located(e: Exception, pop: PreparedOp) -> Exception:
    """``e`` with the op's block path and creating line, once (inner blocks add it first)."""
    if getattr(e, "_paddle_nb_located", False):
        return e
    if isinstance(e, IndexOutOfRange):     # a kernel's range check (kernels/check.py)
        text = f"{pop.where}: {e}"
    else:
        text = f"{pop.where}: {e if isinstance(e, PaddleNBError) else f'{type(e).__name__}: {e}'}"
    if pop.created_at:
        text += f"\n  op created at: {pop.created_at}"
    if isinstance(e, IndexOutOfRange):
        new = IndexRangeError(text)
        new.slot, new.value, new.position, new.low, new.high = \
            e.slot, e.value, e.position, e.low, e.high
    else:
        new = type(e)(text) if isinstance(e, PaddleNBError) else ExecutionError(text)
    new._paddle_nb_located = True
    new.failed_op = pop.op        # for a front end that knows which cell built which op
    return new
