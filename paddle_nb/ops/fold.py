"""unfold (im2col) and fold (col2im), and their gradients (Fluid's slots and attributes,
as ``F.unfold`` and ``F.fold`` save them).

unfold cuts every sliding window out of images X [N, C, H, W]: Y [N, C*kh*kw, L] holds in
column l the C*kh*kw values window l covers (zero where it hangs over the padding), the
windows numbered row by row, L = oh * ow with oh = (H + top + bottom - (dh*(kh-1) + 1)) //
sh + 1 (ow alike). ``paddings`` are [top, left, bottom, right], as Paddle orders them.

fold is unfold's adjoint: X [N, C*kh*kw, L] -> Y [N, C, H, W] (H, W = ``output_sizes``),
each column's values added back into the positions its window covers; where windows
overlap the values add up, so fold(unfold(x)) is x times how many windows cover each pixel.

Both are the convolution's index maps (``places.im2col`` / ``col2im``: numpy strided copies
on the CPU, one thread per element on CUDA); conv2d's cols are [C*kh*kw, N*L], so the
batch moves to the front with one transpose. Each op's gradient is the other one:
unfold_grad folds dY, fold_grad unfolds dY.
"""
from __future__ import annotations

import math

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from . import arrays
from .batch_norm import require_float
from ..backends import CPU, CUDA
from ..kernels.cpu import conv as CPU_CONV
from ..kernels.lowered import Call
from .common import build_fail, run_fail

X_SLOT = Slot("X", "the input")
Y_SLOT = Slot("Y", "the result")


def _pairs(n: int, low: int, what: str):
    def check(value):
        if not isinstance(value, list) or len(value) != n:
            return f"expected {n} {what}"
        if any(not isinstance(v, int) or v < low for v in value):
            return f"expected {what} >= {low}"
        return None
    return check


def _window_attrs():
    return [Attr("kernel_sizes", A.INTS, [1, 1], "[kh, kw]: the window",
                 check=_pairs(2, 1, "window sizes")),
            Attr("strides", A.INTS, [1, 1], "[sh, sw]: the window's steps",
                 check=_pairs(2, 1, "strides")),
            Attr("paddings", A.INTS, [0, 0, 0, 0], "[top, left, bottom, right] zeros around "
                 "each image", check=_pairs(4, 0, "paddings")),
            Attr("dilations", A.INTS, [1, 1], "[dh, dw]: the gaps between window taps",
                 check=_pairs(2, 1, "dilations"))]


def windows(ctx_attr, h: int, w: int, fail) -> tuple:
    """conv's geometry (kh, kw, sh, sw, pt, pl, dh, dw, oh, ow) for [h, w] images; oh or
    ow is -1 where h or w is unknown (build time)."""
    (kh, kw), (sh, sw) = ctx_attr("kernel_sizes"), ctx_attr("strides")
    pt, pl, pb, pr = ctx_attr("paddings")
    dh, dw = ctx_attr("dilations")

    def count(size, pad, k, d, s, name):
        if size < 0:
            return -1
        span = size + pad - (d * (k - 1) + 1)
        if span < 0:
            fail(f"the window does not fit the padded {name}",
                 f"{name} + paddings >= {d * (k - 1) + 1}", f"{name} {size}")
        return span // s + 1
    oh = count(h, pt + pb, kh, dh, sh, "height")
    ow = count(w, pl + pr, kw, dw, sw, "width")
    return (kh, kw, sh, sw, pt, pl, dh, dw, oh, ow)


def _float_x(ctx, rank: int, layout: str):
    """X's declared shape, X float of ``rank`` (``layout`` says what it holds), and the
    ``fail`` of a rule on it."""
    require_float(ctx, "X")
    shape, fail = ctx.shape("X"), build_fail(ctx, "X")
    if len(shape) != rank:
        fail(f"{ctx.op_def.type} takes {layout}", f"rank {rank}", ctx.describe_input("X"))
    return shape, fail


def _unfold_infer(ctx):
    shape, fail = _float_x(ctx, 4, "4-D images [N, C, H, W]")
    kh, kw, *_, oh, ow = windows(ctx.attr, shape[2], shape[3], fail)
    c = shape[1] * kh * kw if shape[1] >= 0 else -1
    ctx.set_output("Y", [shape[0], c, oh * ow if min(oh, ow) >= 0 else -1], ctx.dtype("X"))


def _fold_infer(ctx):
    shape, fail = _float_x(ctx, 3, "columns [N, C*kh*kw, L]")
    sizes = ctx.attr("output_sizes")
    if not isinstance(sizes, list) or len(sizes) != 2 or min(sizes) < 1:
        ctx.fail("output_sizes is [H, W] of the images made", expected="2 sizes >= 1",
                 given=f"output_sizes={sizes}")
    kh, kw, *_, oh, ow = windows(ctx.attr, sizes[0], sizes[1], fail)
    if shape[1] >= 0 and shape[1] % (kh * kw):
        fail("X's dim 1 must be channels times the window", f"a multiple of {kh * kw}",
             ctx.describe_input("X"))
    if shape[2] >= 0 and shape[2] != oh * ow:
        fail("X's dim 2 must count the windows output_sizes has",
             f"{oh} * {ow} = {oh * ow}", ctx.describe_input("X"))
    c = shape[1] // (kh * kw) if shape[1] >= 0 else -1
    ctx.set_output("Y", [shape[0], c, sizes[0], sizes[1]], ctx.dtype("X"))


