"""Shape and dtype inference, run when an op is appended (Fluid's ``InferShape``).

Each op's ``infer_shape(ctx)`` reads its inputs' declared shapes (``-1`` is the batch
dimension) and attributes and sets its outputs' shapes and dtypes. When inputs do not fit,
``ctx.fail`` raises a :class:`ShapeError` naming the op, its block path, the slot, what was
expected and what was given, and the user's line that created the op.
"""
from __future__ import annotations

from .errors import ShapeError
from .symbol_table import var_dtype, var_shape, tensor_desc
from . import attr_tensors, dtypes
from .framework_pb2 import VarType


class Requirements:
    """The checks op declarations share, written once for the build-time context (declared
    shapes) and the run-time one (``runtime_shapes.RuntimeShapeContext``: the values).
    Each needs ``shape``, ``dtype``, ``input_names`` and ``fail`` from the context."""

    # element kinds, as numpy's dtype.kind letters, under the names an error shows
    KINDS = {"float": "f", "int": "iu", "number": "iuf", "float or complex": "fc",
             "integer or bool": "iub", "real": "biuf", "bool": "b"}

    def attr_from_tensor(self, name: str) -> bool:
        """True where a tensor gives attribute ``name`` and its value is not known here
        (build time; core/attr_tensors.py): the shape rule writes -1 where the output
        depends on it. The run-time context reads the tensor instead, and says False."""
        return name in attr_tensors.given(self.op_def, self.has_input)

    def int_list_attr(self, name: str) -> list[int]:
        """An int-list attribute (a shape, repeat times, axes). Where a tensor gives it
        and its value is not known yet: one entry per value the tensor holds (a list's
        length, a 1-D tensor's size), each -1 unless the attribute has as many entries
        (Paddle saves ``paddle.full([n, 3])`` with shape [-1, 3]: -1 where a tensor is)."""
        value = [int(d) for d in (self.attr(name) or [])]
        if not self.attr_from_tensor(name):
            return value
        t = attr_tensors.given(self.op_def, self.has_input)[name]
        n = len(self.input_names(t.slot)) if t.form == "list" else \
            ([*self.shape(t.slot), -1][0] if self.has_value(t.slot) else -1)
        if n < 0 or n == len(value):
            return value
        return [-1] * n

    def require_dtype(self, slot: str, kind: str) -> None:
        """Every variable of ``slot`` holds elements of ``kind`` (a key of KINDS)."""
        for i, name in enumerate(self.input_names(slot)):
            code = self.dtype(slot, i)
            np_dtype = dtypes._TO_NUMPY.get(code)
            if np_dtype is None or np_dtype.kind not in self.KINDS[kind]:
                self.fail(f"{self.op_def.type} needs {kind} elements here", slot=slot,
                          expected=f"{kind} elements", given=f"{name}: {dtypes.name(code)}")

    def require_rank(self, slot: str, at_least: int, i: int = 0) -> list[int]:
        """``slot``'s i-th shape, which must have at least ``at_least`` dims."""
        shape = self.shape(slot, i)
        if len(shape) < at_least:
            self.fail(f"needs a tensor of rank {at_least} or more", slot=slot,
                      expected=f"rank >= {at_least}",
                      given=f"{self.input_names(slot)[i]}: shape {shape}")
        return shape

    def require_same_shape(self, slot: str, like: str) -> None:
        """``slot`` has the shape of ``like`` (optimizer state, say, has its Param's)."""
        want, got = self.shape(like), self.shape(slot)
        if len(want) != len(got) or not all(dims_compatible(a, b) for a, b in zip(want, got)):
            self.fail(f"must have the shape of {like}", slot=slot, expected=f"{want}",
                      given=f"{self.input_names(slot)[0]}: {got}")

    def require_one_element(self, slot: str) -> None:
        """``slot`` holds one element (shape [] or [1, ...]; -1 dims are checked at run
        time): a learning rate, a counter, a beta power."""
        shape = self.shape(slot)
        if any(d not in (1, -1) for d in shape):
            self.fail("must hold exactly one element", slot=slot, expected="shape [] or [1]",
                      given=f"{self.input_names(slot)[0]}: shape {shape}")

    def require_same_dtype(self, slot: str, like: str) -> None:
        """``slot`` holds ``like``'s element type (no silent promotion)."""
        want, got = self.dtype(like), self.dtype(slot)
        if want != got:
            self.fail(f"must have the element type of {like}", slot=slot,
                      expected=dtypes.name(want), given=f"{self.input_names(slot)[0]}: "
                                                      f"{dtypes.name(got)}")

    def require_gradient_fits(self, slot: str, i: int = 0, want=None) -> None:
        """``slot@GRAD``'s i-th variable has the shape of ``slot``'s i-th, or ``want`` (a
        gradient has the shape of its variable; the element type may be another float).
        One element fits one element: a loss saved as [1] by Paddle before 2.5 is 0-d
        here."""
        want = self.shape(slot, i) if want is None else want
        got = self.shape(slot + "@GRAD", i)
        if numel(want) == numel(got) == 1:
            return
        if len(want) != len(got) or not all(dims_compatible(a, b) for a, b in zip(want, got)):
            of = self.input_names(slot)[i] if i < len(self.input_names(slot)) else slot
            self.fail(f"the gradient must have the shape of {slot}", slot=slot + "@GRAD",
                      expected=f"{want} (the shape of {of})",
                      given=f"{self.input_names(slot + '@GRAD')[i]}: {got}")

    def require_range(self, name: str, value: int, low: int, high: int, slot=None) -> int:
        """Attribute ``name`` = ``value`` lies in [low, high); the value."""
        if not isinstance(value, int) or not low <= value < high:
            self.fail(f"attribute {name}={value!r} is out of range", slot=slot,
                      expected=f"{name} in [{low}, {high - 1}]", given=f"{name}={value!r}")
        return value


