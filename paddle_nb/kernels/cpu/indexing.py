"""Indexing by data inside a compiled block: gather, index_select, gather_nd, scatter,
take_along_axis / index_sample, one_hot, arg_max / arg_min, sequence_mask, the ops that
add or write slices at data's positions (index_add, scatter_nd_add, put_along_axis) and
the gradients that put values back where they were taken from.

These are the ops' lowered forms (paddle_nb/compiler calls them from generated code; the
interpreter's kernels are the places' numpy primitives, backends/cpu.py). Each returns new
arrays and computes what the interpreter computes, bit for bit:

- a take copies values, so any loop gives the same bits;
- a scatter-add (the gradients) adds into zeros in the order of the indices, which is the
  order numpy's ``np.add.at`` adds in (one element after another, unbuffered): every
  element of the result is ``0 + d[j0] + d[j1] + ...`` with j ascending, as there; the
  ops that add into X add that sum to X afterwards, as their kernels do
  (``x + (0 + d[j0] + ...)``, not ``x + d[j0] + ...``).

Every index is checked before anything is read, against the range the interpreter's
kernel allows (kernels/check.py: ``[0, n)``, no negative index anywhere here). A bad one
raises an exception with a constant message (numba's cache keeps the machine code of
constant arguments only); the compiler then reruns the block in the interpreter, whose
check names the op, the slot, the value and where it sits.
"""
import numpy as np
from numba import literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from .broadcast_sum import dims_size
from .check import first_outside


# --- shared pieces ------------------------------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def _checked(index, n):
    """``index`` flat (its values, unchanged), every one of them in ``[0, n)``."""
    flat = np.ascontiguousarray(index).reshape(index.size)
    if first_outside(flat, 0, n, False, 0) >= 0:
        raise IndexError("an index read from a tensor is out of range")
    return flat


@njit(cache=True, fastmath=False, error_model="numpy")
def one_index(index, n):
    """The one value of ``index`` (a tensor array's position I, select_input's Mask), in
    ``[0, n)``."""
    if index.size != 1:
        raise IndexError("an index tensor must hold one value")
    i = np.int64(index.ravel()[0])
    if i < 0 or i >= n:
        raise IndexError("an index read from a tensor is out of range")
    return i


@njit(cache=True, fastmath=False, error_model="numpy")
def around(shape, axis):
    """(the product of the dims before ``axis``, the dim, the product of those after): a
    tensor as (outer, n, inner), the view every take along one axis works on."""
    outer = inner = 1
    for d in range(axis):
        outer *= shape[d]
    for d in range(axis + 1, len(shape)):
        inner *= shape[d]
    return outer, shape[axis], inner


@njit(cache=True, fastmath=False, error_model="numpy")
def _take_slices(x3, at, out3):
    """out3[o, j, i] = x3[o, at[j], i]."""
    for o in range(x3.shape[0]):
        for j in range(at.size):
            r = at[j]
            for i in range(x3.shape[2]):
                out3[o, j, i] = x3[o, r, i]


@njit(cache=True, fastmath=False, error_model="numpy")
def _add_slices(d3, at, dx3):
    """dx3[o, at[j], i] += d3[o, j, i], j ascending (np.add.at's order)."""
    for o in range(d3.shape[0]):
        for j in range(at.size):
            r = at[j]
            for i in range(d3.shape[2]):
                dx3[o, r, i] += d3[o, j, i]


