"""The executor: a program's run is a sequence of single steps (docs/architecture.md,
decision 5).

``Executor.steps(...)`` is a generator that runs one op per ``next()`` and yields a
:class:`Step` (block path, op index, the op, the scope it ran in); ``Executor.run`` drains
the same block loop with no hooks (nothing yielded, output buffers reused) and returns the
fetched values. The debugger is the generator of ``steps`` advanced by hand. A block is
prepared once (kernels resolved, slots and attributes read: the Block and Scope design's
``symbols_ready_``) and reused until the block changes.

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
  or Inf. It is a hook of the block loop (kernel_context.RunHooks): without hooks the
  loop makes one test per op.
* Thread safety: one Executor and one Program may be shared by threads that run in
  separate scopes. Prepared blocks are built under a lock and published whole; the
  per-feed plans of a prepared block are computed and then published with one dict store.
  Prepared blocks are cached on the program (keyed weakly by executor), so neither keeps
  the other alive.
"""
from __future__ import annotations

import threading
import warnings
import weakref
from dataclasses import dataclass

from . import fast_path, feed_fetch, runtime_shapes, validate
from .errors import ExecutionError, IndexRangeError, PaddleNBError
from .kernel_context import BlockRun, KernelContext, RunHooks
from .non_finite import check_feed_finite, first_non_finite, non_finite_error
from .operator import Operator
from .place import CPUPlace, is_place
from .prepared import PreparedBlock, PreparedOp  # noqa: F401 (PreparedOp: its old home)
from .default_programs import default_main_program
from .scope import Scope, current
from ..kernels.check import IndexOutOfRange
from ..kernels.cpu.random import UndoableDraws
from ..kernels.cpu.threads import keep_products_serial
from ..kernels.cuda import device

# ``Executor.steps(training=...)`` given or not (it is deprecated: see there)
_NOT_GIVEN = object()


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


