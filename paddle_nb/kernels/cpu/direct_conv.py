"""Direct convolution with stride 1 on the CPU: no im2col, no BLAS.

A convolution of stride 1 reads, for filter tap k (channel c, row ki, column kj), the
input plane shifted by (ki*dh, kj*dw). On the zero-padded input stored flat (rows of
``wp`` = padded width), that shift is one offset, ``offs[k] = (c*hp + ki*dh)*wp +
kj*dw``, so an output plane computed on rows of the padded width ("wide": its last
(kw-1)*dw columns of every row are junk and dropped) is

    acc[t] = sum over taps k of w[k] * xf[offs[k] + t],   t < length = oh*wp - (kw-1)*dw

one long, contiguous, vectorisable loop per tap: no index arithmetic per element, no
padding tests, and the window never leaves the padded plane (the last t reads its last
element). ``_two_planes`` runs it for two output channels and four taps at a time: each
input element loaded feeds 8 multiply-adds, and each accumulator is loaded and stored
once per 4 taps. Measured on conv2d [64, 16, 28, 28] * [16, 16, 3, 3] (2 threads): one
channel and one tap per pass 4.3 ms, one channel and 8 taps 2.4 ms, two channels and 4
taps 1.55 ms, four channels and 4 taps 1.73 ms (registers run out); im2col + sgemm 5.8 ms.

The gradients run the same kind of loop:
- the input's gradient is the adjoint: each tap of each output channel adds its weight
  times dOut's plane, laid out wide (zeros in the junk columns), into the padded input
  plane at the tap's offset, four output channels per pass; the padding is cropped off at
  the end. (Written as a convolution of dOut padded by (k-1)*d on each side with the
  filter mirrored, it did twice the multiply-adds on LeNet's second layer, most of them
  on that padding.)
- the filter's gradient is, per output channel o and tap k, the sum over images of a
  dot product: dOut[n, o] laid out wide with the input at ``offs[k]``. A dot product
  only vectorises if its sum may be reordered, so this one kernel allows ``reassoc``:
  the sum is taken in a different (fixed, deterministic) order, as BLAS takes it, with
  the same float32 rounding per term.
Multiply-adds may be fused (``contract``): one rounding instead of two, as BLAS does.

Items (an image's output channels, or a chunk of them when the batch is small; an image
and a pair of input channels; a pair of output channels and a block of 4 taps) are
independent, so each kernel has a ``prange`` twin (twins.py), used past
``MIN_PARALLEL_MACS`` when ``parallel_ok()`` (threads.py). The forward's items pad their
own image into a scratch array first: the padded copy is then made by both threads and
read from cache (a whole padded batch made by numpy first took 0.3 ms of one thread, 15%
of the forward).

Where the forward's time goes (one thread, per image of the benchmark): the loops of
``_two_planes`` ~40 us at about 43 G useful multiply-adds/s (the vector units' rate:
AVX-512 here), padding ~7 us, taking the junk columns out ~4 us.
"""
import functools

import numpy as np
from numba import njit

from .threads import parallel_ok
from .twins import twins

FUSED = {"contract"}
FUSED_REORDERED = {"contract", "reassoc"}
# Multiply-adds from which the prange twins run: a convolution of ~2^18 (conv2d [8, 4,
# 16, 16] * [4, 4, 3, 3] is 0.6M) takes ~0.1 ms serial, about what waking the pool costs.
MIN_PARALLEL_MACS = 1 << 20


def _either(serial, parallel, macs: int, *args) -> None:
    """Run the prange twin past MIN_PARALLEL_MACS multiply-adds when threads.py allows,
    else the serial loop."""
    (parallel if macs >= MIN_PARALLEL_MACS and parallel_ok() else serial)(*args)


