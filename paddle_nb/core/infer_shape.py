"""Shape and dtype inference, run when an op is appended (Fluid's ``InferShape``).

Each op's ``infer_shape(ctx)`` reads its inputs' declared shapes (``-1`` is the batch
dimension) and attributes and sets its outputs' shapes and dtypes. When inputs do not fit,
``ctx.fail`` raises a :class:`ShapeError` naming the op, its block path, the slot, what was
expected and what was given, and the user's line that created the op.
"""
from __future__ import annotations

from .errors import ShapeError
from .symbol_table import var_dtype, var_shape, tensor_desc
from . import dtypes
from .framework_pb2 import VarType
from .operator import Operator


class InferShapeContext:
    def __init__(self, block, op_desc, op_def, where: str, created_at: str | None):
        self.block = block
        self.op = Operator(block, op_desc)
        self.op_def = op_def
        self.where = where
        self.created_at = created_at
        self._attrs = None

    # --- inputs ------------------------------------------------------------------
    def input_names(self, slot: str) -> list[str]:
        return self.op.input(slot)

    def output_names(self, slot: str) -> list[str]:
        return self.op.output(slot)

    def has_input(self, slot: str) -> bool:
        return bool(self.input_names(slot))

    def has_output(self, slot: str) -> bool:
        return bool(self.output_names(slot))

    def _var(self, name: str, slot: str):
        v = self.block.table.find_var(name)
        if v is None:
            self.fail(f"variable {name!r} is not declared in this block or any enclosing "
                      "block", slot=slot)
        return v

    def shape(self, slot: str, i: int = 0) -> list[int]:
        names = self.input_names(slot)
        if i >= len(names):
            self.fail(f"input slot {slot} needs at least {i + 1} variable(s), got "
                      f"{len(names)}", slot=slot)
        s = var_shape(self._var(names[i], slot))
        return s if s is not None else []

    def shapes(self, slot: str) -> list[list[int]]:
        return [self.shape(slot, i) for i in range(len(self.input_names(slot)))]

    def dtype(self, slot: str, i: int = 0) -> int:
        names = self.input_names(slot)
        d = var_dtype(self._var(names[i], slot))
        return d if d is not None else VarType.FP32

    def attr(self, name: str):
        if self._attrs is None:
            self._attrs = self.op.attrs
        return self._attrs.get(name)

    # --- outputs -------------------------------------------------------------------
    def set_output(self, slot: str, shape, dtype=None, i: int | None = None,
                   lod_level: int | None = None) -> None:
        """Record the shape (and dtype: a code or name) of output ``slot`` (all its vars,
        or the ``i``-th)."""
        names = self.output_names(slot)
        if i is not None:
            names = names[i:i + 1]
        for name in names:
            v = self.block.table.find_var(name)
            if v is None:
                v = self.block.table.var(name)
            t = tensor_desc(v)
            if t is None:
                continue
            del t.dims[:]
            t.dims.extend(int(d) for d in shape)
            if dtype is not None:
                t.data_type = dtypes.to_code(dtype)
            if lod_level is not None and v.type.type == VarType.LOD_TENSOR:
                v.type.lod_tensor.lod_level = lod_level
        self.block.table.touch()

    # --- errors ------------------------------------------------------------------------
    def fail(self, message: str, *, slot: str | None = None, expected=None, given=None):
        text = f"{self.where}: "
        if slot:
            text += f"slot {slot}: "
        text += message
        if expected is not None:
            text += f"\n  expected: {expected}"
        if given is not None:
            text += f"\n  given:    {given}"
        if self.created_at:
            text += f"\n  op created at: {self.created_at}"
        raise ShapeError(text)

    def describe_input(self, slot: str, i: int = 0) -> str:
        name = self.input_names(slot)[i]
        return f"{name} {dtypes.name(self.dtype(slot, i))}{self.shape(slot, i)}"


def dims_compatible(a: int, b: int) -> bool:
    """Two declared dims can be equal at run time (-1 matches anything)."""
    return a == b or a < 0 or b < 0


def numel(shape) -> int:
    n = 1
    for d in shape:
        if d < 0:
            return -1
        n *= d
    return n
