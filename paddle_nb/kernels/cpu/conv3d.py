"""im2col and col2im over three spatial dims (conv3d, conv3d_transpose): conv.py's index
maps with a depth axis in front.

    cols[((c * kd + a) * kh + b) * kw + e, ((n * od + i) * oh + j) * ow + k]
        = x[n, c, i * sd - pf + a * dd, j * sh - pt + b * dh, k * sw - pl + e * dw]

and 0 where that position falls in the padding. Both are numpy, one strided block per
filter tap (as the 2-D im2col): for a tap, the output positions whose input lies inside
the input form a box (a range per axis), and the input elements they read form a strided
box of x. im2col copies that box into the tap's rows and zeroes the rest of them;
col2im adds it back. Within one tap no two output positions read the same input
element (strides >= 1), so the add into a strided view of dx needs no scatter-add.

Both write every element of their output (im2col's zeros, col2im's dx zeroed first), so
callers may hand in a reused buffer.
"""
import numpy as np
from numba import njit
from numba.extending import overload

from . import conv as KC
from .conv import _inside, same_padding, window_count
from .in_python import in_python, like


def _tap_boxes(x_dims, geometry):
    """For each tap (a, b, e): its index and, when some output position of it reads
    inside x, the output box (three (start, stop) ranges) and the input box (three
    strided slices) it reads; else None for both."""
    (kd, kh, kw, sd, sh, sw, pf, pt, pl, dd, dh, dw, od, oh, ow) = geometry
    steps, pads, dils, outs = (sd, sh, sw), (pf, pt, pl), (dd, dh, dw), (od, oh, ow)
    for a in range(kd):
        for b in range(kh):
            for e in range(kw):
                tap = (a, b, e)
                out_box, in_box = [], []
                for axis in range(3):
                    start = tap[axis] * dils[axis] - pads[axis]
                    o0, o1 = _inside(outs[axis], x_dims[axis], start, steps[axis])
                    if o0 >= o1:
                        break
                    first = start + o0 * steps[axis]
                    out_box.append((o0, o1))
                    in_box.append(slice(first, first + (o1 - o0 - 1) * steps[axis] + 1,
                                        steps[axis]))
                yield tap, (out_box, in_box) if len(out_box) == 3 else (None, None)


def im2col3d(x, cols, *geometry):
    """Fill ``cols`` [C*kd*kh*kw, N*od*oh*ow] from ``x`` [N, C, D, H, W]; returns cols."""
    n, c = x.shape[:2]
    kd, kh, kw = geometry[:3]
    od, oh, ow = geometry[12:]
    taps = cols.reshape(c, kd, kh, kw, n, od, oh, ow)
    for (a, b, e), (out_box, in_box) in _tap_boxes(x.shape[2:], geometry):
        rows = taps[:, a, b, e]                             # [C, N, od, oh, ow]
        if out_box is None:
            rows[...] = 0
            continue
        inside = tuple(slice(o0, o1) for o0, o1 in out_box)
        rows[...] = 0                                       # the padding's positions
        rows[(slice(None), slice(None)) + inside] = \
            x[(slice(None), slice(None)) + tuple(in_box)].transpose(1, 0, 2, 3, 4)
    return cols


def col2im3d(cols, dx, *geometry):
    """Write into ``dx`` [N, C, D, H, W] the sum, at each input position, of the ``cols``
    entries im2col3d would have read from it; returns dx."""
    n, c = dx.shape[:2]
    kd, kh, kw = geometry[:3]
    od, oh, ow = geometry[12:]
    taps = cols.reshape(c, kd, kh, kw, n, od, oh, ow)
    dx[...] = 0
    for (a, b, e), (out_box, in_box) in _tap_boxes(dx.shape[2:], geometry):
        if out_box is None:
            continue                                        # read only zeros of padding
        inside = tuple(slice(o0, o1) for o0, o1 in out_box)
        block = taps[(slice(None), a, b, e, slice(None)) + inside]      # [C, N, ...]
        target = dx[(slice(None), slice(None)) + tuple(in_box)]         # a view of dx
        np.add(target, block.transpose(1, 0, 2, 3, 4), out=target)
    return dx


