"""What a block reads from and writes to the blocks around it.

A control-flow op lists these as its inputs and outputs (``conditional_block``'s Input and
Out, ``while``'s X and Out, ``recurrent``'s parameters), so that pruning, backward and the
debugger see the dependencies of the whole sub-block on the op itself.
"""
from __future__ import annotations


def block_reads_and_writes(program, block_idx: int) -> tuple[list[str], list[str]]:
    """Names the block (with its sub-blocks) reads before writing them, and every name it
    writes; both in first-use order, including the block's own locals."""
    block = program.block(block_idx)
    reads, writes = [], []
    seen_r, seen_w = set(), set()

    def read(n):
        if n not in seen_w and n not in seen_r:
            seen_r.add(n)
            reads.append(n)

    def write(n):
        if n not in seen_w:
            seen_w.add(n)
            writes.append(n)

    for op in block.ops:
        for n in op.input_arg_names:
            read(n)
        for sub in op.sub_block_indices():
            r, w = block_reads_and_writes(program, sub)
            for n in r:
                read(n)
            for n in w:
                write(n)
        for n in op.output_arg_names:
            write(n)
    return reads, writes


def external_reads_and_writes(program, block_idx: int) -> tuple[list[str], list[str]]:
    """Like :func:`block_reads_and_writes`, keeping only names declared outside the block
    (in an enclosing block): what the block takes from, and gives back to, its context."""
    table = program.block(block_idx).table
    reads, writes = block_reads_and_writes(program, block_idx)
    outside = lambda n: n not in table.vars and table.find_var(n) is not None   # noqa: E731
    return [n for n in reads if outside(n)], [n for n in writes if outside(n)]
