"""Pooling, 2-D and 3-D: pool2d / pool3d (max or average) and max_pool2d_with_index /
max_pool3d_with_index (the max and where it was), and their gradients (Fluid's slots and
attributes, as ``F.max_pool2d``, ``F.avg_pool3d``, ``F.adaptive_avg_pool3d``,
``F.max_pool3d(return_mask=True)``, ``F.local_response_norm`` ... save them in Paddle 2.6.2).

The two ranks are one op family over ``dims`` spatial axes (2: H, W; 3: D, H, W). The
attributes are turned into one window geometry (``_geometry``), the same for shape
inference and for the kernels, after Paddle's rules: ``paddings`` is one pad per axis
or a (before, after) pair per axis ([top, bottom, left, right]; 3-D [front, back, top,
bottom, left, right]); ``padding_algorithm`` SAME pads so that Out = ceil(In / stride),
VALID pads nothing; ``ceil_mode`` rounds the output size up; ``global_pooling`` makes the
window the whole plane (volume); ``adaptive`` makes ``ksize`` the output size. The
kernels (kernels/cpu/pool.py, kernels/cuda/pool.py: the same code shape, looked up by
place) see volumes (N*C, D, H, W): a 2-D plane is a volume of depth 1, channel-last data
is transposed to that and back.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import pool as CPU_POOL
from ..kernels.cuda import pool as CUDA_POOL
from ..kernels.lowered import Call
from . import arrays
from .common import FLOAT_TYPES, OUT, X, build_fail, require_element_type, run_fail

KERNELS = {"cpu": CPU_POOL, "cuda": CUDA_POOL}
MASK = Slot("Mask", "where each maximum is: its flat position in the input plane or "
                    "volume (int32)")
AXES = {2: "h, w", 3: "d, h, w"}                       # the spatial axes, for messages
LAYOUTS = {2: ("NCHW", "NHWC"), 3: ("NCDHW", "NDHWC")}  # channels first, channels last


def _ints(name, values, dims, fail, low=1):
    values = list(values or [])
    if len(values) != dims or any(not isinstance(v, int) or v < low for v in values):
        fail(f"{name} needs {dims} ints ({AXES[dims]}), each at least {low}",
             expected=f"[{AXES[dims]}] each >= {low}", given=f"{name}={values}")
    return values


def _paddings(attr, in_sizes, ksize, strides, fail, with_index):
    """(before, after) pads interleaved per axis ([top, bottom, left, right] in 2-D)
    after padding_algorithm (Paddle's UpdatePadding)."""
    dims = len(in_sizes)
    algorithm = attr("padding_algorithm") if not with_index else "EXPLICIT"
    if algorithm not in ("EXPLICIT", "SAME", "VALID"):
        fail("padding_algorithm must be EXPLICIT, SAME or VALID",
             expected="'EXPLICIT', 'SAME' or 'VALID'", given=f"{algorithm!r}")
    if algorithm == "VALID":
        return [0] * (2 * dims)
    if algorithm == "SAME":
        pads = []
        for n, k, s in zip(in_sizes, ksize, strides):
            total = max((-(-n // s) - 1) * s + k - n, 0) if n >= 0 else 0
            pads += [total // 2, total - total // 2]
        return pads
    p = list(attr("paddings") or [])
    lengths = (dims,) if with_index else (dims, 2 * dims)
    if len(p) not in lengths or any(not isinstance(v, int) or v < 0 for v in p):
        fail(f"paddings needs one pad per axis ({AXES[dims]})" + (
            "" if with_index else " or a (before, after) pair per axis") + ", each >= 0",
             expected=" or ".join(str(n) for n in lengths) + " ints >= 0",
             given=f"paddings={p}")
    return [v for v in p for _ in (0, 1)] if len(p) == dims else p


def _geometry(attr, in_sizes, fail, with_index=False):
    """(g, out_sizes): the kernels' window array (its layout: kernels/cpu/pool.py) over
    (depth, height, width), and the output size of each of the ``len(in_sizes)`` axes
    given; a size of -1 in ``in_sizes`` (not known yet) gives -1. A 2-D geometry's depth
    axis is a window of 1, stride 1, no padding."""
    dims = len(in_sizes)
    adaptive = bool(attr("adaptive"))
    exclusive = True if with_index else bool(attr("exclusive"))
    lead = [1] * (3 - dims)                  # the depth axis a 2-D pool does not have

    def window(k, s, before, after, is_adaptive):
        return np.array([*lead, *k, *lead, *s, *[0] * (3 - dims), *before,
                         *[0] * (3 - dims), *after, is_adaptive, exclusive], np.int64)
    if attr("global_pooling"):
        if any(n < 0 for n in in_sizes):
            return None, (1,) * dims
        if 0 in in_sizes:
            fail("global pooling needs a non-empty input (a window of nothing has no max "
                 "or mean)", expected="every spatial dim >= 1", given=f"{list(in_sizes)}")
        zero = [0] * dims
        return window(in_sizes, [1] * dims, zero, zero, 0), (1,) * dims
    ksize = _ints("ksize", attr("ksize"), dims, fail)
    if adaptive:
        zero = [0] * dims
        return window(ksize, [1] * dims, zero, zero, 1), tuple(ksize)
    strides = _ints("strides", attr("strides"), dims, fail)
    pads = _paddings(attr, in_sizes, ksize, strides, fail, with_index)
    ceil = not with_index and bool(attr("ceil_mode"))
    out = []
    for n, k, s, before, after in zip(in_sizes, ksize, strides, pads[0::2], pads[1::2]):
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
    return window(ksize, strides, pads[0::2], pads[1::2], 0), tuple(out)


def _channels_last(attr, fail, with_index, dims) -> bool:
    """True for NHWC / NDHWC (the channel axis last)."""
    if with_index:
        return False
    first, last = LAYOUTS[dims]
    layout = attr("data_format")
    if layout not in (first, last):
        fail(f"data_format must be {first} or {last}", expected=f"{first!r} or {last!r}",
             given=f"{layout!r}")
    return layout == last


def _out_shape(ctx, with_index, dims):
    """(Out's shape, is_max) from X's shape and the attributes."""
    ctx.require_dtype("X", "float")
    require_element_type(ctx, "X", FLOAT_TYPES, "pooling runs on float32 or float64",
                         expected="float32 or float64")
    fail = build_fail(ctx, "X")
    xs = ctx.shape("X")
    if len(xs) != 2 + dims:
        fail(f"needs a {2 + dims}-D tensor", expected=f"{LAYOUTS[dims][0]} (or "
             f"{LAYOUTS[dims][1]})", given=ctx.describe_input("X"))
    kind = "max" if with_index else ctx.attr("pooling_type")
    if kind not in ("max", "avg"):
        fail("pooling_type must be max or avg", expected="'max' or 'avg'",
             given=f"pooling_type={kind!r}")
    last = _channels_last(ctx.attr, fail, with_index, dims)
    sizes = xs[1:-1] if last else xs[2:]
    _, out = _geometry(ctx.attr, sizes, fail, with_index)
    shape = [xs[0], *out, xs[-1]] if last else [xs[0], xs[1], *out]
    return shape, kind == "max"


def _infer(with_index, dims):
    def infer(ctx):
        shape, _ = _out_shape(ctx, with_index, dims)
        ctx.set_output("Out", shape, ctx.dtype("X"))
        if with_index:
            ctx.set_output("Mask", shape, 2)            # int32
    return infer


def _grad_infer(with_index, dims):
    """dOut (and Out or Mask, which the gradient reads) must have the shape the forward
    rule gives for X: anything else would be scattered into a wrong dX."""
    def infer(ctx):
        shape, _ = _out_shape(ctx, with_index, dims)
        for slot in ("Out@GRAD", "Mask" if with_index else "Out"):
            got = ctx.shape(slot) if ctx.has_value(slot) else shape
            if len(got) != 2 + dims or any(a >= 0 and b >= 0 and a != b
                                           for a, b in zip(got, shape)):
                ctx.fail(f"{slot} must have the shape of the pooled output", slot=slot,
                         expected=str(shape), given=ctx.describe_input(slot))
        if with_index:
            ctx.require_dtype("Mask", "int")
        if ctx.has_output("X@GRAD"):
            ctx.set_output("X@GRAD", ctx.shape("X"), ctx.dtype("X"))
    return infer


def _to_channels_first(dims):
    return (0, dims + 1) + tuple(range(1, dims + 1))     # NHWC -> NCHW, NDHWC -> NCDHW


def _volumes(ctx, op_type, with_index, dims):
    """X as volumes (N*C, D, H, W) (2-D: D = 1), its geometry, the output size (D, H, W)
    and a function that puts (N*C, OD, OH, OW) volumes back into X's layout."""
    x = ctx.input("X")
    fail = run_fail(op_type)
    last = _channels_last(ctx.attr, fail, with_index, dims)
    if last:
        x = arrays.transpose(x, _to_channels_first(dims))
    n, c, *sizes = (int(d) for d in x.shape)
    g, out = _geometry(ctx.attr, sizes, fail, with_index)
    lead = (1,) * (3 - dims)

    def back(volumes, spatial):
        y = volumes.reshape((n, c) + tuple(spatial)[3 - dims:])
        return arrays.transpose(y, (0,) + tuple(range(2, dims + 2)) + (1,)) if last else y
    return x.reshape((n * c,) + lead + tuple(sizes)), g, lead + tuple(out), back


def _as_volumes(value, like, last, dims):
    """A pooled-output-shaped input (Out, dOut) as (N*C, OD, OH, OW) volumes."""
    v = arrays.transpose(value, _to_channels_first(dims)) if last else value
    lead = (1,) * (3 - dims)
    return v.reshape((int(like.shape[0]),) + lead + tuple(int(d) for d in v.shape[2:]))


def _pool(kind: str, op_type: str, with_index: bool, dims: int):
    def run(ctx):
        volumes, g, out_size, back = _volumes(ctx, op_type, with_index, dims)
        is_max = with_index or ctx.attr("pooling_type") == "max"
        out, mask = KERNELS[kind].pool(volumes, g, is_max, out_size, with_index)
        ctx.set_output("Out", back(out, out_size))
        if with_index:
            ctx.set_output("Mask", back(mask, out_size))
    return run


def _pool_grad(kind: str, op_type: str, dims: int):
    def run(ctx):
        volumes, g, _, back = _volumes(ctx, op_type, False, dims)
        last = ctx.attr("data_format") == LAYOUTS[dims][1]
        out = _as_volumes(ctx.input("Out"), volumes, last, dims)
        dout = _as_volumes(arrays.astype(ctx.input("Out@GRAD"), volumes.dtype), volumes,
                           last, dims)
        dx = KERNELS[kind].pool_grad(volumes, g, ctx.attr("pooling_type") == "max", out,
                                     dout)
        ctx.set_output("X@GRAD", back(dx, volumes.shape[1:]))
    return run


def _mask_grad(kind: str, op_type: str, dims: int):
    """dX of max_pool{2,3}d_with_index: each dOut added at its Mask position (checked)."""
    def run(ctx):
        volumes, _, out_size, back = _volumes(ctx, op_type, True, dims)
        p, size = int(volumes.shape[0]), int(np.prod(volumes.shape[1:]))
        k = int(np.prod(out_size))
        mask = ctx.input("Mask").reshape((p, k))
        where = "plane" if dims == 2 else "volume"
        check.indices(mask, size, slot="Mask", what=f"position in the input {where}",
                      counted=f"a {where} of X has {size} elements")
        dout = arrays.astype(ctx.input("Out@GRAD"), volumes.dtype).reshape((p, k))
        dx = KERNELS[kind].scatter_add(mask, dout, size)
        ctx.set_output("X@GRAD", back(dx, volumes.shape[1:]))
    return run


def _lowered_pool(op_type: str, dims: int, grad: bool):
    """pool2d/pool3d on channels-first float X (kernels/cpu/pool.pooled): the geometry and
    the output size from X's shape as the interpreter's run saw it."""
    def lowered(info):
        if info.dtype("X").name not in FLOAT_TYPES or \
                _channels_last(info.attr, run_fail(op_type), False, dims):
            return None
        g, out = _geometry(info.attr, info.shape("X")[2:], run_fail(op_type))
        g = tuple(int(v) for v in g)
        out_size = math.prod(info.shape("Out@GRAD" if grad else "Out"))
        if out_size * g[0] * g[1] * g[2] >= CPU_POOL.MIN_PARALLEL_POOL:
            # compiled code runs the serial loop (it cannot ask whether the cores are free)
            return "large: the interpreter splits it across the cores"
        is_max = info.attr("pooling_type") == "max"
        if grad:
            if info.dtype("Out@GRAD") != info.dtype("X"):
                return None
            return Call(CPU_POOL.pooled_grad, ("X", "Out", "Out@GRAD"), ("X@GRAD",),
                        (g, is_max))
        out_dhw = (1,) * (3 - dims) + tuple(int(d) for d in out)
        return Call(CPU_POOL.pooled, ("X",), ("Out",), (g, is_max, out_dhw, dims + 2))
    return lowered


def _lowered_index_pool(op_type: str, dims: int, grad: bool):
    """max_pool{2,3}d_with_index on float X (kernels/cpu/pool.pooled_with_mask) and its
    gradient (mask_scattered, which checks Mask's range): the window and the output's
    spatial size from the attributes and X's spatial size as learned, as pool2d's."""
    def lowered(info):
        if info.dtype("X").name not in FLOAT_TYPES:
            return None
        g, out = _geometry(info.attr, info.shape("X")[2:], run_fail(op_type), True)
        g = tuple(int(v) for v in g)
        if grad:
            if info.dtype("Out@GRAD") != info.dtype("X"):
                return None
            if math.prod(info.shape("Out@GRAD")) >= CPU_POOL.MIN_PARALLEL_POOL:
                return "large: the interpreter splits it across the cores"
            return Call(CPU_POOL.mask_scattered, ("X", "Mask", "Out@GRAD"), ("X@GRAD",))
        reads = math.prod(info.shape("X")) if g[CPU_POOL.ADAPTIVE] else \
            math.prod(info.shape("Out")) * g[0] * g[1] * g[2]
        if reads >= CPU_POOL.MIN_PARALLEL_POOL:
            return "large: the interpreter splits it across the cores"
        out_dhw = (1,) * (3 - dims) + tuple(int(d) for d in out)
        return Call(CPU_POOL.pooled_with_mask, ("X",), ("Out", "Mask"), (g, out_dhw, dims + 2))
    return lowered


def _window_attrs(with_index: bool, dims: int) -> list:
    axes = f"[{AXES[dims]}]"
    attrs = [Attr("ksize", A.INTS, [], f"the window {axes} (adaptive: the output size)"),
             Attr("strides", A.INTS, [1] * dims, f"the step between windows {axes}"),
             Attr("paddings", A.INTS, [0] * dims, f"one pad per axis {axes}" + (
                 "" if with_index else ", or a (before, after) pair per axis")),
             Attr("global_pooling", A.BOOLEAN, False, "one window: the whole input"),
             Attr("adaptive", A.BOOLEAN, False, "ksize is the output size; window i spans "
                  "floor(i*n/out) .. ceil((i+1)*n/out)")]
    if with_index:
        return attrs
    return attrs + [
        Attr("pooling_type", A.STRING, "max", "max or avg"),
        Attr("ceil_mode", A.BOOLEAN, False, "round the output size up (a last, partial "
                                            "window)"),
        Attr("exclusive", A.BOOLEAN, True, "avg: divide by the real (non-padding) "
                                           "elements, not the window size"),
        Attr("data_format", A.STRING, LAYOUTS[dims][0], " or ".join(LAYOUTS[dims])),
        Attr("padding_algorithm", A.STRING, "EXPLICIT", "EXPLICIT (paddings), SAME "
                                                        "(Out = ceil(In / stride)) or VALID")]


for _dims in (2, 3):
    _pool_type, _index_type = f"pool{_dims}d", f"max_pool{_dims}d_with_index"
    register(OpDef(
        _pool_type, [X], [OUT], _window_attrs(False, _dims),
        comment=f"Out = the max or the mean of each window of X's {_dims}-D "
                f"{'planes' if _dims == 2 else 'volumes'}.",
        infer_shape=_infer(False, _dims),
        kernels={"cpu": _pool("cpu", _pool_type, False, _dims),
                 "cuda": _pool("cuda", _pool_type, False, _dims)},
        lowered=_lowered_pool(_pool_type, _dims, grad=False),
        grad=Grad(reads=["X", "Out"], writes=["X"],
                  kernel=_pool_grad("cpu", _pool_type + "_grad", _dims),
                  cuda_kernel=_pool_grad("cuda", _pool_type + "_grad", _dims),
                  infer_shape=_grad_infer(False, _dims),
                  lowered=_lowered_pool(_pool_type + "_grad", _dims, grad=True))))

    register(OpDef(
        _index_type, [X], [OUT, MASK], _window_attrs(True, _dims),
        comment=f"Out = the max of each window of X's {_dims}-D "
                f"{'planes' if _dims == 2 else 'volumes'}; Mask = where it is in X's.",
        infer_shape=_infer(True, _dims),
        kernels={"cpu": _pool("cpu", _index_type, True, _dims),
                 "cuda": _pool("cuda", _index_type, True, _dims)},
        lowered=_lowered_index_pool(_index_type, _dims, grad=False),
        grad=Grad(reads=["X", "Mask"], grads_of=["Out"], writes=["X"],
                  kernel=_mask_grad("cpu", _index_type + "_grad", _dims),
                  cuda_kernel=_mask_grad("cuda", _index_type + "_grad", _dims),
                  infer_shape=_grad_infer(True, _dims),
                  lowered=_lowered_index_pool(_index_type + "_grad", _dims, grad=True))))
