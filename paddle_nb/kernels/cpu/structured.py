"""Structured ops inside a compiled block (paddle_nb/compiler): maxout, multiplex, kron,
cross, repeat_interleave and fill_diagonal_tensor, and their gradients.

The interpreter runs these ops as a few of the places' numpy primitives (a max over an
axis, a take, a broadcast multiply, copies through index maps, ``np.add.at`` into zeros).
Each function below is the same arithmetic as one loop over the operands seen as small
matrices (an (outer, axis, inner) view, or flat positions): the same products, and sums
added in the order the primitive adds them (``np.add.at`` in index order, the places'
``sum_axes`` by reduce.py's serial row sum), so a compiled block gives the interpreter's
bits. The positions are worked out from the operands' shapes when the block runs (so one
compiled segment serves every batch size), and every position read from a tensor is
range-checked before it is used (the interpreter's rerun then names the op).
"""
import numpy as np
from numba import literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from .indexing import around
from .reduce import _row_sum_serial


# --- maxout: the max of each group of channels (np.max's: a NaN wins) ------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def _channel_view(x, axis, groups):
    """x [N, C, H, W] (axis 1) or [N, H, W, C] (axis 3) as [outer, C/groups, groups,
    inner]."""
    outer, c, inner = around(x.shape, axis)
    if c % groups:
        raise ValueError("maxout: groups must divide the channel count")
    return np.ascontiguousarray(x).reshape((outer, c // groups, groups, inner))


@njit(cache=True, fastmath=False, error_model="numpy")
def maxout(x, axis, groups):
    """maxout's Out: each output channel the max of its group of input channels."""
    xg = _channel_view(x, axis, groups)
    outer, channels, _, inner = xg.shape
    out = np.empty((outer, channels, inner), x.dtype)
    for o in range(outer):
        for c in range(channels):
            for i in range(inner):
                m = xg[o, c, 0, i]
                for j in range(1, groups):
                    v = xg[o, c, j, i]
                    if v > m or v != v:          # a NaN stays (np.max propagates it)
                        m = v
                out[o, c, i] = m
    shape = x.shape
    return out.reshape((shape[0], shape[1] // groups, shape[2], shape[3]) if axis == 1 else
                       (shape[0], shape[1], shape[2], shape[3] // groups))


@njit(cache=True, fastmath=False, error_model="numpy")
def maxout_grad(x, dout, axis, groups):
    """maxout's dX: each dOut at the first input of its group equal to the max (np.argmax's
    choice: the first NaN where there is one), zeros elsewhere."""
    xg = _channel_view(x, axis, groups)
    outer, channels, _, inner = xg.shape
    if dout.size != outer * channels * inner:
        raise ValueError("maxout_grad: Out@GRAD must have the shape of Out")
    d = np.ascontiguousarray(dout).reshape((outer, channels, inner))
    dx = np.zeros(xg.shape, dout.dtype)
    for o in range(outer):
        for c in range(channels):
            for i in range(inner):
                best, m = 0, xg[o, c, 0, i]
                if m == m:
                    for j in range(1, groups):
                        v = xg[o, c, j, i]
                        if v != v:
                            best = j
                            break
                        if v > m:
                            best, m = j, v
                dx[o, c, best, i] += d[o, c, i]
    return dx.reshape(x.shape)


# --- multiplex: row i of candidate Ids[i] ----------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def _checked_ids(ids, xs):
    """Ids [N, 1] as N candidate numbers, each checked against the number of candidates
    (and the candidates against one another's shape)."""
    n = xs[0].shape[0]
    for k in range(len(xs)):
        if xs[k].shape != xs[0].shape:
            raise ValueError("multiplex: the candidates must have one shape")
    if ids.shape != (n, 1):
        raise ValueError("multiplex: Ids must hold one candidate number per row")
    for i in range(n):
        if ids[i, 0] < 0 or ids[i, 0] >= len(xs):
            raise IndexError("multiplex: a candidate number in Ids is out of range")
    return np.ascontiguousarray(ids).reshape(n)


@njit(cache=True, fastmath=False, error_model="numpy")
def multiplexed(ids, xs):
    """multiplex's Out: Out[i] = X[Ids[i]][i]."""
    at = _checked_ids(ids, xs)
    out = np.empty_like(xs[0])
    for i in range(at.size):
        out[i] = xs[at[i]][i]
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def multiplexed_grads(ids, xs, dout):
    """multiplex's dX: one array per candidate, dOut's rows where Ids chose it (added into
    zeros, as the interpreter's scatter_add), zeros in the others."""
    at = _checked_ids(ids, xs)
    if dout.shape != xs[0].shape:
        raise ValueError("multiplex_grad: Out@GRAD must have the candidates' shape")
    grads = [np.zeros(xs[0].shape, dout.dtype) for _ in range(len(xs))]
    for i in range(at.size):
        grads[at[i]][i] += dout[i]
    return grads


# --- kron: Out[i * Ys + j] = X[i] * Y[j] on every axis ----------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def _padded(shape, rank):
    """A shape with leading 1s up to ``rank`` dims, as an int64 array."""
    dims = np.ones(rank, np.int64)
    for d in range(len(shape)):
        dims[rank - len(shape) + d] = shape[d]
    return dims


@njit(cache=True, fastmath=False, error_model="numpy")
def _kron_offsets(xs, ys):
    """(where each flat element of X starts in Out, where each of Y goes from there, Out's
    dims): out position (i_a * ys_a + j_a) per axis a is xoff[i] + yoff[j]."""
    rank = xs.size
    dims = xs * ys
    strides = np.ones(rank, np.int64)
    for a in range(rank - 2, -1, -1):
        strides[a] = strides[a + 1] * dims[a + 1]
    xoff, yoff = np.zeros(xs.prod(), np.int64), np.zeros(ys.prod(), np.int64)
    for offsets, sizes, scale in ((xoff, xs, ys), (yoff, ys, np.ones(rank, np.int64))):
        for flat in range(offsets.size):
            rest, at = flat, 0
            for a in range(rank - 1, -1, -1):
                at += (rest % sizes[a]) * scale[a] * strides[a]
                rest //= sizes[a]
            offsets[flat] = at
    return xoff, yoff, dims


@njit(cache=True, fastmath=False, error_model="numpy")
def kron(x, y, rank):
    """kron's Out (``rank``: its rank, a literal)."""
    literally(rank)
    xoff, yoff, dims = _kron_offsets(_padded(x.shape, rank), _padded(y.shape, rank))
    xf, yf = np.ascontiguousarray(x).reshape(x.size), np.ascontiguousarray(y).reshape(y.size)
    out = np.empty(dims.prod(), x.dtype)
    for i in range(xf.size):
        for j in range(yf.size):
            out[xoff[i] + yoff[j]] = xf[i] * yf[j]
    return out.reshape(to_fixed_tuple(dims, rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def kron_grads(x, y, dout, rank, want_dx, want_dy):
    """kron's (dX, dY) (an unset array where not wanted): dX[i] the
    sum over j of dOut[i, j] * Y[j], dY[j] over i of dOut[i, j] * X[i], each a row of
    products summed by reduce.py's serial row sum (the places' sum_axes)."""
    literally(rank)
    xoff, yoff, dims = _kron_offsets(_padded(x.shape, rank), _padded(y.shape, rank))
    if dout.size != dims.prod():
        raise ValueError("kron_grad: Out@GRAD must have the shape of Out")
    d = np.ascontiguousarray(dout).reshape(dout.size)
    xf, yf = np.ascontiguousarray(x).reshape(x.size), np.ascontiguousarray(y).reshape(y.size)
    dx, dy = np.empty(x.shape, x.dtype), np.empty(y.shape, x.dtype)   # (unset: not wanted)
    if want_dx:
        rows = np.empty((xf.size, yf.size), x.dtype)
        for i in range(xf.size):
            for j in range(yf.size):
                rows[i, j] = d[xoff[i] + yoff[j]] * yf[j]
        dx = _row_sum_serial(rows).reshape(x.shape)
    if want_dy:
        rows = np.empty((yf.size, xf.size), x.dtype)
        for j in range(yf.size):
            for i in range(xf.size):
                rows[j, i] = d[xoff[i] + yoff[j]] * xf[i]
        dy = _row_sum_serial(rows).reshape(y.shape)
    return dx, dy


# --- cross: the 3-vector product along an axis of size 3 -------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def cross_axis(shape, dim, default_dim):
    """The axis the product is taken along: ``dim`` (``default_dim``: the first axis of
    size 3), checked to be of size 3."""
    rank = len(shape)
    axis = -1
    if dim == default_dim:
        for a in range(rank):
            if shape[a] == 3:
                axis = a
                break
    elif -rank <= dim < rank:
        axis = dim % rank
    if axis < 0 or shape[axis] != 3:
        raise ValueError("cross: the product is taken along an axis of size 3")
    return axis


@njit(cache=True, fastmath=False, error_model="numpy")
def _crossed(a, b, axis):
    """a x b along ``axis`` (a and b of one shape): a_(i+1) b_(i+2) - a_(i+2) b_(i+1), the
    interpreter's two products and one difference per element."""
    outer, _, inner = around(a.shape, axis)
    a3 = np.ascontiguousarray(a).reshape((outer, 3, inner))
    b3 = np.ascontiguousarray(b).reshape((outer, 3, inner))
    out = np.empty((outer, 3, inner), a.dtype)
    for o in range(outer):
        for i in range(3):
            p, q = (i + 1) % 3, (i + 2) % 3
            for k in range(inner):
                out[o, i, k] = a3[o, p, k] * b3[o, q, k] - a3[o, q, k] * b3[o, p, k]
    return out.reshape(a.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def cross(x, y, dim, default_dim):
    """cross's Out = X x Y."""
    if x.shape != y.shape:
        raise ValueError("cross: X and Y must have the same shape")
    return _crossed(x, y, cross_axis(x.shape, dim, default_dim))


@njit(cache=True, fastmath=False, error_model="numpy")
def cross_grads(x, y, dout, dim, default_dim, want_dx, want_dy):
    """cross's (dX, dY) = (Y x dOut, dOut x X) (an unset array where not wanted)."""
    if x.shape != y.shape or dout.shape != x.shape:
        raise ValueError("cross_grad: X, Y and Out@GRAD must have the same shape")
    axis = cross_axis(x.shape, dim, default_dim)
    return (_crossed(y, dout, axis) if want_dx else np.empty(x.shape, x.dtype),
            _crossed(dout, x, axis) if want_dy else np.empty(x.shape, x.dtype))


# --- repeat_interleave: each slice along an axis repeated in place ---------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def repeated(x, repeats, axis, rank):
    """repeat_interleave's Out: slice i along ``axis`` at positions i*repeats ... i*repeats
    + repeats - 1 (``rank``: x's, a literal)."""
    literally(rank)
    outer, n, inner = around(x.shape, axis)
    x3 = np.ascontiguousarray(x).reshape((outer, n, inner))
    out = np.empty((outer, n * repeats, inner), x.dtype)
    for o in range(outer):
        for i in range(n):
            for t in range(repeats):
                out[o, i * repeats + t] = x3[o, i]
    shape = np.empty(rank, np.int64)
    for d in range(rank):
        shape[d] = n * repeats if d == axis else x.shape[d]
    return out.reshape(to_fixed_tuple(shape, rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def repeated_grad(x, dout, repeats, axis):
    """repeat_interleave's dX: each slice's copies in dOut added into zeros in order (the
    interpreter's np.add.at)."""
    outer, n, inner = around(x.shape, axis)
    if dout.size != outer * n * repeats * inner:
        raise ValueError("repeat_interleave_grad: Out@GRAD must have the shape of Out")
    d3 = np.ascontiguousarray(dout).reshape((outer, n * repeats, inner))
    dx = np.zeros((outer, n, inner), dout.dtype)
    for o in range(outer):
        for i in range(n):
            for t in range(repeats):
                for k in range(inner):
                    dx[o, i, k] += d3[o, i * repeats + t, k]
    return dx.reshape(x.shape)


# --- fill_diagonal_tensor: one diagonal of each (dim1, dim2) matrix --------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def diagonal_positions(shape, offset, dim1, dim2):
    """The flat positions of np.diagonal(X, offset, dim1, dim2) (dims made positive), in
    its order: the other axes row-major, then along the diagonal."""
    rank = len(shape)
    strides = np.ones(rank, np.int64)
    for a in range(rank - 2, -1, -1):
        strides[a] = strides[a + 1] * shape[a + 1]
    n1, n2 = shape[dim1], shape[dim2]
    length = max(min(n1, n1 + offset, n2, n2 - offset), 0)
    row0, col0 = (0, offset) if offset >= 0 else (-offset, 0)
    others = 1
    for a in range(rank):
        if a != dim1 and a != dim2:
            others *= shape[a]
    positions = np.empty(others * length, np.int64)
    for flat in range(others):
        rest, base = flat, 0
        for a in range(rank - 1, -1, -1):
            if a != dim1 and a != dim2:
                base += (rest % shape[a]) * strides[a]
                rest //= shape[a]
        for k in range(length):
            positions[flat * length + k] = base + (row0 + k) * strides[dim1] + \
                (col0 + k) * strides[dim2]
    return positions


@njit(cache=True, fastmath=False, error_model="numpy")
def diagonal_filled(x, y, offset, dim1, dim2):
    """fill_diagonal_tensor's Out: X with Y's elements, in order, on the diagonal."""
    at = diagonal_positions(x.shape, offset, dim1, dim2)
    if y.size != at.size:
        raise ValueError("fill_diagonal_tensor: Y must hold one value per diagonal place")
    out = np.ascontiguousarray(x).copy().reshape(x.size)
    yf = np.ascontiguousarray(y).reshape(y.size)
    for k in range(at.size):
        out[at[k]] = yf[k]
    return out.reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def diagonal_zeroed(dout, offset, dim1, dim2):
    """fill_diagonal_tensor's dX: dOut with 0 on the diagonal (it was overwritten)."""
    at = diagonal_positions(dout.shape, offset, dim1, dim2)
    out = np.ascontiguousarray(dout).copy().reshape(dout.size)
    for k in range(at.size):
        out[at[k]] = 0
    return out.reshape(dout.shape)