def unfolded(place, x, attr, op_type="unfold"):
    """Y [N, C*kh*kw, L] of images x [N, C, H, W]."""
    n, c, h, w = (int(d) for d in x.shape)
    geom = windows(attr, h, w, run_fail(op_type))
    cols = place.im2col(x, geom)                     # [C*kh*kw, N*L]
    return arrays.transpose(cols.reshape((c * geom[0] * geom[1], n, geom[8] * geom[9])),
                            [1, 0, 2])


def folded(place, y, h: int, w: int, attr, op_type="fold"):
    """Images [N, C, h, w]: each column of y [N, C*kh*kw, L] added back where its window
    lies."""
    n, ckk, windows_count = (int(d) for d in y.shape)
    geom = windows(attr, h, w, run_fail(op_type))
    if ckk % (geom[0] * geom[1]) or windows_count != geom[8] * geom[9]:
        raise ValueError(f"{op_type}: columns {list(y.shape)} do not fit the windows of "
                         f"[{h}, {w}] images")
    cols = arrays.transpose(y, [1, 0, 2]).reshape((ckk, n * windows_count))
    return place.col2im(cols, (n, ckk // (geom[0] * geom[1]), h, w), geom)


def _unfold(place):
    def run(ctx):
        ctx.set_output("Y", unfolded(place, ctx.input("X"), ctx.attr))
    return run


def _unfold_grad(place):
    """dX: dY folded back into X's images."""
    def run(ctx):
        x, dy = ctx.input("X"), ctx.input("Y@GRAD")
        dy = arrays.astype(dy, x.dtype)
        ctx.set_output("X@GRAD", folded(place, dy, int(x.shape[2]), int(x.shape[3]),
                                        ctx.attr, "unfold_grad"))
    return run


def _fold(place):
    def run(ctx):
        h, w = ctx.attr("output_sizes")
        ctx.set_output("Y", folded(place, ctx.input("X"), int(h), int(w), ctx.attr))
    return run


def _fold_grad(place):
    """dX: dY unfolded (each column reads back the positions it was added to)."""
    def run(ctx):
        x, dy = ctx.input("X"), ctx.input("Y@GRAD")
        dy = arrays.astype(dy, x.dtype)
        ctx.set_output("X@GRAD", unfolded(place, dy, ctx.attr, "fold_grad")
                       .reshape(tuple(int(d) for d in x.shape)))
    return run


# --- inside a compiled block (kernels/lowered.py): kernels/cpu/conv.unfolded_windows and
# folded_windows, the geometry from the attributes and the images' size as learned (one
# compiled segment for every batch size)
def _lowered(op_type: str, grad: bool):
    """unfold / fold (``grad``: their gradients) on float32/float64: the columns (unfold,
    fold_grad) or the images (fold, unfold_grad)."""
    reads = "Y@GRAD" if grad else "X"
    to_images = (op_type == "fold") != grad

    def lowered(info):
        dtype = info.dtype("X")
        if dtype.name not in ("float32", "float64") or info.dtype(reads) != dtype:
            return None
        if op_type == "fold":
            hw = tuple(int(v) for v in info.attr("output_sizes"))
        else:
            hw = tuple(int(d) for d in info.shape("X")[2:])
        geom = windows(info.attr, hw[0], hw[1], run_fail(op_type + ("_grad" if grad else "")))
        writes = ("X@GRAD",) if grad else ("Y",)
        if not to_images:
            return Call(CPU_CONV.unfolded_windows, (reads,), writes, (geom, hw))
        n, rows, _ = info.shape(reads)
        if math.prod(info.shape(reads)) >= CPU_CONV.MIN_PARALLEL_COLS and \
                n * (rows // (geom[0] * geom[1])) > 1:
            return "large: the interpreter splits it across the cores"     # col2im's twin
        return Call(CPU_CONV.folded_windows, (reads,), writes, (geom, hw))
    return lowered


register(OpDef(
    "unfold", [X_SLOT], [Y_SLOT], _window_attrs(),
    comment="Y = every kh x kw window of images X as a column ([N, C, H, W] -> "
            "[N, C*kh*kw, L]): im2col.",
    infer_shape=_unfold_infer, kernels={"cpu": _unfold(CPU), "cuda": _unfold(CUDA)},
    lowered=_lowered("unfold", grad=False),
    grad=Grad(reads=["X"], grads_of=["Y"], writes=["X"], kernel=_unfold_grad(CPU),
              cuda_kernel=_unfold_grad(CUDA), lowered=_lowered("unfold", grad=True))))

register(OpDef(
    "fold", [X_SLOT], [Y_SLOT],
    [Attr("output_sizes", A.INTS, [1, 1], "[H, W] of the images made",
          check=_pairs(2, 1, "output sizes"))] + _window_attrs(),
    comment="Y = columns X added back into [N, C, H, W] images at their windows "
            "(unfold's adjoint: col2im).",
    infer_shape=_fold_infer, kernels={"cpu": _fold(CPU), "cuda": _fold(CUDA)},
    lowered=_lowered("fold", grad=False),
    grad=Grad(reads=["X"], grads_of=["Y"], writes=["X"], kernel=_fold_grad(CPU),
              cuda_kernel=_fold_grad(CUDA), lowered=_lowered("fold", grad=True))))
