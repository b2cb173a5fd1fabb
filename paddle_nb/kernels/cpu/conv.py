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
