"""Ops that make values, inside a compiled block (paddle_nb/compiler): new arrays of one
value (fill_constant, fill_any_like, fill_zeros_like), copies (assign, and cast's, in
another dtype) and a counter's next value (increment)."""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def filled(shape, value):
    """A new array of ``shape`` (a tuple) holding ``value`` everywhere: a numpy scalar,
    whose dtype is the array's."""
    return np.full(shape, value)


@njit(cache=True, fastmath=False, error_model="numpy")
def filled_like(x, value):
    """A new array of x's shape holding ``value`` (a numpy scalar: its dtype)."""
    return np.full(x.shape, value)


@njit(cache=True, fastmath=False, error_model="numpy")
def copied(x):
    """A new C-contiguous copy of x."""
    return np.copy(x)


@njit(cache=True, fastmath=False, error_model="numpy")
def stepped(x, step):
    """increment's Out: a new array of x + ``step`` (a numpy scalar of x's dtype), stored
    in x's dtype."""
    out = np.empty(x.shape, x.dtype)
    flat, src = out.reshape(out.size), np.ascontiguousarray(x).reshape(x.size)
    for i in range(src.size):
        flat[i] = src[i] + step
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def scaled_integers(x, scale, bias, bias_after_scale):
    """scale's Out for an integer x (a loop's counter plus one): each element taken to
    float64, ``x * scale + bias`` (or ``(x + bias) * scale``) there, and stored back in
    x's dtype, truncated toward zero: numpy's arithmetic for an integer array and Python
    floats, then its cast."""
    out = np.empty(x.shape, x.dtype)
    flat, src = out.reshape(out.size), np.ascontiguousarray(x).reshape(x.size)
    for i in range(src.size):
        v = np.float64(src[i])
        flat[i] = v * scale + bias if bias_after_scale else (v + bias) * scale
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def converted(x, zero):
    """cast's Out: a copy of x in the dtype of ``zero`` (a numpy scalar), each element
    converted as numpy's astype converts it (truncated toward zero to an integer, != 0 to
    a bool: numba's store casts are C's, as numpy's are)."""
    out = np.full(x.shape, zero)
    flat, src = out.reshape(out.size), np.ascontiguousarray(x).reshape(x.size)
    for i in range(src.size):
        flat[i] = src[i]
    return out
