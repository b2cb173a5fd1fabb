"""What every layer builder stands on: the block a builder appends to, temporaries named as
Fluid names them (``fc_0.tmp_0``), ``append`` (one op, one new output), parameters, the
``act=`` activation, and the three tensor ops the other builders build with
(``fill_constant``, ``reshape``, ``transpose``).

A builder appends ops to the current block of the default main program. A parameter is
declared in the main program's global block and initialised by an op in the startup
program, as Fluid's LayerHelper does; names follow Fluid: ``fc_0.w_0``, ``fc_0.b_0``.

The builder families (``dense``, ``elementwise``, ``tensor``, ``declare``, ``cnn``, ``norm``,
``lookup``, ``rnn``, ``attention``, ``losses``) import this module, never each other;
``layers/__init__.py`` re-exports them as ``pd.layer``.
"""
from __future__ import annotations

import numpy as np

from ..builders import arg_checks as check
from ..builders.initializer import Constant, Initializer, XavierUniform
from ..core import dtypes, registry, unique_name
from ..core.errors import BuildError
from ..core.program import default_main_program, default_startup_program
from ..core.variable import Parameter, Variable
from ..optimizer.regularizer import set_decay
from .param_attr import ParamAttr

IMAGE_LAYOUTS = ("NCHW", "NHWC")       # what data_format / data_layout may name


# --- the block, temporaries, one op ----------------------------------------------------------
def current_block():
    return default_main_program().current_block()


def temporary(layer: str, dtype="float32") -> Variable:
    """A new temporary of layer ``layer`` (a generated name such as ``fc_0``)."""
    return current_block().create_var(unique_name.generate_within(layer, "tmp"), dtype=dtype)


def append(op_type: str, inputs: dict, attrs: dict | None = None, *, layer: str | None = None,
           out_dtype=None, outputs: dict | None = None) -> Variable:
    """Append ``op_type`` with one new output ``Out`` and return it."""
    if outputs is None:
        first = next(iter(inputs.values()))
        first = first[0] if isinstance(first, (list, tuple)) else first
        dtype = out_dtype or (first.dtype if isinstance(first, Variable) else "float32")
        out = temporary(layer or unique_name.generate(op_type), dtype)
        outputs = {"Out": [out]}
    try:
        current_block().append_op(op_type, inputs=inputs, outputs=outputs, attrs=attrs or {})
    except BaseException:
        for v in outputs["Out"]:        # the temporary made for the failed op goes too
            if isinstance(v, Variable) and not _is_used(v.name):
                v.block._remove_var(v.name)
        raise
    return outputs["Out"][0]


def _is_used(name: str) -> bool:
    return any(name in op.input_arg_names + op.output_arg_names for op in current_block().ops)


def first_output(out):
    """The first of the outputs a ``pd.op`` creator returned (a tuple when it has several)."""
    return out[0] if isinstance(out, tuple) else out


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


def parameter(attr: ParamAttr | None, shape, dtype, default_name: str, *,
              initializer: Initializer | None = None, trainable: bool = True,
              is_bias: bool = False) -> Parameter | None:
    """The parameter a layer's ``attr`` describes (``ParamAttr.of`` its argument: None for
    False, no parameter), named ``default_name`` unless ``attr`` names it.

    A named parameter that exists is shared, as in Fluid (its shape must be this layer's);
    a new one is filled by ``attr``'s initializer, else the layer's ``initializer``, else
    zeros for a bias and Xavier-uniform otherwise, and keeps ``attr``'s own decay."""
    if attr is None:
        return None
    name = attr.name or default_name
    gb = default_main_program().global_block()
    if attr.name and gb.has_var(name):
        existing = gb.var(name)
        if list(existing.shape) != list(shape):
            raise BuildError(f"parameter {name!r} exists with shape {list(existing.shape)}; "
                             f"this layer needs {list(shape)}")
        return existing
    param = create_parameter(shape, dtype, name=name,
                             initializer=attr.initializer or initializer,
                             trainable=attr.trainable and trainable, is_bias=is_bias)
    set_decay(default_main_program(), param.name, attr.regularizer)
    return param


# --- act= ------------------------------------------------------------------------------------
def __getattr__(name):
    """``pd.layers.ACTIVATIONS`` (re-exported by the package): what ``act=`` may name, the
    ops declared ``activation=True``. Asked on use, not at import: the registry answers
    once every op is declared, which loading the public API (this module with it) does."""
    if name == "ACTIVATIONS":
        return tuple(registry.types_where("activation"))
    raise AttributeError(f"module 'paddle_nb.layers' has no attribute {name!r}")


def check_activation(act: str | None, builder: str) -> None:
    check.one_of(builder, "act", act, registry.types_where("activation"), optional=True)


def activate(x: Variable, act: str | None, layer: str) -> Variable:
    """``act`` (already checked) applied to ``x``; its output is a temporary of ``layer``."""
    return x if act is None else append(act, {"X": [x]}, layer=layer)


# --- the tensor ops the other builders build with ---------------------------------------------
def fill_constant(shape, dtype, value):
    shape = check.shape("fill_constant", "shape", shape)
    code = check.data_type("fill_constant", "dtype", dtype)
    if not isinstance(value, (bool, np.bool_)):
        check.number("fill_constant", "value", value)
    return append("fill_constant", {}, {"shape": shape, "dtype": code, "value": float(value)},
                  outputs={"Out": [temporary(unique_name.generate("fill_constant"),
                                             dtypes.name(code))]})


def reshape(x, shape):
    check.variable("reshape", "x", x)
    shape = check.shape("reshape", "shape", shape, reshape=True)
    return _with_xshape("reshape2", x, {"shape": shape})


def transpose(x, perm):
    check.variable("transpose", "x", x)
    perm = check.permutation("transpose", "perm", perm, len(x.shape))
    return _with_xshape("transpose2", x, {"axis": perm}, layer="transpose")


def _with_xshape(op_type: str, x, attrs: dict, layer: str | None = None) -> Variable:
    """``op_type`` (reshape2, transpose2) on ``x``: its Out, and the XShape it also writes
    (x's shape, kept for the gradient), both temporaries of one layer name."""
    layer = unique_name.generate(layer or op_type)
    out, xshape = temporary(layer, x.dtype), temporary(layer, x.dtype)
    current_block().append_op(op_type, inputs={"X": [x]},
                              outputs={"Out": [out], "XShape": [xshape]}, attrs=attrs)
    return out
