"""Entering and leaving a sub-block (``{`` and ``}``), and wiring a conditional_block."""
from __future__ import annotations

import contextlib

from ..core import unique_name
from ..core.block_deps import external_reads_and_writes
from ..core.errors import BuildError, user_line
from ..core.framework_pb2 import VarType
from ..core.program import default_main_program


@contextlib.contextmanager
def sub_block():
    """A new block of the default main program, current inside the ``with``."""
    program = default_main_program()
    block = program.create_block()
    try:
        yield block
    finally:
        program.rollback()


def misuse(message: str) -> BuildError:
    """A build-time error that points at the user's line."""
    return BuildError(f"{message}\n  at {user_line()}")


def scope_list_var(block, prefix: str):
    """The STEP_SCOPES variable a control-flow op keeps its kid scopes in."""
    return block.create_var(unique_name.generate(f"{prefix}.scopes"), type=VarType.STEP_SCOPES)


def append_conditional_block(block, sub, cond_vars, is_scalar: bool):
    """Append the ``conditional_block`` op owning ``sub`` to ``block``; its Input/Out are
    what ``sub`` reads from and writes to the outside."""
    reads, writes = external_reads_and_writes(block.program, sub.idx)
    cond_names = {c.name for c in cond_vars}
    return block.append_op(
        "conditional_block",
        inputs={"Cond": list(cond_vars), "Input": [n for n in reads if n not in cond_names]},
        outputs={"Out": writes, "Scope": [scope_list_var(block, "conditional_block")]},
        attrs={"sub_block": sub, "is_scalar_condition": is_scalar})
