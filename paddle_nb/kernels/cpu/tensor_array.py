"""A tensor array inside a compiled block, and the array ops' compiled forms.

In the interpreter a tensor array (kind ``tensor_array``: a While's outputs, an
``nn.RNN``'s steps) is a Python list of tensors, which grows as it is written and may have
holes (positions never written: None). Numba code cannot hold a list of arrays cheaply
(its typed lists cost tens of microseconds to make from Python, and a second of compiling
the first time), and the arrays a loop writes hold one shape at every position. So inside
compiled code an array is a tuple of three:

    (items, filled, length)

``items`` is one array ``[capacity, *entry shape]`` holding every entry, ``filled`` a
bool per position (False: a hole), ``length`` the list's length (the last written position
plus one). Writing past the capacity doubles it, so a loop of T steps copies O(T) entries
in all, not O(T^2). An array starts empty, ``(np.empty((0, ..., 0)), [], 0)``: its first
write fixes the entries' shape, and an entry of another shape raises :class:`UnevenArray`,
which hands the run to the interpreter (compiler/sub_blocks.py: not a failure; the list
holds anything). Reads copy the entry, so a later write to its position cannot change a
value already read (the interpreter's list replaces the entry, never writes into it).

A segment that takes an array from a scope or leaves one there converts it
(:func:`from_list`, :func:`to_list`); inside a segment, and between a compiled loop and its
body, it stays a tuple.
"""
from __future__ import annotations

import numpy as np
from numba import njit, types

from .in_python import in_python
from .indexing import one_index

FIRST_CAPACITY = 16        # positions an array holds before it first grows


class UnevenArray(Exception):
    """Raised by compiled code at an array entry of another shape or dtype than the ones
    before it: the compiled tuple holds one shape (compiler/sub_blocks.is_decline)."""


def array_type(dtype, ndim: int):
    """The numba type of an array of entries of ``dtype`` and rank ``ndim``."""
    return types.Tuple([types.Array(dtype, ndim + 1, "C"), types.Array(types.bool_, 1, "C"),
                        types.int64])


# --- to and from the interpreter's lists -----------------------------------------------------
def from_list(values: list, dtype, ndim: int) -> tuple:
    """The interpreter's list as a compiled array of entries of ``dtype`` and rank
    ``ndim``; UnevenArray if its entries differ in shape or type. (A loop left in the
    interpreter converts its arrays at every step: the common case is one C copy.)"""
    try:                                 # no holes, one shape: numpy copies them in C
        items = np.array(values, dtype=dtype) if values else None
    except (ValueError, TypeError):      # a hole (None), or entries of two shapes
        items = None
    if items is not None and items.ndim == ndim + 1 and items.shape[0] == len(values):
        return items, np.ones(len(values), np.bool_), len(values)
    first = next((v for v in values if v is not None), None)
    if first is None:
        return (np.empty((0,) * (ndim + 1), dtype), np.zeros(len(values), np.bool_),
                len(values))
    if first.__class__ is not np.ndarray or first.ndim != ndim:
        raise UnevenArray("a tensor array whose entries differ in shape or type")
    items = np.empty((len(values),) + first.shape, dtype)
    filled = np.zeros(len(values), np.bool_)
    for k, value in enumerate(values):
        if value is not None:
            if value.__class__ is not np.ndarray or value.shape != first.shape or \
                    value.dtype != items.dtype:
                raise UnevenArray("a tensor array whose entries differ in shape or type")
            items[k] = value
            filled[k] = True
    return items, filled, len(values)


def to_list(array: tuple) -> list:
    """A compiled array as the interpreter's list (entries are views of ``items``, which
    nothing writes once the segment has returned)."""
    items, filled, length = array
    if filled[:length].all():
        return list(items[:length])
    return [items[k] if filled[k] else None for k in range(length)]


# --- the array ops ---------------------------------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def fresh(items):
    """An empty array whose entries will have ``items``'s dtype and rank (minus one)."""
    return items, np.zeros(0, np.bool_), np.int64(0)


