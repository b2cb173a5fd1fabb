"""The normalisation builders of ``pd.layer``, with Fluid's signatures (``paddle.static.nn``),
each appending the ops Paddle 2.6.2 appends, then ``act``:

- ``batch_norm``: each channel normalised over the batch (and the image), a scale (ones)
  and a bias (zeros) per channel, and a moving mean (zeros) and variance (ones): persistable,
  untrained parameters the op updates in place in the scope, as Paddle's do.
  ``program.clone(for_test=True)`` sets ``is_test``: it then uses the moving statistics.
- ``layer_norm``: each row normalised over its own values (the dims from
  ``begin_norm_axis`` on), with a Scale of ones and a Bias of zeros per value of a row.
  ``attention.transformer_encoder_layer`` is built with it, as Paddle's layer is.
"""
from __future__ import annotations

import math

from ..builders import arg_checks as check
from ..builders.initializer import Constant
from ..builders.op_creators import op
from ..core import unique_name
from .base import IMAGE_LAYOUTS, activate, check_activation, first_output, parameter
from .param_attr import ParamAttr


def batch_norm(input, act=None, is_test=False, momentum=0.9, epsilon=1e-5,  # noqa: A002
               param_attr=None, bias_attr=None, data_layout="NCHW", name=None,
               moving_mean_name=None, moving_variance_name=None, use_global_stats=False):
    """Batch normalisation as Fluid builds it: a scale (ones) and a bias (zeros) per
    channel, a moving mean (zeros) and variance (ones) that training updates in place
    (MeanOut is the Mean variable, as in Paddle), then ``act``."""
    b = "batch_norm"
    check.variable(b, "input", input, dtype="float")
    data_layout = check.one_of(b, "data_layout", data_layout, IMAGE_LAYOUTS)
    if len(input.shape) not in (2, 4):
        raise check.refuse(b, "input", "a 2-d [N, C] or 4-d tensor", input)
    c = input.shape[1] if data_layout == "NCHW" or len(input.shape) == 2 else input.shape[3]
    layer = check.text(b, "name", name, optional=True) or unique_name.generate("batch_norm")
    scale = parameter(ParamAttr.of(param_attr, b, "param_attr"), [c], input.dtype,
                      f"{layer}.w_0", initializer=Constant(1.0))
    bias = parameter(ParamAttr.of(bias_attr, b, "bias_attr"), [c], input.dtype,
                     f"{layer}.b_0", initializer=Constant(0.0))
    mean = parameter(ParamAttr(moving_mean_name), [c], input.dtype, f"{layer}.w_1",
                     initializer=Constant(0.0), trainable=False)
    variance = parameter(ParamAttr(moving_variance_name), [c], input.dtype, f"{layer}.w_2",
                         initializer=Constant(1.0), trainable=False)
    out = op.batch_norm(
        X=input, Scale=scale, Bias=bias, Mean=mean, Variance=variance,
        outputs={"MeanOut": [mean], "VarianceOut": [variance]},
        is_test=check.boolean(b, "is_test", is_test),
        momentum=check.number(b, "momentum", momentum, low=0, high=1),
        epsilon=check.number(b, "epsilon", epsilon, low=0, low_open=True),
        data_layout=data_layout,
        use_global_stats=check.boolean(b, "use_global_stats", use_global_stats))
    check_activation(act, b)
    return activate(first_output(out), act, b)


def layer_norm(input, scale=True, shift=True, begin_norm_axis=1,  # noqa: A002
               epsilon=1e-5, param_attr=None, bias_attr=None, act=None, name=None):
    """Each row of ``input`` (its dims before ``begin_norm_axis``) normalised over its own
    values (the dims from it on), then times a learned Scale (``scale``; ones) plus a
    learned Bias (``shift``; zeros), one per value of a row; then ``act``."""
    b = "layer_norm"
    check.variable(b, "input", input, dtype="float")
    rank = len(input.shape)
    axis = check.integer(b, "begin_norm_axis", begin_norm_axis, low=1)
    if axis >= rank:
        raise check.refuse(b, "begin_norm_axis", f"1 <= begin_norm_axis < {rank} (the "
                           "input's rank): the dims before it are the rows", axis)
    tail = input.shape[axis:]
    if any(d is None or d < 1 for d in tail):
        raise check.refuse(b, "input", f"known dims from begin_norm_axis={axis} on (the "
                           "Scale and Bias have one value per element of a row)", input)
    right = math.prod(tail)
    layer = check.text(b, "name", name, optional=True) or unique_name.generate("layer_norm")
    inputs = {"X": input}
    if check.boolean(b, "scale", scale):
        inputs["Scale"] = parameter(ParamAttr.of(param_attr, b, "param_attr"), [right],
                                    input.dtype, f"{layer}.w_0", initializer=Constant(1.0))
    if check.boolean(b, "shift", shift):
        inputs["Bias"] = parameter(ParamAttr.of(bias_attr, b, "bias_attr"), [right],
                                   input.dtype, f"{layer}.b_0", initializer=Constant(0.0))
    out = op.layer_norm(**{k: v for k, v in inputs.items() if v is not None},
                        begin_norm_axis=axis,
                        epsilon=check.number(b, "epsilon", epsilon, low=0, high=1e-3))
    check_activation(act, b)
    return activate(first_output(out), act, b)

