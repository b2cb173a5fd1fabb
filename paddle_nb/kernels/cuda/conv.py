"""im2col and col2im on the device (kernels/cpu/conv.py says what they compute).

im2col is one thread per element of cols (grid-stride), each reading the input element
its tap sees or writing 0 in the padding. col2im is one thread per *input* element, which
gathers every cols entry that im2col read from it (the taps whose window position lands
there on the stride grid): a sum per thread, in a fixed order, so no atomics and the same
bits on every run.

Launchers take C-contiguous device arrays and return new ones.
"""
from __future__ import annotations

from numba import cuda

from .device import empty, flat, launch


@cuda.jit(cache=True)
def _im2col(x, n_batch, channels, height, width, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow,
            cols):
    positions = n_batch * oh * ow
    for e in range(cuda.grid(1), cols.size, cuda.gridsize(1)):
        r, q = e // positions, e % positions
        c, ki, kj = r // (kh * kw), (r // kw) % kh, r % kw
        n, i, j = q // (oh * ow), (q // ow) % oh, q % ow
        ih = i * sh - pt + ki * dh
        iw = j * sw - pl + kj * dw
        if 0 <= ih < height and 0 <= iw < width:
            cols[e] = x[((n * channels + c) * height + ih) * width + iw]
        else:
            cols[e] = 0


@cuda.jit(cache=True)
def _col2im(cols, channels, height, width, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow, dx):
    positions = (dx.size // (channels * height * width)) * oh * ow
    for e in range(cuda.grid(1), dx.size, cuda.gridsize(1)):
        iw, ih = e % width, (e // width) % height
        c, n = (e // (width * height)) % channels, e // (width * height * channels)
        total = 0.0                                # (float64: the sum's rounding once)
        for ki in range(kh):
            t = ih + pt - ki * dh                  # = i * sh for the output row i
            if t < 0 or t % sh != 0 or t // sh >= oh:
                continue
            i = t // sh
            for kj in range(kw):
                u = iw + pl - kj * dw
                if u < 0 or u % sw != 0 or u // sw >= ow:
                    continue
                r = (c * kh + ki) * kw + kj
                total += cols[r * positions + (n * oh + i) * ow + u // sw]
        dx[e] = total


def im2col(x, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow):
    """cols [C*kh*kw, N*oh*ow] of ``x`` [N, C, H, W]."""
    n_batch, channels, height, width = (int(d) for d in x.shape)
    cols = empty((channels * kh * kw, n_batch * oh * ow), x.dtype)
    launch(_im2col, cols.size, flat(x), n_batch, channels, height, width, kh, kw, sh, sw,
           pt, pl, dh, dw, oh, ow, flat(cols))
    return cols


def col2im(cols, shape, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow):
    """A new [N, C, H, W] (``shape``) array: at each position, the sum of the ``cols``
    entries im2col would have read from it."""
    shape = tuple(int(d) for d in shape)
    dx = empty(shape, cols.dtype)
    launch(_col2im, dx.size, flat(cols), shape[1], shape[2], shape[3], kh, kw, sh, sw,
           pt, pl, dh, dw, oh, ow, flat(dx))
    return dx
