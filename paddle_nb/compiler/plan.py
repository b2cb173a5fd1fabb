"""A block's compiled plan: its ops cut into compiled segments and interpreted ops.

:func:`plan_block` walks a prepared block's ops in order with what the interpreter's run
learned of every variable. Each maximal run of ops that have a lowered form for these
operands becomes a :class:`Segment` (one generated function, compiled by numba); an op
without one stays as it is, and the executor's block loop runs it between segments. A
Segment stands in the loop where its ops stood and looks like an op to it: it has a
``kernel(ctx)`` that reads the block's environment and writes every array its ops write.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from . import codegen, disk_cache, while_loop
from .lowering import lowered_form
from ..core.errors import ExecutionError
from ..kernels.cpu import tensor_array as KT
from ..kernels.cpu.loop_guard import Interrupted, LoopLimitReached
from ..kernels.lowered import Elementwise


class Segment:
    """A run of ops compiled into one function; an item of the executor's block loop."""
    infer_shape = None          # the allocation guard passed for these shapes when the
    is_generator = False        # plan was learned (a plan holds for one entry signature)
    tensor_attrs = None

    def __init__(self, number: int, pops: list, source: codegen.Source, names: list[str],
                 name: str | None = None):
        self.number = number
        self.name = name or f"segment_{number}"     # the generated function's name
        self.pops = pops
        self.index = pops[0].index
        self.op = pops[0].op             # for the loop's error note: the first op
        self.where = (f"{pops[0].where.rsplit(' > ', 1)[0]} > compiled segment {number} "
                      f"(ops {pops[0].index}-{pops[-1].index})")
        self.created_at = pops[0].created_at
        self.source = source
        self.names = names
        self.reads = tuple(source.reads)
        self.writes = tuple(source.writes)
        self.fn = None                   # compiled on first use (compile())
        # numbers a compiled loop leaves for its limit's error (codegen.Writer.report)
        self.report = np.zeros(4, np.int64) if source.report else None

    def compile(self):
        if self.fn is None:
            self.fn = disk_cache.compiled(self.source.text, self.name, self.source.scope)
        return self.fn

    def kernel(self, ctx) -> None:
        run = ctx.run
        env = run.env
        args = [] if self.report is None else [self.report]
        for i in self.reads:
            var = env[i]
            value = var._value if var is not None else None
            if value.__class__ is not np.ndarray:
                value = self._tensor_array(i, value)
            args.append(value)
        try:
            results = (self.fn or self.compile())(*args)
        except Interrupted:                 # SIGINT seen by a compiled loop: the user's
            raise KeyboardInterrupt from None   # Interrupt (kernels/cpu/loop_guard.py)
        except LoopLimitReached as reached:     # the interpreter's error, at once
            raise while_loop.limit_error(self, reached) from None
        for i, value in zip(self.writes, results):
            var = env[i]
            if var is None:                       # declared nowhere: made in this scope
                var = env[i] = run.scope.var(self.names[i])
            if value.__class__ is tuple:          # a tensor array, as the interpreter's
                var._value, var._kind = KT.to_list(value), "tensor_array"
            else:
                var._value, var._kind = value, "tensor"

    def _tensor_array(self, i: int, value) -> tuple:
        """A tensor array the segment reads from a scope (a list, or nothing yet: empty),
        as compiled code holds one (kernels/cpu/tensor_array.py)."""
        if i not in self.source.arrays or not (value is None or value.__class__ is list):
            raise ExecutionError(f"{self.where}: {self.names[i]!r} holds no array")
        return KT.from_list(value or [], *self.source.arrays[i])


@dataclass
class BlockPlan:
    """What runs for one block and one entry signature: ``items`` (PreparedOps and
    Segments, in order) and, for ``source()``, why each interpreted op is one."""
    items: list
    segments: list[Segment]
    interpreted: dict[int, str] = field(default_factory=dict)   # op index -> why
    # what a run of the plan binds and declares: the names its items touch, the block's
    # entry names and the kept ones (core/kernel_context.BlockRun's ``bound``)
    bound: tuple = ()
    declared: list = field(default_factory=list)    # the block's locals among them
    key: object = None                              # what the compiler filed it under


def plan_block(prepared, learned, ops, kept: set[int], fuse: bool = True,
               loops: dict | None = None) -> BlockPlan:
    """The plan for ``ops`` (the prepared block's ops this run runs) given ``learned``
    (one lowering.Learned per bound name). ``kept``: the names (by number) whose values
    must be in the scope when the block ends (fetched, persistable, living in a scope
    outside the run, read by name in a sub-block); a segment stores any other value it
    makes only where an op outside it reads it. ``loops``: {op index: control-flow form}
    (recurrent_loop's and while_loop's loops, branch.py's branches), kept only where a
    pair lands in one segment."""
    loops = dict(loops or {})
    while True:
        parts, interpreted = _partition(ops, learned, loops)
        broken = _split_pairs(parts, loops)
        if not broken:
            break
        for index in broken:
            loops.pop(index)
    items, segments = [], []
    read_later = set(kept)       # what the parts after the current one read, or keep
    needed = []
    for part in reversed(parts):
        needed.append(set(read_later))
        for pop in ([p for p, _ in part] if isinstance(part, list) else [part]):
            read_later.update(i for i in pop.sig_ix if i >= 0)
    touched = set(kept) | set(prepared.entry_ix)
    # the global block's locals, declared anew for each run: a tensor array among them
    # that no op before a segment wrote starts empty in it (a sub-block's owner may set
    # its locals before it runs: a while_grad its outputs' gradients, in the step scope)
    local = set(prepared.local)
    unwritten = {i for i, n in enumerate(prepared.names) if n in local} \
        if prepared.block.idx == 0 else set()
    for part, after in zip(parts, reversed(needed)):
        if isinstance(part, list):
            seg = _segment(len(segments), part, prepared.names, learned, after, fuse,
                           f"block{prepared.block.idx}_segment_{len(segments)}",
                           set(unwritten))
            segments.append(seg)
            touched.update(seg.reads + seg.writes)
            part = seg
        else:
            touched.update(i for ix in (*part.in_ix.values(), *part.out_ix.values())
                           for i in ix if i >= 0)
        for pop in part.pops if isinstance(part, Segment) else [part]:
            unwritten.difference_update(i for ix in pop.out_ix.values() for i in ix)
        items.append(part)
    bound = tuple(sorted(touched))
    return BlockPlan(items, segments, interpreted, bound,
                     [prepared.names[i] for i in bound if prepared.names[i] in local])