# The attribute of a Program holding its prepared blocks: {executor (weakly): {idx: block}}.
_CACHE_ATTR = "_prepared_by_executor"


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

    # --- preparing ------------------------------------------------------------------------
    def prepare(self, program, block_idx: int = 0) -> PreparedBlock:
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
    def run(self, program=None, feed: dict | None = None,
            fetch_list=None, scope: Scope | None = None, return_numpy: bool = True,
            check_nan_inf: bool | None = None):
        """Run ``program`` once and return the fetched values as numpy arrays. If it
        raises, the scope's persistable variables are as they were before the run.
        Without ``check_nan_inf`` this is the fast path: no hooks, reused output buffers,
        and a rewritten copy of the program where a pass applies (core/fast_path.py)."""
        check = self.check_nan_inf if check_nan_inf is None else bool(check_nan_inf)
        program = program if program is not None else default_main_program()
        compiler = None
        if getattr(program, "compiles_blocks", False):      # a pd.CompiledProgram
            compiler, program = program, program.program
            if check or not compiler.active_for(self.place):
                compiler = None
        try:                              # an interrupt anywhere in here gets the note
            if compiler is not None:
                with UndoableDraws() as draws:
                    try:
                        return self._drain(program, feed, fetch_list, scope, check, compiler)
                    except Exception as e:  # noqa: BLE001 (undone; the interpreter's run
                        if getattr(e, "_paddle_nb_final", False):  # below raises in terms
                            raise       # of the user's ops, unless this one already does
                        failure = e
                draws.give_back()
                result = self._drain(program, feed, fetch_list, scope, check)
                compiler.run_failed(failure)        # the compiled run was wrong to fail
                return result
            rewritten = None
            if not check and _is_program(program):
                rewritten = fast_path.rewritten(program, feed, fetch_list)
            if rewritten is not None:
                with UndoableDraws() as draws:
                    try:
                        return self._drain(rewritten, feed, fetch_list, scope, check)
                    except Exception:   # noqa: BLE001 (undone; the program as written
                        pass            # runs again and raises in terms of its own ops)
                draws.give_back()
            return self._drain(program, feed, fetch_list, scope, check)
        except KeyboardInterrupt as e:    # one that arrived between ops says so too
            _note_interrupt(e, None)
            raise

    def _drain(self, program, feed, fetch_list, scope, check, compiler=None):
        hooks = RunHooks(stepping=False, check_nan_inf=True) if check else None
        gen = self._start(program, feed, fetch_list, scope, hooks, compiler)
        while True:
            try:
                next(gen)
            except StopIteration as done:
                return done.value

    def steps(self, program=None, feed: dict | None = None,
              fetch_list=None, scope: Scope | None = None, training=_NOT_GIVEN,
              check_nan_inf: bool | None = None, before_op=None):
        """A generator that runs one op per step and yields a :class:`Step` after each;
        its return value (``StopIteration.value``) is the list of fetched arrays.
        Everything is checked before anything is written, so a bad feed or fetch changes
        nothing; a data variable the program reads but the feed lacks is a FeedError at the
        first step, before any op runs.

        ``before_op(op, scope, frames)``, if given, is called just before each op's kernel
        runs (a control-flow op's too, before its sub-block's ops), with the scope it runs
        in and the frames it runs under: the debugger copies what the op will overwrite.

        ``training`` is deprecated and does nothing: no kernel ever read it. Dropout and
        batch norm take their mode from their ``is_test`` attributes, which
        ``Program.clone(for_test=True)`` sets, as in Paddle."""
        if training is not _NOT_GIVEN:
            warnings.warn("Executor.steps(training=...) has no effect and will be removed: "
                          "ops take their mode from attributes (dropout's and batch_norm's "
                          "is_test; Program.clone(for_test=True) sets them)",
                          DeprecationWarning, stacklevel=2)
        check = self.check_nan_inf if check_nan_inf is None else bool(check_nan_inf)
        hooks = RunHooks(stepping=True, check_nan_inf=check, before_op=before_op)
        return self._start(program, feed, fetch_list, scope, hooks)

    def _start(self, program, feed, fetch_list, scope, hooks, compiler=None):
        """Check the program, feed and fetch list now (a bad one raises before the first
        step), then return the run's generator. ``compiler``: a pd.CompiledProgram whose
        plans the global block runs (paddle_nb/compiler; None: the interpreter)."""
        program = program if program is not None else default_main_program()
        if getattr(program, "compiles_blocks", False):     # stepping a CompiledProgram:
            program = program.program                       # its program, as written
        if not _is_program(program):
            raise ExecutionError(f"run needs a Program, got {type(program).__name__}")
        scope = scope if scope is not None else current()
        fetch_names = feed_fetch.fetch_names(program, fetch_list)
        _check_once(program)
        prepared = self.prepare(program, 0)
        feed = feed_fetch.check_feed(program, prepared, feed or {})
        if hooks is not None and hooks.check_nan_inf:
            check_feed_finite(feed)
        return self._run_global(prepared, program, feed, fetch_names, scope, hooks,
                                compiler)

    def _run_global(self, prepared, program, feed, fetch_names, scope, hooks, compiler):
        # A data variable the program reads but the feed lacks is an error at the first
        # step, before anything is written (not in steps() itself: a debugger may be made
        # for a program it is not given a feed for yet, to look at it).
        skip, missing = prepared.plan_for(frozenset(feed))
        if missing:
            raise feed_fetch.missing_feed_error(prepared, missing)
        run_scope = scope.new_scope("run")
        saved = None
        try:
            # What every persistable held before the run, to put back if the run fails
            # (the values themselves: kernels make new arrays, they do not write in place).
            saved = [(v, v._value, v._kind) for v in map(scope.var, prepared.persistable)]
            compiled_run = compiler.for_run(fetch_names) if compiler is not None else None
            guess = compiled_run.guess(prepared, skip) if compiled_run is not None else None
            # a compiled plan declares only the locals it touches (a long program's
            # thousand locals cost more per run than its compiled code)
            run_scope.declare(prepared.local if guess is None else guess.declared)
            feed = {**feed_fetch.scheduled_learning_rate(program), **feed}
            if self.place.kind == "cuda":       # the only host -> device copies of a run
                feed = {name: device.to_device(value) for name, value in feed.items()}
            for name, value in feed.items():
                run_scope.find_var(name).set(value)
            keep_products_serial(prepared.uses_cores)
            yield from self._run_block(prepared, run_scope, skip, (), None, hooks,
                                       compiled_run)
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

    # a fetch as a method of the run, so that a test can stand in for it (an interrupt
    # that arrives while the results are fetched)
    _fetch = staticmethod(feed_fetch.fetch)

    def run_sub_block(self, program, block_idx: int, scope: Scope, frames: tuple = (),
                      owner: Operator | None = None, hooks: RunHooks | None = None,
                      compiler=None):
        """Run a sub-block in ``scope`` (made by the op that owns it): its local variables
        are created there, and names it does not declare are found in enclosing scopes.
        ``compiler``: the run's compiled plans (a CompiledProgram's run), or None."""
        prepared = self.prepare(program, block_idx)
        scope.declare(prepared.local)
        return self._run_block(prepared, scope, (), frames, owner, hooks, compiler)

    # The block loop, for every run. The environment is bound once per block run
    # (fast_path.bind_slots); the allocation guard sizes outputs before kernels allocate,
    # skipped op by op when the block's entry shapes are ones it passed with. ``hooks`` is
    # None on the plain path: nothing is yielded (the loop is a generator that finishes in
    # its first ``next``) and no per-op test but that one is made. With hooks, the
    # debugger's before-op copy, the NaN/Inf check and one Step per op. With a
    # ``compiler`` (a pd.CompiledProgram's CompiledRun), the loop runs its plan for this
    # block, entry signature and fetch list, where runs of ops are compiled segments
    # standing in for them; the first run with a new signature runs the ops, and the
    # compiler learns the plan from it.
    def _run_block(self, prepared: PreparedBlock, scope: Scope, skip, frames,
                   owner: Operator | None, hooks: RunHooks | None, compiler=None):
        path = prepared.path
        frames = frames + (Frame(prepared.block.idx, path, scope, owner),)
        plan = compiler.guess(prepared, skip) if compiler is not None else None
        run = BlockRun(scope, self, frames, prepared.names, hooks,
                       plan.bound if plan is not None else None, compiler)
        env, signature = run.env, fast_path.signature
        ops = prepared.ops if not skip else [p for p in prepared.ops if p.index not in skip]
        if compiler is not None:
            compiled_key = (skip, fast_path.entry_signature(prepared.entry_ix, env))
            if plan is not None and plan.key != compiled_key:     # guessed wrong
                scope.declare(prepared.local)
                run.bind_all(prepared.names)
                plan = None
            if plan is None:
                plan = compiler.plan(prepared, compiled_key)
            if plan is not None:
                ops = plan.items
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
                if hooks is None:
                    if pop.is_generator:
                        yield from pop.kernel(KernelContext(pop, run))
                    else:
                        pop.kernel(KernelContext(pop, run))
                    continue
                if hooks.before_op is not None:     # the debugger's copy-on-write
                    hooks.before_op(pop.op, scope, frames)
                if pop.is_generator:
                    yield from pop.kernel(KernelContext(pop, run))
                else:
                    pop.kernel(KernelContext(pop, run))
                if hooks.check_nan_inf:
                    bad = first_non_finite(pop, scope)
                    if bad is not None:
                        raise non_finite_error(pop, scope, *bad)
                if hooks.stepping:
                    yield Step(path, pop.index, pop.op, scope, frames)
        except Exception as e:                # noqa: BLE001 (re-raised with context)
            raise _located(e, pop) from (None if isinstance(e, PaddleNBError) else e)
        except KeyboardInterrupt as e:        # say where it arrived; keep the type
            _note_interrupt(e, pop)
            raise
        if guard:
            prepared.passed_entry = entry
        if compiler is not None and plan is None:
            compiler.learn(prepared, compiled_key, ops, env, scope, self)


# The attribute of a Program holding the version its run-time checks last passed at.
_CHECKED_ATTR = "_checked_before_run"


def _is_program(program) -> bool:
    """Is ``program`` a Program (core/program.py, which builds on this module: blocks run
    their own ops through an Executor, ``Block.eval``)?"""
    return hasattr(program, "global_block") and hasattr(program, "blocks")


def _check_once(program) -> None:
    """Block references and attribute types (validate.check_before_run), once per version
    of the program: a loaded program is checked at its first run, an edited one again."""
    version = program.version
    if program.__dict__.get(_CHECKED_ATTR) != version:
        validate.check_before_run(program)
        program.__dict__[_CHECKED_ATTR] = version


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
    why = device.why_unavailable()
    if why is not None:
        raise ExecutionError(f"cannot run on {place!r}: {why}")
    count = device.device_count()
    if not 0 <= place.device_id < count:
        raise ExecutionError(f"cannot run on {place!r}: numba sees {count} CUDA device(s), "
                             f"numbered 0 to {count - 1}")


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
