"""im2col and col2im: the index maps that turn a convolution into matrix products.

``im2col`` copies, for every filter tap (channel c, row ki, column kj) and every output
position (image n, row i, column j), the input element that tap sees there into one row
of a matrix:

    cols[(c * kh + ki) * kw + kj, (n * oh + i) * ow + j] = x[n, c, i * sh - pt + ki * dh,
                                                                j * sw - pl + kj * dw]

and 0 where that position falls in the padding. A convolution is then the product
filter[Cout, C*kh*kw] @ cols (one per group: a group's channels are a block of rows).
``col2im`` is the transpose of that map: each entry of a cols-shaped matrix is added into
the input position it was read from (a position read by several taps gets each), which
is the input's gradient, and also conv2d_transpose's forward.

Both write every element of their output (im2col's zeros, col2im's planes zeroed first),
so callers may hand in a reused buffer. im2col is numpy (one strided copy per tap: numpy's
copy loops beat every numba loop tried, see ``im2col``); col2im is numba, a serial or a
``prange`` kernel by size, over the input's (n, c) planes: each plane is written by its
own channel's rows only, so threads never add into the same element.
"""
import numpy as np
from numba import njit
from numba.extending import overload

from . import direct_conv as KD
from .in_python import in_python, like
from .matmul import product
from .threads import parallel_ok
from .twins import twins

# From where col2im's prange kernel runs (2 threads), in cols elements (C*kh*kw *
# N*oh*ow). Measured (float32, 3x3 taps, stride 1) on a quiet machine: 7.2M elements
# 6.4 ms serial, 3.4 ms prange; with the other core busy (other processes) the prange
# gained nothing at any size (1k to 7M elements: 1.02-1.85x the serial time), so it
# starts where a wake-up of the pool (~0.1 ms here) is small beside the work.
MIN_PARALLEL_COLS = 262_144
# The ops take a batch of images at a time (ops/conv.py: batches): one batch's cols is at
# most about this many bytes (L3 here is 32 MB), so memory stays bounded (cols is kh*kw
# times the input). Smaller batches lost: im2col costs ~0.3 ms of numpy calls per batch
# (3x3 taps), and each batch's product wakes BLAS's threads again. The benchmark's
# forward (29 MB of cols; timed in turns, the machine busy with other work): 56 ms in
# 2 MB batches, 32 ms in 8 MB ones, 22 ms in one; forward+backward 52, 39, 28 ms.
COLS_BATCH_BYTES = 32 << 20


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _valid_columns(j_count, width, start, stride):
    """The output columns j in [0, j_count) whose input column start + j * stride lies in
    [0, width): a range (j0, j1), empty when j0 >= j1 (stride > 0)."""
    j0 = 0 if start >= 0 else (-start + stride - 1) // stride
    j1 = (width - start + stride - 1) // stride if width > start else 0
    return j0, (j1 if j1 < j_count else j_count)


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _col2im_plane(cols, dx, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow, p):
    n, c = p // dx.shape[1], p % dx.shape[1]
    height, width = dx.shape[2], dx.shape[3]
    plane = dx[n, c]
    for ih in range(height):
        for iw in range(width):
            plane[ih, iw] = 0
    for ki in range(kh):
        for kj in range(kw):
            r = (c * kh + ki) * kw + kj
            j0, j1 = _valid_columns(ow, width, kj * dw - pl, sw)
            for i in range(oh):
                ih = i * sh - pt + ki * dh
                if ih < 0 or ih >= height:
                    continue
                o = (n * oh + i) * ow
                iw = j0 * sw - pl + kj * dw
                for j in range(j0, j1):
                    plane[ih, iw] += cols[r, o + j]
                    iw += sw


_col2im_serial, _col2im_parallel = twins(_col2im_plane, "_col2im",
                                          items="dx.shape[0] * dx.shape[1]")


def _inside(count: int, size: int, start: int, step: int) -> tuple[int, int]:
    """The output positions o in [0, count) whose input position start + o * step lies
    in [0, size): a range (o0, o1), empty when o0 >= o1 (as _valid_columns)."""
    o0 = 0 if start >= 0 else (-start + step - 1) // step
    o1 = (size - start + step - 1) // step if size > start else 0
    return o0, min(o1, count)


