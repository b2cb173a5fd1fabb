"""The ops whose output size depends on the values (ops/masked_select.py, ops/unique.py,
ops/histogram.py's bincount), for the interpreter's CPU kernels and a compiled block
(kernels/lowered.py).

Nothing in a compiled block fixes the size of what a Call returns: the generated code reads
shapes when it runs. So these functions return arrays whose length is found from the data,
each call anew, and one compiled segment serves every mask, every set of labels.

- masked_select (and its gradient) and where_index are loops over the elements in
  row-major order, here, which the interpreter's CPU kernels call too.
- bincount is kernels/counting's loop into bins, after the checks the interpreter makes
  (a negative value, more bins than the tensor size limit allows) raising first.
- unique and unique_consecutive are numpy's sort and scans (``np.unique``), which no loop
  here repeats bit for bit (its tie order, its NaN rule): the interpreter's kernels call
  ``unique_arrays`` / ``consecutive_arrays``, and a compiled block calls the same functions
  through in_python.

A check that fails raises a constant message (cached machine code raises with constant
arguments only); the compiler then reruns the block in the interpreter, whose kernel words
the error with the values.
"""
import numpy as np
from numba import njit

from ..counting import _cpu_bincount
from .in_python import in_python, like, several


@njit(cache=True, fastmath=False, error_model="numpy")
def _broadcast_flat(a, shape):
    """``a`` broadcast to ``shape`` and flattened, row-major (a copy only where it was
    broadcast)."""
    if a.shape == shape:
        return np.ascontiguousarray(a).ravel()
    return np.broadcast_to(a, shape).ravel()


@njit(cache=True, fastmath=False, error_model="numpy")
def _selected_mask(x, mask, limit):
    """(the shape X and Mask broadcast to, Mask in it flattened, how many are true); a
    broadcast shape of more than ``limit`` elements raises (the interpreter's size check
    of the positions)."""
    shape = np.broadcast_shapes(x.shape, mask.shape)
    total = 1
    for d in shape:
        total *= d
    if total > limit:
        raise ValueError("masked_select: X and Mask broadcast to too large a tensor")
    flat = _broadcast_flat(mask, shape)
    count = 0
    for i in range(flat.size):
        if flat[i]:
            count += 1
    return shape, flat, count


@njit(cache=True, fastmath=False, error_model="numpy")
def masked_select(x, mask, limit):
    """masked_select's Y: the elements of X where Mask is true (the two broadcast), in
    row-major order."""
    shape, flat_mask, count = _selected_mask(x, mask, limit)
    flat_x = _broadcast_flat(x, shape)
    y = np.empty(count, x.dtype)
    k = 0
    for i in range(flat_mask.size):
        if flat_mask[i]:
            y[k] = flat_x[i]
            k += 1
    return y


def sum_broadcast_copies(grad, x):
    """``grad`` (of the broadcast shape) summed over the dims along which X was broadcast,
    in X's shape: numpy's sum, as ops/arrays.unbroadcast takes it (no loop here adds in
    numpy's pairwise order)."""
    view = (1,) * (grad.ndim - x.ndim) + tuple(x.shape)
    axes = tuple(i for i, (g, v) in enumerate(zip(grad.shape, view)) if v == 1 and g != 1)
    if axes:
        grad = grad.sum(axis=axes, keepdims=True)
    return np.asarray(grad.reshape(x.shape), order="C")


sum_broadcast_copies_in_python = in_python(sum_broadcast_copies, like(1))


@njit(cache=True, fastmath=False, error_model="numpy")
def masked_select_grad(x, mask, dy, limit):
    """masked_select_grad's dX for a dY of X's dtype: each dY added into zeros at the
    position it was selected from (as ``np.add.at`` adds it), the copies of a broadcast X
    summed back to X's shape. A dY of another length than Mask's true entries raises."""
    shape, flat_mask, count = _selected_mask(x, mask, limit)
    if dy.size != count:
        raise ValueError("masked_select_grad: Y@GRAD has another length than Mask's true "
                         "entries")
    flat_dy = np.ascontiguousarray(dy).ravel()
    spread = np.zeros(flat_mask.size, x.dtype)
    k = 0
    for i in range(flat_mask.size):
        if flat_mask[i]:
            spread[i] += flat_dy[k]
            k += 1
    if x.shape == shape:
        return spread.reshape(x.shape)
    return sum_broadcast_copies_in_python(spread.reshape(shape), x)


