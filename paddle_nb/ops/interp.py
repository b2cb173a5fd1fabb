"""2-D interpolation: nearest_interp_v2 and bilinear_interp_v2, and their gradients
(Fluid's slots and attributes, as ``F.interpolate`` and ``F.upsample`` save them in
Paddle 2.6.2).

The output size comes, later ones winning, from ``out_h``/``out_w``, from ``scale``
(Out = int(In * scale)) or a ``Scale`` tensor, from an ``OutSize`` tensor [2], or from
``SizeTensor`` (one 1-element tensor per dim): tensors are read at run time, as slice's
bounds are (ops/slice.py), and leave the dims unknown (-1) to shape inference.

Then each output row k reads source position ``ratio * k`` (align_corners: ratio =
(In - 1) / (Out - 1), corners onto corners; else 1 / scale, or In / Out), or, bilinear
with align_mode 0 and no align_corners, ``ratio * (k + 0.5) - 0.5`` (half-pixel
centres). ``_axis_maps`` turns that into per-axis index and weight maps, computed once on
the host with Paddle's float32 ratio (its kernels keep the ratio in a C++ float, and an
index truncated from it can differ from float64's), which both places' kernels read
(kernels/cpu/interp.py, kernels/cuda/interp.py). NHWC data is transposed to planes.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..core.limits import check_tensor_size
from ..kernels.cpu import interp as CPU_INTERP
from ..kernels.cuda import interp as CUDA_INTERP
from ..kernels.lowered import Call
from . import arrays
from .common import FLOAT_TYPES, OUT, X, build_fail, require_element_type, run_fail

KERNELS = {"cpu": CPU_INTERP, "cuda": CUDA_INTERP}
SIZE_SLOTS = ("OutSize", "SizeTensor", "Scale")


def _scales(values, fail):
    """(scale_h, scale_w) from a list of 1 or 2 positive numbers; None for []."""
    values = [float(v) for v in values]
    if not values:
        return None
    if len(values) > 2 or not all(v > 0 and v != float("inf") for v in values):
        fail("scale needs 1 or 2 finite numbers above 0", expected="[s] or [s_h, s_w], > 0",
             given=f"scale={values}")
    return (values[0], values[-1])


def _out_size(attr, in_hw, fail, tensors=None):
    """((out_h, out_w), scales or None) after Paddle's order; ``tensors``: the run-time
    values of OutSize / SizeTensor / Scale (None at build time, where a given tensor makes
    the size unknown)."""
    size, scales = [attr("out_h"), attr("out_w")], None
    tensors = tensors or {}
    if "SizeTensor" in tensors:
        size = [int(v) for v in tensors["SizeTensor"]]
    else:
        if "Scale" in tensors:
            scales = _scales(tensors["Scale"], fail)
        else:
            scales = _scales(attr("scale") or [], fail)
        if scales is not None:
            size = [int(n * s) if n >= 0 else -1 for n, s in zip(in_hw, scales)]
        if "OutSize" in tensors:
            size = [int(v) for v in tensors["OutSize"]]
    if len(size) != 2 or any(not isinstance(d, int) or d == 0 or d < -1 or d >= 2**31
                             for d in size) or (min(in_hw) >= 0 and min(size) < 1):
        fail("the output size must be 2 dims of at least 1 (set out_h and out_w, scale, "
             "or an OutSize / SizeTensor input)", expected="out_h, out_w >= 1",
             given=f"output size {size}")
    return tuple(size), scales


def _check_attrs(ctx, method: str, fail) -> bool:
    """True for NHWC; refuses what the kernels do not do."""
    if ctx.attr("interp_method") != method:
        fail(f"interp_method must be {method!r} for this op", expected=repr(method),
             given=f"interp_method={ctx.attr('interp_method')!r}")
    if ctx.attr("align_mode") not in (0, 1):
        fail("align_mode must be 0 (half-pixel centres) or 1", expected="0 or 1",
             given=f"align_mode={ctx.attr('align_mode')!r}")
    layout = ctx.attr("data_layout")
    if layout not in ("NCHW", "NHWC"):
        fail("data_layout must be NCHW or NHWC", expected="'NCHW' or 'NHWC'",
             given=f"data_layout={layout!r}")
    return layout == "NHWC"


def _infer(method: str):
    def infer(ctx):
        ctx.require_dtype("X", "float")
        require_element_type(ctx, "X", FLOAT_TYPES, "interpolation runs on float32 or float64",
                             expected="float32 or float64")
        fail = build_fail(ctx, "X")
        xs = ctx.shape("X")
        if len(xs) != 4:
            fail("needs a 4-D tensor", expected="[N, C, H, W] (or NHWC)",
                 given=ctx.describe_input("X"))
        nhwc = _check_attrs(ctx, method, fail)
        hw = xs[1:3] if nhwc else xs[2:]
        if 0 in hw:
            fail("an empty plane has nothing to interpolate from", expected="H, W >= 1",
                 given=ctx.describe_input("X"))
        if any(ctx.has_input(s) for s in SIZE_SLOTS):
            oh, ow = -1, -1                      # read at run time
        else:
            (oh, ow), _ = _out_size(ctx.attr, hw, fail)
        ctx.set_output("Out", [xs[0], oh, ow, xs[3]] if nhwc else [xs[0], xs[1], oh, ow],
                       ctx.dtype("X"))
    return infer


def _ratio(n: int, out: int, scale, align_corners: bool):
    """Paddle's float32 step, in input rows, from one of ``out`` output rows to the next."""
    if out <= 1:
        return np.float32(0)
    if align_corners:
        return np.float32((n - 1) / (out - 1))
    return np.float32(1.0 / scale) if scale is not None else np.float32(n) / np.float32(out)


