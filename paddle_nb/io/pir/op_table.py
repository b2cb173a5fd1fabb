"""One table: which Fluid op each Paddle-dialect PIR op is, slot by slot.

Each row was read off the same program saved by paddlepaddle 3.3.1 twice, as PIR
(``model.json``) and as a legacy ProgramDesc (``FLAGS_enable_pir_api=0``): the fixture
pairs in tests/fixtures/pir/, which tests/test_pir_read.py compares op by op. A row says:

* ``ins``: for each PIR operand, in order, the Fluid input slot it goes to. A slot ending in
  ``*`` takes a list (the operand is a ``0.combine``). An operand that PIR passes as a value
  but Fluid as an attribute (``full_int_array`` feeding reshape's shape) is
  ``Attr("shape", "Shape")``: a constant becomes the attribute ``shape`` (what Paddle's
  legacy program holds), a value computed at run time goes to the tensor slot ``Shape`` (a
  run-time attribute tensor); ``Attr("ksize")`` has no tensor slot, so it must be constant.
* ``outs``: for each PIR result the Fluid output slot (``*``: a list, a ``0.t_vec`` result
  split by ``0.split``), or None for a result Fluid has no slot for.
* ``attrs``: PIR attribute -> Fluid attribute where the names differ; an attribute with
  the same name in both is copied as it is; ``struct_name`` and the like are dropped.
  ``fixed`` adds Fluid attributes PIR does not spell (elementwise ops' ``axis=-1``).
* ``aliases``: for an in-place op (``batch_norm_``), result index -> operand index it
  writes over: the Fluid output names the input's variable.
* ``dtype_attrs``: Fluid attributes that hold a data type (an enum in Fluid, a name in PIR).
* ``post``: what else the Fluid op's attributes need once the row's mapping is done (a
  reduction over no axes is Fluid's ``reduce_all``).
* ``ignored``: PIR attributes the Fluid op has no place for, each with the one value the
  Fluid op computes as (``ANY``: it computes the same for every value, ``stable`` of an
  argsort of distinct numbers); another value is an error, not a silent change.

The long tail of rows (activations, losses, tensor ops) was read the same way, off some 250
user-level calls (``paddle.nn`` layers, ``F.*``, tensor methods) in 56 small programs saved
by paddlepaddle 3.3.1 and, for reading only, by 2.6.2 in the legacy format
(tests/fixtures/pir/make_op_programs.py); tests/fixtures/pir/ops/ keeps the PIR files, and
tests/test_pir_ops.py runs each against Paddle's numbers. Paddle ops with no Fluid op here
(``einsum``, ``masked_fill``, ``median``, a ``linspace`` computed at run time) have no row:
reading one is an error that names it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from .format import PirFormatError


@dataclass(frozen=True)
class Attr:
    """A PIR operand that Fluid takes as the attribute ``name`` (or, computed at run time,
    in the tensor slot ``slot``)."""
    name: str
    slot: str | None = None
    dtype: str = "int64"        # what a constant becomes when it must be a tensor


@dataclass(frozen=True)
class OpRow:
    pir: str
    fluid: str
    ins: tuple = ()
    outs: tuple = ("Out",)
    attrs: dict = field(default_factory=dict)
    fixed: dict = field(default_factory=dict)
    aliases: dict = field(default_factory=dict)
    dtype_attrs: tuple = ()
    post: object = None         # attrs -> None, adjusting the Fluid attributes in place
    ignored: dict = field(default_factory=dict)   # PIR attribute -> the value Fluid computes as


# PIR attributes that say nothing Fluid keeps (where the op came from, its device).
DROPPED_ATTRS = frozenset({"struct_name", "place", "stop_gradient", "persistable",
                           "op_callstack", "op_namescope"})

ANY = "any value"              # an ignored attribute whose every value Fluid reproduces

_ROWS: list[OpRow] = []


def row(pir: str, fluid: str, ins=("X",), outs=("Out",), **kw) -> None:
    _ROWS.append(OpRow(pir, fluid, tuple(ins), tuple(outs), **kw))


def unary(pir: str, fluid: str | None = None, **kw) -> None:
    row(pir, fluid or pir, ("X",), ("Out",), **kw)


def elementwise(pir: str, fluid: str) -> None:
    row(pir, fluid, ("X", "Y"), ("Out",), fixed={"axis": -1})


# --- arithmetic -------------------------------------------------------------------------------
elementwise("add", "elementwise_add")
elementwise("subtract", "elementwise_sub")
elementwise("multiply", "elementwise_mul")
elementwise("divide", "elementwise_div")
elementwise("maximum", "elementwise_max")
elementwise("minimum", "elementwise_min")
elementwise("elementwise_pow", "elementwise_pow")
row("matmul", "matmul_v2", ("X", "Y"), attrs={"transpose_x": "trans_x",
                                              "transpose_y": "trans_y"})
for _name in ("relu", "sigmoid", "tanh", "exp", "log", "sqrt", "rsqrt", "abs", "gelu",
              "silu", "softsign", "square", "floor", "ceil", "swish", "logical_not", "relu6",
              "softplus", "elu", "celu", "selu", "logsigmoid", "tanh_shrink", "log1p", "log2",
              "log10", "trunc", "sign"):
    unary(_name)
unary("round", ignored={"decimals": 0})
# the same op, another name (and attribute names) in Fluid
unary("leaky_relu", attrs={"negative_slope": "alpha"})
unary("hardswish", "hard_swish")
unary("hardsigmoid", "hard_sigmoid")
unary("hardtanh", "brelu")
unary("hardshrink", "hard_shrink")
unary("softshrink", attrs={"threshold": "lambda"})
unary("mish", attrs={"lambda": "threshold"})
unary("thresholded_relu", ignored={"value": 0.0})   # Fluid's is 0 below the threshold
unary("isnan", "isnan_v2")
unary("isinf", "isinf_v2")
unary("isfinite", "isfinite_v2")
row("pow", "pow", ("X",), attrs={"y": "factor"})
unary("reciprocal", "pow", fixed={"factor": -1.0})  # after pow: the writer's choice for pow
row("clip", "clip", ("X", Attr("min", "Min", "float32"), Attr("max", "Max", "float32")))
unary("softmax")
unary("log_softmax")
row("scale", "scale", ("X", Attr("scale", "ScaleTensor", "float32")))

row("lerp", "lerp", ("X", "Y", "Weight"))
row("atan2", "atan2", ("X1", "X2"))
row("cross", "cross", ("X", "Y"), attrs={"axis": "dim"})
row("kron", "kron", ("X", "Y"))
row("fmax", "elementwise_fmax", ("X", "Y"))
row("fmin", "elementwise_fmin", ("X", "Y"))
row("heaviside", "elementwise_heaviside", ("X", "Y"))
unary("logit")
unary("erfinv")
for _name in ("sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh",
              "atanh", "erf", "expm1"):
    unary(_name)
for _name in ("bitwise_and", "bitwise_or", "bitwise_xor"):
    row(_name, _name, ("X", "Y"))
unary("bitwise_not")
row("equal_all", "equal_all", ("X", "Y"))


def _tolerances_as_text(attrs: dict) -> None:
    """PIR passes isclose's tolerances as float64 values; Fluid keeps them as strings
    (``rtol='1e-05'``), so that a double survives the float32 attribute."""
    for name in ("rtol", "atol"):
        if name in attrs and not isinstance(attrs[name], str):
            attrs[name] = repr(float(attrs[name]))


for _name in ("isclose", "allclose"):
    row(_name, _name, ("Input", "Other", Attr("rtol", "Rtol", "float64"),
                       Attr("atol", "Atol", "float64")), post=_tolerances_as_text)

for _pir, _fluid in (("less_than", "less_than"), ("less_equal", "less_equal"),
                     ("greater_than", "greater_than"), ("greater_equal", "greater_equal"),
                     ("equal", "equal"), ("not_equal", "not_equal"),
                     ("remainder", "elementwise_mod"), ("floor_divide", "elementwise_floordiv"),
                     ("logical_and", "logical_and"), ("logical_or", "logical_or"),
                     ("logical_xor", "logical_xor")):
    elementwise(_pir, _fluid)


def _reduce_all(attrs: dict) -> None:
    """PIR reduces over every axis when ``axis`` is empty; Fluid says so with reduce_all."""
    if not attrs.get("dim"):
        attrs["dim"], attrs["reduce_all"] = [0], True


def reduction(pir: str, fluid: str, **kw) -> None:
    row(pir, fluid, ("X", Attr("dim")), attrs={"keepdim": "keep_dim", "dtype": "out_dtype"},
        post=_reduce_all, **kw)


reduction("sum", "reduce_sum", dtype_attrs=("out_dtype",))
reduction("mean", "reduce_mean")
reduction("max", "reduce_max")
reduction("min", "reduce_min")
reduction("prod", "reduce_prod")


def reduction_by_attr(pir: str, fluid: str, **kw) -> None:
    """A reduction whose axes PIR keeps as an attribute (``any``, ``amax``), not an operand."""
    row(pir, fluid, ("X",), attrs={"axis": "dim", "keepdim": "keep_dim"}, post=_reduce_all,
        **kw)


reduction_by_attr("any", "reduce_any")
reduction_by_attr("all", "reduce_all")
reduction_by_attr("amax", "reduce_amax")
reduction_by_attr("amin", "reduce_amin")
unary("logsumexp")
unary("p_norm")
row("mean_all", "mean")
row("argmax", "arg_max", ("X", Attr("axis")), dtype_attrs=("dtype",))
row("argmin", "arg_min", ("X", Attr("axis")), dtype_attrs=("dtype",))
row("argsort", "argsort", ("X",), ("Out", "Indices"), ignored={"stable": ANY})
row("topk", "top_k_v2", ("X", Attr("k", "K", "int32")), ("Out", "Indices"))
row("cumsum", "cumsum", ("X", Attr("axis")))
row("cumprod", "cumprod", ("X",), ignored={"exclusive": False, "reverse": False})

# --- shapes -----------------------------------------------------------------------------------
row("reshape", "reshape2", ("X", Attr("shape", "Shape")), ("Out", "XShape"))
row("transpose", "transpose2", ("X",), attrs={"perm": "axis"})
row("flatten", "flatten_contiguous_range", ("X",))
row("shape", "shape", ("Input",))
row("slice", "slice", ("Input", Attr("starts", "StartsTensor"), Attr("ends", "EndsTensor")))
row("unsqueeze", "unsqueeze2", ("X", Attr("axes", "AxesTensor")), ("Out", "XShape"))
row("squeeze", "squeeze2", ("X", Attr("axes")), ("Out", "XShape"))
row("stack", "stack", ("X*",), ("Y",))
row("concat", "concat", ("X*", Attr("axis", "AxisTensor")))
row("full", "fill_constant", (), dtype_attrs=("dtype",))
row("full_with_tensor", "fill_constant", ("ValueTensor", "ShapeTensor"),
    dtype_attrs=("dtype",))
row("full_like", "fill_any_like", ("X", Attr("value")), dtype_attrs=("dtype",))
row("cast", "cast", ("X",), attrs={"dtype": "out_dtype"}, dtype_attrs=("out_dtype",))
row("split_with_num", "split", ("X", Attr("axis", "AxisTensor", "int32")), ("Out*",))
row("split", "split", ("X", Attr("sections"), Attr("axis", "AxisTensor", "int32")),
    ("Out*",))
row("unbind", "unbind", ("X",), ("Out*",))
INT32_MIN = -2 ** 31


def _through_index_0(attrs: dict) -> None:
    """Paddle 3 and Fluid (Paddle 2) end a negative stride differently. Paddle 3 runs
    through index 0 when the end is before the axis (``x[::-1]`` saves end = INT32_MIN) and
    reads end = -1 as "the last element"; Paddle 2 runs through index 0 for end = -1 only,
    and clamps any other end before the axis to 0 (index 0 left out). So INT32_MIN becomes
    -1, and -1 (which Fluid would read as through index 0) is refused. Another end before
    the axis (x[4:-100:-1] on fewer than 100) would leave index 0 out: Paddle never saves one
    for slicing syntax."""
    ends, strides = attrs.get("ends"), attrs.get("strides")
    if not isinstance(ends, list) or not isinstance(strides, list):
        return                                   # bounds given by tensors at run time
    attrs["ends"] = ends = list(ends)            # a copy: the constant may feed other ops
    for i, (end, stride) in enumerate(zip(ends, strides)):
        if stride < 0 and end == -1:
            raise PirFormatError(f"strided_slice: end -1 with stride {stride} stops before "
                                 f"the last element in Paddle 3; Fluid's strided_slice reads "
                                 f"it as through index 0, and has no way to say Paddle 3's")
        if stride < 0 and end <= INT32_MIN:
            ends[i] = -1


row("strided_slice", "strided_slice", ("Input", Attr("starts", "StartsTensor"),
                                       Attr("ends", "EndsTensor"),
                                       Attr("strides", "StridesTensor")),
    post=_through_index_0)
row("tile", "tile", ("X", Attr("repeat_times", "RepeatTimes")))
row("expand", "expand_v2", ("X", Attr("shape", "Shape")))
row("expand_as", "expand_as_v2", ("X", "Y"))
row("roll", "roll", ("X", Attr("shifts", "ShiftsTensor")))
unary("flip")
row("tril", "tril_triu", fixed={"lower": True})
row("triu", "tril_triu", fixed={"lower": False})
row("numel", "size", ("Input",))
row("assign", "assign")


def _typed_values(attrs: dict) -> None:
    """PIR's assign_value keeps its values as doubles whatever the dtype; Fluid keeps them
    in the field of the dtype (``int64_values`` ...). The row maps them to fp32_values."""
    values = attrs.pop("fp32_values", [])
    field_name, convert = _VALUE_FIELDS.get(attrs.get("dtype"), ("fp32_values", float))
    attrs[field_name] = [convert(v) for v in values]


_VALUE_FIELDS = {0: ("bool_values", int), 2: ("int32_values", int), 3: ("int64_values", int),
                 5: ("fp32_values", float), 6: ("fp64_values", float)}   # Fluid dtype codes
# assign_value_ fills its operand (a placeholder ``full``) in place; Fluid's makes a new one
row("assign_value_", "assign_value", (None,), attrs={"values": "fp32_values"},
    dtype_attrs=("dtype",), post=_typed_values)

# --- making tensors ---------------------------------------------------------------------------
# reader.py reads arange itself (_arange: Fluid's range makes its Start's dtype, so the
# bounds are made in, or cast to, arange's dtype first); the writer reads this row
row("arange", "range", ("Start", "End", "Step"), ignored={"dtype": ANY})
row("eye", "eye", (Attr("num_rows"), Attr("num_columns")), dtype_attrs=("dtype",))
row("one_hot", "one_hot_v2", ("X", Attr("depth", "depth_tensor", "int32")))
row("sequence_mask", "sequence_mask", ("X", Attr("maxlen", "MaxLenTensor", "int32")),
    ("Y",), dtype_attrs=("out_dtype",))

# --- indexing ---------------------------------------------------------------------------------
row("gather", "gather", ("X", "Index", Attr("axis", "Axis")))
row("gather_nd", "gather_nd", ("X", "Index"))
row("index_select", "index_select", ("X", "Index"), attrs={"axis": "dim"})
row("take_along_axis", "take_along_axis", ("Input", "Index"), ("Result",),
    attrs={"axis": "Axis"})
row("where", "where", ("Condition", "X", "Y"))
row("masked_select", "masked_select", ("X", "Mask"), ("Y",))
row("nonzero", "where_index", ("Condition",))
row("index_sample", "index_sample", ("X", "Index"))
row("scatter", "scatter", ("X", "Ids", "Updates"))
row("index_add", "index_add", ("X", "Index", "AddValue"))
row("put_along_axis", "put_along_axis", ("Input", "Index", "Value"), ("Result",),
    attrs={"axis": "Axis", "reduce": "Reduce", "include_self": "Include_self"})
row("diagonal", "diagonal", ("Input",))
row("trace", "trace", ("Input",))
row("diag", "diag_v2")
row("meshgrid", "meshgrid", ("X*",), ("Out*",))
row("broadcast_tensors", "broadcast_tensors", ("X*",), ("Out*",))
row("unstack", "unstack", ("X",), ("Y*",))

# --- order statistics -------------------------------------------------------------------------
row("mode", "mode", ("X",), ("Out", "Indices"))
row("kthvalue", "kthvalue", ("X",), ("Out", "Indices"))
row("cummax", "cummax", ("x",), ("out", "indices"), dtype_attrs=("dtype",))
row("cummin", "cummin", ("x",), ("out", "indices"), dtype_attrs=("dtype",))
unary("logcumsumexp")
row("searchsorted", "searchsorted", ("SortedSequence", "Values"))

# --- nets -------------------------------------------------------------------------------------
row("conv2d", "conv2d", ("Input", "Filter"), ("Output",))
row("pool2d", "pool2d", ("X", Attr("ksize")))
row("max_pool2d_with_index", "max_pool2d_with_index", ("X",), ("Out", "Mask"),
    attrs={"kernel_size": "ksize"}, ignored={"ceil_mode": False})
row("depthwise_conv2d", "depthwise_conv2d", ("Input", "Filter"), ("Output",))
row("conv2d_transpose", "conv2d_transpose", ("Input", "Filter", Attr("output_size")),
    ("Output",))
row("embedding", "lookup_table_v2", ("Ids", "W"), attrs={"sparse": "is_sparse"})
row("prelu", "prelu", ("X", "Alpha"))
row("dropout", "dropout", ("X", "Seed", Attr("dropout_prob")), ("Out", "Mask"),
    attrs={"mode": "dropout_implementation"})
row("group_norm", "group_norm", ("X", "Scale", "Bias"), ("Y", "Mean", "Variance"),
    attrs={"data_format": "data_layout"})
row("instance_norm", "instance_norm", ("X", "Scale", "Bias"),
    ("Y", "SavedMean", "SavedVariance"))
for _mode in ("nearest", "bilinear"):
    row(f"{_mode}_interp", f"{_mode}_interp_v2", ("X", "OutSize", "SizeTensor*", "Scale"),
        attrs={"data_format": "data_layout"})
row("pad3d", "pad3d", ("X", Attr("paddings", "Paddings", "int32")),
    attrs={"pad_value": "value"})
row("pad", "pad", ("X", Attr("pad_value")))
row("pixel_shuffle", "pixel_shuffle")
row("pixel_unshuffle", "pixel_unshuffle")
row("channel_shuffle", "channel_shuffle")
row("unfold", "unfold", ("X",), ("Y",))
row("label_smooth", "label_smooth", ("X", "PriorDist"))
row("repeat_interleave", "repeat_interleave", attrs={"repeats": "Repeats", "axis": "dim"},
    ignored={"output_size": ANY})
row("bmm", "bmm", ("X", "Y"))
row("dot", "dot", ("X", "Y"))

# --- losses -----------------------------------------------------------------------------------
row("cross_entropy_with_softmax", "softmax_with_cross_entropy", ("Logits", "Label"),
    ("Softmax", "Loss"))
row("nll_loss", "nll_loss", ("X", "Label", "Weight"), ("Out", "Total_weight"))
row("huber_loss", "huber_loss", ("X", "Y"), ("Out", "Residual"))
row("bce_loss", "bce_loss", ("X", "Label"))
row("sigmoid_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
    ("X", "Label", "pos_weight"))
row("kldiv_loss", "kldiv_loss", ("X", "Target"), ("Loss",))
row("batch_norm_", "batch_norm", ("X", "Mean", "Variance", "Scale", "Bias"),
    ("Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance", "ReserveSpace"),
    attrs={"data_format": "data_layout"}, aliases={1: 1, 2: 2})
row("batch_norm", "batch_norm", ("X", "Mean", "Variance", "Scale", "Bias"),
    ("Y", "MeanOut", "VarianceOut", "SavedMean", "SavedVariance", "ReserveSpace"),
    attrs={"data_format": "data_layout"})
row("layer_norm", "layer_norm", ("X", "Scale", "Bias"), ("Y", "Mean", "Variance"))
row("rnn", "rnn", ("Input", "PreState*", "WeightList*", "SequenceLength", None),
    ("Out", "DropoutState", "State*", "Reserve"))

BY_PIR = {r.pir: r for r in _ROWS}


def lookup(pir_name: str) -> OpRow | None:
    return BY_PIR.get(pir_name)
