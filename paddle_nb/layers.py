"""Layers: the builder functions users call (``pd.layer.fc``, ``pd.data``, ``pd.var``...).

Each appends ops to the current block of the default main program, creating parameters
(declared in the main program, initialised by an op in the startup program) as Fluid's
LayerHelper does. Names follow Fluid: ``fc_0.w_0``, ``fc_0.b_0``, ``fc_0.tmp_0``.
"""
from __future__ import annotations

import numpy as np

from . import arg_checks as check
from .core import dtypes, registry, unique_name
from .core.errors import BuildError
from .core.program import default_main_program, default_startup_program
from .core.variable import Parameter, Variable
from .initializer import Constant, Initializer, NumpyArray, XavierUniform
from .optimizer.regularizer import set_decay
from .ops.fill import assign_value_attrs
from .param_attr import ParamAttr


# --- helpers -------------------------------------------------------------------------------
def _block():
    return default_main_program().current_block()


def _tmp(layer: str, dtype="float32") -> Variable:
    """A new temporary of layer ``layer`` (a generated name such as ``fc_0``)."""
    return _block().create_var(unique_name.generate_within(layer, "tmp"), dtype=dtype)


def append(op_type: str, inputs: dict, attrs: dict | None = None, *, layer: str | None = None,
           out_dtype=None, outputs: dict | None = None) -> Variable:
    """Append ``op_type`` with one new output ``Out`` and return it."""
    if outputs is None:
        first = next(iter(inputs.values()))
        first = first[0] if isinstance(first, (list, tuple)) else first
        dtype = out_dtype or (first.dtype if isinstance(first, Variable) else "float32")
        out = _tmp(layer or unique_name.generate(op_type), dtype)
        outputs = {"Out": [out]}
    try:
        _block().append_op(op_type, inputs=inputs, outputs=outputs, attrs=attrs or {})
    except BaseException:
        for v in outputs["Out"]:        # the temporary made for the failed op goes too
            if isinstance(v, Variable) and not _is_used(v.name):
                v.block._remove_var(v.name)
        raise
    return outputs["Out"][0]


def _is_used(name: str) -> bool:
    return any(name in op.input_arg_names + op.output_arg_names for op in _block().ops)


def _as_var(value, like: Variable | None = None) -> Variable:
    """A Variable for ``value`` (already checked by ``check.variable_or_number``): itself,
    or a constant made by fill_constant."""
    if isinstance(value, Variable):
        return value
    dtype = like.dtype if like is not None else "float32"
    return fill_constant([1], dtype, float(value))


# --- declaring variables ---------------------------------------------------------------------
def data(name: str, shape, dtype="float32", lod_level: int = 0) -> Variable:
    """A variable the feed fills. ``None`` or ``-1`` in ``shape`` is the batch dimension."""
    check.text("data", "name", name)
    shape = check.shape("data", "shape", shape, batch=True)
    check.data_type("data", "dtype", dtype)
    lod_level = check.integer("data", "lod_level", lod_level, low=0)
    gb = default_main_program().global_block()
    v = gb.create_var(name, shape, dtype, stop_gradient=True, lod_level=lod_level)
    v.desc.need_check_feed = True
    return v


def _declare_with_value(value, shape, dtype, name, prefix, param, lod_level=0, batch=False):
    builder = prefix if prefix != "param" else "var"
    array = _values(builder, "value" if builder == "var" else "values", value, dtype)
    if shape is not None:
        shape = check.shape(builder, "shape", shape, batch=batch)
    check.text(builder, "name", name, optional=True)
    if array.ndim == 0:
        array = array.reshape(1)
    if batch and array.ndim == 1:
        array = array.reshape(-1, 1)           # the design's minibatch([10, 20, 30]): [None, 1]
    declared = list(shape) if shape is not None else list(array.shape)
    if batch and shape is None:
        declared[0] = -1
    if param:
        return create_parameter(declared, dtype, name=name or unique_name.generate(prefix),
                                initializer=NumpyArray(array))
    v = _block().create_var(name or unique_name.generate(prefix), declared, dtype,
                            stop_gradient=True, lod_level=lod_level)
    # The value becomes an assign_value op: it runs unless the feed supplies this name.
    _block().append_op("assign_value", outputs={"Out": [v]}, attrs=assign_value_attrs(array))
    v.set_shape(declared)     # keep the batch dimension open (-1): feeds may differ in size
    return v


