"""The convolutional builders of ``pd.layer``, with Fluid's signatures, each appending the
ops Fluid appends: ``conv2d`` (a ``conv2d`` or ``depthwise_conv2d`` op, the bias added on
the channel axis, then ``act``), ``pool2d`` and ``dropout``. ``program.clone(for_test=True)``
sets ``is_test`` on dropout: it then applies no mask. (``batch_norm``, which a CNN puts
between its convolutions, is with the other normalisation in ``norm``.)
"""
from __future__ import annotations

import math

from ..builders import arg_checks as check
from ..builders.initializer import Constant, Normal
from ..builders.op_creators import op
from ..core import unique_name
from .base import IMAGE_LAYOUTS, activate, check_activation, first_output, parameter
from .param_attr import ParamAttr


def _pair(builder: str, name: str, value, low: int) -> list[int]:
    """An int or a pair of ints, each >= low, as [h, w]."""
    values = list(value) if isinstance(value, (list, tuple)) else [value, value]
    if len(values) != 2:
        raise check.refuse(builder, name, "an int or a pair of ints", value)
    return [check.integer(builder, name, v, low=low) for v in values]


def _paddings(builder: str, padding):
    """Fluid's padding argument: "SAME"/"VALID", an int, a pair, or four ints (top,
    bottom, left, right) -> (paddings attr, padding_algorithm attr)."""
    if isinstance(padding, str):
        algorithm = check.one_of(builder, "padding", padding.upper(), ("SAME", "VALID"))
        return [0, 0], algorithm
    values = list(padding) if isinstance(padding, (list, tuple)) else [padding, padding]
    if len(values) not in (2, 4):
        raise check.refuse(builder, "padding", "an int, a pair, four ints, 'SAME' or 'VALID'",
                           padding)
    return [check.integer(builder, "padding", v, low=0) for v in values], "EXPLICIT"


def _channels(builder: str, x, data_format: str) -> int:
    if len(x.shape) != 4:
        raise check.refuse(builder, "input", "a 4-d tensor (batch, channels, height, width)",
                           x)
    c = x.shape[1] if data_format == "NCHW" else x.shape[3]
    if c is None or c < 1:
        raise check.refuse(builder, "input", "a known number of channels", x)
    return c


def conv2d(input, num_filters, filter_size, stride=1, padding=0, dilation=1,  # noqa: A002
           groups=None, param_attr=None, bias_attr=None, use_cudnn=True, act=None,
           name=None, data_format="NCHW"):
    """A 2-d convolution as Fluid builds it: its weight [num_filters, C/groups, kh, kw]
    (normal, std sqrt(2 / (kh kw C)), as Paddle initialises it), a ``conv2d`` op (a
    ``depthwise_conv2d`` where each input channel has its own filters), the bias added on
    the channel axis, then ``act``."""
    b = "conv2d"
    check.variable(b, "input", input, dtype="float")
    data_format = check.one_of(b, "data_format", data_format, IMAGE_LAYOUTS)
    channels = _channels(b, input, data_format)
    num_filters = check.integer(b, "num_filters", num_filters, low=1)
    groups = 1 if groups is None else check.integer(b, "groups", groups, low=1)
    if channels % groups or num_filters % groups:
        raise check.refuse(b, "groups", f"a divisor of the input channels ({channels}) and "
                           f"of num_filters ({num_filters})", groups)
    kh, kw = _pair(b, "filter_size", filter_size, 1)
    paddings, algorithm = _paddings(b, padding)
    check.boolean(b, "use_cudnn", use_cudnn)
    layer = check.text(b, "name", name, optional=True) or unique_name.generate("conv2d")
    std = math.sqrt(2.0 / (kh * kw * channels))
    w = parameter(ParamAttr.of(param_attr, b, "param_attr"),
                  [num_filters, channels // groups, kh, kw], input.dtype, f"{layer}.w_0",
                  initializer=Normal(0.0, std))
    depthwise = groups == channels and num_filters % channels == 0 and channels > 1
    out = getattr(op, "depthwise_conv2d" if depthwise else "conv2d")(
        Input=input, Filter=w, strides=_pair(b, "stride", stride, 1), paddings=paddings,
        padding_algorithm=algorithm, dilations=_pair(b, "dilation", dilation, 1),
        groups=groups, data_format=data_format)
    if bias_attr is not False:
        bias = parameter(ParamAttr.of(bias_attr, b, "bias_attr"), [num_filters], input.dtype,
                         f"{layer}.b_0", initializer=Constant(0.0))
        out = op.elementwise_add(X=out, Y=bias, axis=1 if data_format == "NCHW" else 3)
    check_activation(act, b)
    return activate(out, act, b)


def pool2d(input, pool_size=-1, pool_type="max", pool_stride=1, pool_padding=0,  # noqa: A002
           global_pooling=False, use_cudnn=True, ceil_mode=False, name=None,
           exclusive=True, data_format="NCHW", adaptive=False):
    """Max or average pooling as Fluid's ``pool2d`` (``adaptive``: pool_size is the output
    size, each window spanning its share of the input)."""
    b = "pool2d"
    check.variable(b, "input", input, dtype="float")
    data_format = check.one_of(b, "data_format", data_format, IMAGE_LAYOUTS)
    _channels(b, input, data_format)
    pool_type = check.one_of(b, "pool_type", pool_type, ("max", "avg"))
    global_pooling = check.boolean(b, "global_pooling", global_pooling)
    size = [1, 1] if global_pooling and pool_size == -1 else _pair(b, "pool_size", pool_size, 1)
    paddings, algorithm = _paddings(b, pool_padding)
    check.boolean(b, "use_cudnn", use_cudnn)
    check.text(b, "name", name, optional=True)
    return op.pool2d(X=input, pooling_type=pool_type, ksize=size,
                     strides=_pair(b, "pool_stride", pool_stride, 1), paddings=paddings,
                     padding_algorithm=algorithm, global_pooling=global_pooling,
                     ceil_mode=check.boolean(b, "ceil_mode", ceil_mode),
                     exclusive=check.boolean(b, "exclusive", exclusive),
                     adaptive=check.boolean(b, "adaptive", adaptive),
                     data_format=data_format)


def dropout(x, dropout_prob, is_test=None, seed=None, name=None,
            dropout_implementation="downgrade_in_infer"):
    """Fluid's dropout: in training each element is kept with probability 1 - p (its Mask
    says which); ``downgrade_in_infer`` scales by 1 - p at inference,
    ``upscale_in_train`` divides the kept elements by 1 - p in training."""
    b = "dropout"
    check.variable(b, "x", x, dtype="float")
    attrs = {"dropout_prob": check.number(b, "dropout_prob", dropout_prob, low=0, high=1),
             "is_test": bool(check.boolean(b, "is_test", is_test) if is_test is not None
                             else False),
             "dropout_implementation": check.one_of(
                 b, "dropout_implementation", dropout_implementation,
                 ("downgrade_in_infer", "upscale_in_train")),
             "fix_seed": seed is not None,
             "seed": 0 if seed is None else check.integer(b, "seed", seed, low=0)}
    check.text(b, "name", name, optional=True)
    return first_output(op.dropout(X=x, **attrs))
