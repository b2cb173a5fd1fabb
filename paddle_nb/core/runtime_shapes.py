"""The allocation guard: an op's outputs are sized before its kernel runs (Fluid's
``RuntimeInferShape``).

Shape inference at build time sees declared shapes, where a batch dimension is -1, so it
cannot know that a reduce over a reshape to ``[-1, 2**40]`` of a 0-row feed makes a
``[2**40]`` result, or that an elementwise op on a zero-stride feed of ``2**40`` rows
makes ``2**40`` real ones. Before a kernel runs, the executor runs the op's own
``infer_shape`` again on the *values* its inputs hold (:class:`RuntimeShapeContext`
implements the same interface as the build-time context over a scope), and refuses any
output that would take more than ``paddle_nb.core.limits.MAX_TENSOR_BYTES``: an
``ExecutionError`` naming the op, the output and its shape, before anything is allocated.
Shapes that do not fit together at run time (a batch of 5 meeting a batch of 4) are an
error here too, in the op's own words, instead of a numpy broadcasting error.

The check is cached per op on the shapes and dtypes of its inputs, so a training loop
that feeds the same shapes every step pays one tuple comparison per op after the first
run. Gradient ops declared by a ``Grad`` run its shape rule here too (each incoming
gradient has its variable's shape: ``Grad.shape_rule``). Ops without ``infer_shape``
(control flow, hand-written gradient ops) are covered by the same limit in
``KernelContext.set_output`` and by the feed check (``Executor._check_feed``: a feed's
logical size, strides included).
"""
from __future__ import annotations

import numpy as np

from . import dtypes, registry
from .errors import ExecutionError
from .infer_shape import Requirements
from .selected_rows import SelectedRows
from .symbol_table import var_dtype, var_shape
from . import limits as _limits


def refuse_selected_rows(pop, scope) -> None:
    """A SelectedRows (an embedding's sparse gradient) in a slot the op does not declare
    in ``OpDef.selected_rows`` is an error naming the op and the slot, before its kernel
    (written for dense tensors) sees it."""
    accepted = pop.op_def.selected_rows
    for slot, names in pop.inputs.items():
        if slot in accepted:
            continue
        for name in names:
            var = scope.find_var(name)
            value = var._value if var is not None else None
            if value.__class__ is SelectedRows:
                takers = ", ".join(_takers()) or "none"
                raise ExecutionError(
                    f"at run time, slot {slot}: {name!r} holds a SelectedRows (the sparse "
                    f"gradient of an embedding with is_sparse=True), which {pop.op.type} does "
                    f"not take\n  expected: a dense tensor (the ops that take a SelectedRows: "
                    f"{takers}; or build the embedding with is_sparse=False for a dense "
                    f"gradient)\n  given:    {value!r}")


def _takers() -> list[str]:
    return sorted(f"{t} ({', '.join(registry.lookup(t).selected_rows)})"
                  for t in registry.types_where("selected_rows"))


def check_outputs(pop, scope, block) -> bool:
    """Run ``pop``'s shape inference on the values in ``scope``; raise if an output it
    would make is larger than the limit. True when every output's shape is known from the
    inputs' (none is sized by the data itself)."""
    refuse_selected_rows(pop, scope)
    ctx = RuntimeShapeContext(pop, scope, block)
    pop.op_def.infer_shape(ctx)
    # where a tensor gives an attribute, shapes follow its value, not the block's entry
    # shapes: the guard runs for this op every run (its signature holds the value)
    known = pop.tensor_attrs is None
    for slot, name, shape, code in ctx.made:
        if any(d < 0 for d in shape):
            known = False
            continue                       # sized by the data itself: set_output checks
        itemsize = _limits.item_size(code) if code is not None else 8
        n = _limits.tensor_bytes(shape, itemsize)
        if n > _limits.MAX_TENSOR_BYTES:
            raise ExecutionError(
                f"output {slot} ({name!r}) would have shape {shape} "
                f"({dtypes.name(code) if code is not None else 'unknown type'}), "
                f"{_limits.human_bytes(n)}, for inputs {ctx.input_summary()}; "
                f"{_limits.limit_text()}. Nothing was allocated.")
    return known