@njit(cache=True, fastmath=False, error_model="numpy")
def nonzero_coordinates(condition):
    """where_index's Out: the coordinates of Condition's nonzero elements (NaN is
    nonzero), one int64 row each, in row-major order (``np.argwhere(condition != 0)``)."""
    flat = np.ascontiguousarray(condition).ravel()
    count = 0
    for i in range(flat.size):
        if flat[i] != 0:
            count += 1
    rank = condition.ndim
    out = np.empty((count, rank), np.int64)
    k = 0
    for i in range(flat.size):
        if flat[i] != 0:
            rest = i
            for d in range(rank - 1, -1, -1):
                out[k, d] = rest % condition.shape[d]
                rest //= condition.shape[d]
            k += 1
    return out


# --- bincount --------------------------------------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def _bins(x, minlength, limit):
    """bincount's Out size: max(X) + 1, at least ``minlength``; a negative value, or more
    than ``limit`` bins (the tensor size limit), raises."""
    size = np.int64(minlength)
    for i in range(x.size):
        v = np.int64(x[i])
        if v < 0:
            raise ValueError("bincount: X holds a negative value")
        if v >= size:
            size = v + 1
    if size > limit:
        raise ValueError("bincount: more bins than the tensor size limit allows")
    return size


@njit(cache=True, fastmath=False, error_model="numpy")
def bincount_counts(x, minlength, limit):
    """bincount's Out without Weights: int64 counts (kernels/counting's loop)."""
    flat = np.ascontiguousarray(x).ravel()
    out = np.zeros(_bins(flat, minlength, limit), np.int64)
    _cpu_bincount(flat, flat, False, out)
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def bincount_sums(x, weights, minlength, zero, limit):
    """bincount's Out with Weights: their sums per value in ``zero``'s type (Out's), the
    Weights cast to it first, as the interpreter casts them (kernels/counting's loop)."""
    if weights.size != x.size:
        raise ValueError("bincount: Weights has another length than X")
    flat = np.ascontiguousarray(x).ravel()
    size = _bins(flat, minlength, limit)
    flat_w = np.ascontiguousarray(weights).ravel()
    w = np.full(flat_w.size, zero)
    for i in range(flat_w.size):
        w[i] = flat_w[i]
    out = np.full(size, zero)
    _cpu_bincount(flat, w, True, out)
    return out


# --- unique, unique_consecutive -------------------------------------------------------------
def _first_appearance(flat):
    """Fluid 1's unsorted unique: (values in the order they first appear, first positions,
    inverse, counts)."""
    values, first, inverse, counts = np.unique(flat, return_index=True, return_inverse=True,
                                               return_counts=True)
    order = np.argsort(first, kind="stable")        # the distinct values by first position
    rank = np.empty_like(order)
    rank[order] = np.arange(len(order))
    return values[order], first[order], rank[inverse.reshape(-1)], counts[order]


def _contiguous(*arrays):
    """The arrays C-contiguous, the index arrays (all but the first) int64."""
    return (np.ascontiguousarray(arrays[0]),
            *(np.ascontiguousarray(a, np.int64) for a in arrays[1:]))


def unique_arrays(x, axis, sorted_: bool):
    """unique's (Out, Indices, Index, Counts) of host array X, the index arrays int64:
    X flattened (``axis`` None; ``sorted_`` False: in order of first appearance, Fluid 1's
    unique), else the distinct slices along ``axis``, ascending."""
    if axis is None:
        flat = x.reshape(-1)
        if not sorted_:
            return _contiguous(*_first_appearance(flat))
        values, first, inverse, counts = np.unique(flat, return_index=True,
                                                   return_inverse=True, return_counts=True)
        return _contiguous(values, first, inverse.reshape(-1), counts)
    if x.shape[axis] == 0:
        return _contiguous(x.copy(), *(np.zeros(0, np.int64) for _ in range(3)))
    values, first, inverse, counts = np.unique(x, return_index=True, return_inverse=True,
                                               return_counts=True, axis=axis)
    return _contiguous(values, first, inverse.reshape(-1), counts)


