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

from .conv import _inside


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