def im2col(x, cols, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow):
    """Fill ``cols`` [C*kh*kw, N*oh*ow] from ``x`` [N, C, H, W] (one dtype; strides and
    dilations > 0); returns cols.

    numpy, one strided copy per tap: each tap's rows, seen as [C, N, oh, ow], take the
    block of x its window positions read (a strided view), and the rows and columns it
    reads in the padding are zeroed. numba took 4.9 ms (slices) to 14 ms (an index per
    element) for the benchmark's 7.2M elements, numpy's copy 2.3 ms."""
    n, c, height, width = x.shape
    taps = cols.reshape(c, kh, kw, n, oh, ow)
    for ki in range(kh):
        i0, i1 = _inside(oh, height, ki * dh - pt, sh)
        for kj in range(kw):
            j0, j1 = _inside(ow, width, kj * dw - pl, sw)
            tap = taps[:, ki, kj]
            if i0 >= i1 or j0 >= j1:
                tap[...] = 0
                continue
            ih, iw = i0 * sh - pt + ki * dh, j0 * sw - pl + kj * dw
            block = x[:, :, ih:ih + (i1 - i0 - 1) * sh + 1:sh,
                      iw:iw + (j1 - j0 - 1) * sw + 1:sw]
            np.copyto(tap[:, :, i0:i1, j0:j1], block.transpose(1, 0, 2, 3))
            for part in (tap[:, :, :i0], tap[:, :, i1:], tap[:, :, i0:i1, :j0],
                         tap[:, :, i0:i1, j1:]):
                if part.size:
                    part[...] = 0
    return cols


def col2im(cols, dx, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow):
    """Write into ``dx`` [N, C, H, W] the sum, at each input position, of the ``cols``
    entries im2col would have read from it; returns dx."""
    args = (kh, kw, sh, sw, pt, pl, dh, dw, oh, ow)
    if cols.size >= MIN_PARALLEL_COLS and dx.shape[0] * dx.shape[1] > 1 and parallel_ok():
        _col2im_parallel(cols, dx, *args)
    else:
        _col2im_serial(cols, dx, *args)
    return dx


