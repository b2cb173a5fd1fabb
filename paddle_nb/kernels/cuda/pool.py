"""2-D pooling on the device: the same windows as kernels/cpu/pool.py (its docstring
describes ``g`` and the rules), one thread per output element; the gradients scatter
each output's dOut into its window with atomic adds (windows overlap when the stride is
below the window).
"""
from __future__ import annotations

import numpy as np
from numba import cuda

from .copy import fill
from .device import empty, flat, int_array, launch_1d


@cuda.jit(device=True)
def _span(o, n, k, s, pad, out_n, adaptive):
    if adaptive:
        return (o * n) // out_n, -((-(o + 1) * n) // out_n)
    start = o * s - pad
    end = start + k
    return (start if start > 0 else 0), (end if end < n else n)


@cuda.jit(device=True)
def _window(i, h, w, oh, ow, g):
    """(plane, output row, output column, h0, h1, w0, w1) of output element i."""
    p = i // (oh * ow)
    r = (i // ow) % oh
    c = i % ow
    h0, h1 = _span(r, h, g[0], g[2], g[4], oh, g[6])
    w0, w1 = _span(c, w, g[1], g[3], g[5], ow, g[6])
    return p, h0, h1, w0, w1


@cuda.jit(device=True)
def _argmax(x, base, w, h0, h1, w0, w1):
    at = h0 * w + w0
    best = x[base + at]
    for hh in range(h0, h1):
        for cc in range(w0, w1):
            v = x[base + hh * w + cc]
            if best == best and not v <= best:      # v > best, or v is the first NaN
                best = v
                at = hh * w + cc
    return at


@cuda.jit(device=True)
def _padded(o, n, k, s, pad, pad_end):
    start = o * s - pad
    end = start + k
    return (end if end < n + pad_end else n + pad_end) - start


@cuda.jit(device=True)
def _divisor(g, i, h, w, oh, ow, h0, h1, w0, w1):
    """Output element i's average divisor (kernels/cpu/pool.py's rule)."""
    if g[6] or g[7]:
        return (h1 - h0) * (w1 - w0)
    r = (i // ow) % oh
    c = i % ow
    return _padded(r, h, g[0], g[2], g[4], g[8]) * _padded(c, w, g[1], g[3], g[5], g[9])


@cuda.jit(cache=True)
def _pool(x, h, w, oh, ow, g, is_max, out, mask):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        p, h0, h1, w0, w1 = _window(i, h, w, oh, ow, g)
        base = p * h * w
        if is_max:
            at = _argmax(x, base, w, h0, h1, w0, w1)
            out[i] = x[base + at]
            mask[i] = at
        else:
            acc = 0.0
            for hh in range(h0, h1):
                for cc in range(w0, w1):
                    acc += x[base + hh * w + cc]
            out[i] = acc / _divisor(g, i, h, w, oh, ow, h0, h1, w0, w1)


def pool(x, g, is_max: bool, out_hw, with_mask: bool = False):
    """(Out, Mask) of device planes ``x`` (P, H, W), as kernels/cpu/pool.py's ``pool``
    (a max's Mask is written whether wanted or not: one store per thread here)."""
    planes, h, w = (int(d) for d in x.shape)
    oh, ow = (int(d) for d in out_hw)
    out = empty((planes, oh, ow), x.dtype)
    mask = empty((planes, oh, ow) if is_max else (1,), np.int32)
    if out.size:
        blocks, threads = launch_1d(out.size)
        _pool[blocks, threads](flat(x), h, w, oh, ow, int_array(g), is_max, flat(out),
                               flat(mask))
    return out, mask


@cuda.jit(cache=True)
def _pool_grad(x, h, w, oh, ow, g, is_max, out, dout, dx):
    for i in range(cuda.grid(1), dout.size, cuda.gridsize(1)):
        p, h0, h1, w0, w1 = _window(i, h, w, oh, ow, g)
        base = p * h * w
        if is_max:
            # all of dOut to the window's first element equal to Out (Paddle's rule)
            o = out[i]
            done = False
            for hh in range(h0, h1):
                for cc in range(w0, w1):
                    v = x[base + hh * w + cc]
                    if not done and (v == o or (v != v and o != o)):
                        cuda.atomic.add(dx, base + hh * w + cc, dout[i])
                        done = True
        else:
            share = dout[i] / _divisor(g, i, h, w, oh, ow, h0, h1, w0, w1)
            for hh in range(h0, h1):
                for cc in range(w0, w1):
                    cuda.atomic.add(dx, base + hh * w + cc, share)


def pool_grad(x, g, is_max: bool, out, dout):
    """dX of pool2d from device X, Out and dOut (planes)."""
    planes, h, w = (int(d) for d in x.shape)
    oh, ow = int(dout.shape[1]), int(dout.shape[2])
    dx = fill((planes, h, w), 0, dout.dtype)
    if dout.size:
        blocks, threads = launch_1d(dout.size)
        _pool_grad[blocks, threads](flat(x), h, w, oh, ow, int_array(g), is_max, flat(out),
                                    flat(dout), flat(dx))
    return dx


@cuda.jit(cache=True)
def _unpool(mask, dout, k, plane, dx):
    for i in range(cuda.grid(1), dout.size, cuda.gridsize(1)):
        cuda.atomic.add(dx, (i // k) * plane + mask[i], dout[i])


def unpool(mask, dout, plane: int):
    """dX (P, plane) of max_pool2d_with_index from device ``mask`` and ``dout`` (P, K)."""
    planes, k = int(dout.shape[0]), int(dout.shape[1])
    dx = fill((planes, plane), 0, dout.dtype)
    if dout.size:
        blocks, threads = launch_1d(dout.size)
        _unpool[blocks, threads](flat(mask), flat(dout), k, plane, flat(dx))
    return dx