# --- inside a compiled block (paddle_nb/compiler) --------------------------------------------
# conv3d, conv3d_transpose and their gradients from numba code, as ops/conv.py's conv_of and
# conv_grads (and ops/conv_transpose.py's kernels) compute them on the CPU: conv.py's batched
# loops (a batch of images at a time, one product per group: the interpreter's sums) with
# im2col3d and col2im3d above as their index maps (numpy, called in object mode: one home
# for the maps). The geometry is worked out here from the arrays' sizes, so one compiled
# segment serves every batch size.
def _columns(x, geometry):
    """im2col3d's cols [C*kd*kh*kw, N*od*oh*ow] of x [N, C, D, H, W]."""
    taps = geometry[0] * geometry[1] * geometry[2]
    positions = geometry[12] * geometry[13] * geometry[14]
    return im2col3d(np.ascontiguousarray(x),
                    np.empty((x.shape[1] * taps, x.shape[0] * positions), x.dtype), *geometry)


def _added_back(cols, shape, geometry):
    """col2im3d of cols into a new [N, C, D, H, W] array of ``shape``."""
    return col2im3d(np.ascontiguousarray(cols), np.empty(shape, cols.dtype), *geometry)


columns = in_python(_columns, like(0, ndim=2))
added_back = in_python(_added_back, like(0, ndim=5))


# conv.py's loops read 3-D images through these (conv.py says why an overload)
@overload(KC.image_columns, jit_options={"fastmath": False, "error_model": "numpy"})
def _image_columns_3d(x, geometry):
    if x.ndim == 5:
        return lambda x, geometry: columns(x, geometry)
    return None


@overload(KC.columns_added_back, jit_options={"fastmath": False, "error_model": "numpy"})
def _columns_added_back_3d(dcols, dx, n0, n1, geometry):
    if dx.ndim != 5:
        return None

    def into_images(dcols, dx, n0, n1, geometry):
        dx[n0:n1] = added_back(dcols, (n1 - n0,) + dx.shape[1:], geometry)
    return into_images


