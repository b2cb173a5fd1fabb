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


# --- inside a compiled block (paddle_nb/compiler) -----------------------------------------
# nearest_interp_v2 / bilinear_interp_v2 (the size from attributes) and their gradients with
# the serial loops above. The maps are ops/interp.py's, made on the host from the plane's
# size and passed as tuples (weights as the float32 values the interpreter's maps hold):
# they depend on the planes' size only, so one compiled segment serves every batch size.
@njit(cache=True, fastmath=False, error_model="numpy")
def _planes_of(x, in_hw, nhwc):
    """x (N, C, H, W) (NHWC: moved there) as C-contiguous planes (N*C, H, W), its plane
    the one the maps were made for (they index it)."""
    xc = np.ascontiguousarray(x.transpose((0, 3, 1, 2)) if nhwc else x)
    if (xc.shape[2], xc.shape[3]) != in_hw:
        raise ValueError("interp: X's planes are not the size the maps were made for")
    return xc.reshape((xc.shape[0] * xc.shape[1], xc.shape[2], xc.shape[3]))


@njit(cache=True, fastmath=False, error_model="numpy")
def _maps_of(maps, dtype_of):
    """The maps' tuples as arrays: indices int64, weights in ``dtype_of``'s dtype."""
    y0, y1, wy, x0, x1, wx = maps
    return (np.array(y0, np.int64), np.array(y1, np.int64),
            np.array(wy).astype(dtype_of.dtype), np.array(x0, np.int64),
            np.array(x1, np.int64), np.array(wx).astype(dtype_of.dtype))


@njit(cache=True, fastmath=False, error_model="numpy")
def _in_layout(planes, n, nhwc):
    """(N*C, H, W) planes as (N, C, H, W) (NHWC: (N, H, W, C)), C-contiguous."""
    y = planes.reshape((n, planes.shape[0] // n if n else 0, planes.shape[1],
                        planes.shape[2]))
    return np.ascontiguousarray(y.transpose((0, 2, 3, 1))) if nhwc else y


@njit(cache=True, fastmath=False, error_model="numpy")
def resampled(x, maps, nearest, in_hw, nhwc):
    """interp's Out of x by the maps (y0, y1, wy, x0, x1, wx)."""
    planes = _planes_of(x, in_hw, nhwc)
    y0, y1, wy, x0, x1, wx = _maps_of(maps, planes)
    out = np.empty((planes.shape[0], y0.size, x0.size), x.dtype)
    _resample_serial(planes, y0, y1, wy, x0, x1, wx, nearest, out)
    return _in_layout(out, x.shape[0], nhwc)


@njit(cache=True, fastmath=False, error_model="numpy")
def resampled_grad(x, dout, maps, nearest, in_hw, nhwc):
    """interp_grad's dX from dOut (X's dtype and layout)."""
    planes = _planes_of(x, in_hw, nhwc)
    y0, y1, wy, x0, x1, wx = _maps_of(maps, planes)
    dc = np.ascontiguousarray(dout.transpose((0, 3, 1, 2)) if nhwc else dout)
    if dc.shape != (x.shape[0], dc.shape[1], y0.size, x0.size) or \
            dc.shape[0] * dc.shape[1] != planes.shape[0]:
        raise ValueError("interp_grad: Out@GRAD must have the shape of Out")
    dx = np.zeros(planes.shape, dout.dtype)
    _resample_grad_serial(dc.reshape((planes.shape[0], y0.size, x0.size)), y0, y1, wy, x0,
                          x1, wx, nearest, dx)
    return _in_layout(dx, x.shape[0], nhwc)
