"""``pd.CompiledProgram``: a program whose blocks run as compiled segments.

    compiled = pd.CompiledProgram(main)          # build_strategy=pd.BuildStrategy()
    exe.run(compiled, feed=..., fetch_list=[loss])
    print(compiled.source())                     # what numba compiled, op by op

As Paddle's ``paddle.static.CompiledProgram``, it wraps a program for ``Executor.run``; the
program itself is unchanged and still runs as written anywhere else (``exe.run(main)``,
``exe.steps``, the debugger).

How a block gets compiled: the first run with a new signature of what enters the block
(the shapes and dtypes of its feeds and parameters) runs in the interpreter, and what it
leaves in the block's variables gives each op's operands their dtypes, ranks and shapes.
From those the block is cut into segments (compiler/plan.py), each generated
(compiler/codegen.py) and compiled by numba (compiler/disk_cache.py); every later run
with that signature runs the plan. Another batch size learns again, but its segments'
source is the same, so numba compiles nothing new.

Faults: a run is all or nothing here too (the executor's rule). A compiled run that
raises is undone and the program runs again in the interpreter, so that the error names
the user's op and line; if the interpreter's run succeeds, the plans are dropped and
learned again, and after three such failures the program is no longer compiled (the
reasons are in ``source()``). Compiled control flow that cannot serve a run (a branch not
taken, a loop that ran no step: sub_blocks.Declined) hands it to the interpreter, which is
no failure; a limit a compiled loop reaches raises the interpreter's error at once.
"""
from __future__ import annotations

import threading

from .build_strategy import BuildStrategy
from .lowering import Learned
from . import branch, recurrent_loop, while_loop
from .plan import BlockPlan, compile_whole_block, plan_block
from .sub_blocks import is_decline, learn_again
from ..core import fast_path
from ..core.errors import ExecutionError

MAX_FAILURES = 3
MAX_DECLINES = 8