class _Unreadable(Exception):
    """A forward slot the gradient op does not read."""


class ForwardShapes(Requirements):
    """A forward op's shape rule run over its gradient op's inputs (which carry the forward
    slot names): the shapes the forward outputs have, to check the incoming gradients
    against where the gradient op does not read those outputs itself."""

    def __init__(self, ctx, forward_def):
        self._ctx, self.op_def = ctx, forward_def
        self.made: dict[str, list] = {}

    def input_names(self, slot):
        return self._ctx.input_names(slot)

    def has_input(self, slot):
        return self._ctx.has_input(slot)

    def output_names(self, slot):
        return [slot]

    def has_output(self, slot):
        return True

    def shape(self, slot, i=0):
        if not self._ctx.has_value(slot, i):
            raise _Unreadable(slot)
        return self._ctx.shape(slot, i)

    def shapes(self, slot):
        return [self.shape(slot, i) for i in range(len(self.input_names(slot)))]

    def dtype(self, slot, i=0):
        if not self._ctx.has_value(slot, i):
            raise _Unreadable(slot)
        return self._ctx.dtype(slot, i)

    def attr(self, name):
        return self._ctx.attr(name)

    def attr_from_tensor(self, name):
        return self._ctx.attr_from_tensor(name)

    def has_value(self, slot, i=0):
        return self._ctx.has_value(slot, i)

    def describe_input(self, slot, i=0):
        return self._ctx.describe_input(slot, i)

    def fail(self, message, **kw):
        self._ctx.fail(message, **kw)

    def set_output(self, slot, shape, dtype=None, i=None, lod_level=None):
        self.made.setdefault(slot, []).append(list(shape))

    def outputs(self) -> dict[str, list] | None:
        """``{forward output slot: [shape]}``, or None where the gradient op does not read
        every input the forward rule needs."""
        try:
            self.op_def.infer_shape(self)
        except _Unreadable:
            return None
        return self.made


class InferShapeContext(Requirements):
    def __init__(self, block, op, op_def, where: str, created_at: str | None):
        self.block = block
        self.op = op              # the Operator, whose slots and attributes it reads
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

    def has_value(self, slot: str, i: int = 0) -> bool:
        """Input ``slot``'s i-th variable is declared (at run time: holds a tensor)."""
        names = self.input_names(slot)
        return i < len(names) and self.block.table.find_var(names[i]) is not None

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
        """The op's attribute, or its declared default where the desc leaves it out (as
        the executor reads them)."""
        if self._attrs is None:
            defaults = {a.name: a.default for a in self.op_def.attrs}
            self._attrs = {**defaults, **self.op.attrs}
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
