"""cummax and cummin inside a compiled block (ops/cum_extrema.py): the running extreme along
an axis through kernels/running_scans.py's CPU loop, the interpreter's own (so both paths
give the same values and positions), and the gradient through indexing.put_along (each
dOut added into zeros at the position indices names, in indices' order: the order the
interpreter's ``put_along_rows`` adds in), range-checked there.
"""
import numpy as np
from numba import njit

from ..running_scans import _cpu_extremum
from .indexing import put_along
from .scans import _lines_of


@njit(cache=True, fastmath=False, error_model="numpy")
def extremum_along(x, axis, largest, zero):
    """(the running max (``largest``) or min of x (rank >= 1) along ``axis``, where each
    came from in ``zero``'s dtype), as running_scans.CPU.extremum."""
    out = np.empty(x.shape, x.dtype)
    indices = np.full(x.shape, zero)
    if x.size:
        n, inner = _lines_of(x, axis)
        _cpu_extremum(np.ascontiguousarray(x).reshape(x.size), n, inner, largest,
                      out.reshape(out.size), indices.reshape(indices.size))
    return out, indices


@njit(cache=True, fastmath=False, error_model="numpy")
def extremum_along_grad(x, indices, dout, axis):
    """dx: zeros of x's shape with each dout added where indices says it came from."""
    if indices.shape != x.shape or dout.shape != x.shape:
        raise ValueError("cummax_grad / cummin_grad: indices or out@GRAD has another shape")
    return put_along(x, indices, dout, axis)