class RuntimeShapeContext(Requirements):
    """What ``infer_shape(ctx)`` reads and writes, over the values of a run."""

    def __init__(self, pop, scope, block):
        self.op = pop.op
        self.op_def = pop.op_def
        self.block = block
        self.where = pop.where
        self.created_at = pop.created_at
        self._pop, self._scope = pop, scope
        self.made: list[tuple] = []        # (slot, name, shape, dtype code)

    def input_names(self, slot: str) -> list[str]:
        return self._pop.inputs.get(slot, [])

    def output_names(self, slot: str) -> list[str]:
        return self._pop.outputs.get(slot, [])

    def has_input(self, slot: str) -> bool:
        return bool(self.input_names(slot))

    def has_output(self, slot: str) -> bool:
        return bool(self.output_names(slot))

    def _value(self, slot: str, i: int):
        names = self.input_names(slot)
        if i >= len(names):
            self.fail(f"input slot {slot} needs at least {i + 1} variable(s), got "
                      f"{len(names)}", slot=slot)
        var = self._scope.find_var(names[i])
        return names[i], (var._value if var is not None else None)

    def has_value(self, slot: str, i: int = 0) -> bool:
        """Input ``slot``'s i-th variable holds a tensor in this run."""
        if i >= len(self.input_names(slot)):
            return False
        value = self._value(slot, i)[1]
        return hasattr(value, "shape") and hasattr(value, "dtype")

    def shape(self, slot: str, i: int = 0) -> list[int]:
        name, value = self._value(slot, i)
        if hasattr(value, "shape") and hasattr(value, "dtype"):
            return [int(d) for d in value.shape]
        desc = self.block.lookup(name)     # a tensor array, a value not there yet: declared
        s = var_shape(desc) if desc is not None else None
        return list(s) if s is not None else []

    def shapes(self, slot: str) -> list[list[int]]:
        return [self.shape(slot, i) for i in range(len(self.input_names(slot)))]

    def dtype(self, slot: str, i: int = 0) -> int:
        name, value = self._value(slot, i)
        if hasattr(value, "dtype") and hasattr(value, "shape"):
            try:
                return dtypes.to_code(np.dtype(value.dtype))
            except (TypeError, KeyError):
                pass
        desc = self.block.lookup(name)
        d = var_dtype(desc) if desc is not None else None
        return d if d is not None else dtypes.to_code(np.float32)

    def attr(self, name: str):
        """The attribute, or the value of the tensor that gives it in this run."""
        given = self._pop.tensor_attrs
        if given is not None and name in given.by_attr:
            return given.value(name, self._values)
        return self._pop.attrs.get(name)

    def attr_from_tensor(self, name: str) -> bool:
        return False                        # known here: attr() read the tensor

    def _values(self, slot: str) -> list:
        return [self._value(slot, i)[1] for i in range(len(self.input_names(slot)))]

    def set_output(self, slot: str, shape, dtype=None, i: int | None = None,
                   lod_level: int | None = None) -> None:
        names = self.output_names(slot)
        if i is not None:
            names = names[i:i + 1]
        code = dtypes.to_code(dtype) if dtype is not None else None
        for name in names:
            self.made.append((slot, name, [int(d) for d in shape], code))

    def fail(self, message: str, *, slot: str | None = None, expected=None, given=None):
        # The executor adds the op's block path and creating line (as for a kernel's error).
        text = "at run time, " + (f"slot {slot}: " if slot else "") + message
        if expected is not None:
            text += f"\n  expected: {expected}"
        if given is not None:
            text += f"\n  given:    {given}"
        raise ExecutionError(text)

    def describe_input(self, slot: str, i: int = 0) -> str:
        name = self.input_names(slot)[i]
        return f"{name} {dtypes.name(self.dtype(slot, i))}{self.shape(slot, i)}"

    def input_summary(self) -> str:
        parts = []
        for slot, names in self._pop.inputs.items():
            for i, _ in enumerate(names):
                _, value = self._value(slot, i)
                if hasattr(value, "shape"):
                    parts.append(f"{slot} {list(value.shape)}")
        return ", ".join(parts) or "none"
