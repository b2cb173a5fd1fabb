"""Layers: the builder functions users call (``pd.layer.fc``, ``pd.data``, ``pd.var``...).

Each appends ops to the current block of the default main program, creating parameters
(declared in the main program, initialised by an op in the startup program) as Fluid's
LayerHelper does. Names follow Fluid: ``fc_0.w_0``, ``fc_0.b_0``, ``fc_0.tmp_0``.
"""
from __future__ import annotations

import numpy as np

from .core import dtypes, unique_name
from .core.errors import BuildError
from .core.program import default_main_program, default_startup_program
from .core.variable import Parameter, Variable
from .initializer import Constant, Initializer, NumpyArray, XavierUniform
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


def _int_arg(layer: str, name: str, value, low: int, high: int | None = None) -> int:
    """Argument ``name`` of builder ``layer`` as an int in [low, high]: a BuildError naming
    it otherwise ("3", 3.5 and True are not sizes; 0 units build a layer that computes
    nothing)."""
    ok = isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))
    if not ok or value < low or (high is not None and value > high):
        want = f"an int >= {low}" if high is None else f"an int in [{low}, {high}]"
        raise BuildError(f"{layer}: argument {name} must be {want}, got "
                         f"{type(value).__name__} {value!r}")
    return int(value)


def _as_var(value, like: Variable | None = None) -> Variable:
    """A Variable for ``value``: itself, or a constant made by fill_constant."""
    if isinstance(value, Variable):
        return value
    if isinstance(value, (int, float, bool, np.number)):
        dtype = like.dtype if like is not None else "float32"
        return fill_constant([1], dtype, float(value))
    raise BuildError(f"expected a Variable or a number, got {type(value).__name__} {value!r}")


# --- declaring variables ---------------------------------------------------------------------
def data(name: str, shape, dtype="float32", lod_level: int = 0) -> Variable:
    """A variable the feed fills. ``None`` or ``-1`` in ``shape`` is the batch dimension."""
    shape = [-1 if d is None else int(d) for d in shape]
    gb = default_main_program().global_block()
    v = gb.create_var(name, shape, dtype, stop_gradient=True, lod_level=lod_level)
    v.desc.need_check_feed = True
    return v


def _declare_with_value(value, shape, dtype, name, prefix, param, lod_level=0, batch=False):
    array = np.asarray(value, dtype=dtypes.to_numpy(dtypes.to_code(dtype)))
    if array.ndim == 0:
        array = array.reshape(1)
    if batch and array.ndim == 1:
        array = array.reshape(-1, 1)           # seed 000: minibatch([10, 20, 30]) is [None, 1]
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


def var(value=None, shape=None, dtype="float32", *, param: bool = False, name=None) -> Variable:
    """A variable with a value (seed 000: ``var(1)``, ``var(0.314, param=True)``).

    Without ``param`` the value is a constant of the program, used unless a feed overrides
    it; with ``param=True`` it is a trainable parameter that the startup program sets."""
    if value is None:
        if shape is None:
            raise BuildError("pd.var needs a value or a shape")
        if param:
            return create_parameter(shape, dtype, name=name)
        return _block().create_var(name or unique_name.generate("var"), shape, dtype)
    return _declare_with_value(value, shape, dtype, name, "param" if param else "var", param)


def minibatch(values=None, shape=None, dtype="float32", *, name=None,
              lod_level: int = 0) -> Variable:
    """A batch of instances, batch dimension first (seed 000: ``minibatch([10, 20, 30])``
    has shape [None, 1]). With ``values`` it runs without a feed."""
    if values is None:
        if shape is None:
            raise BuildError("pd.minibatch needs values or a shape")
        return data(name or unique_name.generate("minibatch"), shape, dtype, lod_level)
    return _declare_with_value(values, shape, dtype, name, "minibatch", False, lod_level,
                               batch=True)


def sequence(values=None, shape=None, dtype="float32", *, name=None) -> Variable:
    """A sequence batch (seed 000's RNN input): a minibatch with lod_level 1."""
    return minibatch(values, shape, dtype, name=name or unique_name.generate("sequence"),
                     lod_level=1)


