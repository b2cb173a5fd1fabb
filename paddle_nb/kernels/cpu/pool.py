"""Pooling over windows, 2-D and 3-D alike: max (with the position of each maximum) and
average, and their gradients, on volumes ``(P, D, H, W)`` (P = batch x channels; the op
puts channel-last data in this layout first, and gives 2-D planes a depth of 1).

A window is described by one small int64 array ``g``, the same on both places
(kernels/cuda/pool.py), made by ops/pool.py's ``_geometry``: for the axes (depth, height,
width) ``g[0:3]`` the window, ``g[3:6]`` the strides, ``g[6:9]`` the padding before and
``g[9:12]`` after, then ``g[12]`` adaptive and ``g[13]`` exclusive (``WINDOW`` names
the positions). A 2-D pool's depth axis is a window of 1, stride 1, no padding. Output
position i along an axis reads input ``[i*stride - pad_before, + window)`` clipped to the
input (padding holds no values: it never wins a max, and is counted in an average only
when not ``exclusive``: then the divisor is the window clipped to the padded input, as
Paddle counts it, so a ceil_mode window hanging past the padding divides by less than
the window), or, ``adaptive``, ``floor(i*n/out) .. ceil((i+1)*n/out)``. ``_axis`` works
this out once per call for each axis (each output's [start, stop) and divisor), not once
per output.

A maximum is the first largest value of the window in (depth, row, column) order, and a
NaN wins (as numpy's max): so every window that holds a NaN gives NaN, whatever its
order. Its position (Mask) is flat in the input volume, ``(d*H + h)*W + w`` (for 2-D,
``h*W + w``), as Paddle's max_pool{2,3}d_with_index saves it. The comparisons are
selects, not branches (on random data a branch mispredicts about once a window), and the
position is tracked only when the op saves it: for pool2d it cost more than the max
itself (64x6 planes of 28x28, 2x2 windows: 0.43 ms without it, 0.76 ms with; 1.1 ms
before these changes). Every volume is independent, so the ``prange`` variants (twins.py)
split volumes between threads (the gradients too: a volume's scatter-adds never meet
another's).

One kernel serves both ranks, so the window rules live in one place; the depth loop of
one step costs a 2-D pool something: on those planes, serial, 1.15-1.4x the time of the
plane-only kernel this replaced (max 1.94 ms against 1.66, avg 1.50 against 1.19, the max
gradient 2.9 against 2.1-2.4; measured interleaved on a busy 2-core machine, so the
absolute times are above the ones quoted before).
"""
import numpy as np
from numba import literally, njit
from numba.np.unsafe.ndarray import to_fixed_tuple

from .check import first_outside
from .threads import parallel_ok
from .twins import twins

# g's positions: window, strides, padding before and after, each over (depth, height,
# width); then the two flags
WINDOW, STRIDE, PAD_BEFORE, PAD_AFTER, ADAPTIVE, EXCLUSIVE = 0, 3, 6, 9, 12, 13

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
def _pool_volume(x, axes, is_max, with_mask, out, mask, p):
    d0, d1, dn, h0, h1, hn, w0, w1, wn = axes
    height, width = x.shape[2], x.shape[3]
    for od in range(out.shape[1]):
        for i in range(out.shape[2]):
            for j in range(out.shape[3]):
                if is_max:
                    best = x[p, d0[od], h0[i], w0[j]]
                    at = (d0[od] * height + h0[i]) * width + w0[j]
                    for d in range(d0[od], d1[od]):
                        for h in range(h0[i], h1[i]):
                            row, row_at = x[p, d, h], (d * height + h) * width
                            for c in range(w0[j], w1[j]):
                                v = row[c]
                                take = (best == best) & (not v <= best)   # v > best, or NaN
                                best = v if take else best
                                if with_mask:
                                    at = row_at + c if take else at
                    out[p, od, i, j] = best
                    if with_mask:
                        mask[p, od, i, j] = at
                else:
                    acc = 0.0
                    for d in range(d0[od], d1[od]):
                        for h in range(h0[i], h1[i]):
                            row = x[p, d, h]
                            for c in range(w0[j], w1[j]):
                                acc += row[c]
                    out[p, od, i, j] = acc / (dn[od] * hn[i] * wn[j])


_pool_serial, _pool_parallel = twins(_pool_volume, "_pool", items="x.shape[0]")


