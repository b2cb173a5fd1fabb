"""``Program``: the ProgramDesc being built, as a list of Blocks, plus the default
main/startup programs and ``program_guard`` (Fluid's API).

The ProgramDesc is assembled from the blocks' symbol tables when asked for (``desc``,
``to_bytes``); parsing does the reverse. Fields this project does not use (``version``,
``op_version_map``, unknown attributes) are carried along untouched, so a program saved by
PaddlePaddle is written back byte for byte.
"""
from __future__ import annotations

import contextlib

from google.protobuf.message import DecodeError

from . import unique_name
from .block import Block
from .default_programs import (default_main_program, default_startup_program,  # noqa: F401
                               switch_main_program, switch_startup_program)
from .errors import BuildError, ProgramFormatError
from .framework_pb2 import BlockDesc, OpDesc, ProgramDesc, VarDesc
from .operator import is_forward, warn_about_bookkeeping
from .printer import program_code
from .prune import prune
from .symbol_table import SymbolTable
from .validate import check_structure
from .wire_check import check_program_bytes, locate_fault


class Program:
    def __init__(self):
        self._header = ProgramDesc()          # program-level fields, no blocks
        self.blocks: list[Block] = [Block(self, SymbolTable(0, None))]
        self.current_block_idx = 0
        self.random_seed = 0
        # Said after the code when the program has no ops: the notebook extension uses it
        # to point from the (empty) default program to the program its cells build.
        self.empty_hint: str | None = None
        # Build-time Python beside the desc, as in Paddle (neither is in a saved program):
        # the learning-rate scheduler whose value the executor writes into its variable
        # before each run (pd.optimizer.lr), and parameters' own weight decays.
        self.lr_scheduler = None
        self.param_decays: dict = {}

    # --- blocks (Fluid's numbering: a new block's parent is the current block) ----------
    def global_block(self) -> Block:
        return self.blocks[0]

    def block(self, index: int) -> Block:
        if not 0 <= index < len(self.blocks):
            raise BuildError(f"program has {len(self.blocks)} blocks; there is no block {index}")
        return self.blocks[index]

    def current_block(self) -> Block:
        return self.blocks[self.current_block_idx]

    @property
    def num_blocks(self) -> int:
        return len(self.blocks)

    def create_block(self, parent_idx: int | None = None) -> Block:
        """A new block whose parent is ``parent_idx`` (default: the current block); it
        becomes the current block until ``rollback()``."""
        parent = self.current_block() if parent_idx is None else self.block(parent_idx)
        table = SymbolTable(len(self.blocks), parent.table)
        block = Block(self, table)
        self.blocks.append(block)
        self.current_block_idx = block.idx
        return block

    def rollback(self) -> None:
        """Make the current block's parent current again (leaving a ``{}``)."""
        parent = self.current_block().parent_idx
        if parent < 0:
            raise BuildError("rollback() from the global block: there is no enclosing block")
        self.current_block_idx = parent

    # --- parameters and variables -------------------------------------------------------
    def all_parameters(self):
        return self.global_block().all_parameters()

    def list_vars(self):
        for b in self.blocks:
            yield from b.vars.values()

    def find_var_block(self, name: str) -> Block | None:
        for b in self.blocks:
            if b.has_var(name):
                return b
        return None

    @property
    def version(self) -> tuple:
        """Changes whenever any block changes (prepared blocks compare it)."""
        return tuple(b.table.version for b in self.blocks)

    # --- the ProgramDesc -----------------------------------------------------------------
    @property
    def desc(self) -> ProgramDesc:
        """The whole program as one ProgramDesc message (a fresh copy)."""
        d = ProgramDesc()
        d.CopyFrom(self._header)
        for b in self.blocks:
            d.blocks.append(b.table.compile())
        return d

    def to_bytes(self) -> bytes:
        return self.desc.SerializeToString()

    serialize_to_string = to_bytes

    @classmethod
    def from_desc(cls, desc: ProgramDesc, *, check_text: bool = True) -> "Program":
        """A Program over copies of ``desc``'s messages. Only the structure is checked
        (a ProgramFormatError, and nothing is made); ``paddle_nb.core.validate.validate``
        checks the rest (op types, variables, attribute types, sizes). A bookkeeping
        attribute of a type Paddle never writes (``op_role`` as a string) is named in a
        warning and read as absent (core/operator.py, BOOKKEEPING). ``check_text=False``
        (clone) skips the check that names are UTF-8 text, and that warning: only a desc
        from outside can break them."""
        _check_structure(desc, check_text)
        prog = cls.__new__(cls)
        prog._header = ProgramDesc()
        prog._header.CopyFrom(desc)
        del prog._header.blocks[:]
        prog.blocks = []
        prog.current_block_idx = 0
        prog.random_seed = 0
        prog.empty_hint, prog.lr_scheduler, prog.param_decays = None, None, {}
        for bd in desc.blocks:
            header = BlockDesc()
            header.CopyFrom(bd)
            del header.vars[:]
            del header.ops[:]
            parent = prog.blocks[bd.parent_idx].table if bd.parent_idx >= 0 else None
            table = SymbolTable(bd.idx, parent, header)
            for v in bd.vars:
                own = VarDesc()
                own.CopyFrom(v)
                table.add_var_desc(own)
            for o in bd.ops:
                own = OpDesc()
                own.CopyFrom(o)
                table.ops.append(own)
            prog.blocks.append(Block(prog, table))
        if check_text:       # a desc from outside (clone copies one already here)
            warn_about_bookkeeping(prog.blocks, stacklevel=4)
        return prog

    @classmethod
    def from_bytes(cls, data: bytes) -> "Program":
        """Parse a serialized ProgramDesc (ours or PaddlePaddle's legacy format). The bytes
        are looked at first (core/wire_check.py: size, wire format, how many blocks and
        records), so that hostile bytes are refused before protobuf spends memory on them."""
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise ProgramFormatError(f"from_bytes needs bytes, got {type(data).__name__}")
        data = bytes(data)
        check_program_bytes(data)
        desc = ProgramDesc()
        try:
            desc.ParseFromString(data)
        except (DecodeError, RuntimeError, ValueError) as e:
            # Say where, if the fault is in the wire format itself (a walk of every message).
            raise ProgramFormatError(locate_fault(data) or (
                f"these {len(data)} bytes are not a ProgramDesc (truncated, or another "
                f"format): {e}")) from None
        return cls.from_desc(desc)

    parse_from_string = from_bytes

    def clone(self, for_test: bool = False) -> "Program":
        """A deep copy. ``for_test=True`` makes an inference program: backward and
        optimizer ops (``op_role`` 1 or 2) and gradient variables are dropped, whenever
        it is called, and ``is_test`` is set on the ops that have it."""
        p = Program.from_desc(self.desc, check_text=False)
        p.random_seed = self.random_seed
        p.lr_scheduler, p.param_decays = self.lr_scheduler, dict(self.param_decays)
        if for_test:
            for b in p.blocks:
                for i in range(len(b.table.ops) - 1, -1, -1):
                    if not is_forward(b.ops[i]):
                        b.table.remove_op(i)
                for name in [n for n in b.table.vars if "@GRAD" in n]:
                    b.table.remove_var(name)
                for op in b.ops:
                    if op.has_attr("is_test"):
                        op._set_attr("is_test", True)
        return p

    def prune(self, targets) -> "Program":
        """A copy holding only the ops ``targets`` depend on (see core/prune.py)."""
        return prune(self, targets)

    def to_code(self, **kw) -> str:
        return program_code(self, **kw)

    def __str__(self):
        return self.to_code()

    def __repr__(self):
        n_ops = sum(len(b.table.ops) for b in self.blocks)
        return f"<Program blocks={len(self.blocks)} ops={n_ops}>"


def _check_structure(desc: ProgramDesc, text: bool = True) -> None:
    """Bytes that happen to decode are still checked for a sane block tree, sub-block and
    forward-block references, before any object is made (core/validate.py)."""
    check_structure(desc, text)


# --- default programs and program_guard ---------------------------------------------
# (held in default_programs.py, below this module; re-exported here, their usual home)
def reset_default_programs() -> None:
    """Fresh default main and startup programs (and fresh unique-name counters)."""
    switch_main_program(Program())
    switch_startup_program(Program())
    unique_name.reset()


switch_main_program(Program())          # the first default programs
switch_startup_program(Program())


@contextlib.contextmanager
def program_guard(main_program: Program, startup_program: Program | None = None):
    """Build into ``main_program`` (and put initialisers in ``startup_program``)."""
    if not isinstance(main_program, Program):
        raise BuildError(f"program_guard needs a Program, got {type(main_program).__name__}")
    old_main = switch_main_program(main_program)
    old_startup = switch_startup_program(startup_program) if startup_program else None
    try:
        yield
    finally:
        switch_main_program(old_main)
        if old_startup is not None:
            switch_startup_program(old_startup)