@njit(cache=True, fastmath=False, error_model="numpy")
def tap_offsets(channels, hp, wp, kh, kw, dh, dw):
    """The flat offset of each tap (c, ki, kj) in a group's padded planes, in the filter's
    row order (int64 [channels*kh*kw]): ``(c*hp + ki*dh)*wp + kj*dw``."""
    offs = np.empty(channels * kh * kw, np.int64)
    for c in range(channels):
        for ki in range(kh):
            for kj in range(kw):
                offs[(c * kh + ki) * kw + kj] = (c * hp + ki * dh) * wp + kj * dw
    return offs


@functools.lru_cache(maxsize=256)
def offsets(channels: int, hp: int, wp: int, kh: int, kw: int, dh: int, dw: int):
    """tap_offsets, read-only and kept per geometry (making it took 3% of the benchmark's
    forward)."""
    offs = tap_offsets(channels, hp, wp, kh, kw, dh, dw)
    offs.flags.writeable = False
    return offs


@njit(cache=True, fastmath=FUSED, error_model="numpy", inline="always")
def _two_planes(a0, a1, xf, offs, w0, w1, length):
    """a0[:length] += sum_k w0[k] * xf[offs[k]:][:length], a1 likewise with w1."""
    k, taps = 0, offs.size
    while k + 4 <= taps:
        s0, s1 = xf[offs[k]:offs[k] + length], xf[offs[k + 1]:offs[k + 1] + length]
        s2, s3 = xf[offs[k + 2]:offs[k + 2] + length], xf[offs[k + 3]:offs[k + 3] + length]
        u0, u1, u2, u3 = w0[k], w0[k + 1], w0[k + 2], w0[k + 3]
        v0, v1, v2, v3 = w1[k], w1[k + 1], w1[k + 2], w1[k + 3]
        for t in range(length):
            x0, x1, x2, x3 = s0[t], s1[t], s2[t], s3[t]
            a0[t] += u0 * x0 + u1 * x1 + u2 * x2 + u3 * x3
            a1[t] += v0 * x0 + v1 * x1 + v2 * x2 + v3 * x3
        k += 4
    while k < taps:
        s0, u0, v0 = xf[offs[k]:offs[k] + length], w0[k], w1[k]
        for t in range(length):
            a0[t] += u0 * s0[t]
            a1[t] += v0 * s0[t]
        k += 1


@njit(cache=True, fastmath=FUSED, error_model="numpy", inline="always")
def _pad_into(xg, xf, pt, pl, hp, wp):
    """The planes xg [c, H, W] zero-padded into xf [c*hp*wp] (input at rows pt.., columns
    pl..). Flat, a padded plane is its input rows with runs of zeros between them (the
    right padding of one row and the left of the next are one run), so it is written as
    contiguous runs with no test per element."""
    h, w = xg.shape[1], xg.shape[2]
    for c in range(xg.shape[0]):
        base = c * hp * wp
        first, end = base + pt * wp + pl, base + hp * wp
        for t in range(base, first):
            xf[t] = 0
        for i in range(h):
            start, src = first + i * wp, xg[c, i]
            for j in range(w):
                xf[start + j] = src[j]
            stop = start + wp if i < h - 1 else end          # zeros up to the next row
            for t in range(start + w, stop):
                xf[t] = 0


@njit(cache=True, fastmath=FUSED, error_model="numpy", inline="always")
def _narrow(wide, plane, wp):
    """plane [oh, ow] = the rows of ``wide`` (rows of wp, junk past ow) without their junk:
    one plane at a time, row by row (two planes' elements interleaved took 1.6x as long;
    adding the last taps on the way here, to save this pass, made the kernel 1.5x slower)."""
    for i in range(plane.shape[0]):
        row, start = plane[i], i * wp
        for j in range(plane.shape[1]):
            row[j] = wide[start + j]


