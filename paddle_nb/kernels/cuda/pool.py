"""Pooling on the device, 2-D and 3-D alike: the same windows as kernels/cpu/pool.py
(its docstring describes ``g``, the volumes (P, D, H, W) and the rules), one thread per
output element; the gradients scatter each output's dOut into its window with atomic
adds (windows overlap when the stride is below the window).
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .copy import fill
from .device import empty, flat, int_array, launch

# g's positions (kernels/cpu/pool.py's WINDOW, ...; repeated here as plain ints for the
# device functions)
_K, _S, _PB, _PA, _ADAPTIVE, _EXCLUSIVE = 0, 3, 6, 9, 12, 13


@cuda.jit(device=True)
def _span(o, n, g, a, out_n):
    """[start, stop) along axis a (0 depth, 1 height, 2 width) of output position o."""
    if g[_ADAPTIVE]:
        return (o * n) // out_n, -((-(o + 1) * n) // out_n)
    start = o * g[_S + a] - g[_PB + a]
    end = start + g[_K + a]
    return (start if start > 0 else 0), (end if end < n else n)


@cuda.jit(device=True)
def _padded(o, n, g, a):
    """The window along axis a clipped to the padded input (an inclusive average's count)."""
    start = o * g[_S + a] - g[_PB + a]
    end = start + g[_K + a]
    limit = n + g[_PA + a]
    return (end if end < limit else limit) - start


@cuda.jit(device=True)
def _position(i, od, oh, ow):
    """(volume, output depth, row, column) of flat output element i."""
    return i // (od * oh * ow), (i // (oh * ow)) % od, (i // ow) % oh, i % ow


@cuda.jit(device=True)
def _window(i, d, h, w, od, oh, ow, g):
    """Output element i's window: its volume's offset, [d0, d1) x [h0, h1) x [w0, w1)
    clipped to the input, and what an average divides by (kernels/cpu/pool.py's rule)."""
    p, r, s, c = _position(i, od, oh, ow)
    d0, d1 = _span(r, d, g, 0, od)
    h0, h1 = _span(s, h, g, 1, oh)
    w0, w1 = _span(c, w, g, 2, ow)
    if g[_ADAPTIVE] or g[_EXCLUSIVE]:
        count = (d1 - d0) * (h1 - h0) * (w1 - w0)
    else:
        count = _padded(r, d, g, 0) * _padded(s, h, g, 1) * _padded(c, w, g, 2)
    return p * d * h * w, d0, d1, h0, h1, w0, w1, count


@cuda.jit(device=True)
def _argmax(x, base, h, w, d0, d1, h0, h1, w0, w1):
    at = (d0 * h + h0) * w + w0
    best = x[base + at]
    for dd in range(d0, d1):
        for hh in range(h0, h1):
            for cc in range(w0, w1):
                v = x[base + (dd * h + hh) * w + cc]
                if best == best and not v <= best:      # v > best, or v is the first NaN
                    best = v
                    at = (dd * h + hh) * w + cc
    return at


@cuda.jit(cache=True)
def _pool(x, d, h, w, od, oh, ow, g, is_max, out, mask):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        base, d0, d1, h0, h1, w0, w1, count = _window(i, d, h, w, od, oh, ow, g)
        if is_max:
            at = _argmax(x, base, h, w, d0, d1, h0, h1, w0, w1)
            out[i] = x[base + at]
            mask[i] = at
        else:
            acc = 0.0
            for dd in range(d0, d1):
                for hh in range(h0, h1):
                    for cc in range(w0, w1):
                        acc += x[base + (dd * h + hh) * w + cc]
            out[i] = acc / count


def pool(x, g, is_max: bool, out_dhw, with_mask: bool = False):
    """(Out, Mask) of device volumes ``x`` (P, D, H, W), as kernels/cpu/pool.py's ``pool``
    (a max's Mask is written whether wanted or not: one store per thread here)."""
    volumes, d, h, w = (int(n) for n in x.shape)
    od, oh, ow = (int(n) for n in out_dhw)
    out = empty((volumes, od, oh, ow), x.dtype)
    mask = empty(out.shape if is_max else (1,), np.int32)
    launch(_pool, out.size, flat(x), d, h, w, od, oh, ow, int_array(g), is_max,
           flat(out), flat(mask))
    return out, mask


@cuda.jit(cache=True)
def _pool_grad(x, d, h, w, od, oh, ow, g, is_max, out, dout, dx):
    for i in range(cuda.grid(1), dout.size, cuda.gridsize(1)):
        base, d0, d1, h0, h1, w0, w1, count = _window(i, d, h, w, od, oh, ow, g)
        if is_max:
            # all of dOut to the window's first element equal to Out (Paddle's rule)
            o = out[i]
            done = False
            for dd in range(d0, d1):
                for hh in range(h0, h1):
                    for cc in range(w0, w1):
                        v = x[base + (dd * h + hh) * w + cc]
                        if not done and (v == o or (v != v and o != o)):
                            cuda.atomic.add(dx, base + (dd * h + hh) * w + cc, dout[i])
                            done = True
        else:
            share = dout[i] / count
            for dd in range(d0, d1):
                for hh in range(h0, h1):
                    for cc in range(w0, w1):
                        cuda.atomic.add(dx, base + (dd * h + hh) * w + cc, share)


def pool_grad(x, g, is_max: bool, out, dout):
    """dX of pool2d/pool3d from device X, Out and dOut (volumes)."""
    volumes, d, h, w = (int(n) for n in x.shape)
    od, oh, ow = (int(n) for n in dout.shape[1:])
    dx = fill((volumes, d, h, w), 0, dout.dtype)
    launch(_pool_grad, dout.size, flat(x), d, h, w, od, oh, ow, int_array(g), is_max,
           flat(out), flat(dout), flat(dx))
    return dx


@cuda.jit(cache=True)
def _scatter_add(mask, dout, k, volume, dx):
    for i in range(cuda.grid(1), dout.size, cuda.gridsize(1)):
        cuda.atomic.add(dx, (i // k) * volume + mask[i], dout[i])


def scatter_add(mask, dout, volume: int):
    """dX (P, volume) of max_pool{2,3}d_with_index from device ``mask`` and ``dout``
    (P, K)."""
    volumes, k = int(dout.shape[0]), int(dout.shape[1])
    dx = fill((volumes, volume), 0, dout.dtype)
    launch(_scatter_add, dout.size, flat(mask), flat(dout), k, volume, flat(dx))
    return dx
