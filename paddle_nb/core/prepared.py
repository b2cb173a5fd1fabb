"""A block bound to kernels before it runs: the Block and Scope design's ``symbols_ready_``.

Preparing reads each op once (its OpDef, the kernel for the place, its slots and attributes,
which attributes tensors give at run time, whether it keeps its sub-block's scopes) and
numbers the block's names (``fast_path.bind_slots``), so that a run does no lookups by
name per op. The executor keeps prepared blocks until the block changes.
"""
from __future__ import annotations

import inspect
import threading

from . import fast_path, registry
from .attr_tensors import RunTimeAttrs
from .errors import ExecutionError, PaddleNBError
from .framework_pb2 import VarType
from .grad_maker import EMPTY_VAR
from .operator import Operator


class PreparedOp:
    """An op bound once: its kernel, its slots' variable names and its attributes."""
    __slots__ = ("program", "index", "op", "op_def", "kernel", "inputs", "outputs", "attrs",
                 "where", "created_at", "output_set", "is_generator", "keep_scopes",
                 "output_pairs", "infer_shape", "checked_inputs", "input_list",
                 # slots by number (fast_path.bind_slots), output buffers (KernelContext.out)
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
        self.buffers = threading.local()    # each thread its own (KernelContext.out)
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
        # the names a run binds (core/fast_path.py), and what it needs to skip the
        # allocation guard op by op when the block's entry shapes are ones it passed
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


def _is_scope_list(block, name: str) -> bool:
    v = block.table.find_var(name)
    return v is not None and v.type.type == VarType.STEP_SCOPES
