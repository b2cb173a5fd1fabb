"""3-D convolution: conv3d and conv3d_transpose (Fluid's slots and attributes, as
``paddle.nn.functional.conv3d`` / ``conv3d_transpose``, ``paddle.nn.Conv3D`` and
``paddle.static.nn.conv3d`` save them), and their gradients.

Only the declarations live here. The math is conv.py's and conv_transpose.py's, which
take any number of spatial dims: the geometry gains a depth entry in each of its groups,
im2col's rows are the taps (c, kd, kh, kw) and its columns the positions (n, od, oh, ow)
(kernels/cpu/conv3d.py, kernels/cuda/conv3d.py), and the products per group are the same.
The CPU's direct stride-1 loops are 2-D only, so conv3d always takes the im2col path.

Layouts: Paddle saves conv3d's as NCDHW / NDHWC, and conv3d_transpose's as NCHW / NHWC
(its Python API maps NCDHW to NCHW before saving); both spellings are accepted for both
ops, and mean channels first / channels last.

In a compiled block both run kernels/cpu/conv3d.py's njit twins of that path (the same
im2col3d / col2im3d, the same products a batch of images at a time), bit for bit; the
geometry is worked out there from the run's sizes (SAME padding's pads too), so one
compiled segment serves every batch size. There is no prange in the 3-D path, so no size
is refused for the cores.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu import conv3d as CPU_CONV3D
from ..kernels.lowered import Call
from .conv import channel_last, conv_attrs, conv_op, geometry, pads_and_dilations, split_dims
from .conv_transpose import output_hw, transpose_op

LAYOUTS_3D = ("NCDHW", "NDHWC", "NCHW", "NHWC", "AnyLayout")


def _layout(default: str) -> Attr:
    return Attr("data_format", A.STRING, default, "NCDHW or NDHWC (NCHW, NHWC and "
                "AnyLayout: the same, as Paddle saves conv3d_transpose's)",
                check=lambda v: None if v in LAYOUTS_3D else
                f"data_format must be one of {LAYOUTS_3D}, got {v!r}")


CONV3D_ATTRS = conv_attrs(3, _layout("NCDHW"))
TRANSPOSE3D_ATTRS = conv_attrs(3, _layout("NCHW"))


# --- inside a compiled block (kernels/lowered.py) ------------------------------------------
def _floats(info, grad: bool) -> bool:
    """Input, Filter (and dOutput) float32 or float64 of one dtype, Input 5-D."""
    dtype = info.dtype("Input")
    return dtype.name in ("float32", "float64") and info.dtype("Filter") == dtype and \
        info.ndim("Input") == 5 and (not grad or info.dtype("Output@GRAD") == dtype)


def _lowered_conv3d(grad: bool):
    def lowered(info):
        if not _floats(info, grad):
            return None
        _, _, x_dhw = split_dims(info.shape("Input"), channel_last(info))
        p, d = pads_and_dilations(info, x_dhw, info.shape("Filter")[2:])
        same = info.attr("padding_algorithm") == "SAME"     # pads from the sizes, there
        consts = (tuple(info.attr("strides")), tuple(p), tuple(d), info.attr("groups"),
                  channel_last(info), same)
        if grad:
            return Call(CPU_CONV3D.conv3d_grads, ("Input", "Filter", "Output@GRAD"),
                        ("Input@GRAD", "Filter@GRAD"),
                        consts + (info.has_output("Input@GRAD"),
                                  info.has_output("Filter@GRAD")))
        return Call(CPU_CONV3D.conv3d, ("Input", "Filter"), ("Output",), consts)
    return lowered


def _lowered_transpose3d(grad: bool):
    """The geometry from the attributes and the images' size as learned (it does not
    depend on the batch size, which the compiled code takes from the arrays)."""
    def lowered(info):
        if not _floats(info, grad):
            return None
        last, groups = channel_last(info), info.attr("groups")
        _, _, in_dhw = split_dims(info.shape("Input"), last)
        k_dhw = info.shape("Filter")[2:]
        out_dhw = tuple(int(v) for v in output_hw(info, in_dhw, k_dhw))
        geom = geometry(info, in_dhw, k_dhw, in_dhw)
        if grad:
            return Call(CPU_CONV3D.conv3d_transposed_grads,
                        ("Input", "Filter", "Output@GRAD"), ("Input@GRAD", "Filter@GRAD"),
                        (geom, out_dhw, groups, last, info.has_output("Input@GRAD"),
                         info.has_output("Filter@GRAD")))
        return Call(CPU_CONV3D.conv3d_transposed, ("Input", "Filter"), ("Output",),
                    (geom, out_dhw, groups, last))
    return lowered


def _with_forms(op: OpDef, lowered) -> OpDef:
    """``op`` (ops/conv.py's or conv_transpose.py's declaration, which gives 2-D forms
    only) with the 3-D forms: ``lowered(grad)`` gives the forward's and the gradient's."""
    op.lowered = lowered(False)
    op.grad.lowered = lowered(True)
    return op


register(_with_forms(conv_op(
    "conv3d", 3, CONV3D_ATTRS,
    "Output = the 3-D convolution (cross-correlation, as Paddle's) of Input [N, C, D, H, W] "
    "(or [N, D, H, W, C]) with Filter: Output[n, o, i, j, k] = sum over the group's channels "
    "c and taps (a, b, e) of Filter[o, c, a, b, e] * Input[n, c, i*sd - pad_front + a*dd, "
    "j*sh - pad_top + b*dh, k*sw - pad_left + e*dw]."), _lowered_conv3d))

register(_with_forms(transpose_op(
    "conv3d_transpose", 3, TRANSPOSE3D_ATTRS,
    "Output = the 3-D transposed convolution of Input with Filter (conv3d's gradient w.r.t. "
    "its input): each Input element adds Input * Filter[c] into the window it would have "
    "been computed from."), _lowered_transpose3d))
