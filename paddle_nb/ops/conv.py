"""Convolution: conv2d and depthwise_conv2d (Fluid's slots and attributes, as
``paddle.nn.functional.conv2d`` and ``paddle.static.nn.conv2d`` save them; Paddle names
the op depthwise_conv2d when groups equals the input's channels, its CPU kernel is
conv2d's), and their gradients. conv2d_transpose, the same math run backwards, is in
conv_transpose.py; the 3-D ops (conv3d, conv3d_transpose) are declared in conv3d.py over
the same helpers, which take any number of spatial dims (the geometry below: one entry per
spatial axis in each of its five groups).

The math is written once, over the places' primitives (backends/):

- ``im2col`` copies, for each filter tap, the input element it sees at each output
  position into one row of ``cols`` [C*kh*kw, N*oh*ow] (0 in the padding);
- the output is then one product per group: Filter [G, Cout/G, C/G*kh*kw] @ cols [G,
  C/G*kh*kw, N*oh*ow] (a group's channels are a block of cols' rows), which comes out
  channels first, [Cout, N, oh, ow], and one transpose puts it in NCHW or NHWC;
- the gradient w.r.t. Filter is dOut (channels first) @ cols^T, and w.r.t. Input
  Filter^T @ dOut followed by ``col2im``, which adds each entry back where im2col read it.

cols is the one large intermediate (kh*kw times the input), so the images go through a
batch at a time (``batches``: on the CPU at most about 32 MB of cols each, the size of
the cache here; the device takes them all). It comes from the kernel
context's ``ctx.out`` under its own key: on the fast path that is one of two
buffers the op keeps from earlier runs, handed back only when nobody holds it any more
(core/kernel_context.py), so a training loop reuses it; a stepped run, which a debugger
may stop anywhere, gets a new array each run, and so do two threads running one op at once.
A module-level cache would do none of that and would live as long as the process.

A place may have a faster way for some geometries: the CPU convolves with stride 1 (and
a window of more than one tap) by direct loops over the padded input
(kernels/cpu/direct_conv.py), with no columns at all; ``place.conv_direct`` and
``conv_direct_grads`` answer None where they do not apply, and then the path above runs.
"""
from __future__ import annotations

import math
import numbers

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import conv as CPU_CONV
from ..kernels.cpu import direct_conv as CPU_DIRECT
from ..kernels.cpu.conv import same_padding, window_count
from ..kernels.lowered import Call
from . import arrays
from ..backends import CPU, CUDA

INPUT = Slot("Input", "the images: [N, C, H, W] (NCHW) or [N, H, W, C] (NHWC)")
OUTPUT = Slot("Output", "the result, in Input's layout")
LAYOUTS = ("NCHW", "NHWC", "AnyLayout")
ALGORITHMS = ("EXPLICIT", "SAME", "VALID")


def _int(v) -> bool:
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _ints(name: str, lengths: tuple, low: int):
    def check(value):
        if not isinstance(value, (list, tuple)) or len(value) not in lengths or \
                not all(_int(v) and v >= low for v in value):
            return (f"{name} must be {' or '.join(map(str, lengths))} integers >= {low}, "
                    f"got {value!r}")
        return None
    return check


def _one_of(name: str, choices: tuple):
    def check(value):
        return None if value in choices else f"{name} must be one of {choices}, got {value!r}"
    return check


def conv_attrs(rank: int, layout: Attr) -> list[Attr]:
    """The attributes of a convolution over ``rank`` spatial dims, in Fluid's order, with
    the op's ``data_format`` attribute (its layouts differ between the ops)."""
    axes, sides = ("rows, columns", "top, bottom, left, right") if rank == 2 else \
        ("depth, rows, columns", "front, back, top, bottom, left, right")
    ones, zeros = [1] * rank, [0] * rank
    return [
        Attr("strides", A.INTS, ones, f"the window's step ({axes})",
             check=_ints("strides", (rank,), 1)),
        Attr("paddings", A.INTS, zeros, f"zeros around the input: [{axes}] on both sides, "
             f"or [{sides}]", check=_ints("paddings", (rank, 2 * rank), 0)),
        Attr("padding_algorithm", A.STRING, "EXPLICIT", "EXPLICIT: paddings; SAME: "
             "padding split around so that out = ceil(in / stride) (dilations taken as 1); "
             "VALID: no padding", check=_one_of("padding_algorithm", ALGORITHMS)),
        Attr("dilations", A.INTS, ones, "the spacing of the filter's taps",
             check=_ints("dilations", (rank,), 1)),
        Attr("groups", A.INT, 1, "channels split into this many groups, each convolved "
             "with its own filters", check=lambda v: None if _int(v) and v >= 1 else
             f"groups must be >= 1, got {v!r}"),
        layout]


