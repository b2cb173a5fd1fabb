"""2-D pooling over windows: max (with the position of each maximum) and average, and
their gradients, on planes ``(P, H, W)`` (P = batch x channels; the op puts NHWC data in
this layout first).

A window is described by one small int64 array ``g``, the same on both places
(kernels/cuda/pool.py): ``[kh, kw, sh, sw, pad_top, pad_left, adaptive, exclusive,
pad_bottom, pad_right]``. Output row i reads input rows ``[i*sh - pad_top, + kh)`` clipped
to the input (padding holds no values: it never wins a max, and is counted in an average
only when not ``exclusive``: then the divisor is the window clipped to the padded input,
as Paddle counts it, so a ceil_mode window hanging past the padding divides by less than
kh x kw), or, ``adaptive``, rows ``floor(i*H/OH) .. ceil((i+1)*H/OH)``. ``_axis`` works
this out once per call for each axis (each output's [start, stop) and divisor), not once
per output.

A maximum is the first largest value of the window in row-major order, and a NaN wins
(as numpy's max): so every window that holds a NaN gives NaN, whatever its order. The
comparisons are selects, not branches (on random data a branch mispredicts about once a
window), and the position of the maximum is tracked only when the op saves it
(max_pool2d_with_index's Mask): for pool2d it cost more than the max itself (64x6 planes
of 28x28, 2x2 windows: 0.43 ms without it, 0.76 ms with; 1.1 ms before these changes).
Every plane is independent, so the ``prange`` variants split planes between threads (the
gradients too: a plane's scatter-adds never meet another's).
"""
import numpy as np
from numba import njit, prange

from .threads import parallel_ok

# Output elements x window size from which the prange variants run (2 threads): the
# first measured power of 2 where they took <= ~0.8x the serial time (float32, 16x16
# output planes; max 2x2 forward: 0.58x at 32k, 1.0x at 16k; its gradient 0.35x at
# 64k, 1.2x at 32k; avg 3x3: 0.74x at 37k).
MIN_PARALLEL_POOL = 32_768


@njit(cache=True, fastmath=False, error_model="numpy")
def _axis(n, k, s, pad, pad_end, out_n, adaptive, exclusive):
    """(start, stop, count) along an axis of n for out_n outputs: each window's [start,
    stop) clipped to the input, and the count an average divides by (its elements, or
    for an inclusive average the window clipped to the padded input)."""
    start = np.empty(out_n, np.int64)
    stop = np.empty(out_n, np.int64)
    count = np.empty(out_n, np.int64)
    for o in range(out_n):
        if adaptive:
            a, b = (o * n) // out_n, -((-(o + 1) * n) // out_n)
        else:
            a, b = o * s - pad, o * s - pad + k
        start[o], stop[o] = (a if a > 0 else 0), (b if b < n else n)
        if adaptive or exclusive:
            count[o] = stop[o] - start[o]
        else:
            count[o] = (b if b < n + pad_end else n + pad_end) - a
    return start, stop, count


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _pool_plane(x, p, h0, h1, hn, w0, w1, wn, is_max, with_mask, out, mask):
    width = x.shape[2]
    for i in range(out.shape[1]):
        for j in range(out.shape[2]):
            if is_max:
                best, at = x[p, h0[i], w0[j]], h0[i] * width + w0[j]
                for h in range(h0[i], h1[i]):
                    row = x[p, h]
                    for c in range(w0[j], w1[j]):
                        v = row[c]
                        take = (best == best) & (not v <= best)   # v > best, or a NaN
                        best = v if take else best
                        if with_mask:
                            at = h * width + c if take else at
                out[p, i, j] = best
                if with_mask:
                    mask[p, i, j] = at
            else:
                acc = 0.0
                for h in range(h0[i], h1[i]):
                    row = x[p, h]
                    for c in range(w0[j], w1[j]):
                        acc += row[c]
                out[p, i, j] = acc / (hn[i] * wn[j])


