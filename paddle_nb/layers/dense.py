"""The fully connected layer, ``pd.layer.fc``, as Fluid builds it: a ``mul`` per input
(each with its own weight), their ``sum`` when there are several, the bias added by
``elementwise_add``, then ``act``. The ``fc_fuse`` pass makes Fluid's ``fc`` op of them.
"""
from __future__ import annotations

import numpy as np

from ..builders import arg_checks as check
from ..core import unique_name
from ..core.errors import BuildError
from ..core.variable import Parameter, Variable
from .base import activate, append, check_activation, current_block, parameter, temporary
from .param_attr import ParamAttr


def fc(input, size=None, num_flatten_dims: int = 1, param_attr=None, bias_attr=None,
       act: str | None = None, name: str | None = None, *, params=None):
    """A fully connected layer as Fluid builds it: ``mul`` + ``elementwise_add`` + act;
    ``input`` may be a list (a ``mul`` per input, each with its own weight, then ``sum``).

    Also the design docs' forms: ``fc(W, x)`` multiplies ``x`` by an existing parameter ``W``
    (the design's RNN), and ``fc(a, params=["fc.w", "fc.b"])`` names (and so shares) the
    weight and bias. ``size`` defaults to the input's last dimension."""
    if isinstance(input, Parameter) and isinstance(size, Variable):
        return _fc_with_weight(input, size)
    inputs = check.variables("fc", "input", input) if isinstance(input, (list, tuple)) \
        else [check.variable("fc", "input", input)]
    if params is not None:
        if not isinstance(params, (list, tuple)) or not 1 <= len(params) <= 2 \
                or not all(p is None or isinstance(p, str) for p in params):
            raise check.refuse("fc", "params", "a list of one or two names (weight, bias)",
                               params)
        names = list(params) + [None] * (2 - len(params))
        param_attr = ParamAttr(name=names[0]) if names[0] else param_attr
        bias_attr = ParamAttr(name=names[1]) if names[1] else bias_attr
    in_shape = list(inputs[0].shape)
    if size is None:
        size = in_shape[-1] if in_shape and len(inputs) == 1 else None
        if size is None or size < 0:
            raise BuildError("fc: give size= (the input's last dimension is unknown)")
    # Everything is checked before anything is built: "3", 3.5 and True are not sizes,
    # and 0 units build a layer that computes nothing.
    size = check.positive_int("fc", "size", size)
    check_activation(act, "fc")
    num_flatten_dims = check.integer("fc", "num_flatten_dims", num_flatten_dims, 1,
                                     max(min(len(x.shape) for x in inputs) - 1, 1))
    # one weight per input (Fluid's list form); a list of ParamAttrs names each
    attrs = list(param_attr) if isinstance(param_attr, (list, tuple)) \
        else [param_attr] * len(inputs)
    if len(attrs) != len(inputs):
        raise check.refuse("fc", "param_attr", f"one ParamAttr per input ({len(inputs)})",
                           param_attr)
    wattrs = [ParamAttr.of(a, "fc", "param_attr") for a in attrs]
    battr = ParamAttr.of(bias_attr, "fc", "bias_attr")
    check.text("fc", "name", name, optional=True)
    layer = unique_name.generate(name or "fc")
    block = current_block()
    products = []
    for k, (x, wattr) in enumerate(zip(inputs, wattrs)):
        in_dim = int(np.prod(list(x.shape)[num_flatten_dims:]))
        if wattr is not None and wattr.name and len(inputs) > 1:
            wattr = ParamAttr(f"{wattr.name}_{k}", wattr.initializer, wattr.trainable,
                              wattr.regularizer)
        w = parameter(wattr or ParamAttr(), [in_dim, size], x.dtype, f"{layer}.w_{k}")
        products.append(temporary(layer, x.dtype))
        block.append_op("mul", inputs={"X": [x], "Y": [w]}, outputs={"Out": [products[-1]]},
                        attrs={"x_num_col_dims": num_flatten_dims, "y_num_col_dims": 1})
    out = products[0]
    if len(products) > 1:                   # the products summed, as Fluid's fc does
        out = temporary(layer, inputs[0].dtype)
        block.append_op("sum", inputs={"X": products}, outputs={"Out": [out]})
    if battr is not None:
        b = parameter(battr, [size], inputs[0].dtype, f"{layer}.b_0", is_bias=True)
        pre = temporary(layer, inputs[0].dtype)
        block.append_op("elementwise_add", inputs={"X": [out], "Y": [b]},
                        outputs={"Out": [pre]}, attrs={"axis": num_flatten_dims})
        out = pre
    return activate(out, act, layer)


def _fc_with_weight(w: Parameter, x: Variable) -> Variable:
    """The design docs' ``fc(W, x)``: ``x`` times an existing weight (a matrix or a scale)."""
    if len(w.shape) == 2:
        return append("mul", {"X": [x], "Y": [w]}, {"x_num_col_dims": len(x.shape) - 1})
    return append("elementwise_mul", {"X": [x], "Y": [w]})      # a [1]-shaped weight scales

