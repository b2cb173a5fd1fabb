"""The sequence builders of ``pd.layer``, with Fluid's signatures (``paddle.static.nn``), each
appending the ops Paddle 2.6.2 appends: ``embedding`` (a ``lookup_table_v2`` op reading a
[vocabulary, width] table, Xavier-uniform as Paddle initialises it) and ``layer_norm``
(a ``layer_norm`` op with a Scale of ones and a Bias of zeros over the dims from
``begin_norm_axis`` on, then ``act``).
"""
from __future__ import annotations

import math

from . import arg_checks as check
from .cnn_layers import _activate, _param
from .core import unique_name
from .initializer import Constant, XavierUniform
from .op_creators import op


def embedding(input, size, is_sparse=False, is_distributed=False,  # noqa: A002
              padding_idx=None, param_attr=None, dtype="float32"):
    """Rows of a [size[0], size[1]] table picked by the int ids ``input`` (any shape; the
    result has the ids' shape and one more dim of size[1]). ``padding_idx`` names a row
    that reads as zeros and is never trained: a negative one counts from the end, and
    the op stores it as a row number, as Paddle does. ``is_sparse=True`` makes the table's
    gradient Paddle's sparse one, a SelectedRows (the ids' rows only, the padding id's
    included), which SGD, Momentum and Adam apply as Paddle does."""
    b = "embedding"
    check.variable(b, "input", input, dtype="int")
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise check.refuse(b, "size", "[vocabulary size, embedding width]", size)
    rows, width = (check.integer(b, "size", v, low=1) for v in size)
    if padding_idx is None:
        padding_idx = -1
    else:
        padding_idx = check.integer(b, "padding_idx", padding_idx)
        if not -rows <= padding_idx < rows:
            raise check.refuse(b, "padding_idx", f"a row of the table: -{rows} <= "
                               f"padding_idx < {rows}", padding_idx)
        padding_idx = padding_idx + rows if padding_idx < 0 else padding_idx
    dtype = check.one_of(b, "dtype", str(dtype), ("float32", "float64"))
    table = _param(b, "param_attr", param_attr, [rows, width], dtype,
                   unique_name.generate("embedding") + ".w_0", XavierUniform())
    out = op.lookup_table_v2(Ids=input, W=table, padding_idx=padding_idx,
                             is_sparse=check.boolean(b, "is_sparse", is_sparse),
                             is_distributed=check.boolean(b, "is_distributed",
                                                          is_distributed))
    return out[0] if isinstance(out, tuple) else out


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
        inputs["Scale"] = _param(b, "param_attr", param_attr, [right], input.dtype,
                                 f"{layer}.w_0", Constant(1.0))
    if check.boolean(b, "shift", shift):
        inputs["Bias"] = _param(b, "bias_attr", bias_attr, [right], input.dtype,
                                f"{layer}.b_0", Constant(0.0))
    out = op.layer_norm(**{k: v for k, v in inputs.items() if v is not None},
                        begin_norm_axis=axis,
                        epsilon=check.number(b, "epsilon", epsilon, low=0, high=1e-3))
    y = out[0] if isinstance(out, tuple) else out
    return _activate(y, act, b)

