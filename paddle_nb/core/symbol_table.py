"""A block's symbol table (the Block and Scope design's ``SymbolTable``).

It stores the protobuf definitions of one block: its ``VarDesc`` messages by name and its
``OpDesc`` messages in order, and it is chained to the enclosing block's table so that a
name not declared here is looked up outwards, like C's ``{}`` scoping. ``compile()`` puts
them together into the block's ``BlockDesc``. These messages are the only place a program's
state lives: the Python Program/Block/Variable/Operator objects are views over them.
"""
from __future__ import annotations

from .errors import BuildError
from .framework_pb2 import BlockDesc, OpDesc, VarDesc, VarType
from . import dtypes

# VarType kinds whose description carries a tensor shape and dtype, and where it lives.
_TENSOR_FIELD = {VarType.LOD_TENSOR: "lod_tensor", VarType.LOD_TENSOR_ARRAY: "tensor_array"}


def tensor_desc(var: VarDesc):
    """The TensorDesc (dims, data_type) of a tensor-like var, or None for other kinds."""
    field = _TENSOR_FIELD.get(var.type.type)
    if field is None:
        if var.type.type == VarType.SELECTED_ROWS:
            return var.type.selected_rows
        return None
    return getattr(var.type, field).tensor


def var_shape(var: VarDesc) -> list[int] | None:
    t = tensor_desc(var)
    return list(t.dims) if t is not None else None


def var_dtype(var: VarDesc) -> int | None:
    t = tensor_desc(var)
    return t.data_type if t is not None else None


def describe(var: VarDesc) -> str:
    """``float32[-1, 4]`` or the kind's name for vars that are not tensors."""
    t = tensor_desc(var)
    kind = dtypes.KIND_NAMES.get(var.type.type, VarType.Type.Name(var.type.type).lower())
    if t is None:
        return kind
    text = f"{dtypes.name(t.data_type)}{list(t.dims)}"
    return text if var.type.type == VarType.LOD_TENSOR else f"{kind}<{text}>"


class SymbolTable:
    def __init__(self, idx: int, parent: "SymbolTable | None", header: BlockDesc | None = None):
        if header is None:
            header = BlockDesc(idx=idx, parent_idx=parent.idx if parent else -1)
        # The block's own fields (idx, parent_idx, forward_block_idx); vars/ops are kept
        # below and only joined into a BlockDesc by compile().
        self.header = header
        self.parent = parent
        self.vars: dict[str, VarDesc] = {}
        self.ops: list[OpDesc] = []
        self.version = 0   # bumped on every change; prepared blocks check it

    @property
    def idx(self) -> int:
        return self.header.idx

    def touch(self) -> None:
        self.version += 1

    # --- operators ---------------------------------------------------------------
    def new_op(self, op_type: str, index: int | None = None) -> OpDesc:
        """A new, empty OpDesc appended (or inserted at ``index``) to this block."""
        op = OpDesc(type=op_type)
        if index is None:
            self.ops.append(op)
        else:
            self.ops.insert(index, op)
        self.touch()
        return op

    def remove_op(self, index: int) -> OpDesc:
        op = self.ops.pop(index)
        self.touch()
        return op

    def find_op(self, key: int | str) -> OpDesc | None:
        """By position, or the first op of a type, or else the op that writes var ``key``."""
        if isinstance(key, int):
            return self.ops[key] if -len(self.ops) <= key < len(self.ops) else None
        for op in self.ops:
            if op.type == key:
                return op
        for op in reversed(self.ops):
            if any(key in v.arguments for v in op.outputs):
                return op
        return None

    # --- variables -----------------------------------------------------------------
    def var(self, name: str) -> VarDesc:
        """Find ``name`` in this block or declare it here (a float32 tensor, shape unknown)."""
        v = self.vars.get(name)
        if v is None:
            v = VarDesc(name=name)
            v.type.type = VarType.LOD_TENSOR
            v.type.lod_tensor.tensor.data_type = VarType.FP32
            self.vars[name] = v
            self.touch()
        return v

    def declare(self, name: str, *, shape=None, dtype=None, kind: int = VarType.LOD_TENSOR,
                persistable: bool | None = None) -> VarDesc:
        """Declare a var; re-declaring it with a different kind, shape or dtype is an error
        that shows both declarations."""
        existing = self.vars.get(name)
        if existing is not None:
            clash = []
            if existing.type.type != kind:
                clash.append("kind")
            if shape is not None and var_shape(existing) not in (None, [int(d) for d in shape]):
                clash.append("shape")
            if dtype is not None and var_dtype(existing) not in (None, dtypes.to_code(dtype)):
                clash.append("dtype")
            if clash:
                new = VarDesc(name=name)
                _set_type(new, kind, shape, dtype)
                raise BuildError(
                    f"variable {name!r} in block {self.idx} is already declared as "
                    f"{describe(existing)}; re-declaring it as {describe(new)} changes its "
                    f"{' and '.join(clash)}. Use another name, or the same shape and dtype.")
            if persistable is not None:
                existing.persistable = persistable
            return existing
        v = VarDesc(name=name)
        _set_type(v, kind, shape, dtype)
        if persistable:
            v.persistable = True
        self.vars[name] = v
        self.touch()
        return v

    def add_var_desc(self, var: VarDesc) -> VarDesc:
        """Adopt a VarDesc message as it is (used when parsing a ProgramDesc)."""
        self.vars[var.name] = var
        self.touch()
        return var

    def remove_var(self, name: str) -> None:
        if self.vars.pop(name, None) is not None:
            self.touch()

    def find_var(self, name: str, recursive: bool = True) -> VarDesc | None:
        """This block's declaration of ``name``, else (when recursive) the nearest
        enclosing block's."""
        table = self
        while table is not None:
            v = table.vars.get(name)
            if v is not None:
                return v
            table = table.parent if recursive else None
        return None

    def find_var_owner(self, name: str) -> "SymbolTable | None":
        table = self
        while table is not None:
            if name in table.vars:
                return table
            table = table.parent
        return None

    # --- compile ---------------------------------------------------------------------
    def compile(self) -> BlockDesc:
        """This block as one BlockDesc message (a copy; later edits do not reach it)."""
        block = BlockDesc()
        block.CopyFrom(self.header)
        block.vars.extend(self.vars.values())
        block.ops.extend(self.ops)
        return block


def _set_type(v: VarDesc, kind: int, shape, dtype) -> None:
    v.type.type = kind
    field = _TENSOR_FIELD.get(kind)
    if field is None and kind != VarType.SELECTED_ROWS:
        return
    # (a SelectedRows' TensorDesc is the dense tensor's: Paddle's W@GRAD is [V, D])
    t = v.type.selected_rows if field is None else getattr(v.type, field).tensor
    t.data_type = dtypes.to_code(dtype) if dtype is not None else VarType.FP32
    if shape is not None:
        del t.dims[:]
        t.dims.extend(int(d) for d in shape)