def _axes(x, g, out_dhw):
    """The three axes' window bounds and divisors (``_axis``), worked out once per call."""
    bounds = ()
    for a in range(3):
        bounds += _axis(x.shape[1 + a], g[WINDOW + a], g[STRIDE + a], g[PAD_BEFORE + a],
                        g[PAD_AFTER + a], out_dhw[a], g[ADAPTIVE], g[EXCLUSIVE])
    return bounds


def _parallel(x, out, g) -> bool:
    """Past the crossover in reads: each output's window (adaptive: about all of X)."""
    work = x.size if g[ADAPTIVE] else out.size * int(g[0] * g[1] * g[2])
    return work >= MIN_PARALLEL_POOL and parallel_ok()


def pool(x, g, is_max: bool, out_dhw, with_mask: bool = False):
    """(Out, Mask) of volumes ``x`` (P, D, H, W): each window's max, and with
    ``with_mask`` its flat in-volume position (int32), or its average (Mask then unused)."""
    out = np.empty((x.shape[0],) + tuple(out_dhw), x.dtype)
    with_mask = bool(is_max and with_mask)
    mask = np.empty(out.shape if with_mask else (1, 1, 1, 1), np.int32)
    (_pool_parallel if _parallel(x, out, g) else _pool_serial)(
        x, _axes(x, g, out.shape[1:]), is_max, with_mask, out, mask)
    return out, mask


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _pool_grad_volume(x, axes, is_max, out, dout, dx, p):
    d0, d1, dn, h0, h1, hn, w0, w1, wn = axes
    vol, height, width = dx[p], x.shape[2], x.shape[3]
    vol[:, :, :] = 0
    flat = vol.ravel()                     # a view: dx's volumes are C-contiguous
    for od in range(dout.shape[1]):
        for i in range(dout.shape[2]):
            for j in range(dout.shape[3]):
                if is_max:
                    # Paddle's rule: all of dOut to the window's first element equal to
                    # Out (selects: a break out of the window mispredicted, 1.2 ms
                    # against 0.63)
                    o = out[p, od, i, j]
                    nan = o != o
                    at = -1
                    for d in range(d0[od], d1[od]):
                        for h in range(h0[i], h1[i]):
                            row, row_at = x[p, d, h], (d * height + h) * width
                            for c in range(w0[j], w1[j]):
                                v = row[c]
                                hit = (at < 0) & ((v == o) | (nan & (v != v)))
                                at = row_at + c if hit else at
                    if at >= 0:
                        flat[at] += dout[p, od, i, j]
                else:
                    share = dout[p, od, i, j] / (dn[od] * hn[i] * wn[j])
                    for d in range(d0[od], d1[od]):
                        for h in range(h0[i], h1[i]):
                            for c in range(w0[j], w1[j]):
                                vol[d, h, c] += share


_pool_grad_serial, _pool_grad_parallel = twins(_pool_grad_volume, "_pool_grad",
                                                items="x.shape[0]")


def pool_grad(x, g, is_max: bool, out, dout):
    """dX of pool2d/pool3d from X, Out and dOut (all volumes)."""
    dx = np.empty(x.shape, dout.dtype)
    (_pool_grad_parallel if _parallel(x, dout, g) else _pool_grad_serial)(
        x, _axes(x, g, dout.shape[1:]), is_max, out, dout, dx)
    return dx


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _scatter_volume(mask, dout, dx, p):
    for k in range(dout.shape[1]):
        dx[p, mask[p, k]] += dout[p, k]


_scatter_add_serial, _scatter_add_parallel = twins(_scatter_volume, "_scatter_add",
                                                   items="dout.shape[0]")


def scatter_add(mask, dout, volume: int):
    """dX (P, volume) of max_pool{2,3}d_with_index: each dOut added at its Mask position
    (positions checked by the op first), from ``mask`` and ``dout`` as (P, outputs)."""
    dx = np.zeros((dout.shape[0], volume), dout.dtype)
    parallel = dout.size >= MIN_PARALLEL_POOL and parallel_ok()    # (not measured apart)
    (_scatter_add_parallel if parallel else _scatter_add_serial)(mask, dout, dx)
    return dx