@njit(cache=True, fastmath=False, error_model="numpy")
def conv3d_geometry(x, w, strides, pads, dilations, groups, same):
    """ops/conv.geometry of x [N, C, D, H, W] and w [O, C/groups, kd, kh, kw]: (kd, kh, kw,
    sd, sh, sw, pf, pt, pl, dd, dh, dw, od, oh, ow); ``pads`` [front, back, top, bottom,
    left, right]; ``same``: SAME padding instead (pads from the sizes, dilations 1).
    Checks that the channels fit the filter (the interpreter's rerun names the op)."""
    if x.shape[1] != w.shape[1] * groups or w.shape[0] % groups:
        raise ValueError("conv3d: Input's channels must be Filter's dim 1 times groups, "
                         "and Filter's dim 0 a multiple of groups")
    kd, kh, kw = w.shape[2], w.shape[3], w.shape[4]
    if same:
        td = same_padding(x.shape[2], kd, strides[0])
        th = same_padding(x.shape[3], kh, strides[1])
        tw = same_padding(x.shape[4], kw, strides[2])
        pads = (td // 2, td - td // 2, th // 2, th - th // 2, tw // 2, tw - tw // 2)
        dilations = (1, 1, 1)
    od = window_count(x.shape[2], kd, strides[0], pads[0], pads[1], dilations[0])
    oh = window_count(x.shape[3], kh, strides[1], pads[2], pads[3], dilations[1])
    ow = window_count(x.shape[4], kw, strides[2], pads[4], pads[5], dilations[2])
    if od <= 0 or oh <= 0 or ow <= 0:
        raise ValueError("conv3d: the filter's window is larger than the padded input")
    return (kd, kh, kw, strides[0], strides[1], strides[2], pads[0], pads[2], pads[4],
            dilations[0], dilations[1], dilations[2], od, oh, ow)


@njit(cache=True, fastmath=False, error_model="numpy")
def _channels_first(a, last):
    """``a`` [N, C, D, H, W], C-contiguous (moved from [N, D, H, W, C] where ``last``)."""
    return np.ascontiguousarray(a.transpose((0, 4, 1, 2, 3)) if last else a)


@njit(cache=True, fastmath=False, error_model="numpy")
def _in_layout(a, last):
    """A channels-first result in the op's layout (C-contiguous)."""
    return np.ascontiguousarray(a.transpose((0, 2, 3, 4, 1)) if last else a)


@njit(cache=True, fastmath=False, error_model="numpy")
def convolved(x, w, geometry, groups):
    """The convolution's Output [N, O, od, oh, ow] of x [N, C, D, H, W] through im2col."""
    out = np.empty((x.shape[0], w.shape[0], geometry[12], geometry[13], geometry[14]),
                   x.dtype)
    return KC.convolved_into(out, x, w, geometry, groups)


@njit(cache=True, fastmath=False, error_model="numpy")
def _gradient_fits(dy, x, w, geometry):
    """Raise unless dOut [N, O, od, oh, ow] fits the convolution of x and w."""
    if dy.shape != (x.shape[0], w.shape[0], geometry[12], geometry[13], geometry[14]):
        raise ValueError("conv3d_grad: Output@GRAD must have the shape of the Output")


@njit(cache=True, fastmath=False, error_model="numpy")
def conv3d(x, w, strides, pads, dilations, groups, last, same):
    """conv3d's Output (in its layout) of x with w."""
    xc = _channels_first(x, last)
    geometry = conv3d_geometry(xc, w, strides, pads, dilations, groups, same)
    return _in_layout(convolved(xc, w, geometry, groups), last)


@njit(cache=True, fastmath=False, error_model="numpy")
def conv3d_grads(x, w, dy, strides, pads, dilations, groups, last, same, want_dx, want_dw):
    """conv3d_grad's Input@GRAD and Filter@GRAD."""
    xc, dyc = _channels_first(x, last), _channels_first(dy, last)
    geometry = conv3d_geometry(xc, w, strides, pads, dilations, groups, same)
    _gradient_fits(dyc, xc, w, geometry)
    dx, dw = KC.convolved_grads(xc, w, dyc, geometry, groups, want_dx, want_dw)
    return (_in_layout(dx, last) if want_dx else dx), dw


# conv3d_transpose: the transpose of the conv3d with ``geometry`` (ops/conv.geometry of the
# conv3d whose input gradient it is, from the attributes and the images' size): the forward
# Filter^T @ Input and col2im3d a batch of images at a time (conv.transposed_into), the
# gradient a conv3d of dOut.
@njit(cache=True, fastmath=False, error_model="numpy")
def _transpose_fits(x, w, geometry, groups):
    """Raise unless x [N, C_in, D, H, W] is the size the geometry was made for and fits
    the filter [C_in, C_out/groups, kd, kh, kw]."""
    if (x.shape[2], x.shape[3], x.shape[4]) != (geometry[12], geometry[13], geometry[14]) \
            or x.shape[1] != w.shape[0] or x.shape[1] % groups or \
            (w.shape[2], w.shape[3], w.shape[4]) != (geometry[0], geometry[1], geometry[2]):
        raise ValueError("conv3d_transpose: Input does not fit the Filter or the size "
                         "compiled for")


@njit(cache=True, fastmath=False, error_model="numpy")
def conv3d_transposed(x, w, geometry, out_dhw, groups, last):
    """conv3d_transpose's Output [N, C_out, *out_dhw] (its layout) of x with w."""
    xc = _channels_first(x, last)
    _transpose_fits(xc, w, geometry, groups)
    out = np.empty((xc.shape[0], w.shape[1] * groups, out_dhw[0], out_dhw[1], out_dhw[2]),
                   x.dtype)
    return _in_layout(KC.transposed_into(out, xc, w, geometry, groups), last)


@njit(cache=True, fastmath=False, error_model="numpy")
def conv3d_transposed_grads(x, w, dy, geometry, out_dhw, groups, last, want_dx, want_dw):
    """conv3d_transpose_grad's (Input@GRAD, Filter@GRAD) (an empty 5-D array where not
    wanted): the conv3d of dOut with the filter, and Input @ im2col(dOut)^T."""
    xc, dyc = _channels_first(x, last), _channels_first(dy, last)
    _transpose_fits(xc, w, geometry, groups)
    if dyc.shape != (xc.shape[0], w.shape[1] * groups, out_dhw[0], out_dhw[1], out_dhw[2]):
        raise ValueError("conv3d_transpose_grad: Output@GRAD must have the Output's shape")
    dx = convolved(dyc, w, geometry, groups) if want_dx else \
        np.empty((0, 0, 0, 0, 0), dy.dtype)
    _, dw = KC.convolved_grads(dyc, w, xc, geometry, groups, False, want_dw)
    return (_in_layout(dx, last) if want_dx else dx), dw
