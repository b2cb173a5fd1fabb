"""The layout ops inside a compiled block (paddle_nb/compiler): reshapes, transposes,
joins, broadcasts, shuffles. They move elements and compute nothing, so each gives a new
C-contiguous array holding what the interpreter's numpy copy holds (ops/arrays.py); the
gradients of the broadcasts sum the copies back with the interpreter's row sums
(kernels/cpu/reduce.py).

A reshape's Out dims are given as *groups* of X's dims, ``(lo, hi, size)`` each: the
product of X's dims ``[lo, hi)`` (none: a 1), or ``size`` where that is >= 0. The dims
that follow X's (a batch dim kept, dims merged by flatten) are then read from X when the
block runs, and one compiled function serves every batch size.
"""
import numpy as np
from numba import literal_unroll, literally, njit, types
from numba.extending import overload
from numba.np.unsafe.ndarray import to_fixed_tuple

from .indexing import one_index
from .reduce import summed_over


@njit(cache=True, fastmath=False, error_model="numpy")
def regrouped(x, groups, rank):
    """A copy of x with the dims ``groups`` gives (module docstring); ``rank``, a
    literal, is their count."""
    literally(rank)
    return np.copy(x).reshape(to_fixed_tuple(_group_dims(x.shape, groups, rank), rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def _group_dims(shape, groups, rank):
    """The ``rank`` dims ``groups`` gives (module docstring) for an array of ``shape``."""
    dims = np.empty(rank, np.int64)
    for k in range(rank):
        lo, hi, size = groups[k]
        if size >= 0:
            dims[k] = size
        else:
            n = 1
            for d in range(lo, hi):
                n *= shape[d]
            dims[k] = n
    return dims


@njit(cache=True, fastmath=False, error_model="numpy")
def shuffled(x, view, view_rank, perm, out, out_rank):
    """pixel_shuffle's, pixel_unshuffle's and channel_shuffle's Out: x seen with the dims
    of the groups ``view`` (``view_rank``, a literal), permuted by ``perm`` (one copy),
    seen with the dims of the groups ``out`` of the permuted dims (``out_rank``)."""
    literally(view_rank)
    literally(out_rank)
    dims = _group_dims(x.shape, view, view_rank)
    seen = np.ascontiguousarray(x).reshape(to_fixed_tuple(dims, view_rank))
    moved = np.transpose(seen, perm).copy()
    return moved.reshape(to_fixed_tuple(_group_dims(moved.shape, out, out_rank), out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def xshape_of(x):
    """XShape: no elements, dims ``[0] + X.dims`` (what the gradient reads X's dims from)."""
    return np.empty((0,) + x.shape, x.dtype)


@njit(cache=True, fastmath=False, error_model="numpy")
def reshaped_to_xshape(dout, xshape):
    """A reshape's dX: a copy of dOut with X's dims, read from XShape."""
    return np.copy(dout).reshape(xshape.shape[1:])


@njit(cache=True, fastmath=False, error_model="numpy")
def transposed(x, perm):
    """A C-contiguous copy of x with its dims permuted by ``perm`` (a tuple)."""
    return np.ascontiguousarray(np.transpose(x, perm))


@njit(cache=True, fastmath=False, error_model="numpy")
def joined(xs, axis):
    """concat's Out: the tuple ``xs`` joined along ``axis`` (>= 0)."""
    return np.concatenate(xs, axis)


@njit(cache=True, fastmath=False, error_model="numpy")
def stacked(xs, axis):
    """stack's Out: the tuple ``xs`` (of one shape) stacked along a new dim ``axis``."""
    return np.stack(xs, axis)


@njit(cache=True, fastmath=False, error_model="numpy")
def _pieces(x, axis, sizes, rank):
    """x cut along ``axis`` into pieces of ``sizes`` (an int64 array adding up to x's dim;
    checked), each a C-contiguous copy of ``rank`` dims: x's, or one fewer (``axis``
    dropped: every size is 1). A list, one array per piece."""
    literally(rank)
    n = x.shape[axis]
    if np.any(sizes < 0) or sizes.sum() != n:
        raise ValueError("the pieces do not add up to the dim they cut")
    pre = 1
    for d in range(axis):
        pre *= x.shape[d]
    post = 1
    for d in range(axis + 1, x.ndim):
        post *= x.shape[d]
    whole = np.ascontiguousarray(x).reshape((pre, n, post))
    dims = np.empty(rank, np.int64)
    parts = []
    lo = 0
    for k in range(sizes.size):
        hi = lo + sizes[k]
        j = 0
        for d in range(x.ndim):
            if d != axis or rank == x.ndim:
                dims[j] = sizes[k] if d == axis else x.shape[d]
                j += 1
        parts.append(whole[:, lo:hi, :].copy().reshape(to_fixed_tuple(dims, rank)))
        lo = hi
    return parts


@njit(cache=True, fastmath=False, error_model="numpy")
def split_parts(x, axis, sections, equal, rank):
    """split's and unstack's Out (stack_grad's X@GRAD): ``equal`` > 0 equal pieces (x's dim
    must divide), else pieces of ``sections`` (a tuple; one -1 takes the rest). ``rank``:
    _pieces'."""
    n = x.shape[axis]
    if equal > 0:
        if n % equal != 0:
            raise ValueError("the dim does not split into that many equal pieces")
        return _pieces(x, axis, np.full(equal, n // equal, np.int64), rank)
    sizes = np.empty(len(sections), np.int64)
    rest, known = -1, 0
    for k in range(len(sections)):
        sizes[k] = sections[k]
        if sections[k] == -1:
            rest = k
        else:
            known += sections[k]
    if rest >= 0:
        sizes[rest] = n - known
    return _pieces(x, axis, sizes, rank)


@njit(cache=True, fastmath=False, error_model="numpy")
def split_like(dout, xs, axis):
    """concat_grad's X@GRAD: dOut cut along ``axis`` into pieces the sizes of ``xs`` (the
    tuple concat joined)."""
    sizes = np.empty(len(xs), np.int64)
    for k in range(len(xs)):
        sizes[k] = xs[k].shape[axis]
    return _pieces(dout, axis, sizes, dout.ndim)


@njit(cache=True, fastmath=False, error_model="numpy")
def _part_offsets(shape, parts):
    """Where each element of a part of a C-contiguous array of ``shape`` lies in it
    (flat offsets, in the part's C order): ``parts`` gives per axis (start, count, step),
    a count < 0 for the whole axis (a tuple of literals, or an int64 [rank, 3] worked out
    when the block runs: sliced_by). Also the part's dims."""
    rank = len(shape)
    starts = np.empty(rank, np.int64)
    counts = np.empty(rank, np.int64)
    steps = np.empty(rank, np.int64)
    strides = np.empty(rank, np.int64)
    stride = 1
    for d in range(rank - 1, -1, -1):
        start, count, step = parts[d][0], parts[d][1], parts[d][2]
        if count < 0:
            start, count, step = 0, shape[d], 1
        starts[d], counts[d], steps[d], strides[d] = start, count, step, stride
        stride *= shape[d]
    total = 1
    for d in range(rank):
        total *= counts[d]
    offsets = np.empty(total, np.int64)
    for i in range(total):
        rem, at = i, 0
        for d in range(rank - 1, -1, -1):
            k = rem % counts[d]
            rem //= counts[d]
            at += (starts[d] + k * steps[d]) * strides[d]
        offsets[i] = at
    return offsets, counts


@njit(cache=True, fastmath=False, error_model="numpy")
def sliced(x, parts, kept, out_rank):
    """slice's Out: the part ``parts`` gives (_part_offsets) of x, copied, without the
    axes ``kept`` marks False (decrease_axis); ``out_rank``, a literal, is its rank."""
    literally(out_rank)
    offsets, counts = _part_offsets(x.shape, parts)
    src = np.ascontiguousarray(x).reshape(-1)
    out = np.empty(offsets.size, x.dtype)
    for i in range(offsets.size):
        out[i] = src[offsets[i]]
    dims = np.empty(out_rank, np.int64)
    k = 0
    for d in range(len(kept)):
        if kept[d]:
            dims[k] = counts[d]
            k += 1
    return out.reshape(to_fixed_tuple(dims, out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def sliced_grad(x, dout, parts):
    """slice's dInput: zeros of x's shape (dOut's dtype), dOut added where the part lies."""
    offsets, _ = _part_offsets(x.shape, parts)
    dx = np.zeros(x.shape, dout.dtype)
    flat = dx.reshape(-1)
    d = np.ascontiguousarray(dout).reshape(-1)
    if d.size != offsets.size:
        raise ValueError("slice_grad: Out@GRAD has another size than the part")
    for i in range(offsets.size):
        flat[offsets[i]] += d[i]
    return dx


# --- slice bounds given by tensors (Paddle saves x[:, t] so): read when the block runs ------
def bound_values(values):
    """The ints of a slice's StartsTensorList (one 1-element tensor per axis), of its
    StartsTensor (one int per axis), or of its starts attribute (a tuple), as int64."""
    return np.array([int(np.asarray(v).ravel()[0]) for v in values], np.int64) \
        if isinstance(values, tuple) else np.asarray(values, np.int64).ravel()


@overload(bound_values)
def _bound_values(values):
    if isinstance(values, types.BaseTuple) and len(values) and \
            isinstance(values[0], types.Array):
        def read(values):
            out = np.empty(len(values), np.int64)
            for k in range(len(values)):
                if values[k].size != 1:
                    raise ValueError("slice: a bound tensor of a list holds one value")
                out[k] = values[k].ravel()[0]
            return out
    elif isinstance(values, types.Array):
        def read(values):
            return np.ascontiguousarray(values).ravel().astype(np.int64)
    else:
        def read(values):
            out = np.empty(len(values), np.int64)
            for k in range(len(values)):
                out[k] = values[k]
            return out
    return read


@njit(cache=True, fastmath=False, error_model="numpy")
def _tensor_parts(shape, first, second, axes, which):
    """The part (as _part_offsets takes it) of an array of ``shape`` that slice's bounds
    give: ``first`` and ``second`` are the starts and ends (``which`` 0), the starts and
    the ends attribute (1), or the ends and the starts attribute (2); Paddle's rule
    (ops/slice.slice_range): a negative bound counts from the end, both are clamped into
    the axis, and an end before the start is an error."""
    a, b = bound_values(first), bound_values(second)
    starts, ends = (b, a) if which == 2 else (a, b)
    if starts.size != len(axes) or ends.size != len(axes):
        raise ValueError("slice: the bound tensors must hold one int per axis")
    parts = np.empty((len(shape), 3), np.int64)
    for d in range(len(shape)):
        parts[d, 0], parts[d, 1], parts[d, 2] = 0, -1, 1
    for k in range(len(axes)):
        n = shape[axes[k]]
        s = min(max(starts[k] + n if starts[k] < 0 else starts[k], 0), n)
        e = min(max(ends[k] + n if ends[k] < 0 else ends[k], 0), n)
        if e < s:
            raise ValueError("slice: the end comes before the start")
        parts[axes[k], 0], parts[axes[k], 1] = s, e - s
    return parts


@njit(cache=True, fastmath=False, error_model="numpy")
def sliced_by(x, first, second, axes, which, kept, out_rank):
    """slice's Out where tensors give bounds (_tensor_parts), read when the block runs."""
    literally(out_rank)
    return sliced(x, _tensor_parts(x.shape, first, second, axes, which), kept, out_rank)


@njit(cache=True, fastmath=False, error_model="numpy")
def sliced_grad_by(x, dout, first, second, axes, which):
    """slice's dInput where tensors give bounds (_tensor_parts)."""
    return sliced_grad(x, dout, _tensor_parts(x.shape, first, second, axes, which))


# --- select_input / select_output: cond's merge of its branches ----------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def picked(xs, mask):
    """select_input's Out: the candidate of ``xs`` Mask names (the interpreter's value
    itself, as its kernel gives it)."""
    m = one_index(mask, len(xs))
    out = np.ascontiguousarray(xs[0])
    k = 0
    for x in literal_unroll(xs):        # (candidates may differ in layout: a placeholder)
        if k == m:
            out = np.ascontiguousarray(x)
        k += 1
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def routed(x, mask, count):
    """select_output's Out: ``x`` at the branch Mask names, zeros like it at the others."""
    m = one_index(mask, count)
    out = []
    for k in range(count):
        out.append(x.copy() if k == m else np.zeros_like(x))
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def rows_where(x, mask, want):
    """split_lod_tensor's OutTrue (``want`` True) or OutFalse: X's rows where Mask (bool
    or integers, one per row) is ``want``, in order, copied."""
    m = np.ascontiguousarray(mask).reshape(mask.size) != 0
    if m.size != x.shape[0]:
        raise ValueError("Mask does not hold one value per row of X")
    picked = np.flatnonzero(m == want)
    return np.ascontiguousarray(x)[picked]


@njit(cache=True, fastmath=False, error_model="numpy")
def rows_merged(mask, in_true, in_false):
    """merge_lod_tensor's Out: row r is the next row of ``in_true`` where Mask (one value
    per row) holds, else the next row of ``in_false`` (rows_where undone). Each branch
    must give exactly the rows Mask sends to it."""
    m = np.ascontiguousarray(mask).reshape(mask.size) != 0
    picked = np.flatnonzero(m)
    others = np.flatnonzero(~m)
    if in_true.shape[0] != picked.size or in_false.shape[0] != others.size:
        raise ValueError("merge_lod_tensor: a branch gave another number of rows than "
                         "Mask sends to it")
    if in_true.shape[1:] != in_false.shape[1:]:
        raise ValueError("merge_lod_tensor: the branches' rows have different shapes")
    out = np.empty((m.size,) + in_true.shape[1:], in_true.dtype)
    for k in range(picked.size):
        out[picked[k]] = in_true[k]
    for k in range(others.size):
        out[others[k]] = in_false[k]
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def put_step(stack, t, value):
    """``stack[t] = value``: a compiled recurrent loop's stacks over time
    (compiler/recurrent_loop.py). A function of its own, compiled once and kept on disk,
    because numba compiles an array assignment's shape check anew in every function that
    has one, which took seconds of a segment's first compile."""
    stack[t] = value


@njit(cache=True, fastmath=False, error_model="numpy")
def grown(stack):
    """``stack`` with room for twice its steps, the ones it holds copied: a compiled
    ``while`` loop's stacks, whose length is known only when the loop ends."""
    out = np.empty((2 * stack.shape[0],) + stack.shape[1:], stack.dtype)
    out[:stack.shape[0]] = stack
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def broadcast_copy(x, shape, rank):
    """expand_v2's Out: x broadcast to ``shape`` (a tuple of ``rank``, a literal, dims
    aligned with x's at the end; -1 keeps x's dim, read when the block runs), copied."""
    literally(rank)
    dims = np.empty(rank, np.int64)
    lead = rank - x.ndim
    for k in range(rank):
        if shape[k] != -1:
            dims[k] = shape[k]
        elif k >= lead:
            dims[k] = x.shape[k - lead]
        else:
            raise ValueError("expand_v2: a -1 in shape where X has no dim")
    return np.broadcast_to(x, to_fixed_tuple(dims, rank)).copy()


@njit(cache=True, fastmath=False, error_model="numpy")
def broadcast_like(x, y):
    """expand_as_v2's Out: x broadcast to y's shape, copied."""
    return np.broadcast_to(x, y.shape).copy()


@njit(cache=True, fastmath=False, error_model="numpy")
def summed_back(x, dout, order, kept, rank):
    """expand_v2's and expand_as_v2's dX: dOut (of ``rank``, a literal) summed over the
    dims x was broadcast along, as the interpreter's ``sum_axes`` sums them (``order``: the
    other dims, the first ``kept``, then those), given x's shape."""
    literally(rank)
    if dout.ndim < x.ndim:
        raise ValueError("Out@GRAD has fewer dims than X")
    if kept == rank:                     # nothing was broadcast: dX is a copy of dOut
        return np.copy(dout).reshape(x.shape)
    return summed_over(dout, order, kept, True, rank, False).reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def tiled_grad(x, dout, reps, order, rank, pairs):
    """tile's dX: dOut seen as [r0, d0, r1, d1, ...] (x's dims padded with 1s to
    ``rank``, a literal, and the repeats ``reps`` the same; ``pairs`` = 2 * rank) summed
    over the r axes, as the interpreter's ``sum_axes`` sums them (``order``: 1, 3, ...,
    0, 2, ...)."""
    literally(rank)
    literally(pairs)
    grown = np.empty(pairs, np.int64)
    lead = rank - x.ndim
    for k in range(rank):
        grown[2 * k] = reps[k]
        grown[2 * k + 1] = x.shape[k - lead] if k >= lead else 1
    if grown.prod() != dout.size:
        raise ValueError("tile_grad: Out@GRAD is not X tiled")
    view = np.ascontiguousarray(dout).reshape(to_fixed_tuple(grown, pairs))
    return summed_over(view, order, rank, False, rank, False).reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def filled_batch_like(ref, shape, in_dim, out_dim, value, rank):
    """fill_constant_batch_size_like's Out: ``shape`` (a tuple of ``rank``, a literal)
    with dim ``out_dim`` taken from ref's dim ``in_dim`` when the block runs, filled with
    ``value`` (a numpy scalar: its dtype)."""
    literally(rank)
    dims = np.empty(rank, np.int64)
    for k in range(rank):
        dims[k] = shape[k]
    dims[out_dim] = ref.shape[in_dim]
    return np.full(to_fixed_tuple(dims, rank), value)


@njit(cache=True, fastmath=False, error_model="numpy")
def dims_of(x):
    """The shape op's Out: x's dims as int32."""
    out = np.empty(x.ndim, np.int32)
    for k in range(x.ndim):
        out[k] = x.shape[k]
    return out


def dim_groups(x_shape, out_shape) -> tuple:
    """Out's dims as groups of X's (module docstring), found by walking both shapes: an
    Out dim that is the product of the next X dims reads them; an inserted 1 reads none;
    anything else (a dim split in two) is its size."""
    groups, i = [], 0
    for size in out_shape:
        j, n = i, 1
        if size != 1 or (i < len(x_shape) and x_shape[i] == 1):
            while j < len(x_shape) and n < size:
                n *= x_shape[j]
                j += 1
            while j < len(x_shape) and x_shape[j] == 1 and size != 1:
                j += 1                      # a squeezed 1 goes with the dim before it
        if n == size and (j > i or size == 1) and 0 not in x_shape[i:j]:
            groups.append((i, j, -1))
            i = j
        else:
            groups.append((0, 0, int(size)))
    return tuple(groups)


def block_groups(src_shape, dst_shape) -> tuple:
    """dst's dims as groups of src's (module docstring) where dst splits or merges src's
    dims in blocks (pixel_shuffle's views): a dst dim that is a block of src dims reads
    them; the dims a src dim is split into are their sizes (a channel count, a factor).
    All sizes where a dim is 0 or the shapes are not such blocks."""
    fixed = tuple((0, 0, int(d)) for d in dst_shape)
    if 0 in src_shape or 0 in dst_shape:
        return fixed
    groups, i, k = [], 0, 0
    while k < len(dst_shape):
        if i >= len(src_shape):
            return fixed
        j, m, a, b = i + 1, k + 1, src_shape[i], dst_shape[k]
        while a != b:
            if a < b and j < len(src_shape):
                a, j = a * src_shape[j], j + 1
            elif b < a and m < len(dst_shape):
                b, m = b * dst_shape[m], m + 1
            else:
                return fixed
        groups += [(i, j, -1)] if m - k == 1 else [(0, 0, int(d)) for d in dst_shape[k:m]]
        i, k = j, m
    return tuple(groups) if i == len(src_shape) else fixed
