"""SelectedRows: Paddle's sparse gradient of an embedding table (a value, like a tensor).

An embedding ``lookup_table_v2`` with ``is_sparse=True`` looks up a few rows of a table W
[V, D]; its gradient is zero everywhere else. Instead of a dense [V, D] tensor of mostly
zeros, Paddle writes a SelectedRows:

- ``rows``   int64 [n]: the ids as the lookup was given them, flattened, repeats and the
  padding id included (``[3, 7, 7, 0]``): row ``rows[i]`` of the gradient gets ``value[i]``;
- ``value``  [n, D] (W's type): one gradient row per id, in the same order;
- ``height`` V: how many rows the dense tensor it stands for has.

The dense gradient is ``to_dense()``: zeros [V, D] with each ``value[i]`` added at row
``rows[i]`` (repeated rows add up). ``merged()`` is the same information with each row
once (sorted, repeats added): what Paddle's ``MergeAdd`` makes before Adam or Momentum
read it, and what ``sum`` of SelectedRows gives.

It lives in a scope variable like any value (``ScopeVariable.kind == "selected_rows"``;
the program declares it ``VarType.SELECTED_ROWS``). Only the ops that say so take one
(``sgd``, ``momentum``, ``adam``, ``sum``: ``OpDef.selected_rows``); any other op refuses
it before its kernel runs (core/runtime_shapes.py), naming the op and the slot. On CUDA
``rows`` and ``value`` are device arrays; ``to_host()`` copies them back (the executor's
fetch does), and the methods that compute (``to_dense``, ``merged``) want host arrays.
"""
from __future__ import annotations

import numpy as np

from .errors import ExecutionError

_SHOWN_ROWS = 8        # rows a repr lists before "..."


class SelectedRows:
    """Rows of a [height, ...] tensor: ``rows`` (int64 [n]), ``value`` ([n, ...])."""

    __slots__ = ("rows", "value", "height")

    def __init__(self, rows, value, height: int):
        if isinstance(rows, (list, tuple)):
            rows = np.asarray(rows, dtype=np.int64)
        if getattr(rows, "ndim", None) != 1 or getattr(rows, "dtype", None) != np.int64:
            raise ExecutionError(f"SelectedRows rows must be a 1-D int64 array, got "
                                 f"{_describe(rows)}")
        if getattr(value, "ndim", 0) < 1 or int(value.shape[0]) != int(rows.shape[0]):
            raise ExecutionError(f"SelectedRows value must have one row per entry of rows "
                                 f"({int(rows.shape[0])}), got {_describe(value)}")
        if isinstance(height, bool) or not isinstance(height, (int, np.integer)) or height < 0:
            raise ExecutionError(f"SelectedRows height must be an int >= 0, got {height!r}")
        self.rows, self.value, self.height = rows, value, int(height)

    # --- what it stands for ---------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        """The dense tensor's shape, (height, ...): what shape rules compare with Param."""
        return (self.height,) + tuple(int(d) for d in self.value.shape[1:])

    @property
    def dtype(self):
        return self.value.dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def nbytes(self) -> int:
        """Bytes it holds (rows and value), not the dense tensor's."""
        return int(self.rows.nbytes) + int(self.value.nbytes)

    @property
    def on_device(self) -> bool:
        return hasattr(self.value, "copy_to_host") and not isinstance(self.value, np.ndarray)

    # --- copies -----------------------------------------------------------------------
    def map(self, fn) -> "SelectedRows":
        """``fn`` applied to rows and value (``device.to_device`` moves it to the GPU)."""
        return SelectedRows(fn(self.rows), fn(self.value), self.height)

    def to_host(self) -> "SelectedRows":
        """A copy whose rows and value are numpy arrays (device arrays are copied back)."""
        def host(a):
            return a.copy_to_host() if hasattr(a, "copy_to_host") and \
                not isinstance(a, np.ndarray) else np.array(a, copy=True)
        return self.map(host)

    # --- the dense view and the merged form (host arrays) --------------------------------
    def to_dense(self) -> np.ndarray:
        """The dense tensor: zeros of ``shape`` with value[i] added at row rows[i], in the
        order of ``rows`` (so repeated rows add up as Paddle's kernels add them)."""
        rows, value = self._host_arrays("to_dense")
        dense = np.zeros(self.shape, value.dtype)
        np.add.at(dense, rows, value)      # unbuffered: repeats add, in order
        return dense

    def merged(self) -> "SelectedRows":
        """Each row once, sorted, with its repeats' values added (Paddle's MergeAdd)."""
        rows, value = self._host_arrays("merged")
        unique, where = np.unique(rows, return_inverse=True)
        summed = np.zeros((len(unique),) + tuple(value.shape[1:]), value.dtype)
        np.add.at(summed, where.reshape(-1), value)
        return SelectedRows(unique.astype(np.int64), summed, self.height)

    def touched_rows(self) -> np.ndarray:
        """The rows of the dense tensor this one changes, sorted, each once."""
        return np.unique(self._host_arrays("touched_rows")[0])

    def _host_arrays(self, what: str):
        if self.on_device:
            raise ExecutionError(f"SelectedRows.{what}() works on host arrays: call "
                                 f".to_host() first (these rows and values are on the GPU)")
        self._check_rows()
        return np.asarray(self.rows), np.asarray(self.value)

    def _check_rows(self) -> None:
        rows = np.asarray(self.rows)
        bad = (rows < 0) | (rows >= self.height)
        if bad.any():
            i = int(np.argmax(bad))
            raise ExecutionError(f"SelectedRows rows[{i}] = {int(rows[i])} is not a row of "
                                 f"a tensor of height {self.height} (0 <= row < "
                                 f"{self.height})")

    # --- what it is not ------------------------------------------------------------------
    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"a SelectedRows is not a dense tensor ({self!r}): use .to_dense() "
                        f"for the dense [{', '.join(map(str, self.shape))}] tensor, or .value "
                        f"and .rows")

    def __add__(self, other):
        raise TypeError(f"a SelectedRows does not add with + ({self!r}): the sum op adds "
                        f"SelectedRows; .to_dense() gives the dense tensor")

    __radd__ = __add__

    def __getattr__(self, name):
        # Only for names it lacks: code written for dense tensors (x.reshape, x.size)
        # learns what it was given instead of a bare "no attribute". Protocol probes
        # (numpy's __array_interface__, copy's __deepcopy__) and unset slots get the plain
        # error their callers expect.
        if name.startswith("__") or name in SelectedRows.__slots__:
            raise AttributeError(name)
        raise AttributeError(f"a SelectedRows ({self!r}) has no attribute {name!r}: it is "
                             f"Paddle's sparse gradient (rows + value), not a dense tensor; "
                             f"only sgd, momentum, adam and sum take one (use .to_dense())")

    def __repr__(self) -> str:
        rows = self.rows
        n = int(rows.shape[0])
        shown = rows[:_SHOWN_ROWS]
        if hasattr(shown, "copy_to_host") and not isinstance(shown, np.ndarray):
            shown = shown.copy_to_host()
        listed = ", ".join(str(int(r)) for r in np.asarray(shown))
        more = f", ... ({n} rows)" if n > _SHOWN_ROWS else ""
        value = f"{self.value.dtype}[{', '.join(str(int(d)) for d in self.value.shape)}]"
        return f"SelectedRows height={self.height}, rows [{listed}{more}], value {value}"


def is_selected_rows(value) -> bool:
    return value.__class__ is SelectedRows


def _describe(a) -> str:
    if hasattr(a, "shape") and hasattr(a, "dtype"):
        return f"{a.dtype}{list(a.shape)}"
    return type(a).__name__