class CompiledProgram:
    """``program`` for ``Executor.run``, its blocks compiled (module docstring)."""
    compiles_blocks = True          # what the executor looks for (it imports nothing here)

    def __init__(self, program, build_strategy: BuildStrategy | None = None):
        if not (hasattr(program, "global_block") and hasattr(program, "blocks")):
            raise ExecutionError(f"CompiledProgram needs a Program, got "
                                 f"{type(program).__name__}")
        if build_strategy is not None and not isinstance(build_strategy, BuildStrategy):
            raise ExecutionError(f"build_strategy must be a pd.BuildStrategy, got "
                                 f"{type(build_strategy).__name__}")
        self.program = program
        self.build_strategy = build_strategy or BuildStrategy()
        # (block idx, ((skip, entry signature), fetched names)) -> (the PreparedBlock it
        # was made for, plan); (block idx, skip, fetched names) -> the same, the last used
        self._plans: dict = {}
        self._guesses: dict = {}
        self._latest: dict[int, BlockPlan] = {}      # block idx -> the last plan made
        # (block idx, op index) -> (prepared block, forms) of a cond's branch as the last
        # learning run that took it compiled it (branch.branch_forms)
        self._branches: dict = {}
        self._lock = threading.Lock()
        self.failures: list[str] = []
        self._remote = (None, False)       # (program version, does it talk to servers?)
        self._place_kind = None            # the place of the last run ("cpu", "cuda")
        self.disabled_because: str | None = None
        self.declined = 0           # runs compiled control flow handed to the interpreter
        self.declining_off: str | None = None   # why branches and whiles are no longer

    def __repr__(self):
        return f"<CompiledProgram of {self.program!r}>"

    # --- what the executor calls ------------------------------------------------------
    def active_for(self, place) -> bool:
        """Does a run on ``place`` use compiled plans? (CPU only: on CUDAPlace the blocks
        run in the interpreter, and source() says so.)"""
        self._place_kind = place.kind
        if not (self.build_strategy.compile_blocks and self.disabled_because is None
                and place.kind == "cpu"):
            return False
        version = self.program.version
        if self._remote[0] != version:          # read once per version of the program
            self._remote = (version, fast_path.talks_to_servers(self.program))
        return not self._remote[1]

    def for_run(self, fetch_names) -> "CompiledRun":
        """What one ``Executor.run`` asks for plans (its plans keep what it fetches)."""
        return CompiledRun(self, tuple(fetch_names))

    def plan(self, prepared, key) -> BlockPlan | None:
        """The plan for this block and key (skipped ops, entry signature, fetched names),
        or None (learn it on this run)."""
        hit = self._plans.get((prepared.block.idx, key))
        if hit is not None and hit[0] is prepared:
            self._guesses[(prepared.block.idx, key[0][0], key[1])] = hit
            return hit[1]
        return None

    def learn(self, prepared, key, ops, env, scope, fetch_names, executor) -> None:
        """Make the plan for ``key`` from what the interpreter's run of ``ops`` in
        ``scope`` left in ``env`` (recurrent ops: in their kept step scopes too)."""
        learned = [Learned(var._value if var is not None else None) for var in env]
        fuse = self.build_strategy.fuse_elementwise
        loops = {}
        if self.build_strategy.compile_loops:
            loops = recurrent_loop.pair_forms(self.program, prepared, env, executor, fuse,
                                              compile_whole_block, self._whole_plan)
        if self.build_strategy.compile_loops and self.declining_off is None:
            loops.update(while_loop.while_forms(self.program, prepared, env, executor, fuse,
                                                compile_whole_block, self._whole_plan))
        if self.build_strategy.compile_branches and self.declining_off is None:
            loops.update(branch.branch_forms(self.program, prepared, env, executor, fuse,
                                             compile_whole_block, self._whole_plan,
                                             self._branches))
            seen = self._seen(prepared, env, scope, fetch_names)
            for form in loops.values():         # a branch of cond not taken this run:
                for (_, j), (shape, dtype) in zip(getattr(form, "outputs", ()),
                                                  getattr(form, "merged", None) or ()):
                    if learned[j].nothing:      # its outputs as the run that took it saw
                        learned[j] = Learned.of(shape, dtype)
                    if j in seen:               # a placeholder would be seen: it runs
                        form.merged = None
                        break
        plan = plan_block(prepared, learned, ops, self._kept(prepared, env, scope, fetch_names),
                          fuse, loops)
        plan.key = key[0]
        with self._lock:
            if len(self._plans) >= 64:          # a loop over ever new shapes: bounded
                self._plans.clear()
                self._guesses.clear()
            self._plans[(prepared.block.idx, key)] = (prepared, plan)
            self._latest[prepared.block.idx] = plan
            self._guesses[(prepared.block.idx, key[0][0], fetch_names)] = (prepared, plan)

    def _whole_plan(self, prepared):
        """The one Segment of sub-block ``prepared``'s latest plan, when that plan was made
        for it (this version of the program) and holds the whole block; else None."""
        plan = self._latest.get(prepared.block.idx)
        if plan is None or plan.interpreted or len(plan.segments) != 1 or not any(
                made is prepared and kept is plan for made, kept in self._plans.values()):
            return None
        return plan.segments[0]

    def guess(self, prepared, skip, fetch_names) -> BlockPlan | None:
        """The plan a run with these skipped ops and fetches most likely runs (the last one
        made or run for them), so that the run binds only its names; the executor checks
        the guess against the entry signature."""
        hit = self._guesses.get((prepared.block.idx, skip, fetch_names))
        if hit is not None and hit[0] is prepared:
            return hit[1]
        return None

    def _kept(self, prepared, env, scope, fetch_names) -> set[int]:
        """The block's names (by number) whose values must be in a scope when it ends:
        fetched ones, those living in a scope above the run's (parameters, a variable the
        user made), and those a sub-block reads by name."""
        if prepared.block.idx != 0:
            # a sub-block's scope outlives its run: the op that owns it reads its outputs
            # by name, and a gradient block reads its step values there later
            return set(range(len(prepared.names)))
        numbers = {name: i for i, name in enumerate(prepared.names)}
        kept = self._seen(prepared, env, scope, fetch_names)
        for block in self.program.blocks[1:]:
            for op in block.ops:
                kept.update(numbers[n] for n in op.input_arg_names if n in numbers)
        return kept

    def _seen(self, prepared, env, scope, fetch_names) -> set[int]:
        """The block's names (by number) the user sees after a run: fetched ones, and
        those living in a scope above the run's (all of a sub-block's: its owner's)."""
        if prepared.block.idx != 0:
            return set(range(len(prepared.names)))
        numbers = {name: i for i, name in enumerate(prepared.names)}
        seen = {numbers[n] for n in fetch_names if n in numbers}
        seen.update(i for i, var in enumerate(env) if var is not None and var._scope is not scope)
        return seen

    def run_failed(self, error: BaseException) -> None:
        """A compiled run raised and the interpreter's run of it did not: drop the plans
        (they are learned again), and stop compiling after MAX_FAILURES. Compiled control
        flow that declined its run (a branch whose condition failed, a while that ran no
        step: sub_blocks.Declined) is no failure: the plans stay, but after MAX_DECLINES
        such runs branches and whiles are compiled no more (a condition that flips from
        run to run would pay for a compiled start and an interpreted run each time)."""
        with self._lock:
            if is_decline(error):
                self.declined += 1
                if learn_again(error):          # a cond taking its other way: learned
                    self._plans.clear()         # from the next run, both ways then
                    self._guesses.clear()
                if self.declined >= MAX_DECLINES and self.declining_off is None:
                    self.declining_off = (f"{self.declined} runs took a way the compiled "
                                          f"code was not learned with")
                    self._plans.clear()
                    self._guesses.clear()
                return
            self._plans.clear()
            self._guesses.clear()
            self.failures.append(f"{type(error).__name__}: {error}".splitlines()[0])
            if len(self.failures) >= MAX_FAILURES:
                self.disabled_because = (f"{len(self.failures)} compiled runs failed where "
                                         f"the interpreter's did not")

    # --- what a learner reads ---------------------------------------------------------
    def source(self, block: int = 0) -> str:
        """The generated Python of block ``block``'s segments (what numba compiled), one
        line per op under a comment naming it and its line in the user's code, and the
        ops that run in the interpreter between them, with the reason."""
        head = []
        if not self.build_strategy.compile_blocks:
            return "# BuildStrategy(compile_blocks=False): the program runs as written"
        if self.disabled_because:
            head.append(f"# no longer compiled: {self.disabled_because}")
        if self._place_kind == "cuda":
            head.append("# the last run was on CUDAPlace, where blocks run in the interpreter "
                        "(its CUDA kernels, op by op): the compiler emits CPU code only")
        head += [f"# compiled run failed: {f}" for f in self.failures]
        if self.declining_off:
            head.append(f"# conditional_blocks and whiles are no longer compiled: "
                        f"{self.declining_off}")
        plan = self._latest.get(block)
        if plan is None:
            if block >= len(self.program.blocks):
                raise ExecutionError(f"the program has {len(self.program.blocks)} block(s); "
                                     f"no block {block}")
            return "\n".join(head + [
                f"# block {block} is not compiled yet: a block is compiled from its first "
                f"run on a CPUPlace (Executor.run(compiled, ...)); a sub-block from its "
                f"first run under the op that owns it (each of its runs is one call of its "
                f"segments, between the owner's steps)"])
        out = head + [f"# block {block}: {len(plan.segments)} compiled segment(s), "
                      f"{len(plan.interpreted)} op(s) interpreted"]
        for item in plan.items:
            if hasattr(item, "source"):
                out += ["", item.source.text.rstrip()]
            else:
                out += ["", f"# op {item.index} {item.op.type}: interpreted "
                            f"({plan.interpreted[item.index]})"]
        return "\n".join(out) + "\n"

    def segments(self, block: int = 0) -> dict[int, int]:
        """op index -> the number of the compiled segment it went into (ops that run in
        the interpreter are absent): what a program view marks."""
        plan = self._latest.get(block)
        if plan is None:
            return {}
        return {pop.index: seg.number for seg in plan.segments for pop in seg.pops}


class CompiledRun:
    """One ``Executor.run`` of a CompiledProgram: what the executor's block loop asks for
    a plan, keyed by what this run fetches too (a value nobody fetches or reads later is
    never stored)."""
    __slots__ = ("compiled", "fetch_names")

    def __init__(self, compiled: CompiledProgram, fetch_names: tuple):
        self.compiled = compiled
        self.fetch_names = fetch_names

    def plan(self, prepared, key) -> BlockPlan | None:
        return self.compiled.plan(prepared, (key, self.fetch_names))

    def guess(self, prepared, skip) -> BlockPlan | None:
        return self.compiled.guess(prepared, skip, self.fetch_names)

    def learn(self, prepared, key, ops, env, scope, executor) -> None:
        self.compiled.learn(prepared, (key, self.fetch_names), ops, env, scope,
                            self.fetch_names, executor)