# --- parameters ----------------------------------------------------------------------------
def create_parameter(shape, dtype="float32", *, name: str | None = None,
                     initializer: Initializer | None = None, trainable: bool = True,
                     is_bias: bool = False) -> Parameter:
    """A parameter in the main program's global block, initialised by the startup program."""
    name = name or unique_name.generate("param")
    shape = [int(d) for d in shape]
    if any(d < 0 for d in shape):
        raise BuildError(f"parameter {name!r} needs a concrete shape, got {shape}")
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
    """The parameter ``name`` (inside the active namespace), created when absent (seed 003).

    With ``reuse=True`` an existing parameter is returned (its shape must match ``shape``
    when given); with ``reuse=False`` an existing one is an error."""
    full = unique_name.with_prefix(name)
    gb = default_main_program().global_block()
    if gb.has_var(full):
        existing = gb.var(full)
        if not reuse:
            raise BuildError(f"variable {full!r} already exists; pass reuse=True to share it")
        if shape is not None and list(existing.shape) != [int(d) for d in shape]:
            raise BuildError(f"get_variable({full!r}): it exists with shape "
                             f"{list(existing.shape)}, asked for {list(shape)}")
        return existing
    if shape is None:
        raise BuildError(f"get_variable({full!r}): no such variable yet, and no shape was given "
                         "to create it")
    return create_parameter(shape, dtype, name=full, initializer=initializer,
                            trainable=trainable)


def _param(attr: ParamAttr, shape, dtype, default_name, is_bias=False) -> Parameter:
    name = attr.name or default_name
    gb = default_main_program().global_block()
    if attr.name and gb.has_var(name):      # a named parameter is shared, as in Fluid
        existing = gb.var(name)
        if list(existing.shape) != list(shape):
            raise BuildError(f"parameter {name!r} exists with shape {list(existing.shape)}; "
                             f"this layer needs {list(shape)}")
        return existing
    return create_parameter(shape, dtype, name=name, initializer=attr.initializer,
                            trainable=attr.trainable, is_bias=is_bias)


# --- layers ----------------------------------------------------------------------------------
def fc(input, size=None, num_flatten_dims: int = 1, param_attr=None, bias_attr=None,
       act: str | None = None, name: str | None = None, *, params=None):
    """A fully connected layer as Fluid builds it: ``mul`` + ``elementwise_add`` + act.

    Also the seed forms: ``fc(W, x)`` multiplies ``x`` by an existing parameter ``W``
    (seed 000's RNN), and ``fc(a, params=["fc.w", "fc.b"])`` names (and so shares) the
    weight and bias. ``size`` defaults to the input's last dimension."""
    if isinstance(input, Parameter) and isinstance(size, Variable):
        return _fc_with_weight(input, size)
    if not isinstance(input, Variable):
        raise BuildError(f"fc: input must be a Variable, got {type(input).__name__}")
    if params is not None:
        names = list(params) + [None] * (2 - len(params))
        param_attr = ParamAttr(name=names[0]) if names[0] else param_attr
        bias_attr = ParamAttr(name=names[1]) if names[1] else bias_attr
    in_shape = list(input.shape)
    if size is None:
        size = in_shape[-1] if in_shape else None
        if size is None or size < 0:
            raise BuildError("fc: give size= (the input's last dimension is unknown)")
    size = _int_arg("fc", "size", size, 1)
    _check_activation(act)                # before anything is built
    num_flatten_dims = _int_arg("fc", "num_flatten_dims", num_flatten_dims, 1,
                                max(len(in_shape) - 1, 1))
    layer = unique_name.generate(name or "fc")
    in_dim = int(np.prod(in_shape[num_flatten_dims:]))
    w = _param(ParamAttr.of(param_attr), [in_dim, size], input.dtype, f"{layer}.w_0")
    out = _tmp(layer, input.dtype)
    _block().append_op("mul", inputs={"X": [input], "Y": [w]}, outputs={"Out": [out]},
                       attrs={"x_num_col_dims": num_flatten_dims, "y_num_col_dims": 1})
    battr = ParamAttr.of(bias_attr)
    if battr is not None:
        b = _param(battr, [size], input.dtype, f"{layer}.b_0", is_bias=True)
        pre = _tmp(layer, input.dtype)
        _block().append_op("elementwise_add", inputs={"X": [out], "Y": [b]},
                           outputs={"Out": [pre]}, attrs={"axis": num_flatten_dims})
        out = pre
    return _activate(out, act, layer)