# --- inside a compiled block (paddle_nb/compiler) --------------------------------------------
# conv2d and its gradients from numba code, as ops/conv.py's conv_of and conv_grads compute
# them on the CPU: the direct loops (direct_conv.convolved) for the geometries they fit,
# else im2col a batch of images at a time (numpy's copies, called from numba code as
# kernels/cpu/matmul.py calls numpy's BLAS) and one product per group (matmul.product, the
# interpreter's BLAS calls), and col2im's serial loop. The geometry is worked out here from
# the arrays' sizes, so that one compiled segment serves every batch and image size.
@njit(cache=True, fastmath=False, error_model="numpy")
def window_count(n, k, s, p0, p1, d):
    """Window positions along an axis of n (padded by p0, p1), as Paddle's ConvOutputSize
    counts them: its C++ division truncates toward zero, so a window that overhangs the
    padded input by less than a stride still gives one position, over zeros (Paddle 2.6.2:
    a 2x2 input, a 3x3 filter and stride 2 give a 1x1 output)."""
    span = n + p0 + p1 - (d * (k - 1) + 1)
    return (span // s if span >= 0 else -(-span // s)) + 1


@njit(cache=True, fastmath=False, error_model="numpy")
def same_padding(n, k, s):
    """The padding SAME adds along an axis of n (both sides together; the odd one goes
    after): so that out = ceil(n / s), as Paddle's UpdatePaddingAndDilation pads."""
    out = -(-n // s)
    total = (out - 1) * s + k - n
    return total if total > 0 else 0


@njit(cache=True, fastmath=False, error_model="numpy")
def conv2d_geometry(x, w, strides, pads, dilations, groups, same):
    """ops/conv.geometry of x [N, C, H, W] and w [O, C/groups, kh, kw]: (kh, kw, sh, sw,
    pt, pl, dh, dw, oh, ow); ``pads`` [top, bottom, left, right]; ``same``: SAME padding
    instead (pads from the sizes, dilations 1). Checks that the channels fit the filter
    (the loops index by them; the interpreter's rerun names the op)."""
    if x.shape[1] != w.shape[1] * groups or w.shape[0] % groups:
        raise ValueError("conv2d: Input's channels must be Filter's dim 1 times groups, "
                         "and Filter's dim 0 a multiple of groups")
    kh, kw = w.shape[2], w.shape[3]
    if same:
        th = same_padding(x.shape[2], kh, strides[0])
        tw = same_padding(x.shape[3], kw, strides[1])
        pads, dilations = (th // 2, th - th // 2, tw // 2, tw - tw // 2), (1, 1)
    oh = window_count(x.shape[2], kh, strides[0], pads[0], pads[1], dilations[0])
    ow = window_count(x.shape[3], kw, strides[1], pads[2], pads[3], dilations[1])
    if oh <= 0 or ow <= 0:
        raise ValueError("conv2d: the filter's window is larger than the padded input")
    return (kh, kw, strides[0], strides[1], pads[0], pads[2], dilations[0], dilations[1],
            oh, ow)


def _columns(x, geometry):
    """im2col's cols [C*kh*kw, N*oh*ow] of x [N, C, H, W] (C-contiguous)."""
    kh, kw, oh, ow = geometry[0], geometry[1], geometry[8], geometry[9]
    return im2col(x, np.empty((x.shape[1] * kh * kw, x.shape[0] * oh * ow), x.dtype),
                  *geometry)


# from numba code: numpy's strided copies, run in object mode
columns = in_python(_columns, like(0, ndim=2))


# --- the batched loops of both ranks: conv2d's here, conv3d's (conv3d.py) -------------------
# A batch of images at a time (ops/conv.batches), one product per group (matmul.product:
# the interpreter's BLAS calls), so the sums are the interpreter's. What differs by the
# images' rank is the index map: ``image_columns`` (im2col) and ``columns_added_back``
# (col2im), chosen when numba types a loop below by the rank of the images it is given
# (``@overload``): the 2-D ones here, the 3-D ones in conv3d.py. (Passing the maps as
# arguments would compile the loops again in every process: numba's disk cache does not
# keep a function specialised on a function argument.)
def image_columns(x, geometry):
    """im2col's cols [C*taps, N*positions] of the images x (C-contiguous, channels
    first): numba code only (an overload per rank)."""
    raise NotImplementedError("conv.image_columns is called from numba code")


def columns_added_back(dcols, dx, n0, n1, geometry):
    """col2im of ``dcols`` written into the images dx[n0:n1]: numba code only (an
    overload per rank)."""
    raise NotImplementedError("conv.columns_added_back is called from numba code")


@overload(image_columns, jit_options={"fastmath": False, "error_model": "numpy"})
def _image_columns_2d(x, geometry):
    if x.ndim == 4:
        return lambda x, geometry: columns(x, geometry)
    return None


@overload(columns_added_back, jit_options={"fastmath": False, "error_model": "numpy"})
def _columns_added_back_2d(dcols, dx, n0, n1, geometry):
    if dx.ndim != 4:
        return None

    def added_back(dcols, dx, n0, n1, geometry):
        kh, kw, sh, sw, pt, pl, dh, dw, oh, ow = geometry
        _col2im_serial(dcols, dx[n0:n1], kh, kw, sh, sw, pt, pl, dh, dw, oh, ow)
    return added_back


@njit(cache=True, fastmath=False, error_model="numpy")
def _product(dims):
    """The product of a tuple of sizes (a filter's taps, an image's positions)."""
    p = 1
    for d in dims:
        p *= d
    return p


@njit(cache=True, fastmath=False, error_model="numpy")
def images_per_batch(channels, taps, positions, itemsize):
    """How many images one im2col (or col2im) takes (ops/conv.batches with the CPU's
    images_per_im2col): one batch's cols, [channels*taps, images*positions], at most
    COLS_BATCH_BYTES."""
    per_image = channels * taps * positions * itemsize
    return max(1, COLS_BATCH_BYTES // max(per_image, 1))


@njit(cache=True, fastmath=False, error_model="numpy")
def grouped(a, groups):
    """Images [N, C, ...] as [G, C/G, N*...] (ops/conv.grouped, channels first)."""
    rows = np.ascontiguousarray(np.swapaxes(a, 0, 1))
    return rows.reshape((groups, a.shape[1] // groups, rows.size // a.shape[1]))


@njit(cache=True, fastmath=False, error_model="numpy")
def convolved_into(out, x, w, geometry, groups):
    """The convolution Output [N, O, ...] of x [N, C, ...] (C-contiguous) through im2col,
    written into ``out``; returns out."""
    n, o = x.shape[0], w.shape[0]
    per_group = o // groups
    positions = _product(out.shape[2:])
    w_rows = np.ascontiguousarray(w).reshape((groups, per_group, w.size // o))
    flat = out.reshape((n, o, positions))
    step = images_per_batch(x.shape[1], _product(w.shape[2:]), positions, x.itemsize)
    for n0 in range(0, n, step):
        n1 = min(n, n0 + step)
        cols = image_columns(x[n0:n1], geometry)
        cols = cols.reshape((groups, cols.shape[0] // groups, cols.shape[1]))
        for g in range(groups):
            part = product(w_rows[g], cols[g], False, False, 1.0)   # [O/G, images*positions]
            flat[n0:n1, g * per_group:(g + 1) * per_group] = \
                part.reshape((per_group, n1 - n0, positions)).transpose((1, 0, 2))
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def convolved_grads(x, w, dy, geometry, groups, want_dx, want_dw):
    """(dX, dFilter) of ``convolved_into`` (empty arrays of their ranks where not wanted):
    dFilter the sum over batches of dOut @ cols^T, dX col2im(Filter^T @ dOut). dy
    [N, O, ...] fits the convolution (the callers check)."""
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    w_rows = np.ascontiguousarray(w).reshape((groups, o // groups, w.size // o))
    taps = _product(w.shape[2:])
    dx = np.empty(x.shape if want_dx else (0,) + x.shape[1:], dy.dtype)
    dfilter = np.empty((groups, o // groups, w.size // o) if want_dw else (0, 0, 0), dy.dtype)
    step = images_per_batch(c, taps, _product(dy.shape[2:]), x.itemsize)
    for n0 in range(0, n, step):
        n1 = min(n, n0 + step)
        dy_rows = grouped(dy[n0:n1], groups)
        if want_dw:
            cols = image_columns(x[n0:n1], geometry)
            cols = cols.reshape((groups, cols.shape[0] // groups, cols.shape[1]))
            for g in range(groups):
                part = product(dy_rows[g], cols[g], False, True, 1.0)
                if n0 == 0:
                    dfilter[g] = part
                else:                                   # batch by batch, as conv_grads adds
                    dfilter[g] = dfilter[g] + part
        if want_dx:
            dcols = np.empty((c * taps, dy_rows.shape[2]), dy.dtype)
            rows = dcols.shape[0] // groups
            for g in range(groups):
                dcols[g * rows:(g + 1) * rows] = product(w_rows[g], dy_rows[g], True, False, 1.0)
            columns_added_back(dcols, dx, n0, n1, geometry)
    return dx, dfilter.reshape(w.shape if want_dw else (0,) + w.shape[1:])


@njit(cache=True, fastmath=False, error_model="numpy")
def transposed_into(out, x, w, geometry, groups):
    """The transposed convolution Output [N, C_out, ...] of x [N, C_in, ...] (C-contiguous):
    Filter^T @ Input and col2im a batch of images at a time, written into ``out``;
    returns out."""
    n, cin = x.shape[0], x.shape[1]
    cout = out.shape[1]
    taps = _product(w.shape[2:])
    w_rows = np.ascontiguousarray(w).reshape((groups, cin // groups, w.size // cin))
    step = images_per_batch(cout, taps, _product(x.shape[2:]), x.itemsize)  # cout channels
    for n0 in range(0, n, step):
        n1 = min(n, n0 + step)
        x_rows = grouped(x[n0:n1], groups)
        cols = np.empty((cout * taps, x_rows.shape[2]), x.dtype)
        rows = cols.shape[0] // groups
        for g in range(groups):
            cols[g * rows:(g + 1) * rows] = product(w_rows[g], x_rows[g], True, False, 1.0)
        columns_added_back(cols, out, n0, n1, geometry)
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def _gradient_fits(dy, x, w, geometry):
    """Raise unless dOut [N, O, oh, ow] fits the convolution of x and w."""
    if dy.shape != (x.shape[0], w.shape[0], geometry[8], geometry[9]):
        raise ValueError("conv2d_grad: Output@GRAD must have the shape of the Output")


@njit(cache=True, fastmath=False, error_model="numpy")
def convolved_by_columns(x, w, geometry, groups):
    """conv2d's Output [N, O, oh, ow] of x [N, C, H, W] (C-contiguous) through im2col."""
    out = np.empty((x.shape[0], w.shape[0], geometry[8], geometry[9]), x.dtype)
    return convolved_into(out, x, w, geometry, groups)


@njit(cache=True, fastmath=False, error_model="numpy")
def _channels_first(a, last):
    """``a`` [N, C, H, W], C-contiguous (moved from [N, H, W, C] where ``last``)."""
    return np.ascontiguousarray(a.transpose((0, 3, 1, 2)) if last else a)


@njit(cache=True, fastmath=False, error_model="numpy")
def _in_layout(a, last):
    """A channels-first result in the op's layout (C-contiguous)."""
    return np.ascontiguousarray(a.transpose((0, 2, 3, 1)) if last else a)


@njit(cache=True, fastmath=False, error_model="numpy")
def conv2d_direct(x, w, strides, pads, dilations, groups, last, same):
    """conv2d's Output by the direct loops (a geometry they fit: ops/conv.py checks)."""
    xc = _channels_first(x, last)
    geometry = conv2d_geometry(xc, w, strides, pads, dilations, groups, same)
    return _in_layout(KD.convolved(xc, w, geometry, groups), last)


@njit(cache=True, fastmath=False, error_model="numpy")
def conv2d_direct_grads(x, w, dy, strides, pads, dilations, groups, last, same, want_dx,
                        want_dw):
    """conv2d_grad's Input@GRAD and Filter@GRAD by the direct loops."""
    xc, dyc = _channels_first(x, last), _channels_first(dy, last)
    geometry = conv2d_geometry(xc, w, strides, pads, dilations, groups, same)
    _gradient_fits(dyc, xc, w, geometry)
    dx, dw = KD.convolved_grads(xc, w, dyc, geometry, groups, want_dx, want_dw)
    return (_in_layout(dx, last) if want_dx else dx), dw


@njit(cache=True, fastmath=False, error_model="numpy")
def conv2d_by_columns(x, w, strides, pads, dilations, groups, last, same):
    """conv2d's Output through im2col and BLAS."""
    xc = _channels_first(x, last)
    geometry = conv2d_geometry(xc, w, strides, pads, dilations, groups, same)
    return _in_layout(convolved_by_columns(xc, w, geometry, groups), last)


@njit(cache=True, fastmath=False, error_model="numpy")
def conv2d_by_columns_grads(x, w, dy, strides, pads, dilations, groups, last, same,
                            want_dx, want_dw):
    """conv2d_grad's Input@GRAD and Filter@GRAD through im2col, BLAS and col2im."""
    xc, dyc = _channels_first(x, last), _channels_first(dy, last)
    geometry = conv2d_geometry(xc, w, strides, pads, dilations, groups, same)
    _gradient_fits(dyc, xc, w, geometry)
    dx, dw = convolved_grads(xc, w, dyc, geometry, groups, want_dx, want_dw)
    return (_in_layout(dx, last) if want_dx else dx), dw


# --- unfold and fold (ops/fold.py) inside a compiled block: im2col of the whole batch and
# col2im's serial loop, as the CPU place runs them for those ops. ``geometry`` is worked out
# by ops/fold.py from the attributes and the images' size ``hw`` (not the batch's), which
# is checked here: im2col and col2im index by it.
@njit(cache=True, fastmath=False, error_model="numpy")
def unfolded_windows(x, geometry, hw):
    """unfold's Y [N, C*kh*kw, oh*ow] of images x [N, C, H, W]."""
    if (x.shape[2], x.shape[3]) != hw:
        raise ValueError("unfold: the images are not the size the windows were made for")
    cols = columns(np.ascontiguousarray(x), geometry)          # [C*kh*kw, N*oh*ow]
    windows = geometry[8] * geometry[9]
    per_image = cols.reshape((cols.shape[0], x.shape[0], windows))
    return np.ascontiguousarray(per_image.transpose((1, 0, 2)))


@njit(cache=True, fastmath=False, error_model="numpy")
def folded_windows(y, geometry, hw):
    """fold's images [N, C, H, W] (``hw``) of columns y [N, C*kh*kw, oh*ow]: each column
    added back where its window lies."""
    n, rows, windows = y.shape
    kh, kw, sh, sw, pt, pl, dh, dw, oh, ow = geometry
    if rows % (kh * kw) or windows != oh * ow:
        raise ValueError("fold: the columns do not fit the windows of the images")
    cols = np.ascontiguousarray(y.transpose((1, 0, 2))).reshape((rows, n * windows))
    images = np.empty((n, rows // (kh * kw), hw[0], hw[1]), y.dtype)
    _col2im_serial(cols, images, kh, kw, sh, sw, pt, pl, dh, dw, oh, ow)
    return images


# --- conv2d_transpose (ops/conv_transpose.py) inside a compiled block: the transpose of the
# conv2d with ``geometry`` (ops/conv.geometry of the conv2d whose input gradient it is, from
# the attributes and the images' size), by the loops above: the forward Filter^T @ Input
# and col2im's serial loop a batch of images at a time (transposed_into), the gradient a
# conv2d of dOut (convolved_by_columns for dInput; convolved_grads' filter sums for
# dFilter).
@njit(cache=True, fastmath=False, error_model="numpy")
def _transpose_fits(x, w, geometry, groups):
    """Raise unless x [N, C_in, H, W] is the size the geometry was made for and fits the
    filter [C_in, C_out/groups, kh, kw]."""
    if (x.shape[2], x.shape[3]) != (geometry[8], geometry[9]) or x.shape[1] != w.shape[0] \
            or x.shape[1] % groups or (w.shape[2], w.shape[3]) != (geometry[0], geometry[1]):
        raise ValueError("conv2d_transpose: Input does not fit the Filter or the size "
                         "compiled for")


@njit(cache=True, fastmath=False, error_model="numpy")
def conv2d_transposed(x, w, geometry, out_hw, groups, last):
    """conv2d_transpose's Output [N, C_out, *out_hw] (its layout) of x with w."""
    xc = _channels_first(x, last)
    _transpose_fits(xc, w, geometry, groups)
    out = np.empty((xc.shape[0], w.shape[1] * groups, out_hw[0], out_hw[1]), x.dtype)
    return _in_layout(transposed_into(out, xc, w, geometry, groups), last)


@njit(cache=True, fastmath=False, error_model="numpy")
def conv2d_transposed_grads(x, w, dy, geometry, out_hw, groups, last, want_dx, want_dw):
    """conv2d_transpose_grad's (Input@GRAD, Filter@GRAD) (an empty 4-D array where not
    wanted): the conv2d of dOut with the filter, and Input @ im2col(dOut)^T."""
    xc, dyc = _channels_first(x, last), _channels_first(dy, last)
    _transpose_fits(xc, w, geometry, groups)
    if dyc.shape != (xc.shape[0], w.shape[1] * groups, out_hw[0], out_hw[1]):
        raise ValueError("conv2d_transpose_grad: Output@GRAD must have the Output's shape")
    dx = convolved_by_columns(dyc, w, geometry, groups) if want_dx else \
        np.empty((0, 0, 0, 0), dy.dtype)
    _, dw = convolved_grads(dyc, w, xc, geometry, groups, False, want_dw)
    return (_in_layout(dx, last) if want_dx else dx), dw