def _values(builder: str, name: str, value, dtype) -> np.ndarray:
    """``value`` (a number, a nested list, an array) as an array of ``dtype``."""
    code = check.data_type(builder, "dtype", dtype)
    if isinstance(value, Variable):
        raise check.refuse(builder, name, "numbers (a number, a list or an array), not a "
                           "Variable: use it directly, or pd.layers.assign(x) for a copy", value)
    try:
        array = np.asarray(value, dtype=dtypes.to_numpy(code))
    except (TypeError, ValueError, OverflowError):
        raise check.refuse(builder, name, f"numbers that fit {dtypes.name(code)} (a number, "
                           f"a list or an array)", value) from None
    return array


def var(value=None, shape=None, dtype="float32", *, param: bool = False, name=None) -> Variable:
    """A variable with a value (the design docs' ``var(1)``, ``var(0.314, param=True)``).

    Without ``param`` the value is a constant of the program, used unless a feed overrides
    it; with ``param=True`` it is a trainable parameter that the startup program sets."""
    param = check.boolean("var", "param", param)
    if value is None:
        if shape is None:
            raise BuildError("pd.var needs a value or a shape")
        if param:
            return create_parameter(shape, dtype, name=name)
        shape = check.shape("var", "shape", shape, batch=True)
        check.data_type("var", "dtype", dtype)
        check.text("var", "name", name, optional=True)
        return _block().create_var(name or unique_name.generate("var"), shape, dtype)
    return _declare_with_value(value, shape, dtype, name, "param" if param else "var", param)


def minibatch(values=None, shape=None, dtype="float32", *, name=None,
              lod_level: int = 0) -> Variable:
    """A batch of instances, batch dimension first (the Block and Scope design's
    ``minibatch([10, 20, 30])`` has shape [None, 1]). With ``values`` it runs without a feed."""
    lod_level = check.integer("minibatch", "lod_level", lod_level, low=0)
    if values is None:
        if shape is None:
            raise BuildError("pd.minibatch needs values or a shape")
        check.text("minibatch", "name", name, optional=True)
        return data(name or unique_name.generate("minibatch"), shape, dtype, lod_level)
    return _declare_with_value(values, shape, dtype, name, "minibatch", False, lod_level,
                               batch=True)


def sequence(values=None, shape=None, dtype="float32", *, name=None) -> Variable:
    """A sequence batch (the Block and Scope design's RNN input): a minibatch with lod_level 1."""
    check.text("sequence", "name", name, optional=True)
    return minibatch(values, shape, dtype, name=name or unique_name.generate("sequence"),
                     lod_level=1)


# --- parameters ----------------------------------------------------------------------------
def create_parameter(shape, dtype="float32", *, name: str | None = None,
                     initializer: Initializer | None = None, trainable: bool = True,
                     is_bias: bool = False) -> Parameter:
    """A parameter in the main program's global block, initialised by the startup program."""
    check.text("create_parameter", "name", name, optional=True)
    name = name or unique_name.generate("param")
    shape = check.shape("create_parameter", "shape", shape)
    check.data_type("create_parameter", "dtype", dtype)
    _check_initializer("create_parameter", "initializer", initializer)
    trainable = check.boolean("create_parameter", "trainable", trainable)
    is_bias = check.boolean("create_parameter", "is_bias", is_bias)
    main_gb = default_main_program().global_block()
    if main_gb.has_var(name):
        raise BuildError(f"parameter {name!r} already exists in the main program; use "
                         f"pd.get_variable({name!r}, reuse=True) to share it")
    p = main_gb.create_parameter(name, shape, dtype, trainable=trainable)
    startup_gb = default_startup_program().global_block()
    sp = startup_gb.create_parameter(name, shape, dtype, trainable=trainable)
    init = initializer or (Constant(0.0) if is_bias else XavierUniform())
    init(sp, startup_gb)
    return p


def get_variable(name: str, shape=None, dtype="float32", *, reuse: bool = True,
                 initializer: Initializer | None = None, trainable: bool = True) -> Parameter:
    """The parameter ``name`` (inside the active namespace), created when absent (the Block design).

    With ``reuse=True`` an existing parameter is returned (its shape must match ``shape``
    when given); with ``reuse=False`` an existing one is an error."""
    check.text("get_variable", "name", name)
    reuse = check.boolean("get_variable", "reuse", reuse)
    if shape is not None:
        shape = check.shape("get_variable", "shape", shape)
    full = unique_name.with_prefix(name)
    gb = default_main_program().global_block()
    if gb.has_var(full):
        existing = gb.var(full)
        if not reuse:
            raise BuildError(f"variable {full!r} already exists; pass reuse=True to share it")
        if shape is not None and list(existing.shape) != shape:
            raise BuildError(f"get_variable({full!r}): it exists with shape "
                             f"{list(existing.shape)}, asked for {list(shape)}")
        return existing
    if shape is None:
        raise BuildError(f"get_variable({full!r}): no such variable yet, and no shape was given "
                         "to create it")
    return create_parameter(shape, dtype, name=full, initializer=initializer,
                            trainable=trainable)


