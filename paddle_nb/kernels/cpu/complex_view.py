"""as_complex and as_real in a compiled block (ops/complex_view.py): a float array whose
last dim holds (real, imaginary) pairs moved into a new complex array, and back.

The interpreter's kernels are numpy views of the same bytes; a compiled form returns new
arrays, never views of its inputs, so these loops move each element's two halves: the
same numbers as the views.
"""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def pairs_into_complex(x, out):
    """Fill ``out`` (X's shape without its last dim of 2) with X's pairs; returns out."""
    pairs = np.ascontiguousarray(x).reshape(x.size)
    flat = out.reshape(out.size)
    for i in range(flat.size):
        flat[i] = complex(pairs[2 * i], pairs[2 * i + 1])
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def complex64_of(x):
    """as_complex of float32 pairs."""
    return pairs_into_complex(x, np.empty(x.shape[:-1], np.complex64))


@njit(cache=True, fastmath=False, error_model="numpy")
def complex128_of(x):
    """as_complex of float64 pairs."""
    return pairs_into_complex(x, np.empty(x.shape[:-1], np.complex128))


@njit(cache=True, fastmath=False, error_model="numpy")
def pairs_of(x, zero):
    """as_real: a new [..., 2] array of zero's dtype (x's real type)."""
    values = np.ascontiguousarray(x).reshape(x.size)
    out = np.full(x.shape + (2,), zero)
    flat = out.reshape(out.size)
    for i in range(values.size):
        flat[2 * i] = values[i].real
        flat[2 * i + 1] = values[i].imag
    return out
