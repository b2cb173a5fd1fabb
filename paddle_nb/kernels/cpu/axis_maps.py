"""Copies through one index map per axis: pad, pad3d, flip, roll, tile and their gradients
(the device's twin is kernels/cuda/axis_maps.py).

Output position o along an axis of n reads the input at ``map[o]``, or nowhere (-1: a pad
value goes there). A map is made from the axis' size and a rule, ``(kind, a, b)``:

- KEEP: every position in order;        FLIP: every position backwards;
- CONSTANT, REFLECT, REPLICATE, CIRCULAR: ``a`` positions before and ``b`` after the axis,
  read as the pad mode says (nowhere; mirrored inside the axis; the edge's; wrapped);
- CROP: the axis without ``a`` positions before and ``b`` after (a pad's gradient);
- ROLL: shifted ``a`` places, those pushed off one end coming back at the other;
- TILE: the axis ``a`` times over;
- BLOCK: ``b`` positions from ``a`` (-1: the rest of the axis; crop_tensor's).

``axis_map`` is the one home of these rules: the ops' interpreter kernels make their maps
with it for either place (ops/pad.py, roll.py, crop_tensor.py, slice.py's flip), and the
compiled forms (kernels/lowered.py) make them from the operands' sizes when the block
runs, so one compiled function serves every batch size.
"""
import numpy as np
from numba import literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

KEEP, CONSTANT, REFLECT, REPLICATE, CIRCULAR, CROP, FLIP, ROLL, TILE, BLOCK = range(10)
PAD_KINDS = {"constant": CONSTANT, "reflect": REFLECT, "replicate": REPLICATE,
             "circular": CIRCULAR}


@njit(cache=True, fastmath=False, error_model="numpy")
def axis_map(n, kind, a, b):
    """Where each output position along an axis of ``n`` reads it (module docstring); an
    int64 array. A rule that cannot read this axis raises (its op checked it first)."""
    if kind == KEEP:
        return np.arange(n)
    if kind == FLIP:
        return np.arange(n - 1, -1, -1)
    if kind == TILE:
        return np.arange(n * a) % max(n, 1)
    if kind == ROLL:
        shift = a % n if n > 0 else 0
        return (np.arange(n) - shift) % max(n, 1)
    if kind == BLOCK:
        size = n - a if b == -1 else b
        if a < 0 or size < 0 or a + size > n:
            raise ValueError("the block leaves the tensor")
        return np.arange(a, a + size)
    if kind == CROP:
        if a + b > n:
            raise ValueError("the tensor is smaller than the borders it should lose")
        return np.arange(a, n - b)
    j = np.arange(-a, n + b)
    if n == 0:                     # nothing to read: only a constant pad has positions
        if kind != CONSTANT and a + b > 0:
            raise ValueError("a pad that copies from the axis, and the axis is empty")
        return np.full(a + b, -1, np.int64)
    if kind == REFLECT:            # ... 2 1 | 0 1 2 | 1 0 ... (a, b < n)
        if a >= n or b >= n:
            raise ValueError("reflect mode mirrors inside the axis: a padding is too wide")
        j = np.abs(j)
        return np.where(j >= n, 2 * (n - 1) - j, j)
    if kind == REPLICATE:
        return np.minimum(np.maximum(j, 0), n - 1)
    if kind == CIRCULAR:
        return j % n
    return np.where((j < 0) | (j >= n), -1, j)


@njit(cache=True, fastmath=False, error_model="numpy")
def _offsets(shape, rules):
    """For each output position (C order), the flat offset it reads in a C-contiguous
    array of ``shape`` (-1: nowhere), the maps of ``rules`` (one per axis) combined axis
    by axis; and the output's dims."""
    rank = len(rules)
    dims = np.empty(rank, np.int64)
    offsets = np.zeros(1, np.int64)
    stride = 1
    strides = np.empty(rank, np.int64)
    for d in range(rank - 1, -1, -1):
        strides[d] = stride
        stride *= shape[d]
    for d in range(rank):
        kind, a, b = rules[d]
        m = axis_map(shape[d], kind, a, b)
        dims[d] = m.size
        grown = np.empty(offsets.size * m.size, np.int64)
        for i in range(offsets.size):
            for k in range(m.size):
                outside = offsets[i] < 0 or m[k] < 0
                grown[i * m.size + k] = -1 if outside else offsets[i] + m[k] * strides[d]
        offsets = grown
    return offsets, dims


@njit(cache=True, fastmath=False, error_model="numpy")
def mapped(x, rules, value, rank):
    """A new array: x read through the maps of ``rules`` (a tuple of (kind, a, b), one
    per axis), ``value`` (stored in x's dtype) where a map says nowhere. ``rank``, a
    literal, is x's."""
    literally(rank)
    offsets, dims = _offsets(x.shape, rules)
    src = np.ascontiguousarray(x).reshape(x.size)
    out = np.empty(offsets.size, x.dtype)
    for i in range(offsets.size):
        out[i] = value if offsets[i] < 0 else src[offsets[i]]
    return out.reshape(to_fixed_tuple(dims, rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def mapped_back(x, dout, rules):
    """The gradient of ``mapped``: zeros of x's shape (dOut's dtype), each dOut element
    (in C order, as numpy's add.at takes them) added where its maps read."""
    offsets, _ = _offsets(x.shape, rules)
    d = np.ascontiguousarray(dout).reshape(dout.size)
    if d.size != offsets.size:
        raise ValueError("Out@GRAD has another size than the op's Out")
    dx = np.zeros(x.shape, dout.dtype)
    flat = dx.reshape(dx.size)
    for i in range(offsets.size):
        if offsets[i] >= 0:
            flat[offsets[i]] += d[i]
    return dx


@njit(cache=True, fastmath=False, error_model="numpy")
def tiled(x, rules, rank):
    """tile's Out: x, its dims padded with leading 1s to ``rank`` (a literal), read
    through ``rules`` (TILE, repeats, 0 per axis)."""
    literally(rank)
    dims = np.ones(rank, np.int64)
    lead = rank - x.ndim
    for k in range(x.ndim):
        dims[lead + k] = x.shape[k]
    return mapped(np.ascontiguousarray(x).reshape(to_fixed_tuple(dims, rank)), rules, 0, rank)


@njit(cache=True, fastmath=False, error_model="numpy")
def rolled_flat(x, shift, rank):
    """roll's Out with no axis: x seen flat, rolled ``shift`` places, given its shape
    back (``rank``, a literal, is x's)."""
    literally(rank)
    flat = np.ascontiguousarray(x).reshape(x.size)
    return mapped(flat, ((ROLL, shift, 0),), 0, 1).reshape(x.shape)
