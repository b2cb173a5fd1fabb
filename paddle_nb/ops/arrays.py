"""The few array operations that place-agnostic kernels need, for numpy arrays and numba
device arrays alike.

Control-flow ops (conditional_block, while, recurrent, select_*, the tensor-array ops...)
only move tensors around: they read a condition or an index, make zeros for a gradient
nobody wrote, stack per-step values, add up per-step gradients. Written against these
helpers, one kernel serves both places (``kernels={"cpu": f, "cuda": f}``): each helper
looks at what it is given (``device.is_device_array``) and calls numpy or a CUDA launcher,
so a tensor that lives on the device stays there.
"""
from __future__ import annotations

import numpy as np

from ..kernels.cuda import copy as cuda_copy
from ..kernels.cuda import device
from ..kernels.cuda import reduce as cuda_reduce
from ..kernels.pointwise import KERNELS


def on_device(value) -> bool:
    return device.is_device_array(value)


def is_tensor(value) -> bool:
    """A dense tensor (a numpy array or a device array), not a list, scope list or None."""
    return isinstance(value, np.ndarray) or device.is_device_array(value)


def host(value) -> np.ndarray:
    """A numpy view of ``value``: a device array is copied to the host (one small copy:
    callers use it for conditions, indices and masks only)."""
    return np.asarray(device.to_host(value))


def host_scalar(value):
    """The one value of a 1-element tensor (a condition, a counter, a mask), on the host."""
    return host(value).ravel()[0]


def zeros_like(value):
    if on_device(value):
        return cuda_copy.zeros_like(value)
    return np.zeros_like(value)


def full(shape, value, dtype, like):
    """A new array of ``shape`` filled with ``value``, on the place ``like`` lives on."""
    if on_device(like):
        return cuda_copy.fill(shape, value, dtype)
    return np.full(shape, value, dtype)


def stack(values, axis: int = 0):
    if any(on_device(v) for v in values):
        return cuda_copy.stack([device.to_device(v) for v in values], axis)
    return np.stack(values, axis=axis)


def empty(shape, dtype, like):
    """A new uninitialised array of ``shape`` on the place ``like`` lives on."""
    return device.empty(tuple(shape), dtype) if on_device(like) else np.empty(shape, dtype)


def copy(value):
    """A new array holding ``value``'s elements, on its place."""
    if on_device(value):
        return cuda_copy.copy(value)
    return np.array(value, copy=True)


def transpose(value, perm):
    """``value`` with its dims permuted, as a new contiguous array (0-d stays 0-d)."""
    if on_device(value):
        return cuda_copy.transpose(value, perm)
    # np.array, not ascontiguousarray: the latter turns a 0-d tensor into a 1-d one
    return np.array(np.transpose(value, perm), order="C")


def concat(values, axis: int = 0):
    if any(on_device(v) for v in values):
        return cuda_copy.concat([device.to_device(v) for v in values], axis)
    return np.concatenate(values, axis=axis)


def split(value, sizes, axis: int = 0) -> list:
    """Pieces of ``value`` along ``axis`` with the given sizes (new contiguous arrays)."""
    if on_device(value):
        return cuda_copy.split(value, sizes, axis)
    return [np.ascontiguousarray(p)
            for p in np.split(value, np.cumsum(sizes)[:-1], axis=axis)]


def add(a, b):
    """a + b (same shapes) as a new array."""
    if on_device(a) or on_device(b):
        return KERNELS["add"].cuda(device.to_device(a), device.to_device(b))
    return a + b


def astype(value, dtype):
    if value.__class__ is np.ndarray:          # the common case, without the device check
        return value.astype(dtype, copy=False)
    dtype = np.dtype(dtype)
    if on_device(value):
        if value.dtype == dtype:
            return value
        return cuda_copy.astype(value, dtype)
    return value.astype(dtype, copy=False)


def unbroadcast(grad, operand_view_shape, operand_shape):
    """``grad`` summed over the axes along which an operand was broadcast, back to the
    operand's shape (``operand_view_shape``: the operand as Fluid's ``axis`` rule reshaped
    it). The gradient of every broadcasting op ends here, on either place."""
    host_array = grad.__class__ is np.ndarray
    if grad.shape == operand_shape == operand_view_shape and (
            not host_array or grad.flags.c_contiguous):
        return grad                       # nothing was broadcast (the common case)
    view_shape = (1,) * (grad.ndim - len(operand_view_shape)) + tuple(operand_view_shape)
    axes = [i for i, (g, v) in enumerate(zip(grad.shape, view_shape)) if v == 1 and g != 1]
    if not host_array and on_device(grad):
        if axes:
            grad = cuda_reduce.sum_axes(grad, axes, keepdims=True)
        return grad.reshape(tuple(operand_shape))
    if axes:
        grad = grad.sum(axis=tuple(axes), keepdims=True)
    return np.asarray(grad.reshape(operand_shape), order="C")   # keeps a 0-d operand 0-d


def take_rows(value, rows):
    """``value[rows]`` for host row indices, as a new contiguous array."""
    if on_device(value):
        return cuda_copy.take_rows(value, rows)
    return np.ascontiguousarray(value[rows])


def merge_rows(n_rows: int, parts, like):
    """A new array of ``n_rows`` rows (the rest of ``like``'s shape and its dtype) where
    row ``rows[r]`` is row r of ``src``, for each ``(rows, src)`` in ``parts``."""
    shape = (n_rows,) + tuple(like.shape[1:])
    if on_device(like):
        out = device.empty(shape, like.dtype)
        for rows, src in parts:
            if len(rows):
                cuda_copy.put_rows(out, rows, device.to_device(src))
        return out
    out = np.empty(shape, like.dtype)
    for rows, src in parts:
        if len(rows):
            out[rows] = src
    return out


def to_place(place, array: np.ndarray):
    """``array`` (a small result made on the host) on ``place``: a device copy on CUDA."""
    return device.to_device(array) if place.kind == "cuda" else array


def broadcast_shape(a: tuple, b: tuple) -> tuple:
    """numpy's broadcast of two concrete shapes (tuples of ints), ~0.1 us where
    ``np.broadcast_shapes`` takes ~1.6 us: kernels call this once per run. Shapes that do
    not broadcast get numpy's own error."""
    if a == b:
        return a
    if len(a) != len(b):
        if len(a) < len(b):
            a = (1,) * (len(b) - len(a)) + a
        else:
            b = (1,) * (len(a) - len(b)) + b
    out = []
    for da, db in zip(a, b):
        if da == db or db == 1:
            out.append(da)
        elif da == 1:
            out.append(db)
        else:
            return np.broadcast_shapes(a, b)     # raises numpy's ValueError
    return tuple(out)
