"""2-D pooling over windows: max (with the position of each maximum) and average, and
their gradients, on planes ``(P, H, W)`` (P = batch x channels; the op puts NHWC data in
this layout first).

A window is described by one small int64 array ``g``, the same on both places
(kernels/cuda/pool.py): ``[kh, kw, sh, sw, pad_top, pad_left, adaptive, exclusive,
pad_bottom, pad_right]``. Output row i reads input rows ``[i*sh - pad_top, + kh)`` clipped
to the input (padding holds no values: it never wins a max, and is counted in an average
only when not ``exclusive``: then the divisor is the window clipped to the padded input,
as Paddle counts it, so a ceil_mode window hanging past the padding divides by less than
kh x kw), or, ``adaptive``, rows ``floor(i*H/OH) .. ceil((i+1)*H/OH)``.

A maximum is the first largest value of the window in row-major order, and a NaN wins
(as numpy's max): so every window that holds a NaN gives NaN, whatever its order.
Every plane is independent, so the ``prange`` variants split planes between threads
(the gradients too: a plane's scatter-adds never meet another's).
"""
import numpy as np
from numba import njit, prange

from .threads import parallel_ok

# Output elements x window size from which the prange variants run (2 threads): the
# first measured power of 2 where they took <= ~0.8x the serial time (float32, 16x16
# output planes; max 2x2 forward: 0.58x at 32k, 1.0x at 16k; its gradient 0.35x at
# 64k, 1.2x at 32k; avg 3x3: 0.74x at 37k).
MIN_PARALLEL_POOL = 32_768


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _span(o, n, k, s, pad, out_n, adaptive):
    """[start, end) of the window of output position o along an axis of n."""
    if adaptive:
        return (o * n) // out_n, -((-(o + 1) * n) // out_n)
    start = o * s - pad
    return max(start, 0), min(start + k, n)


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _padded(o, n, k, s, pad, pad_end):
    """How many positions of the padded axis the window of o covers."""
    start = o * s - pad
    return min(start + k, n + pad_end) - start


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _divisor(g, i, j, n_h, n_w, h0, h1, w0, w1):
    """An average's divisor: the real elements (exclusive, adaptive), or the window
    clipped to the padded input."""
    if g[6] or g[7]:
        return (h1 - h0) * (w1 - w0)
    return _padded(i, n_h, g[0], g[2], g[4], g[8]) * _padded(j, n_w, g[1], g[3], g[5], g[9])


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _argmax(x, p, h0, h1, w0, w1):
    """The flat in-plane position of the window's first maximum (a NaN wins)."""
    w = x.shape[2]
    at = h0 * w + w0
    best = x[p, h0, w0]
    for h in range(h0, h1):
        for c in range(w0, w1):
            v = x[p, h, c]
            if best == best and not v <= best:      # v > best, or v is the first NaN
                best = v
                at = h * w + c
    return at


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _pool_plane(x, g, is_max, out, mask, p):
    oh, ow = out.shape[1], out.shape[2]
    for i in range(oh):
        h0, h1 = _span(i, x.shape[1], g[0], g[2], g[4], oh, g[6])
        for j in range(ow):
            w0, w1 = _span(j, x.shape[2], g[1], g[3], g[5], ow, g[6])
            if is_max:
                at = _argmax(x, p, h0, h1, w0, w1)
                out[p, i, j] = x[p, at // x.shape[2], at % x.shape[2]]
                mask[p, i, j] = at
            else:
                acc = 0.0
                for h in range(h0, h1):
                    for c in range(w0, w1):
                        acc += x[p, h, c]
                out[p, i, j] = acc / _divisor(g, i, j, x.shape[1], x.shape[2], h0, h1, w0, w1)


@njit(cache=True, fastmath=False, error_model="numpy")
def _pool_serial(x, g, is_max, out, mask):
    for p in range(x.shape[0]):
        _pool_plane(x, g, is_max, out, mask, p)


@njit(cache=True, fastmath=False, error_model="numpy", parallel=True)
def _pool_parallel(x, g, is_max, out, mask):
    for p in prange(x.shape[0]):
        _pool_plane(x, g, is_max, out, mask, p)


def _parallel(x, out, g) -> bool:
    """Past the crossover in reads: each output's window (adaptive: about all of X)."""
    work = x.size if g[6] else out.size * int(g[0] * g[1])
    return work >= MIN_PARALLEL_POOL and parallel_ok()


def pool(x, g, is_max: bool, out_hw):
    """(Out, Mask) of planes ``x`` (P, H, W): each window's max and its flat in-plane
    position (int32), or its average (Mask then unused)."""
    out = np.empty((x.shape[0],) + tuple(out_hw), x.dtype)
    mask = np.empty(out.shape if is_max else (1, 1, 1), np.int32)
    (_pool_parallel if _parallel(x, out, g) else _pool_serial)(x, g, is_max, out, mask)
    return out, mask


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _pool_grad_plane(x, g, is_max, out, dout, dx, p):
    oh, ow = dout.shape[1], dout.shape[2]
    for i in range(oh):
        h0, h1 = _span(i, x.shape[1], g[0], g[2], g[4], oh, g[6])
        for j in range(ow):
            w0, w1 = _span(j, x.shape[2], g[1], g[3], g[5], ow, g[6])
            if is_max:
                # Paddle's rule: all of dOut to the window's first element equal to Out
                o = out[p, i, j]
                found = False
                for h in range(h0, h1):
                    for c in range(w0, w1):
                        v = x[p, h, c]
                        if not found and (v == o or (v != v and o != o)):
                            dx[p, h, c] += dout[p, i, j]
                            found = True
            else:
                share = dout[p, i, j] / _divisor(g, i, j, x.shape[1], x.shape[2], h0, h1,
                                                 w0, w1)
                for h in range(h0, h1):
                    for c in range(w0, w1):
                        dx[p, h, c] += share


@njit(cache=True, fastmath=False, error_model="numpy")
def _pool_grad_serial(x, g, is_max, out, dout, dx):
    for p in range(x.shape[0]):
        _pool_grad_plane(x, g, is_max, out, dout, dx, p)


@njit(cache=True, fastmath=False, error_model="numpy", parallel=True)
def _pool_grad_parallel(x, g, is_max, out, dout, dx):
    for p in prange(x.shape[0]):
        _pool_grad_plane(x, g, is_max, out, dout, dx, p)


def pool_grad(x, g, is_max: bool, out, dout):
    """dX of pool2d from X, Out and dOut (all planes)."""
    dx = np.zeros(x.shape, dout.dtype)
    (_pool_grad_parallel if _parallel(x, dout, g) else _pool_grad_serial)(x, g, is_max, out,
                                                                       dout, dx)
    return dx


@njit(cache=True, fastmath=False, error_model="numpy")
def _unpool_serial(mask, dout, dx):
    for p in range(dout.shape[0]):
        for k in range(dout.shape[1]):
            dx[p, mask[p, k]] += dout[p, k]


@njit(cache=True, fastmath=False, error_model="numpy", parallel=True)
def _unpool_parallel(mask, dout, dx):
    for p in prange(dout.shape[0]):
        for k in range(dout.shape[1]):
            dx[p, mask[p, k]] += dout[p, k]


def unpool(mask, dout, plane: int):
    """dX (P, plane) of max_pool2d_with_index: each dOut added at its Mask position
    (positions checked by the op first), from ``mask`` and ``dout`` as (P, OH*OW)."""
    dx = np.zeros((dout.shape[0], plane), dout.dtype)
    parallel = dout.size >= MIN_PARALLEL_POOL and parallel_ok()    # (not measured apart)
    (_unpool_parallel if parallel else _unpool_serial)(mask, dout, dx)
    return dx
