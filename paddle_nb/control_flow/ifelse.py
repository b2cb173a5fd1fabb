"""Row-wise IfElse (the Block and Scope design): each row of a minibatch goes through one branch.

    ie = pd.ifelse()
    with ie.true_block():
        ie.output(pd.layer.scale(x, 2.0))      # the rows where the condition holds, doubled
    with ie.false_block():
        ie.output(x + 1)                        # the other rows, plus one
    y, = ie(pd.larger_than(x, 15))             # cond: bool, one row per instance ([None, 1])

(The design's own example, two outputs of two branches, is the tour's: paddle_nb/examples.)

Lowering (docs/architecture.md, decision 4): every minibatch variable a branch reads from
outside (not persistable; first dimension -1 or the condition's row count) is split by the mask
(``split_lod_tensor``); inside the branch the reads are renamed to the branch's rows; each
branch is a ``conditional_block`` that runs only when it has rows; ``merge_lod_tensor``
puts the outputs' rows back in the original order. A condition with one value (shape []
or [1]) sends the whole batch one way instead: two scalar conditional_blocks and
``select_input``, as ``pd.cond`` does.

Also spelled as Fluid's ``IfElse(cond)`` with ``ie.input(x)`` (explicit splits, outputs as
a list) and as the Block design's ``pd.ifelseop()`` with ``add_input`` / ``add_output``.
"""
from __future__ import annotations

import contextlib
import math

from ..builders import arg_checks as check
from ..layers.base import append
from ..layers.declare import assign
from ..layers.elementwise import cast, logical_not
from ..core import unique_name
from ..core.block_deps import external_reads_and_writes
from ..core.framework_pb2 import VarType
from ..core.program import default_main_program
from ..core.variable import Variable
from .blocks import append_conditional_block, misuse, sub_block

_OUTSIDE, _TRUE, _FALSE = "outside", "true", "false"