def _axis_maps(n: int, out: int, scale, align_corners: bool, half_pixel: bool):
    """(i0, i1, w1): the rows each output row reads and the weight of the second, with
    Paddle's float32 ratio (and its double-precision source positions where it has
    them)."""
    k = np.arange(out)
    ratio = _ratio(n, out, scale, align_corners)
    if half_pixel:
        src = np.float64(ratio) * (k + 0.5) - 0.5
        i0 = np.maximum(np.trunc(src).astype(np.int64), 0)
        w1 = np.maximum(src.astype(np.float32), 0) - i0
    else:
        src32 = ratio * k.astype(np.float32)
        i0 = src32.astype(np.int64)
        w1 = src32 - i0
    i0 = np.minimum(i0, n - 1)
    return i0, np.minimum(i0 + 1, n - 1), w1.astype(np.float32)


def _nearest_map(n: int, out: int, scale, align_corners: bool):
    src32 = _ratio(n, out, scale, align_corners) * np.arange(out).astype(np.float32)
    i0 = (src32.astype(np.float64) + 0.5 if align_corners else src32).astype(np.int64)
    i0 = np.minimum(i0, n - 1)
    return i0, i0, np.zeros(out, np.float32)


def _maps(attr, method: str, in_hw, out_hw, scales):
    """The (rows, cols) maps, each (i0, i1, w1), of a resize of planes ``in_hw`` to
    ``out_hw``."""
    (h, w), (oh, ow), corners = in_hw, out_hw, bool(attr("align_corners"))
    if method == "nearest":
        return (_nearest_map(h, oh, scales and scales[0], corners),
                _nearest_map(w, ow, scales and scales[1], corners))
    half = attr("align_mode") == 0 and not corners
    return (_axis_maps(h, oh, scales and scales[0], corners, half),
            _axis_maps(w, ow, scales and scales[1], corners, half))


def _run_time_tensors(ctx) -> dict:
    tensors = {}
    if ctx.has_input("SizeTensor"):
        tensors["SizeTensor"] = [arrays.host_scalar(v) for v in ctx.inputs("SizeTensor")]
    if ctx.has_input("OutSize"):
        tensors["OutSize"] = list(arrays.host(ctx.input("OutSize")).ravel())
    if ctx.has_input("Scale"):
        tensors["Scale"] = list(arrays.host(ctx.input("Scale")).ravel())
    return tensors


def _planes(ctx, method: str, op_type: str):
    """X as planes (P, H, W), the maps (y0, y1, wy, x0, x1, wx) in X's dtype, and a
    function putting (P, OH, OW) planes back into X's layout."""
    fail = run_fail(op_type)
    nhwc = _check_attrs(ctx, method, fail)
    x = ctx.input("X")
    if nhwc:
        x = arrays.transpose(x, (0, 3, 1, 2))
    n, c, h, w = (int(d) for d in x.shape)
    (oh, ow), scales = _out_size(ctx.attr, (h, w), fail, _run_time_tensors(ctx))
    # a size read from a tensor was not seen by the allocation guard (at least one plane:
    # the maps alone are sized by it)
    check_tensor_size((max(n * c, 1), oh, ow), np.dtype(x.dtype), op_type)
    rows, cols = _maps(ctx.attr, method, (h, w), (oh, ow), scales)
    dtype = np.dtype(x.dtype)
    maps = (*rows[:2], rows[2].astype(dtype), *cols[:2], cols[2].astype(dtype))

    def back(planes, hw):
        y = planes.reshape((n, c) + tuple(hw))
        return arrays.transpose(y, (0, 2, 3, 1)) if nhwc else y
    return x.reshape((n * c, h, w)), maps, back


