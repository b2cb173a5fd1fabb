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
"""
from __future__ import annotations

from dataclasses import dataclass, field


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


# PIR attributes that say nothing Fluid keeps (where the op came from, its device).
DROPPED_ATTRS = frozenset({"struct_name", "place", "stop_gradient", "persistable",
                           "op_callstack", "op_namescope"})

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
              "silu", "softsign", "square", "floor", "ceil", "sin", "cos", "erf", "swish",
              "logical_not", "relu6", "hardswish", "mish", "softplus", "leaky_relu",
              "hardsigmoid", "elu", "reciprocal", "round", "sign", "isnan", "isinf"):
    unary(_name)
unary("softmax")
unary("log_softmax")
row("scale", "scale", ("X", Attr("scale", "ScaleTensor", "float32")))

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

# --- nets -------------------------------------------------------------------------------------
row("conv2d", "conv2d", ("Input", "Filter"), ("Output",))
row("pool2d", "pool2d", ("X", Attr("ksize")))
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
