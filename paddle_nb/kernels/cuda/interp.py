"""2-D resampling on the device: kernels/cpu/interp.py's maps and rules, one thread per
output element; the gradient adds each dOut's shares with atomic adds (neighbouring
outputs read the same inputs).
"""
from __future__ import annotations

from numba import cuda

from .copy import fill
from .device import empty, flat, launch, to_device


@cuda.jit(device=True)
def _taps(i, h, w, y0, y1, wy, x0, x1, wx):
    """Output element i's four input offsets (rows y0/y1, columns x0/x1 of its plane: top
    left, bottom left, top right, bottom right) and its weights on y1 and on x1."""
    oh, ow = y0.size, x0.size
    base = (i // (oh * ow)) * h * w
    k = (i // ow) % oh
    m = i % ow
    return (base + y0[k] * w + x0[m], base + y1[k] * w + x0[m], base + y0[k] * w + x1[m],
            base + y1[k] * w + x1[m], wy[k], wx[m])


@cuda.jit(cache=True)
def _resample(x, h, w, y0, y1, wy, x0, x1, wx, nearest, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        tl, bl, tr, br, dn, dw = _taps(i, h, w, y0, y1, wy, x0, x1, wx)
        if nearest:
            out[i] = x[tl]
        else:
            ds = 1.0 - dn
            de = 1.0 - dw
            out[i] = x[tl] * ds * de + x[bl] * dn * de + x[tr] * ds * dw + x[br] * dn * dw


def _device_maps(maps):
    return [to_device(m) for m in maps]


def resample(x, maps, nearest: bool):
    """Out (P, OH, OW) from device planes ``x`` and host ``maps`` (y0, y1, wy, x0, x1,
    wx)."""
    planes, h, w = (int(d) for d in x.shape)
    out = empty((planes, maps[0].size, maps[3].size), x.dtype)
    launch(_resample, out.size, flat(x), h, w, *_device_maps(maps), nearest, flat(out))
    return out


@cuda.jit(cache=True)
def _resample_grad(dout, h, w, y0, y1, wy, x0, x1, wx, nearest, dx):
    for i in range(cuda.grid(1), dout.size, cuda.gridsize(1)):
        tl, bl, tr, br, dn, dw = _taps(i, h, w, y0, y1, wy, x0, x1, wx)
        d = dout[i]
        if nearest:
            cuda.atomic.add(dx, tl, d)
        else:
            ds = 1.0 - dn
            de = 1.0 - dw
            cuda.atomic.add(dx, tl, d * ds * de)
            cuda.atomic.add(dx, bl, d * dn * de)
            cuda.atomic.add(dx, tr, d * ds * dw)
            cuda.atomic.add(dx, br, d * dn * dw)


def resample_grad(dout, maps, nearest: bool, in_hw):
    """dX (P, H, W) from device ``dout`` (P, OH, OW) and host ``maps``."""
    planes = int(dout.shape[0])
    h, w = (int(d) for d in in_hw)
    dx = fill((planes, h, w), 0, dout.dtype)
    launch(_resample_grad, dout.size, flat(dout), h, w, *_device_maps(maps), nearest,
           flat(dx))
    return dx