# --- inside a compiled block (paddle_nb/compiler) -----------------------------------------
# pool2d/pool3d (channels first) and their gradients as the op runs them, with the serial
# loops (each volume's arithmetic is the same in the prange ones). ``g`` is the geometry
# as a tuple, ``out_dhw`` the output's (depth, height, width).
@njit(cache=True, fastmath=False, error_model="numpy")
def _volumes(x):
    """N, C, (D,) H, W as (N*C, D, H, W) volumes (D = 1 for planes)."""
    depth = x.shape[2] if x.ndim == 5 else 1
    return np.ascontiguousarray(x).reshape((x.shape[0] * x.shape[1], depth,
                                            x.shape[x.ndim - 2], x.shape[x.ndim - 1]))


@njit(cache=True, fastmath=False, error_model="numpy")
def _window_axes(vol, g, od, oh, ow):
    """_axes, in numba code."""
    return (_axis(vol.shape[1], g[WINDOW], g[STRIDE], g[PAD_BEFORE], g[PAD_AFTER], od,
                  g[ADAPTIVE], g[EXCLUSIVE])
            + _axis(vol.shape[2], g[WINDOW + 1], g[STRIDE + 1], g[PAD_BEFORE + 1],
                    g[PAD_AFTER + 1], oh, g[ADAPTIVE], g[EXCLUSIVE])
            + _axis(vol.shape[3], g[WINDOW + 2], g[STRIDE + 2], g[PAD_BEFORE + 2],
                    g[PAD_AFTER + 2], ow, g[ADAPTIVE], g[EXCLUSIVE]))


@njit(cache=True, fastmath=False, error_model="numpy")
def _in_x_rank(volumes, x, out_dhw, rank):
    """(N*C, OD, OH, OW) volumes as x's rank: (N, C, (OD,) OH, OW)."""
    dims = np.empty(rank, np.int64)
    dims[0], dims[1] = x.shape[0], x.shape[1]
    for k in range(2, rank):
        dims[k] = out_dhw[k + 3 - rank]
    return volumes.reshape(to_fixed_tuple(dims, rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def pooled(x, g, is_max, out_dhw, rank):
    """pool's Out of x (N, C, (D,) H, W); ``rank``, a literal, is x's rank."""
    literally(rank)
    vol = _volumes(x)
    od, oh, ow = out_dhw
    out = np.empty((vol.shape[0], od, oh, ow), x.dtype)
    _pool_serial(vol, _window_axes(vol, g, od, oh, ow), is_max, False, out,
                 np.empty((1, 1, 1, 1), np.int32))
    return _in_x_rank(out, x, out_dhw, rank)


@njit(cache=True, fastmath=False, error_model="numpy")
def pooled_with_mask(x, g, out_dhw, rank):
    """max_pool{2,3}d_with_index's (Out, Mask) of x (N, C, (D,) H, W)."""
    literally(rank)
    vol = _volumes(x)
    od, oh, ow = out_dhw
    out = np.empty((vol.shape[0], od, oh, ow), x.dtype)
    mask = np.empty(out.shape, np.int32)
    _pool_serial(vol, _window_axes(vol, g, od, oh, ow), True, True, out, mask)
    return _in_x_rank(out, x, out_dhw, rank), _in_x_rank(mask, x, out_dhw, rank)


@njit(cache=True, fastmath=False, error_model="numpy")
def mask_scattered(x, mask, dout):
    """max_pool{2,3}d_with_index_grad's dX: scatter_add's serial loop, the Mask positions
    checked first (the interpreter's rerun names the op and the value)."""
    p = x.shape[0] * x.shape[1]
    size = x.size // p if p else 0
    if mask.shape != dout.shape or mask.shape[:2] != x.shape[:2]:
        raise ValueError("max_pool_with_index_grad: Mask and Out@GRAD must have the pooled "
                         "output's shape")
    flat_mask = np.ascontiguousarray(mask).reshape((p, mask.size // p if p else 0))
    if first_outside(flat_mask.ravel(), 0, size, False, 0) >= 0:
        raise IndexError("max_pool_with_index_grad: a Mask position is out of range")
    dx = np.zeros((p, size), dout.dtype)
    _scatter_add_serial(flat_mask, np.ascontiguousarray(dout).reshape(flat_mask.shape), dx)
    return dx.reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def pooled_grad(x, out, dout, g, is_max):
    """pool's dX from X, Out and dOut (of X's dtype)."""
    vol, o, d = _volumes(x), _volumes(out), _volumes(dout)
    dx = np.empty(vol.shape, dout.dtype)
    _pool_grad_serial(vol, _window_axes(vol, g, o.shape[1], o.shape[2], o.shape[3]), is_max,
                      o, d, dx)
    return dx.reshape(x.shape)