_WHY = ("a {op} compiles as {what} (with its gradient op, in one segment) when every op "
        "of its blocks has a lowered form and it was learned from a run of them; {runs}")
_LOOP_WHY = _WHY.format(op="{op}", what="a loop", runs="its steps run their blocks' compiled "
                        "segments")
_CONTROL_FLOW = {
    "recurrent": _LOOP_WHY.format(op="recurrent op"),
    "while": _LOOP_WHY.format(op="while"),
    "conditional_block": _WHY.format(op="conditional_block", what="a branch",
                                     runs="its branch runs its block's compiled segments")}
for _op in list(_CONTROL_FLOW):
    _CONTROL_FLOW[_op + "_grad"] = _CONTROL_FLOW[_op]


def _partition(ops, learned, loops: dict):
    """The ops cut into parts: a list of (pop, form) per segment, or an interpreted pop;
    and {op index: why} of the interpreted ones."""
    parts: list = []
    interpreted = {}
    for pop in ops:
        if pop.index in loops:
            form, why = loops[pop.index], ""
        else:
            form, why = lowered_form(pop, learned)
        if isinstance(form, Elementwise):
            patterns = codegen.elementwise_patterns(pop, form, learned)
            # a loop takes its shape from an operand of the output's shape
            if patterns is None or ("flat",) not in patterns:
                form, why = None, "its operands broadcast in a way a fused loop does not read"
        if form is None:
            if pop.op.type in _CONTROL_FLOW and why == "no lowered form":
                why = _CONTROL_FLOW[pop.op.type]
            parts.append(pop)
            interpreted[pop.index] = why
        elif parts and isinstance(parts[-1], list):
            parts[-1].append((pop, form))
        else:
            parts.append([(pop, form)])
    return parts, interpreted


def _split_pairs(parts, loops: dict) -> list[int]:
    """Op indices of control-flow forms whose partner landed in another part (or stayed
    interpreted): the stacks a forward loop keeps, the values of a branch, live only
    inside their segment."""
    where = {}
    for n, part in enumerate(parts):
        for pop, _ in (part if isinstance(part, list) else []):
            where[pop.index] = n
    broken = []
    for index, form in loops.items():
        partner = form.grad if hasattr(form, "grad") else form.forward
        if partner is None:
            continue
        other = next((i for i, f in loops.items() if f is partner), None)
        if other is None or where.get(index) is None or where.get(index) != where.get(other):
            broken.append(index)
    return broken


def compile_whole_block(prepared, learned, fuse: bool) -> Segment | None:
    """Block ``prepared`` as one Segment (every op lowered), returning all it writes, or
    None: a sub-block a recurrent loop calls once per step. (The same source as the
    block's own plan when it runs under an interpreted op: one compiled function.)"""
    plan = plan_block(prepared, learned, prepared.ops, set(range(len(prepared.names))), fuse)
    if plan.interpreted or len(plan.segments) != 1:
        return None
    return plan.segments[0]


def _segment(number: int, run: list, names, learned, needed: set[int], fuse: bool,
             name: str, fresh: set[int] = frozenset()) -> Segment:
    # what each op's successors in the segment read (a fused loop stores a value only
    # where something after the loop reads it)
    reads_after, seen = [], set(needed)
    for pop, _ in reversed(run):
        reads_after.append(set(seen))
        seen.update(i for i in pop.sig_ix if i >= 0)
    reads_after.reverse()
    w = codegen.Writer(names, learned, needed, fresh)
    group: list = []

    def flush(position: int):
        if group:
            w.fused(list(group), reads_after[position])
            group.clear()

    for k, (pop, form) in enumerate(run):
        if isinstance(form, tuple):                  # Calls
            flush(k - 1)
            w.calls(pop, form)
            continue
        if hasattr(form, "emit"):       # control flow: a loop or a branch, or its gradient
            flush(k - 1)
            w.body.append("    " + codegen.op_comment(pop, names))
            form.emit(w, pop)
            continue
        patterns = codegen.elementwise_patterns(pop, form, learned)
        shape = learned[pop.out_ix[form.writes][0]].shape
        joins = fuse and group and learned[group[0][0].out_ix[group[0][1].writes][0]].shape \
            == shape
        if not joins:
            flush(k - 1)
        group.append((pop, form, patterns))
        if not fuse:
            flush(k)
    flush(len(run) - 1)
    return Segment(number, [pop for pop, _ in run], w.finish(name), names, name)