LAYOUT = Attr("data_format", A.STRING, "NCHW", "NCHW or NHWC (AnyLayout: NCHW)",
              check=_one_of("data_format", LAYOUTS))
CONV_ATTRS = conv_attrs(2, LAYOUT)


# --- geometry -------------------------------------------------------------------------------
def channel_last(ctx) -> bool:
    # (Paddle saves a 3-D transposed convolution's layout as NCHW / NHWC, conv3d's as
    # NCDHW / NDHWC: either spelling of channels-last means it)
    return ctx.attr("data_format") in ("NHWC", "NDHWC")


def split_dims(shape, last: bool):
    """(N, C, [spatial dims]) of a shape in either layout ([H, W], or [D, H, W])."""
    return (shape[0], shape[-1], list(shape[1:-1])) if last else (shape[0], shape[1],
                                                                  list(shape[2:]))


def to_channels_first(rank: int) -> tuple:
    """The transpose that takes [N, *spatial, C] to [N, C, *spatial] (rank: the array's)."""
    return (0, rank - 1) + tuple(range(1, rank - 1))


def to_channels_last(rank: int) -> tuple:
    """The transpose that takes [N, C, *spatial] to [N, *spatial, C]."""
    return (0,) + tuple(range(2, rank)) + (1,)


def pads_and_dilations(ctx, in_hw, k_hw):
    """([top, bottom, left, right], dilations) after padding_algorithm (3-D: front and
    back first), as Paddle's UpdatePaddingAndDilation: SAME pads so that out = ceil(in /
    stride), the odd one at the bottom/right, with dilations 1 (``in_hw``: the input's
    spatial dims, -1 unknown)."""
    p, d = list(ctx.attr("paddings")), list(ctx.attr("dilations"))
    if len(p) == len(in_hw):                  # one amount per axis: the same on both sides
        p = [v for v in p for _side in range(2)]
    algorithm = ctx.attr("padding_algorithm")
    if algorithm == "VALID":
        p = [0] * (2 * len(in_hw))
    elif algorithm == "SAME":
        for a, s in enumerate(ctx.attr("strides")):
            total = same_padding(in_hw[a], k_hw[a], s) if in_hw[a] >= 0 else 0
            p[2 * a], p[2 * a + 1], d[a] = total // 2, total - total // 2, 1
    return p, d


def check_attrs(ctx, specs=CONV_ATTRS) -> None:
    """What the attributes' own checks say, for a program whose attributes were never
    checked (the fuzzer's, a loaded one's), before any arithmetic on them."""
    for spec in specs:
        problem = spec.check(ctx.attr(spec.name))
        if problem:
            ctx.fail(problem, expected=problem.split(",")[0], given=f"{spec.name}="
                     f"{ctx.attr(spec.name)!r}")


def check_float(ctx, slot: str) -> None:
    name = dtypes.name(ctx.dtype(slot))
    if name not in ("float32", "float64"):
        ctx.fail("convolution needs float32 or float64 elements", slot=slot,
                 expected="float32 or float64", given=ctx.describe_input(slot))


def check_rank(ctx, slot: str, rank: int, what: str) -> list[int]:
    shape = ctx.shape(slot)
    if len(shape) != rank:
        ctx.fail(f"{slot} must be {rank}-D: {what}", slot=slot, expected=f"rank {rank}",
                 given=ctx.describe_input(slot))
    return shape


def axis_names(rank: int) -> str:
    """The spatial axes' letters, for messages: "HW" or "DHW"."""
    return "DHW"[-rank:]


