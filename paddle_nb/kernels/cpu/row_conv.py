"""row_conv kernels (ops/row_conv.py): the lookahead convolution over time of x [B, T, D]
with a filter [F, D] (F = future context + 1), each feature on its own:

    out[b, t, d]   = sum over i < F with t + i < T of x[b, t + i, d] * filter[i, d]
    dx[b, s, d]    = sum over i < F with s - i >= 0 of dout[b, s - i, d] * filter[i, d]
    dfilter[i, d]  = sum over b, t with t + i < T of dout[b, t, d] * x[b, t + i, d]

Each value is one scalar function of its position, shared with kernels/cuda/row_conv.py
(one thread per value there); the loops below run them in order. Sums accumulate in
float64.
"""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def out_at(x, w, b, t, d):
    steps, taps = x.shape[1], w.shape[0]
    s = 0.0
    for i in range(taps):
        if t + i >= steps:
            break
        s += x[b, t + i, d] * w[i, d]
    return s


@njit(cache=True, fastmath=False, error_model="numpy")
def dx_at(dout, w, b, t, d):
    s = 0.0
    for i in range(w.shape[0]):
        if t - i < 0:
            break
        s += dout[b, t - i, d] * w[i, d]
    return s


@njit(cache=True, fastmath=False, error_model="numpy")
def dfilter_at(x, dout, i, d):
    batch, steps = x.shape[0], x.shape[1]
    s = 0.0
    for b in range(batch):
        for t in range(steps - i):
            s += dout[b, t, d] * x[b, t + i, d]
    return s


@njit(cache=True, fastmath=False, error_model="numpy")
def each_position(a, w, out, backward):
    """out[b, t, d] for every position: out_at of x (the forward), or with ``backward``
    dx_at of dOut; the two walk [B, T, D] alike."""
    for b in range(a.shape[0]):
        for t in range(a.shape[1]):
            for d in range(a.shape[2]):
                out[b, t, d] = dx_at(a, w, b, t, d) if backward else out_at(a, w, b, t, d)


def row_conv(x, w, out):
    each_position(x, w, out, False)


def row_conv_dx(dout, w, dx):
    each_position(dout, w, dx, True)


@njit(cache=True, fastmath=False, error_model="numpy")
def row_conv_dfilter(x, dout, dw):
    for i in range(dw.shape[0]):
        for d in range(dw.shape[1]):
            dw[i, d] = dfilter_at(x, dout, i, d)


# --- inside a compiled block (paddle_nb/compiler): the loops above, returning new arrays ------
@njit(cache=True, fastmath=False, error_model="numpy")
def _as_batch(a):
    """[T, D] as one sequence [1, T, D]; [B, T, D] as it is."""
    return np.ascontiguousarray(a).reshape((-1, a.shape[-2], a.shape[-1]))


@njit(cache=True, fastmath=False, error_model="numpy")
def _fits(x, w):
    if w.shape[1] != x.shape[-1]:
        raise ValueError("row_conv: Filter does not fit X")


@njit(cache=True, fastmath=False, error_model="numpy")
def row_conv_of(x, w):
    """row_conv's Out of x [B, T, D] (or [T, D])."""
    _fits(x, w)
    xb = _as_batch(x)
    out = np.empty(xb.shape, x.dtype)
    each_position(xb, w, out, False)
    return out.reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def row_conv_grads_of(x, w, dout, want_dx, want_dw):
    """row_conv's (dX, dFilter) (an unset array where not wanted)."""
    _fits(x, w)
    if dout.shape != x.shape:
        raise ValueError("row_conv_grad: Out@GRAD must have X's shape")
    xb, db = _as_batch(x), _as_batch(dout)
    dx, dw = np.empty(xb.shape, x.dtype), np.empty(w.shape, w.dtype)
    if want_dx:
        each_position(db, w, dx, True)
    if want_dw:
        row_conv_dfilter(xb, db, dw)
    return dx.reshape(x.shape), dw