def _check_initializer(builder: str, name: str, value) -> None:
    if value is not None and not isinstance(value, Initializer):
        raise check.refuse(builder, name, "an Initializer (pd.initializer.Constant(0.5), "
                           "...) or None", value)


def _param(attr: ParamAttr, shape, dtype, default_name, is_bias=False) -> Parameter:
    name = attr.name or default_name
    gb = default_main_program().global_block()
    if attr.name and gb.has_var(name):      # a named parameter is shared, as in Fluid
        existing = gb.var(name)
        if list(existing.shape) != list(shape):
            raise BuildError(f"parameter {name!r} exists with shape {list(existing.shape)}; "
                             f"this layer needs {list(shape)}")
        return existing
    param = create_parameter(shape, dtype, name=name, initializer=attr.initializer,
                             trainable=attr.trainable, is_bias=is_bias)
    set_decay(default_main_program(), param.name, attr.regularizer)
    return param


# --- layers ----------------------------------------------------------------------------------
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
    _check_activation(act, "fc")
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
    products = []
    for k, (x, wattr) in enumerate(zip(inputs, wattrs)):
        in_dim = int(np.prod(list(x.shape)[num_flatten_dims:]))
        if wattr is not None and wattr.name and len(inputs) > 1:
            wattr = ParamAttr(f"{wattr.name}_{k}", wattr.initializer, wattr.trainable,
                              wattr.regularizer)
        w = _param(wattr or ParamAttr(), [in_dim, size], x.dtype, f"{layer}.w_{k}")
        products.append(_tmp(layer, x.dtype))
        _block().append_op("mul", inputs={"X": [x], "Y": [w]}, outputs={"Out": [products[-1]]},
                           attrs={"x_num_col_dims": num_flatten_dims, "y_num_col_dims": 1})
    out = products[0]
    if len(products) > 1:                   # the products summed, as Fluid's fc does
        out = _tmp(layer, inputs[0].dtype)
        _block().append_op("sum", inputs={"X": products}, outputs={"Out": [out]})
    if battr is not None:
        b = _param(battr, [size], inputs[0].dtype, f"{layer}.b_0", is_bias=True)
        pre = _tmp(layer, inputs[0].dtype)
        _block().append_op("elementwise_add", inputs={"X": [out], "Y": [b]},
                           outputs={"Out": [pre]}, attrs={"axis": num_flatten_dims})
        out = pre
    return _activate(out, act, layer)


def _fc_with_weight(w: Parameter, x: Variable) -> Variable:
    """The design docs' ``fc(W, x)``: ``x`` times an existing weight (a matrix or a scale)."""
    if len(w.shape) == 2:
        return append("mul", {"X": [x], "Y": [w]}, {"x_num_col_dims": len(x.shape) - 1})
    return append("elementwise_mul", {"X": [x], "Y": [w]})      # a [1]-shaped weight scales


