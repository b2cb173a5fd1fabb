"""2-D resampling of planes ``(P, H, W)``: nearest and bilinear interpolation and their
gradients, through per-axis maps the op computes once (ops/interp.py): output row k
reads input rows ``y0[k]`` and ``y1[k]`` with weight ``wy[k]`` on ``y1`` (columns the
same way with ``x0``, ``x1``, ``wx``). Nearest reads ``x[y0, x0]`` alone; bilinear sums
the four products in Paddle's order (so a 0 weight on an inf gives NaN, as in Paddle).

Every plane is independent: the ``prange`` variants (twins.py) split planes between
threads, the gradients too (a plane's scatter-adds never meet another plane's).
"""
import numpy as np
from numba import njit

from .threads import parallel_ok
from .twins import twins

# Output elements from which the prange variants run (2 threads): the first measured
# power of 2 where they took <= ~0.8x the serial time (bilinear x2, float32, 32x32 output
# planes: forward 0.61x and gradient 0.53x at 16k, the smallest size measured).
MIN_PARALLEL_INTERP = 16_384


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _plane(x, y0, y1, wy, x0, x1, wx, nearest, out, p):
    for k in range(out.shape[1]):
        for m in range(out.shape[2]):
            if nearest:
                out[p, k, m] = x[p, y0[k], x0[m]]
            else:
                dn, dw = wy[k], wx[m]
                ds, de = 1.0 - dn, 1.0 - dw
                out[p, k, m] = (x[p, y0[k], x0[m]] * ds * de + x[p, y1[k], x0[m]] * dn * de
                                + x[p, y0[k], x1[m]] * ds * dw
                                + x[p, y1[k], x1[m]] * dn * dw)


_resample_serial, _resample_parallel = twins(_plane, "_resample", items="out.shape[0]")


def resample(x, maps, nearest: bool):
    """Out (P, OH, OW) from planes ``x`` and ``maps`` = (y0, y1, wy, x0, x1, wx)."""
    out = np.empty((x.shape[0], maps[0].size, maps[3].size), x.dtype)
    run = _resample_parallel if out.size >= MIN_PARALLEL_INTERP and parallel_ok() \
        else _resample_serial
    run(x, *maps, nearest, out)
    return out


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _grad_plane(dout, y0, y1, wy, x0, x1, wx, nearest, dx, p):
    for k in range(dout.shape[1]):
        for m in range(dout.shape[2]):
            d = dout[p, k, m]
            if nearest:
                dx[p, y0[k], x0[m]] += d
            else:
                dn, dw = wy[k], wx[m]
                ds, de = 1.0 - dn, 1.0 - dw
                dx[p, y0[k], x0[m]] += d * ds * de
                dx[p, y1[k], x0[m]] += d * dn * de
                dx[p, y0[k], x1[m]] += d * ds * dw
                dx[p, y1[k], x1[m]] += d * dn * dw


_resample_grad_serial, _resample_grad_parallel = twins(_grad_plane, "_resample_grad",
                                                        items="dout.shape[0]")


def resample_grad(dout, maps, nearest: bool, in_hw):
    """dX (P, H, W): each dOut spread back with the weights that read it."""
    dx = np.zeros((dout.shape[0],) + tuple(in_hw), dout.dtype)
    run = _resample_grad_parallel if dout.size >= MIN_PARALLEL_INTERP and parallel_ok() \
        else _resample_grad_serial
    run(dout, *maps, nearest, dx)
    return dx