class IfElse:
    def __init__(self, cond: Variable | None = None, name: str | None = None):
        self.cond = check.variable("IfElse", "cond", cond, dtype="bool", optional=True)
        check.text("IfElse", "name", name, optional=True)
        self.name = unique_name.generate(name or "ifelse")
        self.parent = default_main_program().current_block()
        self.status = _OUTSIDE
        self.blocks = {_TRUE: None, _FALSE: None}
        self.outputs = {_TRUE: [], _FALSE: []}
        self.splits: dict[str, tuple[Variable, Variable]] = {}   # x -> (rows true, false)
        self.called = False

    # --- the two branches ---------------------------------------------------------------
    @contextlib.contextmanager
    def _branch(self, side):
        if self.status != _OUTSIDE:
            raise misuse(f"{self.name}: a {side}_block cannot be opened inside a "
                         f"{self.status}_block")
        if self.blocks[side] is not None:
            raise misuse(f"{self.name}: the {side}_block is already defined")
        if self.called:
            raise misuse(f"{self.name}: blocks cannot be added after ie(cond) was called")
        self.status = side
        try:
            with sub_block() as block:
                self.blocks[side] = block
                yield block
        finally:
            self.status = _OUTSIDE

    def true_block(self):
        return self._branch(_TRUE)

    def false_block(self):
        return self._branch(_FALSE)

    def output(self, *outs: Variable) -> None:
        """Declare this branch's outputs (in the same order in both branches)."""
        if self.status == _OUTSIDE:
            raise misuse(f"{self.name}.output() must be called inside true_block() or "
                         f"false_block()")
        for o in outs:        # all of them before the first is copied out
            check.variable(f"{self.name}.output", "outs", o)
        for o in outs:
            k = len(self.outputs[self.status])
            outer = self.parent.create_var(f"{self.name}.{self.status}_output_{k}",
                                           list(o.shape), o.dtype)
            assign(o, output=outer)
            self.outputs[self.status].append(outer)

    def input(self, x: Variable) -> Variable:
        """Fluid's spelling: this branch's rows of ``x`` (needs ``IfElse(cond)``)."""
        if self.status == _OUTSIDE:
            raise misuse(f"{self.name}.input() must be called inside true_block() or "
                         f"false_block()")
        if self.cond is None:
            raise misuse(f"{self.name}.input(x) needs the condition up front: IfElse(cond)")
        check.variable(f"{self.name}.input", "x", x)
        t, f = self._split(x)
        return t if self.status == _TRUE else f

    add_input, add_output = input, output       # the Block design's spelling

    # --- lowering -----------------------------------------------------------------------
    def _split(self, x: Variable):
        if x.name not in self.splits:
            outs = [self.parent.create_var(f"{x.name}@{self.name}.{side}", list(x.shape),
                                           x.dtype) for side in (_TRUE, _FALSE)]
            self.parent.append_op("split_lod_tensor", {"X": [x], "Mask": [self.cond]},
                                  {"OutTrue": [outs[0]], "OutFalse": [outs[1]]}, {"level": 0})
            self.splits[x.name] = tuple(outs)
        return self.splits[x.name]

    def __call__(self, cond: Variable | None = None):
        if self.status != _OUTSIDE:
            raise misuse(f"{self.name}(cond) must be called after its blocks, not inside one")
        if self.called:
            raise misuse(f"{self.name} was already called")
        if cond is not None and self.cond is not None and cond is not self.cond:
            raise misuse(f"{self.name}: the condition was given twice (IfElse(cond) and "
                         f"ie(cond))")
        self.cond = cond if cond is not None else self.cond
        check.variable(self.name, "cond", self.cond, dtype="bool")
        t, f = self.outputs[_TRUE], self.outputs[_FALSE]
        if self.blocks[_TRUE] is None and self.blocks[_FALSE] is None:
            raise misuse(f"{self.name}: define true_block() and/or false_block() first")
        if len(t) != len(f) and (t and f or self.blocks[_TRUE] and self.blocks[_FALSE]):
            raise misuse(f"{self.name}: the branches have different output counts: true_block "
                         f"gave {len(t)}, false_block {len(f)}; give both the same outputs")
        if (t or f) and not (self.blocks[_TRUE] and self.blocks[_FALSE]):
            raise misuse(f"{self.name}: outputs are merged row by row, so both true_block() and "
                         f"false_block() must produce them")
        self.called = True
        shape = list(self.cond.shape)
        if len(shape) >= 2 or (shape and shape[0] < 0):
            return self._lower_rows(t, f)
        if math.prod(shape) != 1:
            raise misuse(f"{self.name}: the condition has shape {shape}; use [None, 1] (one per "
                         f"row) or [1] (the whole batch)")
        return self._lower_scalar(t, f)

    def _lower_rows(self, t, f):
        program = self.parent.program
        cond_true, cond_false = self._split(self.cond)
        for side, rows in ((_TRUE, cond_true), (_FALSE, cond_false)):
            block = self.blocks[side]
            if block is None:
                continue
            reads, _ = external_reads_and_writes(program, block.idx)
            ours = {v.name for pair in self.splits.values() for v in pair}
            for name in reads:
                if self._is_minibatch(block.table.find_var(name)) and name not in ours:
                    split = self._split(self.parent.var(name))
                    _rename_reads(program, block.idx, name, split[0 if side == _TRUE else 1].name)
            block.infer_shapes()
            append_conditional_block(self.parent, block, [rows], is_scalar=False)
        outs = []
        for tv, fv in zip(t, f):
            out = self.parent.create_var(unique_name.generate(f"{self.name}.out"),
                                         [-1] + list(tv.shape[1:]), tv.dtype)
            self.parent.append_op("merge_lod_tensor",
                                  {"X": [self.cond], "Mask": [self.cond], "InTrue": [tv],
                                   "InFalse": [fv]}, {"Out": [out]}, {"level": 0})
            outs.append(out)
        return outs

    def _is_minibatch(self, var) -> bool:
        """A variable with one row per instance: not persistable, and its first dim is the
        batch (-1) or the condition's number of rows."""
        if var is None or var.persistable or var.type.type != VarType.LOD_TENSOR:
            return False
        dims = var.type.lod_tensor.tensor.dims
        rows = self.cond.shape[0]
        return bool(dims) and (dims[0] < 0 or dims[0] == rows)

    def _lower_scalar(self, t, f):
        if self.blocks[_TRUE] is not None:
            append_conditional_block(self.parent, self.blocks[_TRUE], [self.cond], True)
        if self.blocks[_FALSE] is not None:
            not_cond = _in_block(self.parent, lambda: logical_not(self.cond))
            append_conditional_block(self.parent, self.blocks[_FALSE], [not_cond], True)
        if not t:
            return []
        mask = _in_block(self.parent, lambda: cast(self.cond, "int32"))
        return [_in_block(self.parent, lambda tv=tv, fv=fv: append(
            "select_input", {"X": [fv, tv], "Mask": [mask]}, out_dtype=tv.dtype))
            for tv, fv in zip(t, f)]


def _in_block(block, build):
    """Run a builder with ``block`` as the current block."""
    program = block.program
    saved, program.current_block_idx = program.current_block_idx, block.idx
    try:
        return build()
    finally:
        program.current_block_idx = saved


def _rename_reads(program, block_idx: int, old: str, new: str) -> None:
    """Make the ops of a block (and its sub-blocks, unless they declare ``old`` themselves)
    read ``new`` where they read ``old``."""
    block = program.block(block_idx)
    for op in block.ops:
        for v in op.desc.inputs:
            v.arguments[:] = [new if a == old else a for a in v.arguments]
        for sub in op.sub_block_indices():
            if old not in program.block(sub).table.vars:
                _rename_reads(program, sub, old, new)
    block.table.touch()


def ifelse(name: str | None = None) -> IfElse:
    """The Block and Scope design's ``pd.ifelse()``: the condition comes at ``ie(cond)``."""
    return IfElse(None, name)


def ifelseop(cond: Variable | None = None, name: str | None = None) -> IfElse:
    """The Block design's ``pd.ifelseop()`` with ``add_input`` / ``add_output``."""
    return IfElse(cond, name)