def __getattr__(name):
    if name == "ACTIVATIONS":      # what act= may name: the ops declared activation=True
        return tuple(registry.types_where("activation"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _check_activation(act: str | None, builder: str) -> None:
    check.one_of(builder, "act", act, registry.types_where("activation"), optional=True)


def _activate(x: Variable, act: str | None, layer: str) -> Variable:
    return x if act is None else append(act, {"X": [x]}, layer=layer)


def softmax(x, axis: int = -1):
    check.variable("softmax", "x", x)
    return append("softmax", {"X": [x]}, {"axis": check.axis("softmax", "axis", axis,
                                                               len(x.shape))})


def _unary(op_type: str, x):
    check.variable(op_type, "x", x)
    return append(op_type, {"X": [x]})


def relu(x):
    return _unary("relu", x)


def sigmoid(x):
    return _unary("sigmoid", x)


def tanh(x):
    return _unary("tanh", x)


def exp(x):
    return _unary("exp", x)


def log(x):
    return _unary("log", x)


def square(x):
    return _unary("square", x)


def scale(x, scale: float = 1.0, bias: float = 0.0, bias_after_scale: bool = True):
    check.variable("scale", "x", x)
    return append("scale", {"X": [x]}, {
        "scale": check.number("scale", "scale", scale),
        "bias": check.number("scale", "bias", bias),
        "bias_after_scale": check.boolean("scale", "bias_after_scale", bias_after_scale)})


def cast(x, dtype):
    check.variable("cast", "x", x)
    code = check.data_type("cast", "dtype", dtype)
    return append("cast", {"X": [x]}, {"in_dtype": dtypes.to_code(x.dtype), "out_dtype": code},
                  out_dtype=dtypes.name(code))


def _operands(builder: str, x, y) -> tuple[Variable, Variable]:
    """``x`` and ``y`` as Variables, numbers made constants of the other's dtype; both are
    checked before either constant is built."""
    check.variable_or_number(builder, "x", x)
    check.variable_or_number(builder, "y", y)
    x = _as_var(x, y if isinstance(y, Variable) else None)
    return x, _as_var(y, x)


def _binary(op_type, x, y, axis=-1, builder=None):
    """``op_type`` on two operands; ``builder`` is the name the user called it by."""
    builder = builder or op_type
    axis = check.integer(builder, "axis", axis, low=-1)
    x, y = _operands(builder, x, y)
    out_dtype = registry.lookup(op_type).out_dtype
    return append(op_type, {"X": [x], "Y": [y]}, {"axis": axis}, out_dtype=out_dtype)


def add(x, y, axis: int = -1):
    return _binary("elementwise_add", x, y, axis, "add")


def elementwise_add(x, y, axis: int = -1):
    return _binary("elementwise_add", x, y, axis)


def elementwise_sub(x, y, axis: int = -1):
    return _binary("elementwise_sub", x, y, axis)


def elementwise_mul(x, y, axis: int = -1):
    return _binary("elementwise_mul", x, y, axis)


def elementwise_div(x, y, axis: int = -1):
    return _binary("elementwise_div", x, y, axis)


def add_scalar(x, y):
    """The design docs' ``layer.add_scalar(x, y)``: x plus a scalar (a number or a [1] var)."""
    check.variable("add_scalar", "x", x)
    if check.is_number(y):
        return scale(x, 1.0, float(y))
    check.variable("add_scalar", "y", y, one_element=True, hint=", or a number")
    return _binary("elementwise_add", x, y, builder="add_scalar")


def greater_than(x, y):
    return _binary("greater_than", x, y)


larger_than = greater_than          # the Block and Scope design's name


def less_than(x, y, cond: Variable | None = None):
    """x < y; with ``cond``, the result is written into that (existing) bool variable,
    which is how a While body updates its condition."""
    if cond is None:
        return _binary("less_than", x, y)
    check.variable("less_than", "cond", cond, dtype="bool")
    x, y = _operands("less_than", x, y)
    _block().append_op("less_than", {"X": [x], "Y": [y]}, {"Out": [cond]}, {"axis": -1})
    return cond


def equal(x, y):
    return _binary("equal", x, y)


def not_equal(x, y):
    return _binary("not_equal", x, y)


def logical_and(x, y):
    check.variable("logical_and", "x", x)
    check.variable("logical_and", "y", y)
    return append("logical_and", {"X": [x], "Y": [y]}, out_dtype="bool")


def logical_or(x, y):
    check.variable("logical_or", "x", x)
    check.variable("logical_or", "y", y)
    return append("logical_or", {"X": [x], "Y": [y]}, out_dtype="bool")


def logical_not(x):
    check.variable("logical_not", "x", x)
    return append("logical_not", {"X": [x]}, out_dtype="bool")


def matmul(x, y, transpose_x: bool = False, transpose_y: bool = False):
    check.variable("matmul", "x", x)
    check.variable("matmul", "y", y)
    return append("matmul_v2", {"X": [x], "Y": [y]},
                  {"trans_x": check.boolean("matmul", "transpose_x", transpose_x),
                   "trans_y": check.boolean("matmul", "transpose_y", transpose_y)})


def mean(x):
    return _unary("mean", x)


def _reduce(op_type: str, x, dim, keep_dim):
    check.variable(op_type, "x", x)
    dims = [] if dim is None else check.axes(op_type, "dim", dim, len(x.shape))
    keep_dim = check.boolean(op_type, "keep_dim", keep_dim)
    return append(op_type, {"X": [x]}, {"dim": dims or [0], "keep_dim": keep_dim,
                                        "reduce_all": not dims})


def reduce_sum(x, dim=None, keep_dim: bool = False):
    """The sum over ``dim`` (an axis or a list of them), or over everything when None."""
    return _reduce("reduce_sum", x, dim, keep_dim)


def reduce_mean(x, dim=None, keep_dim: bool = False):
    """The mean over ``dim`` (an axis or a list of them), or over everything when None."""
    return _reduce("reduce_mean", x, dim, keep_dim)


def sums(xs):
    return append("sum", {"X": check.variables("sums", "xs", xs)})


def reshape(x, shape):
    check.variable("reshape", "x", x)
    shape = check.shape("reshape", "shape", shape, reshape=True)
    layer = unique_name.generate("reshape2")
    out, xshape = _tmp(layer, x.dtype), _tmp(layer, x.dtype)
    _block().append_op("reshape2", inputs={"X": [x]}, outputs={"Out": [out], "XShape": [xshape]},
                       attrs={"shape": shape})
    return out


def transpose(x, perm):
    check.variable("transpose", "x", x)
    perm = check.permutation("transpose", "perm", perm, len(x.shape))
    layer = unique_name.generate("transpose")
    out, xshape = _tmp(layer, x.dtype), _tmp(layer, x.dtype)
    _block().append_op("transpose2", inputs={"X": [x]},
                       outputs={"Out": [out], "XShape": [xshape]}, attrs={"axis": perm})
    return out


def concat(xs, axis: int = 0):
    xs = check.variables("concat", "xs", xs)
    return append("concat", {"X": xs}, {"axis": check.axis("concat", "axis", axis,
                                                             len(xs[0].shape))})


def split(x, num_or_sections, dim: int = 0):
    """``x`` cut along ``dim`` into ``num`` equal pieces, or pieces of the sizes listed
    (one of them may be -1: the rest)."""
    check.variable("split", "x", x)
    dim = check.axis("split", "dim", dim, len(x.shape))
    if check.is_int(num_or_sections):
        n = check.positive_int("split", "num_or_sections", num_or_sections)
        attrs = {"num": n, "axis": dim}
    else:
        sections = check.shape("split", "num_or_sections", num_or_sections, reshape=True)
        if not sections or 0 in sections:
            raise check.refuse("split", "num_or_sections", "an int >= 1 or a non-empty list "
                               "of sizes >= 1 (one may be -1)", num_or_sections)
        n, attrs = len(sections), {"sections": sections, "axis": dim}
    size = x.shape[dim] if x.shape else -1
    if size >= 0 and n > max(size, 1):       # checked before n variables are made
        raise check.refuse("split", "num_or_sections", f"at most {size} pieces (dim {dim} of "
                           f"x has {size})", num_or_sections)
    layer = unique_name.generate("split")
    outs = [_tmp(layer, x.dtype) for _ in range(n)]
    _block().append_op("split", inputs={"X": [x]}, outputs={"Out": outs}, attrs=attrs)
    return outs


def fill_constant(shape, dtype, value):
    shape = check.shape("fill_constant", "shape", shape)
    code = check.data_type("fill_constant", "dtype", dtype)
    if not isinstance(value, (bool, np.bool_)):
        check.number("fill_constant", "value", value)
    return append("fill_constant", {}, {"shape": shape, "dtype": code, "value": float(value)},
                  outputs={"Out": [_tmp(unique_name.generate("fill_constant"),
                                        dtypes.name(code))]})


def assign(x, output: Variable | None = None):
    """A copy of ``x``; with ``output``, the copy is written into that (existing) variable,
    which is how a branch or a loop body updates a variable outside its block. ``x`` may
    also be numbers (a list, an array), which become an ``assign_value`` op, as in Paddle."""
    check.variable("assign", "output", output, optional=True)
    if not isinstance(x, Variable):
        array = _values("assign", "x", x, output.dtype if output is not None else
                        np.asarray(x).dtype if isinstance(x, np.ndarray) else "float32")
        if output is None:
            return var(array, dtype=array.dtype)
        _block().append_op("assign_value", outputs={"Out": [output]},
                           attrs=assign_value_attrs(array))
        return output
    check.variable("assign", "x", x)
    if output is None:
        return append("assign", {"X": [x]})
    _block().append_op("assign", {"X": [x]}, {"Out": [output]})
    return output


# --- losses.py, cnn_layers.py, sequence_layers.py and attention_layers.py, re-exported here
# where Fluid users look for them -----------------------------------------------------------
from .losses import (cross_entropy, mse_loss,  # noqa: E402, F401 (re-exported)
                     softmax_with_cross_entropy, square_error_cost)
from .cnn_layers import batch_norm, conv2d, dropout, pool2d  # noqa: E402, F401
from .sequence_layers import embedding, layer_norm  # noqa: E402, F401
from .rnn_layers import gru, lstm, simple_rnn  # noqa: E402, F401
from .attention_layers import (linear, multi_head_attention,  # noqa: E402, F401
                               transformer_encoder_layer)
