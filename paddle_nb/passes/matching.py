"""What every pass asks before it moves or removes an op: who reads a name, whether an
input changes between two ops, and how a new op keeps the user's line."""
from __future__ import annotations

from ..core import attrs as A


def reader_counts(program) -> dict[str, int]:
    """name -> how many ops of the whole program (all blocks) read it."""
    counts: dict[str, int] = {}
    for b in program.blocks:
        for op in b.ops:
            for n in set(op.input_arg_names):
                counts[n] = counts.get(n, 0) + 1
    return counts


def untouched_between(ops, first: int, last: int, names) -> bool:
    """True when no op strictly between ``first`` and ``last`` writes any of ``names``, so
    an op reading them may move from ``first`` to ``last``."""
    names = set(names)
    return not any(names & set(op.output_arg_names) for op in ops[first + 1:last])


def copy_line(src, dst) -> None:
    """``dst`` carries ``src``'s creating line and role, so an error in the fused op
    still points at what the user wrote."""
    if src.has_attr("op_callstack"):
        dst._set_attr("op_callstack", src.attr("op_callstack"), A.STRINGS)
    if src.has_attr("op_role"):
        dst._set_attr("op_role", src.attr("op_role"))