def conv_size(ctx, n: int, k: int, s: int, p0: int, p1: int, d: int, axis: str) -> int:
    """The number of window positions along an axis of ``n`` (-1 when unknown)."""
    if n < 0:
        return -1
    out = window_count(n, k, s, p0, p1, d)
    if out <= 0:
        extent = d * (k - 1) + 1
        ctx.fail(f"the filter's window along {axis} is larger than the padded input",
                 slot="Filter", expected=f"dilation*(k-1)+1 = {extent} <= input + paddings "
                 f"= {n} + {p0} + {p1} (or within a stride of it)",
                 given=ctx.describe_input("Filter"))
    return out


# --- what the shape inference of every convolution (and transposed one) shares ----------------
def check_operands(ctx, specs: list) -> None:
    """The op's attributes (``specs``), a float Input and a Filter of Input's dtype."""
    check_attrs(ctx, specs)
    check_float(ctx, "Input")
    ctx.require_same_dtype("Filter", "Input")


def input_dims(ctx, rank: int) -> tuple:
    """(channels last, N, C, the spatial sizes) of Input, of ``rank`` spatial dims."""
    spatial = ", ".join(axis_names(rank))
    last = channel_last(ctx)
    n, c, hw = split_dims(check_rank(ctx, "Input", rank + 2, f"[N, C, {spatial}] or "
                                     f"[N, {spatial}, C]"), last)
    return last, n, c, hw


def filter_dims(ctx, rank: int, channels: str) -> list:
    """Filter's dims, [``channels``, the window's ``rank`` taps]."""
    taps = ", ".join("k" + a.lower() for a in axis_names(rank))
    return check_rank(ctx, "Filter", rank + 2, f"[{channels}, {taps}]")


def set_output_dims(ctx, last: bool, n: int, channels: int, spatial: list) -> None:
    """Output [N, C, spatial...] (or channels last), in Input's dtype."""
    ctx.set_output("Output", [n] + spatial + [channels] if last else [n, channels] + spatial,
                   ctx.dtype("Input"))


# --- conv2d and depthwise_conv2d (conv3d: conv3d.py) ----------------------------------------
def conv_infer(rank: int, specs: list):
    """The shape inference of a convolution over ``rank`` spatial dims (``specs``: its
    attributes, checked first)."""
    axes = axis_names(rank)

    def infer(ctx):
        check_operands(ctx, specs)
        last, n, c, hw = input_dims(ctx, rank)
        cout, cg, *k = filter_dims(ctx, rank, "C_out, C_in / groups")
        groups = ctx.attr("groups")
        if 0 in k or (cout >= 0 and cout % groups):
            ctx.fail(f"Filter must have a window of at least {'x'.join('1' * rank)} and a "
                     "multiple of groups output channels", slot="Filter",
                     expected=f"[k * {groups}, ?{', >= 1' * rank}]",
                     given=ctx.describe_input("Filter"))
        if c >= 0 and cg >= 0 and c != cg * groups:
            ctx.fail("Input's channels must be Filter's dim 1 times groups", slot="Input",
                     expected=f"{cg} * {groups} = {cg * groups} channels",
                     given=ctx.describe_input("Input"))
        p, d = pads_and_dilations(ctx, hw, k)
        s = ctx.attr("strides")
        out = [-1 if k[a] < 0 else conv_size(ctx, hw[a], k[a], s[a], p[2 * a],
                                             p[2 * a + 1], d[a], axes[a])
               for a in range(rank)]
        set_output_dims(ctx, last, n, cout, out)
    return infer


def geometry(ctx, x_hw, k_hw, out_hw) -> tuple:
    """The im2col geometry of a convolution of an input of spatial dims ``x_hw`` to
    ``out_hw``: five groups of one entry per spatial axis, (window, strides, padding
    before, dilations, output), as 2-D (kh, kw, sh, sw, pt, pl, dh, dw, oh, ow) and 3-D
    (kd, kh, kw, sd, sh, sw, pf, pt, pl, dd, dh, dw, od, oh, ow)."""
    p, d = pads_and_dilations(ctx, x_hw, k_hw)
    s = ctx.attr("strides")
    return (tuple(int(k) for k in k_hw) + tuple(int(v) for v in s) + tuple(p[0::2])
            + tuple(d) + tuple(int(o) for o in out_hw))


def taps_and_positions(geom) -> tuple[int, int]:
    """(taps of the window, output positions per image) of a geometry (``geometry``)."""
    rank = len(geom) // 5
    return math.prod(geom[:rank]), math.prod(geom[4 * rank:])


