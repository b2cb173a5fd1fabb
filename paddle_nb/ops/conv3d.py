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
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.registry import Attr, register
from .conv import conv_attrs, conv_op
from .conv_transpose import transpose_op

LAYOUTS_3D = ("NCDHW", "NDHWC", "NCHW", "NHWC", "AnyLayout")


def _layout(default: str) -> Attr:
    return Attr("data_format", A.STRING, default, "NCDHW or NDHWC (NCHW, NHWC and "
                "AnyLayout: the same, as Paddle saves conv3d_transpose's)",
                check=lambda v: None if v in LAYOUTS_3D else
                f"data_format must be one of {LAYOUTS_3D}, got {v!r}")


CONV3D_ATTRS = conv_attrs(3, _layout("NCDHW"))
TRANSPOSE3D_ATTRS = conv_attrs(3, _layout("NCHW"))

register(conv_op(
    "conv3d", 3, CONV3D_ATTRS,
    "Output = the 3-D convolution (cross-correlation, as Paddle's) of Input [N, C, D, H, W] "
    "(or [N, D, H, W, C]) with Filter: Output[n, o, i, j, k] = sum over the group's channels "
    "c and taps (a, b, e) of Filter[o, c, a, b, e] * Input[n, c, i*sd - pad_front + a*dd, "
    "j*sh - pad_top + b*dh, k*sw - pad_left + e*dw]."))

register(transpose_op(
    "conv3d_transpose", 3, TRANSPOSE3D_ATTRS,
    "Output = the 3-D transposed convolution of Input with Filter (conv3d's gradient w.r.t. "
    "its input): each Input element adds Input * Filter[c] into the window it would have "
    "been computed from."))