def _fc_with_weight(w: Parameter, x: Variable) -> Variable:
    if len(w.shape) == 2:
        return append("mul", {"X": [x], "Y": [w]}, {"x_num_col_dims": len(x.shape) - 1})
    return append("elementwise_mul", {"X": [x], "Y": [w]})      # a [1]-shaped weight scales


ACTIVATIONS = ("relu", "sigmoid", "tanh", "softmax", "exp", "square")


def _check_activation(act: str | None) -> None:
    if act is not None and act not in ACTIVATIONS:
        raise BuildError(f"unknown activation {act!r}; use one of {', '.join(ACTIVATIONS)}")


def _activate(x: Variable, act: str | None, layer: str) -> Variable:
    _check_activation(act)
    return x if act is None else append(act, {"X": [x]}, layer=layer)


def softmax(x, axis: int = -1):
    return append("softmax", {"X": [x]}, {"axis": axis})


def relu(x):
    return append("relu", {"X": [x]})


def sigmoid(x):
    return append("sigmoid", {"X": [x]})


def tanh(x):
    return append("tanh", {"X": [x]})


def exp(x):
    return append("exp", {"X": [x]})


def log(x):
    return append("log", {"X": [x]})


def square(x):
    return append("square", {"X": [x]})


def scale(x, scale: float = 1.0, bias: float = 0.0, bias_after_scale: bool = True):
    return append("scale", {"X": [x]}, {"scale": float(scale), "bias": float(bias),
                                         "bias_after_scale": bias_after_scale})


def cast(x, dtype):
    return append("cast", {"X": [x]}, {"in_dtype": dtypes.to_code(x.dtype),
                                        "out_dtype": dtypes.to_code(dtype)},
                  out_dtype=dtypes.name(dtypes.to_code(dtype)))


def _binary(op_type, x, y, axis=-1):
    x = _as_var(x, y if isinstance(y, Variable) else None)
    y = _as_var(y, x)
    out_dtype = "bool" if op_type in _BOOL_OPS else None
    return append(op_type, {"X": [x], "Y": [y]}, {"axis": axis}, out_dtype=out_dtype)


_BOOL_OPS = {"greater_than", "less_than", "equal", "not_equal"}


def add(x, y, axis: int = -1):
    return _binary("elementwise_add", x, y, axis)


def elementwise_add(x, y, axis: int = -1):
    return _binary("elementwise_add", x, y, axis)


def elementwise_sub(x, y, axis: int = -1):
    return _binary("elementwise_sub", x, y, axis)


def elementwise_mul(x, y, axis: int = -1):
    return _binary("elementwise_mul", x, y, axis)


def elementwise_div(x, y, axis: int = -1):
    return _binary("elementwise_div", x, y, axis)


def add_scalar(x, y):
    """Seed 000's ``layer.add_scalar(x, y)``: x plus a scalar (a number or a [1] var)."""
    if isinstance(y, (int, float)):
        return scale(x, 1.0, float(y))
    return _binary("elementwise_add", x, y)


def greater_than(x, y):
    return _binary("greater_than", x, y)


larger_than = greater_than          # seed 000's name


def less_than(x, y, cond: Variable | None = None):
    """x < y; with ``cond``, the result is written into that (existing) bool variable,
    which is how a While body updates its condition."""
    if cond is None:
        return _binary("less_than", x, y)
    _block().append_op("less_than", {"X": [_as_var(x, y if isinstance(y, Variable) else None)],
                                     "Y": [_as_var(y, x)]}, {"Out": [cond]}, {"axis": -1})
    return cond


def equal(x, y):
    return _binary("equal", x, y)


def not_equal(x, y):
    return _binary("not_equal", x, y)


def logical_and(x, y):
    return append("logical_and", {"X": [x], "Y": [y]}, out_dtype="bool")


def logical_or(x, y):
    return append("logical_or", {"X": [x], "Y": [y]}, out_dtype="bool")


def logical_not(x):
    return append("logical_not", {"X": [x]}, out_dtype="bool")