def consecutive_arrays(x, axis):
    """unique_consecutive's (Out, Index, Counts) of host array X, the index arrays int64:
    the first of each run, each element's run, each run's length along ``axis`` (None: X
    flattened); NaN never equals NaN."""
    if axis is None:
        x, axis = x.reshape(-1), 0
    n = x.shape[axis]
    if n == 0:
        return _contiguous(x.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64))
    moved = np.moveaxis(x, axis, 0).reshape(n, -1)
    differs = np.any(moved[1:] != moved[:-1], axis=1)     # NaN != NaN: a new run
    starts = np.concatenate([[True], differs])
    inverse = np.cumsum(starts) - 1
    counts = np.diff(np.append(np.flatnonzero(starts), n))
    return _contiguous(np.take(x, np.flatnonzero(starts), axis=axis), inverse, counts)


# (module-level functions for in_python: one per rank of Out)
def unique_flat_arrays(x, sorted_):
    return unique_arrays(x, None, sorted_)


def unique_along_arrays(x, axis):
    return unique_arrays(x, axis, True)


def consecutive_flat_arrays(x):
    return consecutive_arrays(x, None)


def consecutive_along_arrays(x, axis):
    return consecutive_arrays(x, axis)


INDICES = like(0, ndim=1, dtype=np.int64)
_unique_flat = in_python(unique_flat_arrays, several(like(0, ndim=1), INDICES, INDICES,
                                                     INDICES))
_unique_along = in_python(unique_along_arrays, several(like(0), INDICES, INDICES, INDICES))
_consecutive_flat = in_python(consecutive_flat_arrays, several(like(0, ndim=1), INDICES,
                                                               INDICES))
_consecutive_along = in_python(consecutive_along_arrays, several(like(0), INDICES, INDICES))


@njit(cache=True, fastmath=False, error_model="numpy")
def _as_index(a, zero):
    """The int64 array ``a`` in ``zero``'s type (the op's index type: every value fits,
    the element count having been checked)."""
    out = np.full(a.size, zero)
    for i in range(a.size):
        out[i] = a[i]
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def _countable(x, most):
    if x.size > most:
        raise ValueError("unique: too many elements for the index type")


@njit(cache=True, fastmath=False, error_model="numpy")
def unique_flat(x, sorted_, zero, most):
    """unique of X flattened: (Out, Indices, Index, Counts), the indices in ``zero``'s
    type, which counts up to ``most``."""
    _countable(x, most)
    values, first, inverse, counts = _unique_flat(x, sorted_)
    return values, _as_index(first, zero), _as_index(inverse, zero), _as_index(counts, zero)


@njit(cache=True, fastmath=False, error_model="numpy")
def unique_along(x, axis, zero, most):
    """unique of X's slices along ``axis``: (Out, Indices, Index, Counts)."""
    _countable(x, most)
    values, first, inverse, counts = _unique_along(x, axis)
    return values, _as_index(first, zero), _as_index(inverse, zero), _as_index(counts, zero)


@njit(cache=True, fastmath=False, error_model="numpy")
def consecutive_flat(x, zero, most):
    """unique_consecutive of X flattened: (Out, Index, Counts)."""
    _countable(x, most)
    values, inverse, counts = _consecutive_flat(x)
    return values, _as_index(inverse, zero), _as_index(counts, zero)


@njit(cache=True, fastmath=False, error_model="numpy")
def consecutive_along(x, axis, zero, most):
    """unique_consecutive of X's slices along ``axis``: (Out, Index, Counts)."""
    _countable(x, most)
    values, inverse, counts = _consecutive_along(x, axis)
    return values, _as_index(inverse, zero), _as_index(counts, zero)