# --- gather, index_select ---------------------------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def taken_at(x, index, axis, out_rank):
    """X's slices at Index along ``axis``: X's shape with the axis's length that of Index
    (a 0-D Index drops the axis: ``out_rank``, a literal, says which)."""
    literally(out_rank)
    at = _checked(index, x.shape[axis])
    outer, n, inner = around(x.shape, axis)
    out3 = np.empty((outer, at.size, inner), x.dtype)
    _take_slices(np.ascontiguousarray(x).reshape((outer, n, inner)), at, out3)
    dims = np.empty(out_rank, np.int64)
    k = 0
    for d in range(x.ndim):
        if d != axis:
            dims[k] = x.shape[d]
            k += 1
        elif index.ndim != 0:
            dims[k] = at.size
            k += 1
    return out3.reshape(to_fixed_tuple(dims, out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def added_at(x, index, dout, axis):
    """The gradient: zeros of X's shape (dOut's dtype) with dOut's slices added at Index
    along ``axis`` (a repeated index adds up)."""
    at = _checked(index, x.shape[axis])
    outer, n, inner = around(x.shape, axis)
    dx3 = np.zeros((outer, n, inner), dout.dtype)
    _add_slices(np.ascontiguousarray(dout).reshape((outer, at.size, inner)), at, dx3)
    return dx3.reshape(x.shape)


# --- gather_nd -----------------------------------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def _nd_positions(x, index):
    """Each row of Index [..., k] as one row-major position among X's first k dims, each
    column checked against its own dim: (positions, k)."""
    k = index.shape[index.ndim - 1]
    if k > x.ndim:
        raise ValueError("gather_nd: Index's rows are longer than X's rank")
    m = 1
    for d in range(index.ndim - 1):
        m *= index.shape[d]
    rows = np.ascontiguousarray(index).reshape((m, k))
    at = np.zeros(m, np.int64)
    step = 1
    for j in range(k - 1, -1, -1):
        column = np.ascontiguousarray(rows[:, j])
        if first_outside(column, 0, x.shape[j], False, 0) >= 0:
            raise IndexError("an index read from a tensor is out of range")
        for r in range(m):
            at[r] += np.int64(column[r]) * step
        step *= x.shape[j]
    return at, k


@njit(cache=True, fastmath=False, error_model="numpy")
def gathered_nd(x, index, out_rank):
    """Out[i...] = X[Index[i..., 0], ..., Index[i..., k-1]], shape Index's leading dims
    and X's dims after the k-th (``out_rank`` of them, a literal)."""
    literally(out_rank)
    at, k = _nd_positions(x, index)
    if out_rank != index.ndim - 1 + x.ndim - k:
        raise ValueError("gather_nd: Index's last dim is not the one compiled for")
    lead, tail = dims_size(x.shape, 0, k), dims_size(x.shape, k, x.ndim)
    out3 = np.empty((1, at.size, tail), x.dtype)
    _take_slices(np.ascontiguousarray(x).reshape((1, lead, tail)), at, out3)
    dims = np.empty(out_rank, np.int64)
    for d in range(index.ndim - 1):
        dims[d] = index.shape[d]
    for d in range(k, x.ndim):
        dims[index.ndim - 1 + d - k] = x.shape[d]
    return out3.reshape(to_fixed_tuple(dims, out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def gathered_nd_grad(x, index, dout):
    """Zeros of X's shape with each dOut slice added at its index row (in their order)."""
    at, k = _nd_positions(x, index)
    lead, tail = dims_size(x.shape, 0, k), dims_size(x.shape, k, x.ndim)
    dx3 = np.zeros((1, lead, tail), x.dtype)
    _add_slices(np.ascontiguousarray(dout).reshape((1, at.size, tail)), at, dx3)
    return dx3.reshape(x.shape)


# --- scatter --------------------------------------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def scatter_rows_of(x, ids, updates, overwrite):
    """X with row Ids[j] replaced by Updates[j] (overwrite: the last one wins, numpy's
    rule) or zeroed and then every update aimed at it added, in the order of Ids."""
    at = _checked(ids, x.shape[0])
    _, rows, inner = around(x.shape, 0)
    if updates.size != at.size * inner:
        raise ValueError("scatter: Updates does not hold one row of X for each id")
    out = np.ascontiguousarray(x).copy().reshape((rows, inner))
    u = np.ascontiguousarray(updates).reshape((at.size, inner))
    if not overwrite:
        for j in range(at.size):
            out[at[j]] = 0
    for j in range(at.size):
        for i in range(inner):
            if overwrite:
                out[at[j], i] = u[j, i]
            else:
                out[at[j], i] += u[j, i]
    return out.reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def rows_zeroed(dout, ids):
    """scatter's dX: dOut with the rows at Ids zeroed."""
    at = _checked(ids, dout.shape[0])
    _, rows, inner = around(dout.shape, 0)
    out = np.ascontiguousarray(dout).copy().reshape((rows, inner))
    for j in range(at.size):
        out[at[j]] = 0
    return out.reshape(dout.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def rows_taken(dout, ids, like):
    """scatter's dUpdates: dOut's rows at Ids, in ``like``'s (Updates') shape."""
    at = _checked(ids, dout.shape[0])
    _, rows, inner = around(dout.shape, 0)
    out3 = np.empty((1, at.size, inner), dout.dtype)
    _take_slices(np.ascontiguousarray(dout).reshape((1, rows, inner)), at, out3)
    return out3.reshape(like.shape)


# --- take_along_axis, index_sample ------------------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def _along_offsets(x, index, axis):
    """Where each element of Index (in its row-major order) reads X, flat: X's element at
    the same place as Index's along every axis but ``axis``, where Index says which.
    Along the other axes Index may be shorter (the leading block of X)."""
    for d in range(x.ndim):
        if d != axis and index.shape[d] > x.shape[d]:
            raise ValueError("Index is longer than X along an axis it does not index")
    at = _checked(index, x.shape[axis])
    strides = np.empty(x.ndim, np.int64)
    step = 1
    for d in range(x.ndim - 1, -1, -1):
        strides[d] = step
        step *= x.shape[d]
    offsets = np.empty(at.size, np.int64)
    place = np.zeros(x.ndim, np.int64)         # Index's multi-index, row-major
    for p in range(at.size):
        offset = 0
        for d in range(x.ndim):
            offset += (at[p] if d == axis else place[d]) * strides[d]
        offsets[p] = offset
        d = x.ndim - 1
        while d >= 0:
            place[d] += 1
            if place[d] < index.shape[d]:
                break
            place[d] = 0
            d -= 1
    return offsets


@njit(cache=True, fastmath=False, error_model="numpy")
def taken_along(x, index, axis):
    """Result[..., j, ...] = X[..., Index[..., j, ...], ...] along ``axis`` (Index's
    shape)."""
    offsets = _along_offsets(x, index, axis)
    flat_x = np.ascontiguousarray(x).reshape(x.size)
    out = np.empty(offsets.size, x.dtype)
    for p in range(offsets.size):
        out[p] = flat_x[offsets[p]]
    return out.reshape(index.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def put_along(x, index, dres, axis):
    """The gradient: zeros of X's shape with each dResult element added where it was
    taken from (a position picked twice adds up, in Index's row-major order, which along
    the axis is the interpreter's order)."""
    offsets = _along_offsets(x, index, axis)
    d = np.ascontiguousarray(dres).reshape(offsets.size)
    dx = np.zeros(x.size, x.dtype)
    for p in range(offsets.size):
        dx[offsets[p]] += d[p]
    return dx.reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def _same_rows(x, index):
    if index.shape[0] != x.shape[0]:
        raise ValueError("index_sample: Index needs one row per row of X")


@njit(cache=True, fastmath=False, error_model="numpy")
def sampled(x, index):
    """index_sample: Out[i, j] = X[i, Index[i, j]]."""
    _same_rows(x, index)
    return taken_along(x, index, 1)


@njit(cache=True, fastmath=False, error_model="numpy")
def sampled_grad(x, index, dout):
    _same_rows(x, index)
    return put_along(x, index, dout, 1)


# --- adding and writing into X: index_add, scatter_nd_add, put_along_axis -------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def index_added(x, index, value, axis):
    """index_add: X + (zeros with AddValue's slices added at Index along ``axis``)."""
    return x + added_at(x, index, value, axis)


@njit(cache=True, fastmath=False, error_model="numpy")
def nd_added(x, index, updates):
    """scatter_nd_add: X + (zeros with Updates' slices added at Index's rows)."""
    return x + gathered_nd_grad(x, index, updates)


@njit(cache=True, fastmath=False, error_model="numpy")
def put_along_of(x, index, value, axis, assign, include_self):
    """put_along_axis with Value of Index's shape: each value written at its position
    (``assign``: the last of a repeated position wins) or added there (onto X, or with
    ``include_self`` False onto zeros written there first)."""
    if value.shape != index.shape:
        raise ValueError("put_along_axis: Value has another shape than Index")
    offsets = _along_offsets(x, index, axis)
    v = np.ascontiguousarray(value).reshape(offsets.size)
    out = np.ascontiguousarray(x).copy().reshape(x.size)
    if assign:
        for p in range(offsets.size):
            out[offsets[p]] = v[p]
        return out.reshape(x.shape)
    added = np.zeros(x.size, x.dtype)
    for p in range(offsets.size):
        added[offsets[p]] += v[p]
    if not include_self:
        for p in range(offsets.size):
            out[offsets[p]] = 0
    return (out + added).reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def along_zeroed(dout, index, axis):
    """put_along_axis's dInput where the values replaced Input's: dOut, 0 at each
    position written."""
    offsets = _along_offsets(dout, index, axis)
    out = np.ascontiguousarray(dout).copy().reshape(dout.size)
    for p in range(offsets.size):
        out[offsets[p]] = 0
    return out.reshape(dout.shape)


# --- one_hot, arg_max / arg_min, sequence_mask --------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def one_hot_of(x, depth, zero):
    """X's shape + [depth]: 1 at each class of X, 0 elsewhere (``zero``: a 0 of Out's
    dtype, which makes Out that dtype)."""
    at = _checked(x, depth)
    out = np.full((at.size, depth), zero)
    for i in range(at.size):
        out[i, at[i]] = 1
    return out.reshape(x.shape + (depth,))


@njit(cache=True, fastmath=False, error_model="numpy")
def _extreme(x3, o, i, largest):
    """The position of the first largest (smallest) of x3[o, :, i]; the first NaN where
    there is one (numpy's argmax / argmin)."""
    best = x3[o, 0, i]
    at = 0
    if best != best:
        return 0
    for j in range(1, x3.shape[1]):
        v = x3[o, j, i]
        if v != v:
            return j
        if (v > best) if largest else (v < best):
            best = v
            at = j
    return at


@njit(cache=True, fastmath=False, error_model="numpy")
def arg_extreme_of(x, axis, largest, flatten, keepdims, zero, out_rank):
    """arg_max / arg_min: the position of the extreme along ``axis`` (of all of X when
    ``flatten``), in ``zero``'s dtype, the axis dropped or kept as 1 (``out_rank``, a
    literal, is Out's rank)."""
    literally(out_rank)
    if flatten:
        outer, n, inner = 1, x.size, 1
    else:
        outer, n, inner = around(x.shape, axis)
    if n == 0:
        raise ValueError("arg_max / arg_min of an empty axis")
    x3 = np.ascontiguousarray(x).reshape((outer, n, inner))
    out = np.full(outer * inner, zero)
    for o in range(outer):
        for i in range(inner):
            out[o * inner + i] = _extreme(x3, o, i, largest)
    dims = np.ones(out_rank, np.int64)
    if not flatten:
        k = 0
        for d in range(x.ndim):
            if d != axis:
                dims[k] = x.shape[d]
                k += 1
            elif keepdims:
                k += 1
    return out.reshape(to_fixed_tuple(dims, out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def sequence_mask_of(x, maxlen, zero):
    """Y[..., j] = j < X[...] for j < maxlen (negative: the longest length in X), in
    ``zero``'s dtype."""
    flat = np.ascontiguousarray(x).reshape(x.size)
    if maxlen < 0:
        maxlen = 0
        if flat.size:
            maxlen = flat.max()
            if maxlen < 0:
                raise ValueError("sequence_mask: the longest length in X is negative")
    out = np.full((flat.size, maxlen), zero)
    for i in range(flat.size):
        for j in range(maxlen):
            if j < flat[i]:
                out[i, j] = 1
    return out.reshape(x.shape + (maxlen,))
