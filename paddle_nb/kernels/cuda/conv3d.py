"""im2col and col2im over three spatial dims on the device (kernels/cpu/conv3d.py says
what they compute): conv.py's kernels with a depth axis in front.

im2col is one thread per element of cols (grid-stride), each reading the input element
its tap sees or writing 0 in the padding. col2im is one thread per *input* element,
which gathers every cols entry im2col read from it (the taps whose window position
lands there on the stride grid, along each of the three axes): a sum per thread in a
fixed order, so no atomics and the same bits on every run.

The geometry travels as one small int64 device array, ``g`` = (kd, kh, kw, sd, sh, sw,
pf, pt, pl, dd, dh, dw, od, oh, ow) (ops/conv.py: geometry), rather than 15 arguments.
Launchers take C-contiguous device arrays and return new ones.
"""
from __future__ import annotations

from numba import cuda

from .device import empty, flat, int_array, launch


@cuda.jit(device=True)
def _source(t, stride, out_count):
    """The output index o along an axis at which a tap reads a given input position,
    from ``t`` = that position + pad - tap * dilation (= o * stride), or -1 where no
    output position reads it through that tap."""
    if t < 0 or t % stride != 0 or t // stride >= out_count:
        return -1
    return t // stride


@cuda.jit(cache=True)
def _im2col3d(x, n_batch, channels, depth, height, width, g, cols):
    kd, kh, kw = g[0], g[1], g[2]
    od, oh, ow = g[12], g[13], g[14]
    positions = n_batch * od * oh * ow
    for e in range(cuda.grid(1), cols.size, cuda.gridsize(1)):
        r, q = e // positions, e % positions
        c, a, b, f = r // (kd * kh * kw), (r // (kh * kw)) % kd, (r // kw) % kh, r % kw
        n, i, j, k = q // (od * oh * ow), (q // (oh * ow)) % od, (q // ow) % oh, q % ow
        iz = i * g[3] - g[6] + a * g[9]
        iy = j * g[4] - g[7] + b * g[10]
        ix = k * g[5] - g[8] + f * g[11]
        if 0 <= iz < depth and 0 <= iy < height and 0 <= ix < width:
            cols[e] = x[(((n * channels + c) * depth + iz) * height + iy) * width + ix]
        else:
            cols[e] = 0


@cuda.jit(cache=True)
def _col2im3d(cols, channels, depth, height, width, g, dx):
    kd, kh, kw = g[0], g[1], g[2]
    od, oh, ow = g[12], g[13], g[14]
    positions = (dx.size // (channels * depth * height * width)) * od * oh * ow
    for e in range(cuda.grid(1), dx.size, cuda.gridsize(1)):
        ix, iy = e % width, (e // width) % height
        iz = (e // (width * height)) % depth
        c = (e // (width * height * depth)) % channels
        n = e // (width * height * depth * channels)
        total = 0.0                                # (float64: the sum's rounding once)
        for a in range(kd):
            i = _source(iz + g[6] - a * g[9], g[3], od)
            if i < 0:
                continue
            for b in range(kh):
                j = _source(iy + g[7] - b * g[10], g[4], oh)
                if j < 0:
                    continue
                for f in range(kw):
                    k = _source(ix + g[8] - f * g[11], g[5], ow)
                    if k < 0:
                        continue
                    r = ((c * kd + a) * kh + b) * kw + f
                    total += cols[r * positions + ((n * od + i) * oh + j) * ow + k]
        dx[e] = total


def im2col3d(x, *geometry):
    """cols [C*kd*kh*kw, N*od*oh*ow] of ``x`` [N, C, D, H, W]."""
    n_batch, channels, depth, height, width = (int(d) for d in x.shape)
    kd, kh, kw = geometry[:3]
    od, oh, ow = geometry[12:]
    cols = empty((channels * kd * kh * kw, n_batch * od * oh * ow), x.dtype)
    launch(_im2col3d, cols.size, flat(x), n_batch, channels, depth, height, width,
           int_array(geometry), flat(cols))
    return cols


def col2im3d(cols, shape, *geometry):
    """A new [N, C, D, H, W] (``shape``) array: at each position, the sum of the ``cols``
    entries im2col3d would have read from it."""
    shape = tuple(int(d) for d in shape)
    dx = empty(shape, cols.dtype)
    launch(_col2im3d, dx.size, flat(cols), shape[1], shape[2], shape[3], shape[4],
           int_array(geometry), flat(dx))
    return dx
