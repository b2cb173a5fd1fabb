"""2-D resampling on the device: kernels/cpu/interp.py's maps and rules, one thread per
output element; the gradient adds each dOut's shares with atomic adds (neighbouring
outputs read the same inputs).
"""
from __future__ import annotations

from numba import cuda

from .copy import fill
from .device import empty, flat, launch_1d, to_device


@cuda.jit(cache=True)
def _resample(x, h, w, y0, y1, wy, x0, x1, wx, nearest, out):
    oh, ow = y0.size, x0.size
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        base = (i // (oh * ow)) * h * w
        k = (i // ow) % oh
        m = i % ow
        if nearest:
            out[i] = x[base + y0[k] * w + x0[m]]
        else:
            dn = wy[k]
            dw = wx[m]
            ds = 1.0 - dn
            de = 1.0 - dw
            out[i] = (x[base + y0[k] * w + x0[m]] * ds * de
                      + x[base + y1[k] * w + x0[m]] * dn * de
                      + x[base + y0[k] * w + x1[m]] * ds * dw
                      + x[base + y1[k] * w + x1[m]] * dn * dw)


def _device_maps(maps):
    return [to_device(m) for m in maps]


def resample(x, maps, nearest: bool):
    """Out (P, OH, OW) from device planes ``x`` and host ``maps`` (y0, y1, wy, x0, x1,
    wx)."""
    planes, h, w = (int(d) for d in x.shape)
    out = empty((planes, maps[0].size, maps[3].size), x.dtype)
    if out.size:
        blocks, threads = launch_1d(out.size)
        _resample[blocks, threads](flat(x), h, w, *_device_maps(maps), nearest, flat(out))
    return out


@cuda.jit(cache=True)
def _resample_grad(dout, h, w, y0, y1, wy, x0, x1, wx, nearest, dx):
    oh, ow = y0.size, x0.size
    for i in range(cuda.grid(1), dout.size, cuda.gridsize(1)):
        base = (i // (oh * ow)) * h * w
        k = (i // ow) % oh
        m = i % ow
        d = dout[i]
        if nearest:
            cuda.atomic.add(dx, base + y0[k] * w + x0[m], d)
        else:
            dn = wy[k]
            dw = wx[m]
            ds = 1.0 - dn
            de = 1.0 - dw
            cuda.atomic.add(dx, base + y0[k] * w + x0[m], d * ds * de)
            cuda.atomic.add(dx, base + y1[k] * w + x0[m], d * dn * de)
            cuda.atomic.add(dx, base + y0[k] * w + x1[m], d * ds * dw)
            cuda.atomic.add(dx, base + y1[k] * w + x1[m], d * dn * dw)


def resample_grad(dout, maps, nearest: bool, in_hw):
    """dX (P, H, W) from device ``dout`` (P, OH, OW) and host ``maps``."""
    planes = int(dout.shape[0])
    h, w = (int(d) for d in in_hw)
    dx = fill((planes, h, w), 0, dout.dtype)
    if dout.size:
        blocks, threads = launch_1d(dout.size)
        _resample_grad[blocks, threads](flat(dout), h, w, *_device_maps(maps), nearest,
                                        flat(dx))
    return dx
