"""set_value and its Input gradient inside a compiled block (paddle_nb/compiler): the part
``x[starts:ends:steps]`` worked out from the run's shape by ops/set_value.py's rules
(``set_value_range``, strided_range's bounds), and the value broadcast to it in row-major
order, as the interpreter's numpy writes and copies do (exact copies: the same bits).
ValueTensor's gradient sums dOut's part over the axes the value was broadcast along with
numpy's sum, called in object mode (in_python.py), as the interpreter sums it.

The attribute lists come as tuples led by a -1 (numba has no item type for an empty
tuple), which the loops skip.
"""
import numpy as np
from numba import njit

from .in_python import in_python, like


@njit(cache=True, fastmath=False, error_model="numpy")
def _range_of(start, end, step, n):
    """(first, count) of ops/set_value.set_value_range(start, end, step, n): Python's
    range after Paddle's clamps; raises where strided_range fails."""
    if n == 0:
        return 0, 0
    if step > 0:
        start = min(start, n) if start >= 0 else start
        end = min(end, n) if end >= 0 else end
    elif end < -1 and end + n < 0:
        end = -1
    s = max(start + n, 0) if start < 0 else start
    e = max(end + n, 0) if end < 0 and not (end == -1 and step < 0) else end
    if (step > 0 and s > e) or (step < 0 and s < e):
        raise ValueError("set_value: start and end are the wrong way round for the step")
    if step > 0:
        first, stop = min(s, n), min(e, n)
        return first, max(0, (stop - first + step - 1) // step)
    first = min(s, n - 1)
    return first, max(0, (first - e - step - 1) // -step)


@njit(cache=True, fastmath=False, error_model="numpy")
def _part(shape, axes, starts, ends, steps):
    """Per axis of ``shape``: the part's first index, count and step (the whole axis where
    it is not listed)."""
    rank = len(shape)
    first, count, step = np.zeros(rank, np.int64), np.empty(rank, np.int64), \
        np.ones(rank, np.int64)
    for a in range(rank):
        count[a] = shape[a]
    for k in range(1, len(axes)):
        a = axes[k]
        if a < 0 or a >= rank or steps[k] == 0:
            raise ValueError("set_value: an axis out of range or a step of 0")
        first[a], count[a] = _range_of(starts[k], ends[k], steps[k], shape[a])
        step[a] = steps[k]
    return first, count, step


@njit(cache=True, fastmath=False, error_model="numpy")
def _positions(shape, axes, starts, ends, steps):
    """The part's flat positions in a tensor of ``shape``, row-major, and its counts."""
    first, count, step = _part(shape, axes, starts, ends, steps)
    rank = len(shape)
    strides = np.ones(rank, np.int64)
    for a in range(rank - 2, -1, -1):
        strides[a] = strides[a + 1] * shape[a + 1]
    positions = np.empty(count.prod(), np.int64)
    for k in range(positions.size):
        rest, at = k, 0
        for a in range(rank - 1, -1, -1):
            at += (first[a] + (rest % count[a]) * step[a]) * strides[a]
            rest //= count[a]
        positions[k] = at
    return positions, count


@njit(cache=True, fastmath=False, error_model="numpy")
def _target(count, decrease, none_axes):
    """The value's view of the part (ops/set_value._with_none_axes): the counts without
    the decreased axes (each must be 1), a 1 inserted before each of none_axes' axes."""
    rank = count.size
    dropped = np.zeros(rank, np.bool_)
    for k in range(1, len(decrease)):
        a = decrease[k]
        if a < 0 or a >= rank or count[a] != 1:
            raise ValueError("set_value: a decreased axis must be one index of the part")
        dropped[a] = True
    nones = np.zeros(rank + 1, np.int64)          # how many 1s go before each axis
    for k in range(1, len(none_axes)):
        nones[min(max(none_axes[k], 0), rank)] += 1
    dims = []
    pending = 0
    for a in range(rank):
        pending += nones[a]
        if not dropped[a]:
            for _ in range(pending):
                dims.append(1)
            pending = 0
            dims.append(count[a])
    for _ in range(pending + nones[rank]):
        dims.append(1)
    return np.array(dims, np.int64) if dims else np.zeros(0, np.int64)


@njit(cache=True, fastmath=False, error_model="numpy")
def value_strides(value_shape, target):
    """Per dim of ``target``: the step in a flat value of ``value_shape`` broadcast to it
    (numpy's rule: trailing dims aligned, 1s repeated, a longer value's leading dims 1s;
    0 where repeated); raises where it does not broadcast."""
    nt, nv = target.size, value_shape.size
    for d in range(nv - nt):
        if value_shape[d] != 1:
            raise ValueError("the value does not broadcast to the positions written")
    vstride = np.zeros(nt, np.int64)
    step = 1
    for d in range(1, min(nt, nv) + 1):
        v, t = value_shape[nv - d], target[nt - d]
        if v != 1 and v != t:
            raise ValueError("the value does not broadcast to the positions written")
        vstride[nt - d] = step if v != 1 else 0
        step *= v
    return vstride


@njit(cache=True, fastmath=False, error_model="numpy")
def spread(value, value_shape, target):
    """``value`` (flat, of ``value_shape``) broadcast to ``target``, flat, row-major."""
    nt = target.size
    vstride = value_strides(value_shape, target)
    out = np.empty(target.prod(), value.dtype)
    for k in range(out.size):
        rest, at = k, 0
        for d in range(nt - 1, -1, -1):
            at += (rest % target[d]) * vstride[d]
            rest //= target[d]
        out[k] = value[at]
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def _written(x, value, value_shape, axes, starts, ends, steps, decrease, none_axes):
    positions, count = _positions(x.shape, axes, starts, ends, steps)
    values = spread(value, value_shape, _target(count, decrease, none_axes))
    out = np.ascontiguousarray(x).copy().reshape(x.size)
    for k in range(positions.size):
        out[positions[k]] = values[k]
    return out.reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def shape_of(a):
    """a's shape as an int64 array."""
    shape = np.empty(a.ndim, np.int64)
    for d in range(a.ndim):
        shape[d] = a.shape[d]
    return shape


@njit(cache=True, fastmath=False, error_model="numpy")
def value_set(x, value, axes, starts, ends, steps, decrease, none_axes):
    """set_value's Out with ValueTensor (of x's dtype)."""
    return _written(x, np.ascontiguousarray(value).reshape(value.size), shape_of(value),
                    axes, starts, ends, steps, decrease, none_axes)


@njit(cache=True, fastmath=False, error_model="numpy")
def constants_set(x, values, values_shape, axes, starts, ends, steps, decrease, none_axes):
    """set_value's Out with the ``values`` constants (already in x's dtype) of
    ``values_shape`` (led by a -1, as the lists)."""
    flat = np.empty(len(values), x.dtype)
    for k in range(len(values)):
        flat[k] = values[k]
    shape = np.empty(len(values_shape) - 1, np.int64)
    for d in range(shape.size):
        shape[d] = values_shape[d + 1]
    return _written(x, flat, shape, axes, starts, ends, steps, decrease, none_axes)


def _summed_back(part, target, value):
    """dOut's ``part`` (flat) seen as ``target``, summed over the axes ``value`` was
    broadcast along, in value's shape: ops/arrays.unbroadcast's host path (numpy's sum)."""
    grad, shape = part.reshape(tuple(int(d) for d in target)), value.shape
    view = (1,) * (grad.ndim - len(shape)) + tuple(shape)
    axes = [i for i, (g, v) in enumerate(zip(grad.shape, view)) if v == 1 and g != 1]
    if axes:
        grad = grad.sum(axis=tuple(axes), keepdims=True)
    return np.asarray(grad.reshape(shape), order="C")


summed_back = in_python(_summed_back, like(2))


@njit(cache=True, fastmath=False, error_model="numpy")
def part_grads(dout, value, axes, starts, ends, steps, decrease, none_axes, want_input,
               want_value):
    """set_value_grad's (Input@GRAD, ValueTensor@GRAD) (an unset array where not wanted):
    dOut with 0 on the part (it was overwritten), and dOut's part summed back to the
    value's shape."""
    positions, count = _positions(dout.shape, axes, starts, ends, steps)
    return written_grads(dout, positions, _target(count, decrease, none_axes), value,
                         want_input, True, want_value)


@njit(cache=True, fastmath=False, error_model="numpy")
def written_grads(dout, positions, target, value, want_x, overwritten, want_value):
    """(X@GRAD, value@GRAD) of writing ``value`` (of shape ``target`` broadcast) into X at
    the flat ``positions``: dOut, with 0 where a value was ``overwritten`` (not added),
    and dOut at the positions summed back to value's shape (an unset array where not
    wanted). set_value's and index_put's gradients."""
    flat = np.ascontiguousarray(dout).reshape(dout.size)
    dx = np.empty(dout.shape, dout.dtype)
    if want_x:
        out = flat.copy()
        if overwritten:
            for k in range(positions.size):
                out[positions[k]] = 0
        dx = out.reshape(dout.shape)
    dvalue = np.empty(value.shape, value.dtype)
    if want_value:
        dvalue = value_grad(flat, positions, target, value)
    return dx, dvalue


@njit(cache=True, fastmath=False, error_model="numpy")
def value_grad(flat, positions, target, value):
    """The value's gradient: dOut (``flat``) at the positions written, seen as ``target``,
    summed back to value's shape (numpy's sum, as ops/write_at.values_grad)."""
    value_strides(shape_of(value), target)            # (its check)
    part = np.empty(positions.size, flat.dtype)
    for k in range(positions.size):
        part[k] = flat[positions[k]]
    return summed_back(part, target, value)


@njit(cache=True, fastmath=False, error_model="numpy")
def part_zeroed(dout, axes, starts, ends, steps, decrease, none_axes):
    """set_value_grad's Input@GRAD (no ValueTensor): dOut with 0 on the part."""
    dx, _ = part_grads(dout, np.empty(0, dout.dtype), axes, starts, ends, steps, decrease,
                       none_axes, True, False)
    return dx