def matmul(x, y, transpose_x: bool = False, transpose_y: bool = False):
    return append("matmul_v2", {"X": [x], "Y": [y]},
                  {"trans_x": transpose_x, "trans_y": transpose_y})


def mean(x):
    return append("mean", {"X": [x]})


def reduce_sum(x, dim=None, keep_dim: bool = False):
    dims = [dim] if isinstance(dim, int) else list(dim or [])
    return append("reduce_sum", {"X": [x]}, {"dim": dims or [0], "keep_dim": keep_dim,
                                              "reduce_all": not dims})


def reduce_mean(x, dim=None, keep_dim: bool = False):
    dims = [dim] if isinstance(dim, int) else list(dim or [])
    return append("reduce_mean", {"X": [x]}, {"dim": dims or [0], "keep_dim": keep_dim,
                                               "reduce_all": not dims})


def sums(xs):
    return append("sum", {"X": list(xs)})


def reshape(x, shape):
    layer = unique_name.generate("reshape2")
    out, xshape = _tmp(layer, x.dtype), _tmp(layer, x.dtype)
    _block().append_op("reshape2", inputs={"X": [x]}, outputs={"Out": [out], "XShape": [xshape]},
                       attrs={"shape": list(shape)})
    return out


def transpose(x, perm):
    layer = unique_name.generate("transpose")
    out, xshape = _tmp(layer, x.dtype), _tmp(layer, x.dtype)
    _block().append_op("transpose2", inputs={"X": [x]},
                       outputs={"Out": [out], "XShape": [xshape]}, attrs={"axis": list(perm)})
    return out


def concat(xs, axis: int = 0):
    return append("concat", {"X": list(xs)}, {"axis": axis})


def split(x, num_or_sections, dim: int = 0):
    if isinstance(num_or_sections, int):
        n, attrs = num_or_sections, {"num": num_or_sections, "axis": dim}
    else:
        n, attrs = len(num_or_sections), {"sections": list(num_or_sections), "axis": dim}
    layer = unique_name.generate("split")
    outs = [_tmp(layer, x.dtype) for _ in range(n)]
    _block().append_op("split", inputs={"X": [x]}, outputs={"Out": outs}, attrs=attrs)
    return outs


def fill_constant(shape, dtype, value):
    return append("fill_constant", {}, {"shape": list(shape), "dtype": dtypes.to_code(dtype),
                                        "value": float(value)},
                  outputs={"Out": [_tmp(unique_name.generate("fill_constant"), dtype)]})


def assign(x, output: Variable | None = None):
    """A copy of ``x``; with ``output``, the copy is written into that (existing) variable,
    which is how a branch or a loop body updates a variable outside its block."""
    if output is None:
        return append("assign", {"X": [x]})
    _block().append_op("assign", {"X": [x]}, {"Out": [output]})
    return output


# --- losses ----------------------------------------------------------------------------------
def softmax_with_cross_entropy(logits, label, soft_label: bool = False, axis: int = -1,
                               ignore_index: int = -100, return_softmax: bool = False):
    """Cross entropy of softmax(logits) against class indices (int64, last dim 1)."""
    layer = unique_name.generate("softmax_with_cross_entropy")
    softmax, loss = _tmp(layer, logits.dtype), _tmp(layer, logits.dtype)
    _block().append_op("softmax_with_cross_entropy", {"Logits": [logits], "Label": [label]},
                       {"Softmax": [softmax], "Loss": [loss]},
                       {"soft_label": soft_label, "axis": axis, "ignore_index": ignore_index})
    return (loss, softmax) if return_softmax else loss


def cross_entropy(input, label, soft_label: bool = False, ignore_index: int = -100):
    """Cross entropy of probabilities ``input`` (rows sum to 1) against ``label``."""
    y = _tmp(unique_name.generate("cross_entropy"), input.dtype)
    _block().append_op("cross_entropy", {"X": [input], "Label": [label]}, {"Y": [y]},
                       {"soft_label": soft_label, "ignore_index": ignore_index})
    return y


def square_error_cost(input, label):
    """(input - label)^2, elementwise (Fluid builds it from elementwise_sub and square)."""
    return square(elementwise_sub(input, label))