def workspace(ctx):
    """Where cols goes: a buffer the op keeps between runs (module docstring)."""
    return lambda shape, dtype: ctx.out("im2col workspace", tuple(shape), dtype)


def nchw(a, last: bool):
    """``a`` channels first ([N, C, H, W] or [N, C, D, H, W])."""
    return arrays.transpose(a, to_channels_first(a.ndim)) if last else a


def in_layout(a, last: bool):
    """A channels-first ``a`` in the op's layout (nchw's inverse)."""
    return arrays.transpose(a, to_channels_last(a.ndim)) if last else a


def grouped(a, groups: int, last: bool):
    """A tensor as [G, C/G, N*H*W] (3-D: N*D*H*W): its channels first, in groups (one
    copy)."""
    n, c, hw = split_dims(tuple(int(d) for d in a.shape), last)
    rank = a.ndim
    rows = arrays.transpose(a, (rank - 1,) + tuple(range(rank - 1)) if last else
                            (1, 0) + tuple(range(2, rank)))
    return rows.reshape((groups, c // groups, n * math.prod(hw)))


def ungrouped(rows, n: int, hw, last: bool):
    """[G, C/G, N*H*W] back to [N, C, H, W] (NHWC: [N, H, W, C]; 3-D likewise): one
    copy."""
    c = int(rows.shape[0]) * int(rows.shape[1])
    a = rows.reshape((c, n) + tuple(int(v) for v in hw))
    rank = a.ndim
    return arrays.transpose(a, tuple(range(1, rank)) + (0,) if last else
                            (1, 0) + tuple(range(2, rank)))


def filter_rows(w, groups: int):
    """Filter [A, B, kh, kw] (3-D: [A, B, kd, kh, kw]) as [G, A/G, B*kh*kw]."""
    a = int(w.shape[0])
    return w.reshape((groups, a // groups, int(w.size) // a if a else 0))


def per_group(place, a, b, ta: bool = False, tb: bool = False):
    """op(a[g]) @ op(b[g]) for each group g of [G, ., .] operands, as [G, ., .]: one 2-D
    product each (``place.product``: a transpose is a view BLAS reads as it is, where a
    batched matmul would first copy the transposed cols, 29 MB in the benchmark)."""
    parts = [place.product(a[g], b[g], ta, tb) for g in range(int(a.shape[0]))]
    if len(parts) == 1:
        return parts[0].reshape((1,) + tuple(int(d) for d in parts[0].shape))
    return arrays.stack(parts, 0)


def batches(place, x, geom, channels=None) -> list:
    """[(n0, n1), ...]: the images of x taken a batch at a time, so that one batch's cols
    (``channels``, default x's dim 1, times kh*kw rows) fits the place's cache (the CPU's;
    the device takes them all at once)."""
    n = int(x.shape[0])
    channels = int(x.shape[1]) if channels is None else channels
    taps, positions = taps_and_positions(geom)
    per_image = channels * taps * positions * x.dtype.itemsize
    step = place.images_per_im2col(per_image)
    return [(n0, min(n, n0 + step)) for n0 in range(0, n, step)] or [(0, 0)]


def cols_of(place, ctx, x, geom, groups: int):
    """im2col of x [N, C, H, W] as [G, C/G*kh*kw, N*oh*ow], in the op's workspace."""
    cols = place.im2col(x, geom, workspace(ctx))
    return cols.reshape((groups, int(cols.shape[0]) // groups, int(cols.shape[1])))


def joined(parts):
    return parts[0] if len(parts) == 1 else arrays.concat(parts, 0)


def buffers(ctx):
    """Where the direct loops' padded copies go: buffers kept between runs, one per key."""
    return lambda key, shape, dtype: ctx.out(key, tuple(shape), dtype)


def conv_of(place, ctx, x, w, geom, last: bool):
    """The convolution of x (in its layout) with w [Cout, C/G, kh, kw]: the place's direct
    loops where it has them for this geometry (2-D only), else im2col batch by batch."""
    groups, x = ctx.attr("groups"), nchw(x, last)
    direct = place.conv_direct(x, w, geom, groups, buffers(ctx)) if x.ndim == 4 else None
    if direct is not None:
        return in_layout(direct, last)
    w_rows = filter_rows(w, groups)
    return joined([ungrouped(per_group(place, w_rows, cols_of(place, ctx, x[n0:n1], geom,
                                                                  groups)),
                             n1 - n0, geom[4 * (x.ndim - 2):], last)
                   for n0, n1 in batches(place, x, geom)])


def conv_grads(place, ctx, x, w, dy, geom, last: bool, want_dx: bool, want_dw: bool):
    """(dX, dFilter) of the convolution of x with w (either None when not wanted):
    dFilter = sum over batches of dOut @ cols^T, dX = col2im(Filter^T @ dOut)."""
    groups, x = ctx.attr("groups"), nchw(x, last)
    direct = place.conv_direct_grads(x, w, nchw(dy, last), geom, groups, want_dx, want_dw,
                                     buffers(ctx)) if x.ndim == 4 else None
    if direct is not None:
        dx, dw = direct
        return (in_layout(dx, last) if dx is not None else dx), dw
    w_rows = filter_rows(w, groups)
    dx_parts, dw = [], None
    for n0, n1 in batches(place, x, geom):
        dy_rows = grouped(dy[n0:n1], groups, last)
        if want_dw:
            part = per_group(place, dy_rows, cols_of(place, ctx, x[n0:n1], geom, groups),
                             tb=True)
            dw = part if dw is None else arrays.add(dw, part)
        if want_dx:
            dcols = per_group(place, w_rows, dy_rows, ta=True)
            dcols = dcols.reshape((int(dcols.shape[0]) * int(dcols.shape[1]),
                                   int(dcols.shape[2])))
            dx_parts.append(place.col2im(dcols, (n1 - n0,) + tuple(int(d) for d in
                                                                  x.shape[1:]), geom))
    dx = in_layout(joined(dx_parts), last) if want_dx else None
    return dx, (dw.reshape(tuple(int(d) for d in w.shape)) if want_dw else None)


def conv_kernel(place):
    """The forward kernel of a convolution of any spatial rank (conv2d's, conv3d's)."""
    def run(ctx):
        x, w = ctx.input("Input"), ctx.input("Filter")
        last = channel_last(ctx)
        _, _, x_hw = split_dims(tuple(int(d) for d in x.shape), last)
        geom = geometry(ctx, x_hw, w.shape[2:], _out_hw(ctx, x_hw, w))
        ctx.set_output("Output", conv_of(place, ctx, x, w, geom, last))
    return run


def _out_hw(ctx, x_hw, w):
    p, d = pads_and_dilations(ctx, x_hw, w.shape[2:])
    s = ctx.attr("strides")
    return [window_count(x_hw[a], int(w.shape[2 + a]), s[a], p[2 * a], p[2 * a + 1], d[a])
            for a in range(len(x_hw))]


def conv_grad_kernel(place):
    """The gradient kernel of a convolution of any spatial rank."""
    def run(ctx):
        x, w = ctx.input("Input"), ctx.input("Filter")
        dy = arrays.astype(ctx.input("Output@GRAD"), x.dtype)
        last = channel_last(ctx)
        _, _, x_hw = split_dims(tuple(int(d) for d in x.shape), last)
        geom = geometry(ctx, x_hw, w.shape[2:], _out_hw(ctx, x_hw, w))
        dx, dw = conv_grads(place, ctx, x, w, dy, geom, last, ctx.has_output("Input@GRAD"),
                            ctx.has_output("Filter@GRAD"))
        if dx is not None:
            ctx.set_output("Input@GRAD", dx)
        if dw is not None:
            ctx.set_output("Filter@GRAD", dw)
    return run


# --- inside a compiled block (kernels/lowered.py) ------------------------------------------
# conv2d by kernels/cpu/conv.py's conv2d_direct or conv2d_by_columns (and their _grads): the
# CPU's path above, with the serial loops and the same BLAS calls. Which path is chosen
# here from the strides and the filter's window (direct_conv.fits, which the compiled code
# checks again); the geometry is worked out there from the run's sizes (SAME padding's
# pads too).
def _parallel_in_interpreter(geom, n: int, c: int, cout: int, groups: int, itemsize: int,
                             direct: bool, want_dx: bool, grad: bool) -> bool:
    """Would the interpreter run a prange twin for these sizes (the ones learned)?"""
    kh, kw, _, _, _, _, dh, dw, oh, ow = geom
    row = c // groups * kh * kw                       # a filter row: a group's taps
    if direct:
        wp = ow + (kw - 1) * dw
        per_position = oh * wp - (wp - ow) if grad else oh * ow
        return n * cout * row * per_position >= CPU_DIRECT.MIN_PARALLEL_MACS
    if not (grad and want_dx):                        # only col2im has a twin
        return False
    images = min(n, max(1, CPU_CONV.COLS_BATCH_BYTES // max(c * kh * kw * oh * ow * itemsize,
                                                            1)))
    return c * kh * kw * images * oh * ow >= CPU_CONV.MIN_PARALLEL_COLS and images * c > 1


def _lowered_conv(grad: bool):
    def lowered(info):
        dtype = info.dtype("Input")
        if dtype.name not in ("float32", "float64") or info.dtype("Filter") != dtype or \
                info.ndim("Input") != 4 or \
                (grad and info.dtype("Output@GRAD") != dtype):
            return None
        last = channel_last(info)
        n, c, x_hw = split_dims(info.shape("Input"), last)
        w_shape = info.shape("Filter")
        p, d = pads_and_dilations(info, x_hw, w_shape[2:])
        s, groups = info.attr("strides"), info.attr("groups")
        geom = geometry(info, x_hw, w_shape[2:], [
            window_count(x_hw[a], w_shape[2 + a], s[a], p[2 * a], p[2 * a + 1], d[a])
            for a in range(2)])
        direct = bool(CPU_DIRECT.fits(geom))
        want_dx, want_dw = info.has_output("Input@GRAD"), info.has_output("Filter@GRAD")
        if _parallel_in_interpreter(geom, n, c, w_shape[0], groups, dtype.itemsize, direct,
                                    want_dx, grad):
            # compiled code runs the serial loops (it cannot ask whether the cores are free)
            return "large: the interpreter splits it across the cores"
        same = info.attr("padding_algorithm") == "SAME"     # pads from the sizes, there
        consts = (tuple(s), tuple(p), tuple(d), groups, last, same)
        if grad:
            fn = CPU_CONV.conv2d_direct_grads if direct else CPU_CONV.conv2d_by_columns_grads
            return Call(fn, ("Input", "Filter", "Output@GRAD"), ("Input@GRAD", "Filter@GRAD"),
                        consts + (want_dx, want_dw))
        fn = CPU_CONV.conv2d_direct if direct else CPU_CONV.conv2d_by_columns
        return Call(fn, ("Input", "Filter"), ("Output",), consts)
    return lowered


def conv_op(op_type: str, rank: int, attrs: list, comment: str, **more) -> OpDef:
    """The declaration of a convolution over ``rank`` spatial dims (conv2d,
    depthwise_conv2d, conv3d): Input and Filter in, Output out, this module's kernels."""
    taps = ", ".join("k" + a.lower() for a in axis_names(rank))
    return OpDef(
        op_type, [INPUT, Slot("Filter", f"the filters: [C_out, C_in / groups, {taps}]")],
        [OUTPUT], attrs, comment=comment, infer_shape=conv_infer(rank, attrs),
        kernels={"cpu": conv_kernel(CPU), "cuda": conv_kernel(CUDA)},
        lowered=_lowered_conv(False) if rank == 2 else None,
        grad=Grad(reads=["Input", "Filter"], kernel=conv_grad_kernel(CPU),
                  cuda_kernel=conv_grad_kernel(CUDA),
                  lowered=_lowered_conv(True) if rank == 2 else None), **more)


for _type, _what in (("conv2d", "a 2-D convolution (cross-correlation, as Paddle's)"),
                     ("depthwise_conv2d", "conv2d with one group per input channel (what "
                      "Paddle saves when groups == C_in)")):
    register(conv_op(
        _type, 2, CONV_ATTRS,
        f"Output = {_what} of Input with Filter: Output[n, o, i, j] = sum over the group's "
        "channels c and taps (ki, kj) of Filter[o, c, ki, kj] * Input[n, c, i*sh - pad_top "
        "+ ki*dh, j*sw - pad_left + kj*dw].",
        uses_cores=True))       # the direct loops' prange twins (kernels/cpu/direct_conv.py)
