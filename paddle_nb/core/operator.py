"""``Operator``: a view over one ``OpDesc`` message in a block."""
from __future__ import annotations

import warnings

from . import attrs as A
from .framework_pb2 import OpDesc
from . import registry
from .desc_view import DescView
from .printer import op_line

# Paddle's bookkeeping attributes (attrs.BOOKKEEPING): read here with care (bookkeeping_problem)
BOOKKEEPING, BOOKKEEPING_ATTRS = A.BOOKKEEPING, A.BOOKKEEPING_ATTRS


def bookkeeping_problem(attr: OpDesc.Attr) -> str | None:
    """What is wrong with a bookkeeping attribute (a type Paddle never writes it as), or
    None: for a sound one and for every other attribute."""
    types = BOOKKEEPING.get(attr.name)
    if types is None or attr.type in types:
        return None
    try:
        value = A.read(attr)
    except (KeyError, ValueError, TypeError):     # a type code no AttrType names
        value = None
    if value == [] and A.STRINGS in types:
        return None      # an empty list of any type: Paddle writes grad ops' [] as INTS
    given = A.TYPE_NAMES.get(attr.type, f"type {attr.type}")
    shown = f" {A.format_value(value)}" if value is not None else ""
    return (f"attribute {attr.name} is {given}{shown}, a type Paddle never writes it as "
            f"(expected {' or '.join(A.TYPE_NAMES[t] for t in types)}); ignored: read as "
            f"absent")


def bookkeeping_problems(blocks) -> list[str]:
    """``block 0 > op 3 relu: attribute op_role is ...`` for each malformed bookkeeping
    attribute of the ops of ``blocks`` (Block objects). One the op declares (dropout's
    is_test) is its own attribute, whose type validation checks (a ValidationError)."""
    out = []
    for b in blocks:
        for j, desc in enumerate(b.table.ops):
            for a in desc.attrs:
                problem = bookkeeping_problem(a) if a.name in BOOKKEEPING else None
                if problem and not (registry.is_registered(desc.type) and
                                    registry.lookup(desc.type).attr(a.name) is not None):
                    out.append(f"{b.path} > op {j} {desc.type}: {problem}")
    return out


def warn_about_bookkeeping(blocks, stacklevel: int = 3) -> None:
    """One UserWarning naming each malformed bookkeeping attribute of ``blocks`` (the
    first 10), if there is any: at load and in validate()."""
    problems = bookkeeping_problems(blocks)
    if problems:
        more = [f"... and {len(problems) - 10} more"] if len(problems) > 10 else []
        warnings.warn("the program has bookkeeping attributes of a type Paddle never writes; "
                      "paddle_nb reads each as absent, and the program still runs:\n  " +
                      "\n  ".join(problems[:10] + more), UserWarning, stacklevel=stacklevel)


def created_at(desc: OpDesc) -> str | None:
    """The user's line that created the op (from ``op_callstack``)."""
    stack = _read(desc, "op_callstack", None)
    if not stack:
        return None
    # Paddle's format, '  File "f.py", line 3, in g\n    code': shown on one line as
    # the errors show the user's line, 'File "f.py", line 3, in g: code'
    last = stack[-1].strip().splitlines()
    return ": ".join(s.strip() for s in last)


def _read(desc: OpDesc, name: str, default):
    for a in desc.attrs:
        if a.name == name:
            if name in BOOKKEEPING and bookkeeping_problem(a):
                return default
            return A.read(a)
    return default


class Operator(DescView):
    __slots__ = ()

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
        """Does the op have ``name`` (a malformed bookkeeping one counts as absent, as
        ``attr`` reads it: a pass copying op_callstack skips it)?"""
        _missing = object()
        return _read(self.desc, name, _missing) is not _missing

    def attr(self, name: str, default=None):
        """The attribute's value; ``default`` where the op has none (or has a bookkeeping
        attribute of a type Paddle never writes, taken as absent: BOOKKEEPING)."""
        return _read(self.desc, name, default)

    @property
    def attrs(self) -> dict:
        """Every attribute the op has (a malformed bookkeeping one left out)."""
        return {a.name: A.read(a) for a in self.desc.attrs
                if a.name not in BOOKKEEPING or not bookkeeping_problem(a)}

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
        return created_at(self.desc)

    @property
    def op_def(self):
        return registry.lookup(self.type)

    def __repr__(self):
        return op_line(self.desc)


def set_attr(desc: OpDesc, name: str, value, type_: int | None = None) -> None:
    """Set attribute ``name`` on an OpDesc, typed as declared, as given, or guessed; a
    bookkeeping attribute as Paddle types it (a value that does not fit is a TypeError,
    and a malformed one already there is replaced)."""
    types = BOOKKEEPING.get(name)
    for a in desc.attrs:
        if a.name == name:
            if type_ is None:
                type_ = types[0] if types and bookkeeping_problem(a) else a.type
            new = OpDesc.Attr(name=name)      # written aside: a refused value changes nothing
            A.write(new, type_, value)
            a.CopyFrom(new)
            return
    if type_ is None:
        type_ = types[0] if types else A.guess_type(value)
    new = OpDesc.Attr(name=name)
    A.write(new, type_, value)
    desc.attrs.add().CopyFrom(new)


# --- op roles (Paddle's op_role attribute) -------------------------------------------------
# A bit set: what part of training an op belongs to. Program.clone(for_test=True) drops
# backward and optimizer ops by it; the debugger shows it.
OP_ROLE_FORWARD, OP_ROLE_BACKWARD, OP_ROLE_OPTIMIZE, OP_ROLE_LOSS = 0, 1, 2, 256


def op_role(op: Operator) -> int:
    return op.attr("op_role", OP_ROLE_FORWARD) or OP_ROLE_FORWARD


def is_forward(op: Operator) -> bool:
    return not op_role(op) & (OP_ROLE_BACKWARD | OP_ROLE_OPTIMIZE)