def _interp(kind: str, method: str, op_type: str):
    def run(ctx):
        planes, maps, back = _planes(ctx, method, op_type)
        out = KERNELS[kind].resample(planes, maps, method == "nearest")
        ctx.set_output("Out", back(out, out.shape[1:]))
    return run


def _interp_grad(kind: str, method: str, op_type: str):
    def run(ctx):
        planes, maps, back = _planes(ctx, method, op_type + "_grad")
        dout = ctx.input("Out@GRAD")
        if ctx.attr("data_layout") == "NHWC":
            dout = arrays.transpose(dout, (0, 3, 1, 2))
        want = (int(planes.shape[0]), int(maps[0].size), int(maps[3].size))
        if int(np.prod(dout.shape)) != int(np.prod(want)) or \
                tuple(int(d) for d in dout.shape[2:]) != want[1:]:
            run_fail(op_type + "_grad")(
                "Out@GRAD must have the shape of Out", expected=f"planes {want}",
                given=f"{tuple(int(d) for d in ctx.input('Out@GRAD').shape)}")
        dout = arrays.astype(dout, planes.dtype).reshape(want)
        dx = KERNELS[kind].resample_grad(dout, maps, method == "nearest", planes.shape[1:])
        ctx.set_output("X@GRAD", back(dx, planes.shape[1:]))
    return run


def _lowered(method: str, op_type: str, grad: bool):
    """kernels/cpu/interp.resampled (resampled_grad) with this module's maps as tuples
    (literals: they follow from the attributes and the planes' size, not the batch's);
    a size given by a tensor stays interpreted (read at run time)."""
    def lowered(info):
        if info.dtype("X").name not in FLOAT_TYPES or any(info.has_input(s)
                                                          for s in SIZE_SLOTS):
            return None
        if grad and info.dtype("Out@GRAD") != info.dtype("X"):
            return None
        fail = run_fail(op_type)
        nhwc = _check_attrs(info, method, fail)
        xs = info.shape("X")
        in_hw = tuple(int(d) for d in (xs[1:3] if nhwc else xs[2:]))
        out_hw, scales = _out_size(info.attr, in_hw, fail)
        if xs[0] * (xs[3] if nhwc else xs[1]) * out_hw[0] * out_hw[1] >= \
                CPU_INTERP.MIN_PARALLEL_INTERP:
            return "large: the interpreter splits it across the cores"
        maps = tuple(tuple(v.item() for v in a) for part in _maps(info.attr, method, in_hw,
                                                                    out_hw, scales)
                     for a in part)
        consts = (maps, method == "nearest", in_hw, nhwc)
        if grad:
            return Call(CPU_INTERP.resampled_grad, ("X", "Out@GRAD"), ("X@GRAD",), consts)
        return Call(CPU_INTERP.resampled, ("X",), ("Out",), consts)
    return lowered


def _attrs(method: str) -> list:
    return [Attr("data_layout", A.STRING, "NCHW", "NCHW or NHWC"),
            Attr("out_d", A.INT, -1, "the output depth (3-D ops only; ignored)"),
            Attr("out_h", A.INT, -1, "the output height (unless scale or a tensor says)"),
            Attr("out_w", A.INT, -1, "the output width"),
            Attr("scale", A.FLOATS, [], "[s] or [s_h, s_w]: Out = int(In * s)"),
            Attr("interp_method", A.STRING, method, f"{method!r} (this op's method)"),
            Attr("align_corners", A.BOOLEAN, True, "map the corner pixels onto each other"),
            Attr("align_mode", A.INT, 1, "without align_corners, 0: half-pixel centres "
                                         "(bilinear), 1: ratio * k")]


def _size_slots() -> list:
    return [Slot("OutSize", "[out_h, out_w] as an int tensor (read at run time)",
                 dispensable=True),
            Slot("SizeTensor", "out_h and out_w as 1-element int tensors (read at run time)",
                 duplicable=True, dispensable=True),
            Slot("Scale", "the scale as a float tensor of 1 or 2 (read at run time)",
                 dispensable=True)]


for _method in ("nearest", "bilinear"):
    _type = f"{_method}_interp_v2"
    register(OpDef(
        _type, [X, *_size_slots()], [OUT], _attrs(_method),
        comment=f"Out = X's planes resized by {_method} interpolation.",
        infer_shape=_infer(_method),
        kernels={"cpu": _interp("cpu", _method, _type),
                 "cuda": _interp("cuda", _method, _type)},
        lowered=_lowered(_method, _type, grad=False),
        grad=Grad(reads=["X", *SIZE_SLOTS], writes=["X"],
                  kernel=_interp_grad("cpu", _method, _type),
                  cuda_kernel=_interp_grad("cuda", _method, _type),
                  lowered=_lowered(_method, _type + "_grad", grad=True)),
        reads_attr_tensors=SIZE_SLOTS))
