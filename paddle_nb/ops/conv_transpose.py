"""conv2d_transpose and depthwise_conv2d_transpose (Fluid's slots and attributes, as
``paddle.nn.functional.conv2d_transpose`` saves them: the second when groups == C_in,
C_out == C_in) and their gradients.

A transposed convolution is conv2d's input gradient (conv.py): Input plays the role of
a conv2d's dOut and Filter [C_in, C_out/G, kh, kw] that of its filter (conv2d's layout
read the other way: C_in is the convolution's output channels). So the forward is
Filter^T @ Input per group and then ``col2im`` into the output, and the gradient is a
forward conv2d of dOut: dInput = Filter @ im2col(dOut), dFilter = Input @ im2col(dOut)^T.
The output's size is (in - 1) * stride - pads + dilation * (k - 1) + 1, plus
output_padding, or output_size when given (within a stride of that; the extra rows and
columns are ones no window reaches: col2im leaves them 0).

The shape inference and kernels take any number of spatial dims: conv3d.py declares
conv3d_transpose with them.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import conv as CPU_CONV
from ..kernels.lowered import Call
from . import arrays
from .conv import (CONV_ATTRS, INPUT, OUTPUT, axis_names, batches, channel_last,
                   check_operands, cols_of, filter_dims, filter_rows, geometry, grouped,
                   in_layout, input_dims, joined, nchw, pads_and_dilations, per_group,
                   set_output_dims, split_dims, taps_and_positions, ungrouped)
from ..backends import CPU, CUDA


def _sizes(ctx, value, name: str, rank: int) -> list:
    if len(value) not in (0, rank):
        axes = ", ".join(axis_names(rank).lower())
        ctx.fail(f"{name} must be empty or {rank} integers",
                 expected=f"{name} = [] or [{axes}]", given=f"{name}={list(value)!r}")
    return list(value)


def output_hw(ctx, in_hw, k_hw) -> list[int]:
    """The output's spatial dims (Paddle's ConvTransposeInferMeta; -1 when unknown)."""
    p, d = pads_and_dilations(ctx, in_hw, k_hw)
    s = ctx.attr("strides")
    rank = len(in_hw)
    size = _sizes(ctx, ctx.attr("output_size"), "output_size", rank)
    extra = _sizes(ctx, ctx.attr("output_padding"), "output_padding", rank)
    out = []
    for a, axis in enumerate(axis_names(rank)):
        if in_hw[a] < 0 or k_hw[a] < 0:
            out.append(-1)
            continue
        least = (in_hw[a] - 1) * s[a] - p[2 * a] - p[2 * a + 1] + d[a] * (k_hw[a] - 1) + 1
        if least <= 0:
            ctx.fail(f"the output along {axis} would be empty: the paddings take away more "
                     "than the input and window give", expected="(in - 1) * stride - pads "
                     "+ dilation * (k - 1) + 1 > 0", given=f"{least} (paddings={p})")
        if size:
            if not least <= size[a] < least + s[a]:
                ctx.fail(f"output_size along {axis} must be one that these strides reach",
                         expected=f"{least} <= output_size < {least + s[a]}",
                         given=f"output_size={size}")
            out.append(size[a])
        elif extra:
            if not 0 <= extra[a] < max(s[a], d[a]):
                ctx.fail("output_padding must be below the stride (or the dilation)",
                         expected=f"0 <= output_padding < {max(s[a], d[a])}",
                         given=f"output_padding={extra}")
            out.append(least + extra[a])
        else:
            out.append(least)
    return out


def transpose_infer(rank: int, specs: list):
    """The shape inference of a transposed convolution over ``rank`` spatial dims
    (``specs``: its attributes, checked first)."""
    def infer(ctx):
        check_operands(ctx, specs)
        if ctx.has_input("Bias"):
            ctx.fail("Paddle's conv2d_transpose ignores Bias (its kernel has none): add the "
                     "bias with elementwise_add", slot="Bias", expected="no Bias",
                     given=ctx.describe_input("Bias"))
        last, n, c, hw = input_dims(ctx, rank)
        cin, cout_g, *k = filter_dims(ctx, rank, "C_in, C_out / groups")
        groups = ctx.attr("groups")
        if 0 in k:
            ctx.fail(f"Filter must have a window of at least {'x'.join('1' * rank)}",
                     slot="Filter", expected=f"[C_in, ?{', >= 1' * rank}]",
                     given=ctx.describe_input("Filter"))
        if c >= 0 and cin >= 0 and c != cin:
            ctx.fail("Input's channels must be Filter's dim 0", slot="Input",
                     expected=f"{cin} channels", given=ctx.describe_input("Input"))
        if c >= 0 and c % groups:
            ctx.fail("Input's channels must be a multiple of groups", slot="Input",
                     expected=f"a multiple of {groups} channels",
                     given=ctx.describe_input("Input"))
        out = output_hw(ctx, hw, k)
        set_output_dims(ctx, last, n, cout_g * groups if cout_g >= 0 else -1, out)
    return infer


def _shapes(ctx, x, w):
    """(N, Input's [H, W], the output's [H, W], the geometry of the conv2d it inverts)."""
    last = channel_last(ctx)
    n, _, in_hw = split_dims(tuple(int(d) for d in x.shape), last)
    k_hw = tuple(int(d) for d in w.shape[2:])
    out_hw = output_hw(ctx, in_hw, k_hw)
    # the conv2d this inverts reads the output (its input) and gives Input's spatial dims
    return n, in_hw, out_hw, geometry(ctx, in_hw, k_hw, in_hw)


def transpose_kernel(place):
    """Per batch of images: cols = Filter^T @ Input, then col2im into the output (any
    spatial rank)."""
    def run(ctx):
        x, w = ctx.input("Input"), ctx.input("Filter")
        last, groups = channel_last(ctx), ctx.attr("groups")
        _, _, out_hw, geom = _shapes(ctx, x, w)
        w_rows, cout = filter_rows(w, groups), int(w.shape[1]) * groups
        parts = []
        for n0, n1 in batches(place, x, geom, channels=cout):
            cols = per_group(place, w_rows, grouped(x[n0:n1], groups, last), ta=True)
            cols = cols.reshape((int(cols.shape[0]) * int(cols.shape[1]),
                                 int(cols.shape[2])))
            parts.append(place.col2im(cols, (n1 - n0, cout) + tuple(out_hw), geom))
        y = joined(parts)
        ctx.set_output("Output", in_layout(y, last))
    return run


def transpose_grad_kernel(place):
    """A convolution of dOut, per batch: dInput = Filter @ cols, dFilter = sum of Input @
    cols^T (cols: im2col of dOut)."""
    def run(ctx):
        x, w = ctx.input("Input"), ctx.input("Filter")
        dy = nchw(arrays.astype(ctx.input("Output@GRAD"), x.dtype), channel_last(ctx))
        last, groups = channel_last(ctx), ctx.attr("groups")
        _, in_hw, _, geom = _shapes(ctx, x, w)
        w_rows, dx_parts, dw = filter_rows(w, groups), [], None
        for n0, n1 in batches(place, dy, geom):
            cols = cols_of(place, ctx, dy[n0:n1], geom, groups)
            if ctx.has_output("Input@GRAD"):
                dx_parts.append(ungrouped(per_group(place, w_rows, cols), n1 - n0, in_hw,
                                          last))
            if ctx.has_output("Filter@GRAD"):
                part = per_group(place, grouped(x[n0:n1], groups, last), cols, tb=True)
                dw = part if dw is None else arrays.add(dw, part)
        if dx_parts:
            ctx.set_output("Input@GRAD", joined(dx_parts))
        if dw is not None:
            ctx.set_output("Filter@GRAD", dw.reshape(tuple(int(d) for d in w.shape)))
    return run


# --- inside a compiled block (kernels/lowered.py): kernels/cpu/conv.conv2d_transposed and
# its _grads, with the geometry worked out here from the attributes and the images' size
# as learned (``_shapes``: it does not depend on the batch size, which the compiled code
# takes from the arrays)
def _col2im_splits(geom, n: int, cout: int, itemsize: int) -> bool:
    """Would the interpreter's forward run col2im's prange twin (kernels/cpu/conv.col2im)
    for a batch of n images (the ones learned)?"""
    taps, positions = taps_and_positions(geom)
    per_image = cout * taps * positions * itemsize
    images = min(n, max(1, CPU_CONV.COLS_BATCH_BYTES // max(per_image, 1)))
    return cout * taps * images * positions >= CPU_CONV.MIN_PARALLEL_COLS and \
        images * cout > 1


def _lowered_transpose(grad: bool):
    def lowered(info):
        dtype = info.dtype("Input")
        if dtype.name not in ("float32", "float64") or info.dtype("Filter") != dtype or \
                info.ndim("Input") != 4 or (grad and info.dtype("Output@GRAD") != dtype):
            return None
        last, groups = channel_last(info), info.attr("groups")
        n, _, in_hw = split_dims(info.shape("Input"), last)
        w_shape = info.shape("Filter")
        out_hw = tuple(int(v) for v in output_hw(info, in_hw, w_shape[2:]))
        geom = geometry(info, in_hw, w_shape[2:], in_hw)
        if grad:
            return Call(CPU_CONV.conv2d_transposed_grads, ("Input", "Filter", "Output@GRAD"),
                        ("Input@GRAD", "Filter@GRAD"),
                        (geom, out_hw, groups, last, info.has_output("Input@GRAD"),
                         info.has_output("Filter@GRAD")))
        if _col2im_splits(geom, n, w_shape[1] * groups, dtype.itemsize):
            # compiled code runs the serial loop (it cannot ask whether the cores are free)
            return "large: the interpreter splits it across the cores"
        return Call(CPU_CONV.conv2d_transposed, ("Input", "Filter"), ("Output",),
                    (geom, out_hw, groups, last))
    return lowered


def transpose_op(op_type: str, rank: int, attrs: list, comment: str,
                 bias: bool = False) -> OpDef:
    """The declaration of a transposed convolution over ``rank`` spatial dims
    (conv2d_transpose, depthwise_conv2d_transpose, conv3d_transpose): ``attrs`` the
    convolution's, with output_padding and output_size after the first two; with ``bias``
    the empty Bias input Paddle's 2-D programs carry."""
    axes = axis_names(rank)
    taps = ", ".join("k" + a.lower() for a in axes)
    lines = {2: "rows/columns at the bottom/right",
             3: "planes/rows/columns at the back/bottom/right"}[rank]
    inputs = [INPUT, Slot("Filter", f"the filters: [C_in, C_out / groups, {taps}]")]
    if bias:
        inputs.append(Slot("Bias", "kept for Paddle's programs, always empty (its kernel has "
                           "no bias)", dispensable=True))
    return OpDef(
        op_type, inputs, [OUTPUT],
        attrs[:2] + [
            Attr("output_padding", A.INTS, [], f"extra {lines} (each below the stride)"),
            Attr("output_size", A.INTS, [], f"the output's [{', '.join(axes)}], within a "
                 "stride of the smallest (empty: the smallest plus output_padding)")]
        + attrs[2:],
        comment=comment, infer_shape=transpose_infer(rank, attrs),
        kernels={"cpu": transpose_kernel(CPU), "cuda": transpose_kernel(CUDA)},
        lowered=_lowered_transpose(False) if rank == 2 else None,
        grad=Grad(reads=[slot.name for slot in inputs],
                  writes=["Input", "Filter"] if bias else None,    # (Bias gets none)
                  kernel=transpose_grad_kernel(CPU), cuda_kernel=transpose_grad_kernel(CUDA),
                  lowered=_lowered_transpose(True) if rank == 2 else None))


for _type, _what in (("conv2d_transpose", "the transposed convolution"),
                     ("depthwise_conv2d_transpose", "conv2d_transpose with one group per "
                      "input channel (what Paddle saves when groups == C_in)")):
    register(transpose_op(
        _type, 2, CONV_ATTRS,
        f"Output = {_what} of Input with Filter (conv2d's gradient w.r.t. its input): each "
        "Input element adds Input * Filter[c] into the window it would have been computed "
        "from.", bias=True))
