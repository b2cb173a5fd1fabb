"""Range checks for kernels that index by data: the rule every such kernel follows.

A class label, an id, a gather index, a branch mask or an array position comes from a
tensor, so nothing at build time can vouch for it. numba kernels index without bounds
checks (that is what makes them fast), so a label of 3 for 3 classes reads or writes past
its row, -1 wraps to the last class, and 10**9 leaves the array and crashes the process.

The rule: **before a kernel uses a tensor's values as indices, it checks all of them with
one call here, before it writes anything.** The op's kernel (paddle_nb/ops) makes the call,
since it knows the slot's name::

    check.indices(label, classes, slot="Label", what="class index", ignore=ignore_index)

A value out of range raises :class:`IndexOutOfRange`, carrying the slot, the first bad
value, where it sits (its multi-dimensional position) and the allowed range; the executor
turns it into a ``paddle_nb.IndexRangeError`` (an ``ExecutionError``) that also names the
op, its block path and the user's line. Numpy arrays are scanned by a compiled loop
(cpu/check.py); device arrays by a CUDA kernel that finds the first bad position
(cuda/check.py), so only one number comes back to the host.
"""
from __future__ import annotations

import numpy as np

from .cpu import check as host_check
from .cuda import check as device_check


class IndexOutOfRange(IndexError):
    """A value used as an index is outside ``[low, high)`` (and is not the ignored value).

    Attributes: ``slot``, ``value``, ``position`` (a tuple into the checked tensor),
    ``low``, ``high``."""

    def __init__(self, message, *, slot, value, position, low, high):
        super().__init__(message)
        self.slot, self.value, self.position = slot, value, position
        self.low, self.high = low, high


def indices(values, high: int, *, slot: str, what: str = "index", low: int = 0,
            ignore=None, shape=None, counted: str = "", column=None,
            ignored_as: str = "ignore_index", ignored_means: str = "to skip the row") -> None:
    """Raise :class:`IndexOutOfRange` unless every value is in ``[low, high)`` or equals
    ``ignore``. ``values`` is a numpy or device array of integers (any shape);
    ``shape`` is the shape to report positions in (default ``values.shape``: pass the
    user's tensor's shape when ``values`` is a flattened view of it); ``counted`` says
    what ``high`` counts ("3 classes"); ``column``: ``values`` is that position of the
    user's tensor's last axis (gather_nd checks each against its own dim), so positions
    end with it. ``ignored_as`` / ``ignored_means`` name the ignored value in the message
    ("-100 (ignore_index) to skip the row"; an embedding's "padding_idx")."""
    shape = tuple(values.shape) if shape is None else tuple(shape)
    if values.size == 0:
        return
    if values.dtype.kind not in "iub":
        raise IndexOutOfRange(f"slot {slot}: expected integers ({what} values), given "
                              f"{values.dtype} values", slot=slot, value=None, position=None,
                              low=low, high=high)
    has_ignore = ignore is not None
    ignore_value = int(ignore) if has_ignore else 0
    if hasattr(values, "copy_to_host") and not isinstance(values, np.ndarray):
        flat_pos, value = device_check.first_outside(values, low, high, has_ignore,
                                                     ignore_value)
    else:
        flat = np.ascontiguousarray(values).reshape(-1)
        flat_pos = int(host_check.first_outside(flat, low, high, has_ignore, ignore_value))
        value = int(flat[flat_pos]) if flat_pos >= 0 else None
    if flat_pos < 0:
        return
    position = tuple(int(i) for i in np.unravel_index(flat_pos, shape)) if shape else ()
    if column is not None:
        position += (int(column),)
    raise IndexOutOfRange(_message(slot, what, value, position, low, high, ignore, counted,
                                   ignored_as, ignored_means),
                          slot=slot, value=value, position=position, low=low, high=high)


def _message(slot, what, value, position, low, high, ignore, counted,
             ignored_as="ignore_index", ignored_means="to skip the row") -> str:
    where = f" at {slot}[{', '.join(map(str, position))}]" if position else ""
    allowed = f"{low} <= {slot} < {high}" + (f" ({counted})" if counted else "")
    if ignore is not None:
        allowed += f", or {ignore} ({ignored_as}) {ignored_means}"
    text = f"slot {slot}: {what} {value}{where} is out of range; expected {allowed}"
    if high > 0 and value == high and low == 0:
        text += (f". Numbered 1..{high} instead of 0..{high - 1}? Subtract 1 "
                 f"(they start at 0)")
    elif value < 0 and low == 0:
        text += ". Negative values do not count from the end here"
    return text + ". Nothing was written."