@njit(cache=True, fastmath=FUSED, error_model="numpy", inline="always")
def _forward_item(x, wr, offs, out, groups, pt, pl, hp, wp, chunks, item):
    """One image's output channels of one group, or a chunk of their pairs (item numbers
    image, group, chunk): the item pads its image's planes of the group itself, so the
    padded copy is made by both threads, in cache, right before the loops read it."""
    n_out, oh, ow = out.shape[1], out.shape[2], out.shape[3]
    per_group, plane = n_out // groups, x.shape[1] // groups
    pairs = (per_group + 1) // 2
    n, rest = item // (groups * chunks), item % (groups * chunks)
    g, chunk = rest // chunks, rest % chunks
    xf = np.empty(plane * hp * wp, x.dtype)
    _pad_into(x[n, g * plane:(g + 1) * plane], xf, pt, pl, hp, wp)
    length = oh * wp - (wp - ow)
    a = np.empty((2, oh * wp), out.dtype)
    for pair in range(chunk * pairs // chunks, (chunk + 1) * pairs // chunks):
        o = g * per_group + 2 * pair
        o1 = o + 1 if o + 1 < (g + 1) * per_group else o       # an odd count: the last alone
        a[:] = 0
        _two_planes(a[0], a[1], xf, offs, wr[o], wr[o1], length)
        _narrow(a[0], out[n, o], wp)
        _narrow(a[1], out[n, o1], wp)         # the same values when o1 == o


_forward_serial, _forward_parallel = twins(_forward_item, "_forward",
                                            items="out.shape[0] * groups * chunks")


# Items the forward wants at least, so that both threads have work when the batch is
# small: a (image, group) is split into chunks of its channel pairs below this, each
# chunk padding the planes again (cheap beside 2 output planes of multiply-adds).
MIN_ITEMS = 8


def forward(x, wr, offs, out, groups: int, pt: int, pl: int, hp: int, wp: int):
    """out [N, O, oh, ow] = the convolution of x [N, C, H, W], zero-padded to planes [hp,
    wp] with its rows at pt.. and columns at pl.., with the filter rows ``wr`` [O,
    C/groups*kh*kw] at tap offsets ``offs`` (into one group's padded planes); returns out."""
    pairs = (out.shape[1] // groups + 1) // 2
    chunks = min(pairs, -(-MIN_ITEMS // (x.shape[0] * groups)))
    _either(_forward_serial, _forward_parallel, out.size * wr.shape[1],
            x, wr, offs, out, groups, pt, pl, hp, wp, chunks)
    return out


@njit(cache=True, fastmath=FUSED_REORDERED, error_model="numpy", inline="always")
def _filter_grad_item(dyw, xf, offs, dw, groups, length, item):
    """dw[o:o+2, k:k+4] for a pair of output channels of one group and a block of 4 taps
    (item numbers pair, block): each input element loaded feeds 8 multiply-adds."""
    blocks, per_group = (offs.size + 3) // 4, dw.shape[0] // groups
    pairs = (per_group + 1) // 2
    pair, k = item // blocks, 4 * (item % blocks)
    g = pair // pairs
    o = g * per_group + 2 * (pair % pairs)
    o1 = o + 1 if o + 1 < (g + 1) * per_group else o       # an odd count: the last alone
    plane = xf.shape[1] // groups
    last = offs.size - 1          # a block past the last tap reads the last one again
    q1, q2, q3 = min(k + 1, last), min(k + 2, last), min(k + 3, last)
    zero = np.zeros(1, dw.dtype)[0]                          # sums in the arrays' own type
    r0 = r1 = r2 = r3 = p0 = p1 = p2 = p3 = zero
    for n in range(dyw.shape[0]):
        d, e, x = dyw[n, o], dyw[n, o1], xf[n, g * plane:(g + 1) * plane]
        s0, s1 = x[offs[k]:offs[k] + length], x[offs[q1]:offs[q1] + length]
        s2, s3 = x[offs[q2]:offs[q2] + length], x[offs[q3]:offs[q3] + length]
        for t in range(length):
            dv, ev = d[t], e[t]
            x0, x1, x2, x3 = s0[t], s1[t], s2[t], s3[t]
            r0 += dv * x0
            r1 += dv * x1
            r2 += dv * x2
            r3 += dv * x3
            p0 += ev * x0
            p1 += ev * x1
            p2 += ev * x2
            p3 += ev * x3
    for m, r, p in ((0, r0, p0), (1, r1, p1), (2, r2, p2), (3, r3, p3)):
        if k + m <= last:
            dw[o, k + m] = r
            dw[o1, k + m] = p


_filter_grad_serial, _filter_grad_parallel = twins(
    _filter_grad_item, "_filter_grad",
    items="groups * ((dw.shape[0] // groups + 1) // 2) * ((offs.size + 3) // 4)")


def filter_grad(dyw, xf, offs, dw, groups: int, length: int):
    """dw [O, C/groups*kh*kw] = for each output channel and tap, the sum over images of
    dOut laid out wide ``dyw`` [N, O, oh*wp] (zeros in the junk columns) times the
    padded input ``xf`` at the tap's offset; returns dw."""
    _either(_filter_grad_serial, _filter_grad_parallel, dyw.shape[0] * dw.size * length,
            dyw, xf, offs, dw, groups, length)
    return dw


@njit(cache=True, fastmath=FUSED, error_model="numpy", inline="always")
def _input_grad_item(dyw, wr, taps, dx, acc, groups, hp, wp, pt, pl, length, item):
    """dX of a pair of input channels (c, c1) of image n (item numbers image, group,
    pair): every tap of every output channel adds its weight times dOut's wide plane into
    the padded input plane at the tap's offset (``taps`` [kh*kw], offsets within one
    plane); four output channels per pass share each accumulator load and store."""
    n_in, h, w = dx.shape[1], dx.shape[2], dx.shape[3]
    per_in, per_out = n_in // groups, dyw.shape[1] // groups
    pairs = (per_in + 1) // 2
    n, rest = item // (groups * pairs), item % (groups * pairs)
    g = rest // pairs
    c = 2 * (rest % pairs)                        # within the group
    c1 = c + 1 if c + 1 < per_in else c           # an odd count: the last alone
    kk = taps.size
    zero = np.zeros(1, dx.dtype)[0]            # the weight of a channel past the block
    a0, a1 = acc[0], acc[1]
    a0[:] = 0
    a1[:] = 0
    o, o_end = g * per_out, (g + 1) * per_out
    while o < o_end:
        q = o_end - o if o_end - o < 4 else 4
        d0 = dyw[n, o, :length]
        d1 = dyw[n, o + 1 if q > 1 else o, :length]
        d2 = dyw[n, o + 2 if q > 2 else o, :length]
        d3 = dyw[n, o + 3 if q > 3 else o, :length]
        for k in range(kk):
            # a channel past the end of the block reads channel o again with weight 0
            u0, v0 = wr[o, c * kk + k], wr[o, c1 * kk + k]
            u1 = wr[o + 1, c * kk + k] if q > 1 else zero
            v1 = wr[o + 1, c1 * kk + k] if q > 1 else zero
            u2 = wr[o + 2, c * kk + k] if q > 2 else zero
            v2 = wr[o + 2, c1 * kk + k] if q > 2 else zero
            u3 = wr[o + 3, c * kk + k] if q > 3 else zero
            v3 = wr[o + 3, c1 * kk + k] if q > 3 else zero
            t0, t1 = a0[taps[k]:taps[k] + length], a1[taps[k]:taps[k] + length]
            for t in range(length):
                e0, e1, e2, e3 = d0[t], d1[t], d2[t], d3[t]
                t0[t] += u0 * e0 + u1 * e1 + u2 * e2 + u3 * e3
                t1[t] += v0 * e0 + v1 * e1 + v2 * e2 + v3 * e3
        o += q
    ci, ci1 = g * per_in + c, g * per_in + c1
    for i in range(h):
        for j in range(w):
            dx[n, ci, i, j] = a0[(i + pt) * wp + j + pl]
            dx[n, ci1, i, j] = a1[(i + pt) * wp + j + pl]     # the same when c1 == c


# (the accumulators: one pair of padded planes per thread)
_input_grad_serial, _input_grad_parallel = twins(
    _input_grad_item, "_input_grad",
    items="dx.shape[0] * groups * ((dx.shape[1] // groups + 1) // 2)",
    scratch={"acc": "np.empty((2, hp * wp), dx.dtype)"})


def input_grad(dyw, wr, taps, dx, groups: int, hp: int, wp: int, pt: int, pl: int,
               length: int):
    """dx [N, C, H, W] of the convolution whose padded input had planes [hp, wp] (the
    input at rows pt.., columns pl..), from dOut laid out wide ``dyw`` [N, O, oh*wp]
    (zeros in the junk columns), the filter rows ``wr`` [O, C/groups*kh*kw] and the
    offsets ``taps`` of one plane's kh*kw taps; returns dx."""
    _either(_input_grad_serial, _input_grad_parallel,
            dyw.shape[0] * dyw.shape[1] * wr.shape[1] * length,
            dyw, wr, taps, dx, groups, hp, wp, pt, pl, length)
    return dx


# --- the convolution and its gradients, from NCHW arrays -------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def fits(geometry):
    """Whether the direct loops apply: stride 1 (any padding, dilation, groups) and a
    window of more than one tap (a 1x1 convolution is one product, which BLAS does
    better: conv2d [16, 32, 16, 16] * [64, 32, 1, 1] took 0.46 ms here, 0.22 as a product)."""
    return geometry[2] == 1 and geometry[3] == 1 and geometry[0] * geometry[1] > 1


def padded(a, top: int, bottom: int, left: int, right: int, buffer):
    """``a`` [N, C, H, W] zero-padded (amounts >= 0) into ``buffer(shape, dtype)``'s
    array, which is written whole (numpy's fill and strided copy: numba's loops took 2x
    as long here)."""
    n, c, h, w = a.shape
    out = buffer((n, c, h + top + bottom, w + left + right), a.dtype)
    out[...] = 0
    out[:, :, top:top + h, left:left + w] = a
    return out


def conv2d(x, w, geometry, groups: int, buffer):
    """Output [N, O, oh, ow] of x [N, C, H, W] (contiguous) and w; ``buffer(key, shape,
    dtype)`` gives the arrays kept between runs (the output)."""
    kh, kw, _, _, pt, pl, dh, dw, oh, ow = geometry
    hp, wp = oh + (kh - 1) * dh, ow + (kw - 1) * dw
    offs = offsets(x.shape[1] // groups, hp, wp, kh, kw, dh, dw)
    out = buffer("Output", (x.shape[0], w.shape[0], oh, ow), x.dtype)  # the op's own buffer
    return forward(x, np.ascontiguousarray(w).reshape(w.shape[0], -1), offs, out, groups,
                   pt, pl, hp, wp)


def conv2d_grads(x, w, dy, geometry, groups: int, want_dx: bool, want_dw: bool, buffer):
    """(dX, dFilter) of the stride-1 convolution (None where not wanted). Both read dOut
    laid out wide on the padded input's rows, and dFilter the padded input too."""
    kh, kw, _, _, pt, pl, dh, dw, oh, ow = geometry
    n, c, h, width = x.shape
    hp, wp = oh + (kh - 1) * dh, ow + (kw - 1) * dw
    wide = buffer("dOut, wide", (n, dy.shape[1], oh, wp), dy.dtype)
    wide[:, :, :, ow:] = 0
    wide[:, :, :, :ow] = dy
    dyw, length = wide.reshape(n, dy.shape[1], oh * wp), oh * wp - (wp - ow)
    wr = np.ascontiguousarray(w).reshape(w.shape[0], -1)
    dx = dfilter = None
    if want_dx:
        taps = offsets(1, hp, wp, kh, kw, dh, dw)
        dx = input_grad(dyw, wr, taps, np.empty((n, c, h, width), dy.dtype), groups, hp,
                        wp, pt, pl, length)
    if want_dw:
        xp = padded(x, pt, hp - h - pt, pl, wp - width - pl,
                    lambda s, d: buffer("padded input", s, d))
        offs = offsets(c // groups, hp, wp, kh, kw, dh, dw)
        dfilter = np.empty((w.shape[0], (c // groups) * kh * kw), x.dtype)
        filter_grad(dyw, xp.reshape(n, c * hp * wp), offs, dfilter, groups, length)
        dfilter = dfilter.reshape(w.shape)
    return dx, dfilter


# --- inside a compiled block (paddle_nb/compiler): conv2d and its gradients as conv2d and
# conv2d_grads above compute them, with the serial loops (each item's arithmetic is the same
# in the prange ones), from NCHW arrays and the geometry worked out at run time (the
# compiled code is not specialised on sizes: kernels/cpu/conv.py's conv2d_geometry).
@njit(cache=True, fastmath=False, error_model="numpy")
def _filter_matrix(w):
    """The filter [O, C/groups, kh, kw] as rows [O, C/groups*kh*kw]."""
    return np.ascontiguousarray(w).reshape((w.shape[0], w.size // w.shape[0]))


@njit(cache=True, fastmath=False, error_model="numpy")
def convolved(x, w, geometry, groups):
    """conv2d's Output [N, O, oh, ow] of x [N, C, H, W] (C-contiguous) and w."""
    kh, kw, _, _, pt, pl, dh, dw, oh, ow = geometry
    if not fits(geometry) or x.shape[0] == 0:
        raise ValueError("conv2d: the compiled direct loops need stride 1, a window of "
                         "more than one tap and some images")
    hp, wp = oh + (kh - 1) * dh, ow + (kw - 1) * dw
    out = np.empty((x.shape[0], w.shape[0], oh, ow), x.dtype)
    pairs = (out.shape[1] // groups + 1) // 2
    chunks = min(pairs, -(-MIN_ITEMS // (x.shape[0] * groups)))         # as forward's
    _forward_serial(x, _filter_matrix(w), tap_offsets(x.shape[1] // groups, hp, wp, kh, kw,
                                                      dh, dw),
                    out, groups, pt, pl, hp, wp, chunks)
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def convolved_grads(x, w, dy, geometry, groups, want_dx, want_dw):
    """(dX, dFilter) of ``convolved`` (an empty 4-D array where not wanted)."""
    kh, kw, _, _, pt, pl, dh, dw, oh, ow = geometry
    if not fits(geometry):
        raise ValueError("conv2d_grad: the compiled direct loops need stride 1 and a "
                         "window of more than one tap")
    n, c, h, width = x.shape
    hp, wp = oh + (kh - 1) * dh, ow + (kw - 1) * dw
    wide = np.zeros((n, dy.shape[1], oh, wp), dy.dtype)     # the junk columns zero
    wide[:, :, :, :ow] = dy
    dyw, length = wide.reshape((n, dy.shape[1], oh * wp)), oh * wp - (wp - ow)
    wr = _filter_matrix(w)
    dx = np.empty((0, 0, 0, 0), dy.dtype)
    dfilter = np.empty((0, 0, 0, 0), x.dtype)
    if want_dx:
        dx = np.empty((n, c, h, width), dy.dtype)
        _input_grad_serial(dyw, wr, tap_offsets(1, hp, wp, kh, kw, dh, dw), dx, groups, hp,
                           wp, pt, pl, length)
    if want_dw:
        xp = np.zeros((n, c, hp, wp), x.dtype)                 # padded, as ``padded``
        xp[:, :, pt:pt + h, pl:pl + width] = x
        rows = np.empty((w.shape[0], (c // groups) * kh * kw), x.dtype)
        _filter_grad_serial(dyw, xp.reshape((n, c * hp * wp)),
                            tap_offsets(c // groups, hp, wp, kh, kw, dh, dw), rows, groups,
                            length)
        dfilter = rows.reshape(w.shape)
    return dx, dfilter