@njit(cache=True, fastmath=False, error_model="numpy")
def _pool_serial(x, axes, is_max, with_mask, out, mask):
    h0, h1, hn, w0, w1, wn = axes
    for p in range(x.shape[0]):
        _pool_plane(x, p, h0, h1, hn, w0, w1, wn, is_max, with_mask, out, mask)


@njit(cache=True, fastmath=False, error_model="numpy", parallel=True)
def _pool_parallel(x, axes, is_max, with_mask, out, mask):
    h0, h1, hn, w0, w1, wn = axes
    for p in prange(x.shape[0]):
        _pool_plane(x, p, h0, h1, hn, w0, w1, wn, is_max, with_mask, out, mask)


def _axes(x, g, out_hw):
    """Both axes' window bounds and divisors (``_axis``), worked out once per call."""
    return (_axis(x.shape[1], g[0], g[2], g[4], g[8], out_hw[0], g[6], g[7]) +
            _axis(x.shape[2], g[1], g[3], g[5], g[9], out_hw[1], g[6], g[7]))


def _parallel(x, out, g) -> bool:
    """Past the crossover in reads: each output's window (adaptive: about all of X)."""
    work = x.size if g[6] else out.size * int(g[0] * g[1])
    return work >= MIN_PARALLEL_POOL and parallel_ok()


def pool(x, g, is_max: bool, out_hw, with_mask: bool = False):
    """(Out, Mask) of planes ``x`` (P, H, W): each window's max, and with ``with_mask``
    its flat in-plane position (int32), or its average (Mask then unused)."""
    out = np.empty((x.shape[0],) + tuple(out_hw), x.dtype)
    with_mask = bool(is_max and with_mask)
    mask = np.empty(out.shape if with_mask else (1, 1, 1), np.int32)
    (_pool_parallel if _parallel(x, out, g) else _pool_serial)(
        x, _axes(x, g, out.shape[1:]), is_max, with_mask, out, mask)
    return out, mask


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _pool_grad_plane(x, p, h0, h1, hn, w0, w1, wn, is_max, out, dout, dx):
    d, width = dx[p], x.shape[2]
    d[:, :] = 0
    flat = d.ravel()                       # a view: dx's planes are C-contiguous
    for i in range(dout.shape[1]):
        for j in range(dout.shape[2]):
            if is_max:
                # Paddle's rule: all of dOut to the window's first element equal to Out
                # (selects: a break out of the window mispredicted, 1.2 ms against 0.63)
                o, nan = out[p, i, j], out[p, i, j] != out[p, i, j]
                at = -1
                for h in range(h0[i], h1[i]):
                    row = x[p, h]
                    for c in range(w0[j], w1[j]):
                        v = row[c]
                        hit = (at < 0) & ((v == o) | (nan & (v != v)))
                        at = h * width + c if hit else at
                if at >= 0:
                    flat[at] += dout[p, i, j]
            else:
                share = dout[p, i, j] / (hn[i] * wn[j])
                for h in range(h0[i], h1[i]):
                    for c in range(w0[j], w1[j]):
                        d[h, c] += share


@njit(cache=True, fastmath=False, error_model="numpy")
def _pool_grad_serial(x, axes, is_max, out, dout, dx):
    h0, h1, hn, w0, w1, wn = axes
    for p in range(x.shape[0]):
        _pool_grad_plane(x, p, h0, h1, hn, w0, w1, wn, is_max, out, dout, dx)


@njit(cache=True, fastmath=False, error_model="numpy", parallel=True)
def _pool_grad_parallel(x, axes, is_max, out, dout, dx):
    h0, h1, hn, w0, w1, wn = axes
    for p in prange(x.shape[0]):
        _pool_grad_plane(x, p, h0, h1, hn, w0, w1, wn, is_max, out, dout, dx)


def pool_grad(x, g, is_max: bool, out, dout):
    """dX of pool2d from X, Out and dOut (all planes)."""
    dx = np.empty(x.shape, dout.dtype)
    (_pool_grad_parallel if _parallel(x, dout, g) else _pool_grad_serial)(
        x, _axes(x, g, dout.shape[1:]), is_max, out, dout, dx)
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