@njit(cache=True, fastmath=False, error_model="numpy")
def written(array, x, index, limit):
    """write_to_array's Out: ``array`` with ``x`` at position I (``limit``: the most
    positions an array may have, core/limits.MAX_LIST_LENGTH). Writes into ``items``
    where it has room: the array is the op's output, and nothing else holds it."""
    items, filled, length = array
    i = one_index(index, limit)
    if length == 0 and items.shape[0] == 0:            # the first entry fixes the shape
        items = np.empty((max(FIRST_CAPACITY, i + 1),) + x.shape, items.dtype)
        filled = np.zeros(items.shape[0], np.bool_)
    elif x.shape != items.shape[1:]:
        raise UnevenArray("write_to_array: an entry of another shape than the array's")
    if i >= items.shape[0]:
        capacity = max(2 * items.shape[0], i + 1)
        more = np.empty((capacity,) + items.shape[1:], items.dtype)
        more[:items.shape[0]] = items
        more_filled = np.zeros(capacity, np.bool_)
        more_filled[:filled.shape[0]] = filled
        items, filled = more, more_filled
    items[i] = x
    filled[i] = True
    return items, filled, max(length, i + 1)


@njit(cache=True, fastmath=False, error_model="numpy")
def entry(array, index):
    """read_from_array's Out: a copy of the entry at I, which must have been written."""
    items, filled, length = array
    i = one_index(index, length)
    if not filled[i]:
        raise IndexError("read_from_array: the position I was never written")
    return items[i].copy()


@njit(cache=True, fastmath=False, error_model="numpy")
def entry_or_zeros(array, index, like, limit):
    """read_from_array as write_to_array's gradient: the entry at I, or zeros shaped like
    ``like`` (X_W, the tensor the forward op wrote) where no gradient arrived."""
    items, filled, length = array
    i = one_index(index, limit)
    if i < length and filled[i]:
        return items[i].copy()
    return np.zeros_like(like)


@njit(cache=True, fastmath=False, error_model="numpy")
def length_of(array):
    """lod_array_length's Out: the array's length, as an int64 [1]."""
    out = np.empty(1, np.int64)
    out[0] = array[2]
    return out


# tensor_array_to_tensor and its gradient move whole entries: numpy's stack, concatenate
# and moveaxis, as the interpreter calls them (a loop would gain nothing)
def _entries(array) -> list:
    parts = [p for p in to_list(array) if p is not None]
    if not parts:
        raise IndexError("tensor_array_to_tensor: the array is empty")
    return parts


def stacked(array, axis):
    """tensor_array_to_tensor's (Out, OutIndex) with use_stack: the written entries
    stacked on a new ``axis``, and a size of one for each."""
    parts = _entries(array)
    return np.ascontiguousarray(np.stack(parts, axis=axis)), np.ones(len(parts), np.int32)


def concatenated(array, axis):
    """tensor_array_to_tensor's (Out, OutIndex): the written entries concatenated along
    ``axis``, and each one's size along it."""
    parts = _entries(array)
    return (np.ascontiguousarray(np.concatenate(parts, axis=axis)),
            np.array([p.shape[axis] for p in parts], np.int32))


def _joined_type(change: int):
    def result(array, axis):
        items = array.types[0]
        return types.Tuple([types.Array(items.dtype, items.ndim + change, "C"),
                            types.Array(types.int32, 1, "C")])
    return result


stacked_in_python = in_python(stacked, _joined_type(0))
concatenated_in_python = in_python(concatenated, _joined_type(-1))


def cut(array, dout, axis, use_stack):
    """tensor_array_to_tensor_grad's X@GRAD: Out@GRAD cut back into one entry per
    position of the forward array."""
    items, _, length = array
    if use_stack:
        moved = np.moveaxis(dout, axis, 0)
    else:
        size = items.shape[1 + axis]
        if dout.shape[axis] != size * length:
            raise ValueError("tensor_array_to_tensor_grad: Out@GRAD does not match X")
        moved = np.moveaxis(dout.reshape(dout.shape[:axis] + (length, size)
                                         + dout.shape[axis + 1:]), axis, 0)
    if moved.shape[0] != length:
        raise ValueError("tensor_array_to_tensor_grad: Out@GRAD does not match X")
    return np.ascontiguousarray(moved), np.ones(length, np.bool_), length


cut_in_python = in_python(cut, lambda array, dout, axis, use_stack: array_type(
    dout.dtype, array.types[0].ndim - 1))
