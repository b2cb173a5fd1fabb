"""2-D pooling: pool2d (max or average) and max_pool2d_with_index (the max and where it
was), and their gradients (Fluid's slots and attributes, as ``F.max_pool2d``,
``F.avg_pool2d``, ``F.adaptive_avg_pool2d`` and ``F.max_pool2d(return_mask=True)`` save
them in Paddle 2.6.2).

The attributes are turned into one window geometry (``_geometry``), the same for shape
inference and for the kernels, after Paddle's rules: ``paddings`` is [pad_h, pad_w] or
[top, bottom, left, right]; ``padding_algorithm`` SAME pads so that Out = ceil(In /
stride), VALID pads nothing; ``ceil_mode`` rounds the output size up; ``global_pooling``
makes the window the whole plane; ``adaptive`` makes ``ksize`` the output size. The
kernels (kernels/cpu/pool.py, kernels/cuda/pool.py: the same code shape, looked up by
place) see planes (N*C, H, W); NHWC data is transposed to that and back.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import pool as CPU_POOL
from ..kernels.cuda import pool as CUDA_POOL
from . import arrays
from .common import OUT, X
from .stack import _runtime_fail

KERNELS = {"cpu": CPU_POOL, "cuda": CUDA_POOL}
MASK = Slot("Mask", "where each maximum is: its flat position in the input plane (int32)")


def _two(name, values, fail, low=1):
    values = list(values or [])
    if len(values) != 2 or any(not isinstance(v, int) or v < low for v in values):
        fail(f"{name} needs 2 ints (height, width), each at least {low}",
             expected=f"[h, w] with h, w >= {low}", given=f"{name}={values}")
    return values


def _paddings(attr, in_hw, ksize, strides, fail, with_index):
    """[top, bottom, left, right] after padding_algorithm (Paddle's UpdatePadding)."""
    algorithm = attr("padding_algorithm") if not with_index else "EXPLICIT"
    if algorithm not in ("EXPLICIT", "SAME", "VALID"):
        fail("padding_algorithm must be EXPLICIT, SAME or VALID",
             expected="'EXPLICIT', 'SAME' or 'VALID'", given=f"{algorithm!r}")
    if algorithm == "VALID":
        return [0, 0, 0, 0]
    if algorithm == "SAME":
        pads = []
        for n, k, s in zip(in_hw, ksize, strides):
            total = max((-(-n // s) - 1) * s + k - n, 0) if n >= 0 else 0
            pads += [total // 2, total - total // 2]
        return pads
    p = list(attr("paddings") or [])
    if len(p) not in ((2,) if with_index else (2, 4)) or \
            any(not isinstance(v, int) or v < 0 for v in p):
        fail("paddings needs [pad_h, pad_w]" + ("" if with_index else
                                                " or [top, bottom, left, right]") + " >= 0",
             expected="2" + ("" if with_index else " or 4") + " ints >= 0",
             given=f"paddings={p}")
    return [p[0], p[0], p[1], p[1]] if len(p) == 2 else p


def _geometry(attr, in_hw, fail, with_index=False):
    """(g, (oh, ow)): the kernels' window array (kernels/cpu/pool.py) and the output size;
    a dim of -1 in ``in_hw`` (not known yet) gives -1."""
    adaptive = bool(attr("adaptive"))
    exclusive = True if with_index else bool(attr("exclusive"))
    if attr("global_pooling"):
        if any(n < 0 for n in in_hw):
            return None, (1, 1)
        if 0 in in_hw:
            fail("global pooling needs a non-empty plane (a window of nothing has no max "
                 "or mean)", expected="H and W >= 1", given=f"H, W = {list(in_hw)}")
        return np.array([*in_hw, 1, 1, 0, 0, 0, exclusive, 0, 0], np.int64), (1, 1)
    ksize = _two("ksize", attr("ksize"), fail)
    if adaptive:
        return np.array([*ksize, 1, 1, 0, 0, 1, exclusive, 0, 0], np.int64), tuple(ksize)
    strides = _two("strides", attr("strides"), fail)
    pads = _paddings(attr, in_hw, ksize, strides, fail, with_index)
    ceil = not with_index and bool(attr("ceil_mode"))
    out = []
    for n, k, s, before, after in zip(in_hw, ksize, strides, pads[0::2], pads[1::2]):
        if n < 0:
            out.append(-1)
            continue
        o = (n - k + before + after + (s - 1 if ceil else 0)) // s + 1
        if o <= 0 or before >= k or (o - 1) * s - before >= n:
            fail("every window must hold at least one element of X (a window of padding "
                 "alone has no max or mean)", expected="ksize <= the padded input, "
                 "paddings below ksize", given=f"input {n}, ksize {k}, stride {s}, "
                 f"paddings {before}, {after}" + (", ceil_mode" if ceil else ""))
        out.append(o)
    return (np.array([*ksize, *strides, pads[0], pads[2], 0, exclusive, pads[1], pads[3]],
                     np.int64), tuple(out))


def _layout(attr, fail, with_index) -> bool:
    """True for NHWC (the channel axis last)."""
    if with_index:
        return False
    layout = attr("data_format")
    if layout not in ("NCHW", "NHWC"):
        fail("data_format must be NCHW or NHWC", expected="'NCHW' or 'NHWC'",
             given=f"{layout!r}")
    return layout == "NHWC"


def _out_shape(ctx, with_index):
    """(Out's shape, is_max) from X's shape and the attributes."""
    def fail(msg, expected=None, given=None):
        ctx.fail(msg, slot="X", expected=expected, given=given)
    ctx.require_dtype("X", "float")
    if ctx.dtype("X") not in (5, 6):
        fail("pooling runs on float32 or float64", expected="float32 or float64",
             given=ctx.describe_input("X"))
    xs = ctx.shape("X")
    if len(xs) != 4:
        fail("needs a 4-D tensor", expected="[N, C, H, W] (or NHWC)",
             given=ctx.describe_input("X"))
    kind = "max" if with_index else ctx.attr("pooling_type")
    if kind not in ("max", "avg"):
        fail("pooling_type must be max or avg", expected="'max' or 'avg'",
             given=f"pooling_type={kind!r}")
    nhwc = _layout(ctx.attr, fail, with_index)
    hw = xs[1:3] if nhwc else xs[2:]
    _, (oh, ow) = _geometry(ctx.attr, hw, fail, with_index)
    shape = [xs[0], oh, ow, xs[3]] if nhwc else [xs[0], xs[1], oh, ow]
    return shape, kind == "max"


def _infer(with_index):
    def infer(ctx):
        shape, _ = _out_shape(ctx, with_index)
        ctx.set_output("Out", shape, ctx.dtype("X"))
        if with_index:
            ctx.set_output("Mask", shape, 2)            # int32
    return infer


def _grad_infer(with_index):
    """dOut (and Out or Mask, which the gradient reads) must have the shape the forward
    rule gives for X: anything else would be scattered into a wrong dX."""
    def infer(ctx):
        shape, _ = _out_shape(ctx, with_index)
        for slot in ("Out@GRAD", "Mask" if with_index else "Out"):
            got = ctx.shape(slot) if ctx.has_value(slot) else shape
            if len(got) != 4 or any(a >= 0 and b >= 0 and a != b for a, b in zip(got, shape)):
                ctx.fail(f"{slot} must have the shape of the pooled output", slot=slot,
                         expected=str(shape), given=ctx.describe_input(slot))
        if with_index:
            ctx.require_dtype("Mask", "int")
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", ctx.shape("X"), ctx.dtype("X"))
    return infer


def _planes(ctx, op_type, with_index):
    """X as planes (N*C, H, W), its geometry, the output size and a function that puts
    (N*C, OH, OW) planes back into X's layout."""
    x = ctx.input("X")
    fail = _runtime_fail(op_type)
    nhwc = _layout(ctx.attr, fail, with_index)
    if nhwc:
        x = arrays.transpose(x, (0, 3, 1, 2))
    n, c, h, w = (int(d) for d in x.shape)
    g, (oh, ow) = _geometry(ctx.attr, (h, w), fail, with_index)

    def back(planes, hw):
        y = planes.reshape((n, c) + tuple(hw))
        return arrays.transpose(y, (0, 2, 3, 1)) if nhwc else y
    return x.reshape((n * c, h, w)), g, (oh, ow), back


def _to_planes(value, like_planes, nhwc):
    v = arrays.transpose(value, (0, 3, 1, 2)) if nhwc else value
    return v.reshape((int(like_planes.shape[0]),) + tuple(int(d) for d in v.shape[2:]))


def _pool(kind: str, op_type: str, with_index: bool):
    def run(ctx):
        planes, g, out_hw, back = _planes(ctx, op_type, with_index)
        is_max = with_index or ctx.attr("pooling_type") == "max"
        out, mask = KERNELS[kind].pool(planes, g, is_max, out_hw, with_index)
        ctx.set_output("Out", back(out, out_hw))
        if with_index:
            ctx.set_output("Mask", back(mask, out_hw))
    return run


def _pool_grad(kind: str):
    def run(ctx):
        planes, g, out_hw, back = _planes(ctx, "pool2d_grad", False)
        nhwc = ctx.attr("data_format") == "NHWC"
        out = _to_planes(ctx.input("Out"), planes, nhwc)
        dout = _to_planes(arrays.astype(ctx.input("Out@GRAD"), planes.dtype), planes, nhwc)
        dx = KERNELS[kind].pool_grad(planes, g, ctx.attr("pooling_type") == "max", out, dout)
        ctx.set_output("X@GRAD", back(dx, planes.shape[1:]))
    return run


def _unpool(kind: str):
    """dX of max_pool2d_with_index: each dOut added at its Mask position (checked)."""
    def run(ctx):
        planes, _, out_hw, back = _planes(ctx, "max_pool2d_with_index_grad", True)
        p, h, w = (int(d) for d in planes.shape)
        k = out_hw[0] * out_hw[1]
        mask = ctx.input("Mask").reshape((p, k))
        check.indices(mask, h * w, slot="Mask", what="position in the input plane",
                      counted=f"a plane of X has {h * w} elements")
        dout = arrays.astype(ctx.input("Out@GRAD"), planes.dtype).reshape((p, k))
        ctx.set_output("X@GRAD", back(KERNELS[kind].unpool(mask, dout, h * w), (h, w)))
    return run


def _window_attrs(with_index: bool) -> list:
    attrs = [Attr("ksize", A.INTS, [], "the window [h, w] (adaptive: the output size)"),
             Attr("strides", A.INTS, [1, 1], "the step between windows [h, w]"),
             Attr("paddings", A.INTS, [0, 0], "[pad_h, pad_w]" + (
                 "" if with_index else " or [top, bottom, left, right]")),
             Attr("global_pooling", A.BOOLEAN, False, "one window: the whole plane"),
             Attr("adaptive", A.BOOLEAN, False, "ksize is the output size; window i spans "
                  "floor(i*H/oh) .. ceil((i+1)*H/oh)")]
    if with_index:
        return attrs
    return attrs + [
        Attr("pooling_type", A.STRING, "max", "max or avg"),
        Attr("ceil_mode", A.BOOLEAN, False, "round the output size up (a last, partial "
                                            "window)"),
        Attr("exclusive", A.BOOLEAN, True, "avg: divide by the real (non-padding) "
                                           "elements, not the window size"),
        Attr("data_format", A.STRING, "NCHW", "NCHW or NHWC"),
        Attr("padding_algorithm", A.STRING, "EXPLICIT", "EXPLICIT (paddings), SAME "
                                                        "(Out = ceil(In / stride)) or VALID")]


register(OpDef(
    "pool2d", [X], [OUT], _window_attrs(False),
    comment="Out = the max or the mean of each window of X's planes.",
    infer_shape=_infer(False),
    kernels={"cpu": _pool("cpu", "pool2d", False), "cuda": _pool("cuda", "pool2d", False)},
    grad=Grad(reads=["X", "Out"], writes=["X"], kernel=_pool_grad("cpu"),
              cuda_kernel=_pool_grad("cuda"), infer_shape=_grad_infer(False))))

register(OpDef(
    "max_pool2d_with_index", [X], [OUT, MASK], _window_attrs(True),
    comment="Out = the max of each window of X's planes; Mask = where it is in the plane.",
    infer_shape=_infer(True),
    kernels={"cpu": _pool("cpu", "max_pool2d_with_index", True),
             "cuda": _pool("cuda", "max_pool2d_with_index", True)},
    grad=Grad(reads=["X", "Mask"], grads_of=["Out"], writes=["X"], kernel=_unpool("cpu"),
              cuda_kernel=_unpool("cuda"), infer_shape=_grad_infer(True))))
