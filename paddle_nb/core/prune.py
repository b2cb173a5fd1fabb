"""Prune (the Block and Scope design's Eval): keep exactly the ops the targets depend on.

Walking a block backwards, an op is kept when it writes a name that is still needed; its
inputs then become needed. An op that owns sub-blocks is kept the same way, and its
sub-blocks are pruned to what writes the op's outputs and any outer variable, while the
outer names they read become needed too. Variables no kept op mentions are dropped, except
the targets and persistable ones (parameters stay, so a pruned program still loads them).
"""
from __future__ import annotations

from .block_deps import block_reads_and_writes
from .errors import BuildError
from .variable import var_names


def _prune_block(program, block_idx: int, needed: set[str]) -> set[str]:
    """Drop the ops of ``block_idx`` that nothing in ``needed`` depends on; return the
    names the kept ops read that come from outside the block."""
    block = program.block(block_idx)
    table = block.table
    keep = [False] * len(table.ops)
    needed = set(needed)
    for i in range(len(table.ops) - 1, -1, -1):
        op = block.ops[i]
        outs = set(op.output_arg_names)
        if not (outs & needed) and not op.desc.is_target:
            continue
        keep[i] = True
        needed.update(op.input_arg_names)
        for sub in op.sub_block_indices():
            sub_table = program.block(sub).table
            outer_writes = {n for n in block_reads_and_writes(program, sub)[1]
                            if n not in sub_table.vars}
            needed.update(_prune_block(program, sub, outs | outer_writes))
    for i in range(len(keep) - 1, -1, -1):
        if not keep[i]:
            table.remove_op(i)
    used = {n for op in block.ops for n in op.input_arg_names + op.output_arg_names}
    for name, desc in list(table.vars.items()):
        if name not in used and name not in needed and not desc.persistable:
            table.remove_var(name)
    return {n for n in needed if n not in table.vars}


def prune(program, targets):
    """A copy of ``program`` holding only the ops that ``targets`` depend on."""
    names = var_names(targets, "prune targets")
    gb = program.global_block()
    for n in names:
        if not gb.has_var(n):
            raise BuildError(f"prune target {n!r} is not declared in the global block")
    pruned = program.clone()
    _prune_block(pruned, 0, set(names))
    return pruned
