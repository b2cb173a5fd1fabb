"""Running scans along one axis, as a compiled block (paddle_nb/compiler) calls them:
cumsum's running sums in numpy's order (the first sum is the element itself, each next one
rounded to X's dtype), and logcumsumexp through kernels/running_scans.py's CPU loops, the
interpreter's own, so both paths give the same bits. X is seen as rows with the scanned
axis last (reduce.py's ``rows_over``) or, for ``flatten``, as one row.
"""
import numpy as np
from numba import njit

from ..running_scans import _cpu_logcumsumexp, _cpu_logcumsumexp_grad
from .reduce import rows_over, unmoved


@njit(cache=True, fastmath=False, error_model="numpy")
def _running_sums(rows, exclusive, reverse):
    """Each row's running sums in its dtype, left to right (``reverse``: from the right),
    each leaving its own element out where ``exclusive``: numpy's cumsum order."""
    out = np.empty_like(rows)
    n = rows.shape[1]
    for i in range(rows.shape[0]):
        s = rows.dtype.type(0)
        for k in range(n):
            j = n - 1 - k if reverse else k
            if exclusive:
                out[i, j] = s
            # the first sum is the element itself, as numpy's (-0.0 stays -0.0)
            s = rows[i, j] if k == 0 else rows.dtype.type(s + rows[i, j])
            if not exclusive:
                out[i, j] = s
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def cumsum_along(x, order, inverse, exclusive, reverse):
    """cumsum of x (rank >= 1) along the axis ``order`` puts last (the others first, in
    order); ``inverse`` is ``order``'s inverse permutation."""
    rows = rows_over(x, order, x.ndim - 1)
    return unmoved(_running_sums(rows, exclusive, reverse), x, order, inverse)


@njit(cache=True, fastmath=False, error_model="numpy")
def cumsum_flat(x, exclusive, reverse):
    """cumsum of all of x as one row (``flatten``): a 1-D Out."""
    rows = np.ascontiguousarray(x).reshape((1, x.size))
    return _running_sums(rows, exclusive, reverse).reshape(x.size)


@njit(cache=True, fastmath=False, error_model="numpy")
def cumsum_flat_grad(x, dout, exclusive, reverse):
    """cumsum's dX for ``flatten``: dOut's running sums (``reverse``: the forward's
    flipped), in x's shape."""
    if dout.size != x.size:
        raise ValueError("cumsum_grad: Out@GRAD has another size than X")
    return cumsum_flat(dout, exclusive, reverse).reshape(x.shape)


# --- logcumsumexp ---------------------------------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def _lines_of(x, axis):
    """(n, inner) of x around ``axis``: running_scans' view of a line."""
    inner = 1
    for d in range(axis + 1, x.ndim):
        inner *= x.shape[d]
    return x.shape[axis], inner


@njit(cache=True, fastmath=False, error_model="numpy")
def logcumsumexp_along(x, axis, exclusive, reverse):
    """logcumsumexp of x (rank >= 1) along ``axis``, as running_scans.CPU.logcumsumexp."""
    out = np.empty(x.shape, x.dtype)
    if x.size:
        n, inner = _lines_of(x, axis)
        _cpu_logcumsumexp(np.ascontiguousarray(x).reshape(x.size), n, inner, exclusive,
                          reverse, out.reshape(out.size))
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def logcumsumexp_along_grad(x, dout, axis, exclusive, reverse):
    """logcumsumexp's dX along ``axis``, as running_scans.CPU.logcumsumexp_grad."""
    if dout.size != x.size:
        raise ValueError("logcumsumexp_grad: Out@GRAD has another size than X")
    dx = np.empty(x.shape, x.dtype)
    if x.size:
        n, inner = _lines_of(x, axis)
        _cpu_logcumsumexp_grad(np.ascontiguousarray(x).reshape(x.size),
                               np.ascontiguousarray(dout).reshape(x.size).astype(x.dtype),
                               n, inner, exclusive, reverse, dx.reshape(dx.size))
    return dx


@njit(cache=True, fastmath=False, error_model="numpy")
def logcumsumexp_flat(x, exclusive, reverse):
    """logcumsumexp of all of x as one row (``flatten``): a 1-D Out."""
    return logcumsumexp_along(np.ascontiguousarray(x).reshape(x.size), 0, exclusive, reverse)


@njit(cache=True, fastmath=False, error_model="numpy")
def logcumsumexp_flat_grad(x, dout, exclusive, reverse):
    """logcumsumexp's dX for ``flatten``, in x's shape."""
    flat = np.ascontiguousarray(x).reshape(x.size)
    return logcumsumexp_along_grad(flat, dout, 0, exclusive, reverse).reshape(x.shape)
