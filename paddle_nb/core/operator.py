"""``Operator``: a view over one ``OpDesc`` message in a block."""
from __future__ import annotations

from . import attrs as A
from .framework_pb2 import OpDesc
from . import registry

# Attributes Paddle adds to every op for its own bookkeeping: kept, not printed.
BOOKKEEPING_ATTRS = frozenset({"op_role", "op_role_var", "op_callstack", "op_namescope",
                               "op_device", "with_quant_attr", "is_test"})


class Operator:
    __slots__ = ("block", "desc")

    def __init__(self, block, desc: OpDesc):
        self.block = block
        self.desc = desc

    @property
    def type(self) -> str:
        return self.desc.type

    @property
    def idx(self) -> int:
        """Position in the block (searched: ops move when others are inserted)."""
        for i, op in enumerate(self.block.table.ops):
            if op is self.desc:
                return i
        raise ValueError(f"op {self.type} is no longer in block {self.block.idx}")

    # --- slots ---------------------------------------------------------------------
    @property
    def input_names(self) -> list[str]:
        return [v.parameter for v in self.desc.inputs]

    @property
    def output_names(self) -> list[str]:
        return [v.parameter for v in self.desc.outputs]

    def input(self, slot: str) -> list[str]:
        for v in self.desc.inputs:
            if v.parameter == slot:
                return list(v.arguments)
        return []

    def output(self, slot: str) -> list[str]:
        for v in self.desc.outputs:
            if v.parameter == slot:
                return list(v.arguments)
        return []

    @property
    def inputs(self) -> dict[str, list[str]]:
        return {v.parameter: list(v.arguments) for v in self.desc.inputs}

    @property
    def outputs(self) -> dict[str, list[str]]:
        return {v.parameter: list(v.arguments) for v in self.desc.outputs}

    @property
    def input_arg_names(self) -> list[str]:
        return [a for v in self.desc.inputs for a in v.arguments]

    @property
    def output_arg_names(self) -> list[str]:
        return [a for v in self.desc.outputs for a in v.arguments]

    # --- attributes ------------------------------------------------------------------
    @property
    def attr_names(self) -> list[str]:
        return [a.name for a in self.desc.attrs]

    def has_attr(self, name: str) -> bool:
        return any(a.name == name for a in self.desc.attrs)

    def attr(self, name: str, default=None):
        for a in self.desc.attrs:
            if a.name == name:
                return A.read(a)
        return default

    @property
    def attrs(self) -> dict:
        return {a.name: A.read(a) for a in self.desc.attrs}

    def attr_type(self, name: str) -> int | None:
        for a in self.desc.attrs:
            if a.name == name:
                return a.type
        return None

    def _set_attr(self, name: str, value, type_: int | None = None) -> None:
        set_attr(self.desc, name, value, type_)
        self.block.table.touch()

    def sub_block_indices(self) -> list[int]:
        """Indices of the blocks this op owns (BLOCK / BLOCKS attributes)."""
        out = []
        for a in self.desc.attrs:
            if a.type == A.BLOCK:
                out.append(a.block_idx)
            elif a.type == A.BLOCKS:
                out.extend(a.blocks_idx)
        return out

    @property
    def created_at(self) -> str | None:
        """The user's line that created this op (from ``op_callstack``)."""
        stack = self.attr("op_callstack")
        if not stack:
            return None
        # Paddle's format, '  File "f.py", line 3, in g\n    code': shown on one line as
        # the errors show the user's line, 'File "f.py", line 3, in g: code'
        last = stack[-1].strip().splitlines()
        return ": ".join(s.strip() for s in last)

    @property
    def op_def(self):
        return registry.lookup(self.type)

    def __eq__(self, other):
        return isinstance(other, Operator) and other.desc is self.desc

    def __hash__(self):
        return id(self.desc)

    def __repr__(self):
        from .printer import op_line    # noqa: PLC0415 (printer imports this module)
        return op_line(self.desc)


def set_attr(desc: OpDesc, name: str, value, type_: int | None = None) -> None:
    """Set attribute ``name`` on an OpDesc, typed as declared, as given, or guessed."""
    for a in desc.attrs:
        if a.name == name:
            A.write(a, type_ if type_ is not None else a.type, value)
            return
    if type_ is None:
        type_ = A.guess_type(value)
    a = desc.attrs.add(name=name)
    A.write(a, type_, value)
