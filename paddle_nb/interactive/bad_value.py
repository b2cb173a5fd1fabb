"""The first bad value: what the debugger reports when, under ``check_nan_inf``, an op's
output holds a NaN or an Inf (interactive/debugger.py stops there, with the op's scope alive).

A :class:`BadValue` says where (the op, its block path and scope), what (the output, the
first bad element, the counts), who built it (the user's line, from the op's
``op_callstack``) and from what (each input: dtype, shape, range over its finite values,
its own NaN/Inf counts, and the values themselves when there are at most 16).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..core.grad_maker import EMPTY_VAR
from ..core.non_finite import all_finite, count_non_finite, float_arrays
from ..core.selected_rows import SelectedRows


@dataclass
class BadValue:
    """The first NaN/Inf of a run under ``check_nan_inf``: where, what, and from what.

    ``index`` is the first bad element's index in the output (``item``: the tensor array's
    item, else None); ``inputs`` one dict per input variable with a value: ``slot``,
    ``name``, ``kind`` and, for tensors, ``dtype``, ``shape``, ``min``/``max`` (over the
    finite values), ``nan``, ``inf`` and ``values`` (the list, for at most 16 elements)."""
    step: int                       # steps_taken at the bad step
    block_idx: int
    op_index: int
    op_type: str
    block_path: str
    scope_name: str
    slot: str
    name: str
    item: int | None
    index: tuple
    value: float
    nan: int
    inf: int
    dtype: str
    shape: list
    created_at: str | None
    inputs: list = field(default_factory=list)

    @property
    def location(self) -> tuple[int, int]:
        return (self.block_idx, self.op_index)

    def __str__(self) -> str:
        what = repr(self.name) if self.item is None else f"item {self.item} of {self.name!r}"
        at = ", ".join(map(str, self.index))
        lines = [f"first NaN/Inf at step {self.step}: {self.block_path} > op {self.op_index} "
                 f"{self.op_type} (scope {self.scope_name!r})",
                 f"  output {self.slot} ({what}): {self.nan} NaN and {self.inf} Inf in "
                 f"{self.dtype}{self.shape}; the first at [{at}] = {self.value}",
                 f"  built at: {self.created_at or '(not recorded)'}"]
        for i in self.inputs:
            lines.append(f"  input {i['slot']} ({i['name']!r}): {_input_text(i)}")
        return "\n".join(lines)


def find_bad_value(step, number: int) -> BadValue | None:
    """The first NaN/Inf among ``step``'s outputs, as the run's ``number``-th step, or None."""
    if step.wrote is None:
        pairs = [(slot, n) for slot, names in step.op.outputs.items() for n in names
                 if n != EMPTY_VAR]
    else:
        pairs = [("cell", n) for n in step.wrote]
    for slot, name in pairs:
        var = step.scope.find_var(name)
        if var is None or var._kind is None:
            continue
        for item, a in float_arrays(var._value):
            if all_finite(a):
                continue
            nan, inf = count_non_finite(a)
            flat = int(np.flatnonzero(~np.isfinite(a))[0])
            index = tuple(int(i) for i in np.unravel_index(flat, a.shape))
            return BadValue(
                step=number, block_idx=step.block_idx, op_index=step.op_index,
                op_type=step.op.type, block_path=step.block_path,
                scope_name=step.scope.name, slot=slot, name=name, item=item, index=index,
                value=float(a.reshape(-1)[flat]), nan=nan, inf=inf, dtype=str(a.dtype),
                shape=[int(d) for d in a.shape], created_at=step.op.created_at,
                inputs=_inputs_of(step))
    return None


def _inputs_of(step) -> list[dict]:
    out = []
    for slot, names in step.op.inputs.items():
        for n in names:
            var = step.scope.find_var(n) if n != EMPTY_VAR else None
            if var is None or var._kind is None:
                continue
            entry = {"slot": slot, "name": n, "kind": var._kind}
            value = var._value
            if value.__class__ is SelectedRows:
                value = value.to_host().to_dense()
            elif hasattr(value, "copy_to_host") and not isinstance(value, np.ndarray):
                value = value.copy_to_host()
            if isinstance(value, np.ndarray):
                entry.update(_summary(value))
            elif isinstance(value, list):
                entry["items"] = len(value)
            out.append(entry)
    return out


def _summary(a: np.ndarray) -> dict:
    s = {"dtype": str(a.dtype), "shape": [int(d) for d in a.shape]}
    if a.dtype.kind in "fiub" and a.size:
        if a.dtype.kind == "f":
            finite = a[np.isfinite(a)]
            s["nan"], s["inf"] = count_non_finite(a)
        else:
            finite = a
            s["nan"] = s["inf"] = 0
        if finite.size:
            s["min"], s["max"] = float(finite.min()), float(finite.max())
    if a.size <= 16:
        s["values"] = a.tolist()
    return s


def _input_text(i: dict) -> str:
    if "shape" not in i:
        return f"a {i['kind']}" + (f" of {i['items']} items" if "items" in i else "")
    text = f"{i['dtype']}{i['shape']}"
    if "values" in i:
        text += f" = {np.array2string(np.asarray(i['values']), precision=4)}"
    elif "min" in i:
        text += f", min {i['min']:.4g}, max {i['max']:.4g}"
    if i.get("nan") or i.get("inf"):
        text += f" (already {i['nan']} NaN and {i['inf']} Inf)"
    return text
