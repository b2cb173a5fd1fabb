"""Attributes given as tensors: Fluid's run-time attributes, in one place.

Many Fluid ops have optional inputs that stand for one of their attributes. ``paddle.full(
[n, 3])`` with a tensor ``n`` saves ``fill_constant`` with ``shape=[-1, 3]`` and a
``ShapeTensorList`` input holding ``n`` and ``3``; ``nn.LSTM`` called without an initial
state builds its zero state that way, the batch size read from ``shape(x)``. When such a
tensor is given, its value wins over the attribute, which is then only a build-time
placeholder (``-1`` where the value is unknown).

The rule, once for every op:

* :data:`ATTRIBUTE_TENSORS` lists, per op type, which input stands for which attribute, in
  Paddle's order of priority (the first one given wins: reshape2's ``ShapeTensor`` list over
  its ``Shape`` tensor, slice's ``StartsTensor`` over its ``StartsTensorList``).
* At build time a shape rule asks ``ctx.attr_from_tensor(name)``: true when a tensor gives
  the attribute, whose value is then unknown (the rule writes -1 where it depends on it).
* At run time ``ctx.attr(name)`` is the tensor's value, for the kernels
  (``KernelContext.attr``) and for shape inference on the values (``RuntimeShapeContext``)
  alike: a kernel never reads the tensor itself. :class:`RunTimeAttrs` is what a prepared
  op keeps of this.
* An op says which of its attribute tensors it reads (``OpDef.reads_attr_tensors``); one it
  does not read is refused (:func:`check_attr_tensors`), never run on the attribute's value.

The table comes from PaddlePaddle 2.6.2's OpProtos (``paddle.base.core.
get_all_op_protos()``): the inputs whose comment says "attribute N for <op> op from ...
Tensor", or that it is used instead of (has a higher priority than) an attribute. Inputs
that only carry data (MasterParam, SkipUpdate, PriorDist, Y of expand_as_v2,
SequenceLength) are not listed.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .errors import ExecutionError, PaddleNBError


@dataclass(frozen=True)
class AttrTensor:
    """An optional input that stands for an attribute. ``elements``: what its elements must
    be (a key of ``infer_shape.Requirements.KINDS``); ``form``: ``"scalar"`` (one tensor of
    one element), ``"list"`` (a duplicable slot: one one-element tensor per entry) or
    ``"vector"`` (one 1-D tensor holding the entries)."""
    slot: str
    attr: str
    elements: str
    form: str


def _stand_for(attr: str, elements: str, *slots: tuple[str, str]) -> tuple[AttrTensor, ...]:
    return tuple(AttrTensor(slot, attr, elements, form) for slot, form in slots)


_SHAPE = _stand_for("shape", "int", ("ShapeTensor", "vector"), ("ShapeTensorList", "list"))
_BOUNDS = (_stand_for("starts", "int", ("StartsTensor", "vector"), ("StartsTensorList", "list"))
           + _stand_for("ends", "int", ("EndsTensor", "vector"), ("EndsTensorList", "list")))
# interp's tensors stand for two attributes at once (out_h and out_w, or out_d too): its
# shape rule and kernel read them (ops/interp.py); the table says which they are.
_INTERP = (_stand_for("out_h and out_w", "int", ("SizeTensor", "list"), ("OutSize", "vector"))
           + _stand_for("scale", "float", ("Scale", "vector")))
_ADAM = (_stand_for("beta1", "float", ("Beta1Tensor", "scalar"))
         + _stand_for("beta2", "float", ("Beta2Tensor", "scalar"))
         + _stand_for("epsilon", "float", ("EpsilonTensor", "scalar")))

# Every op type registered here that has attribute tensors in Fluid (a <type>_grad op has
# its forward op's). tests/test_registry.py checks each slot is an input slot of its op.
ATTRIBUTE_TENSORS: dict[str, tuple[AttrTensor, ...]] = {
    "adam": _ADAM,
    "adamw": _ADAM,
    "batch_norm": _stand_for("momentum", "float", ("MomentumTensor", "scalar")),
    "bilinear_interp_v2": _INTERP,
    "nearest_interp_v2": _INTERP,
    "clip": (_stand_for("min", "number", ("Min", "scalar"))
             + _stand_for("max", "number", ("Max", "scalar"))),
    "concat": _stand_for("axis", "int", ("AxisTensor", "scalar")),
    "dropout": _stand_for("seed", "int", ("Seed", "scalar")),
    # crop_tensor, empty, repeat_interleave (ops/crop_tensor.py, empty.py, repeat_interleave.py)
    "crop_tensor": (_stand_for("shape", "int", ("ShapeTensor", "list"), ("Shape", "vector"))
                    + _stand_for("offsets", "int", ("OffsetsTensor", "list"),
                                 ("Offsets", "vector"))),
    "empty": _stand_for("shape", "int", ("ShapeTensor", "vector"), ("ShapeTensorList", "list")),
    "repeat_interleave": _stand_for("Repeats", "int", ("RepeatsTensor", "vector")),
    "expand_v2": _stand_for("shape", "int", ("Shape", "vector"),
                            ("expand_shapes_tensor", "list")),
    "fill_constant": _SHAPE + _stand_for("value", "real", ("ValueTensor", "scalar")),
    "gather": _stand_for("axis", "int", ("Axis", "scalar")),
    "gaussian_random": _SHAPE,
    # matrix_rank (ops/matrix_rank.py): one tolerance per matrix, its shape read too
    "matrix_rank": _stand_for("tol", "float", ("TolTensor", "vector")),
    "uniform_random": _SHAPE,
    # randint (ops/sampling.py)
    "randint": _SHAPE,
    "one_hot_v2": _stand_for("depth", "int", ("depth_tensor", "scalar")),
    "pad3d": _stand_for("paddings", "int", ("Paddings", "vector")),
    "pow": _stand_for("factor", "number", ("FactorTensor", "scalar")),
    # reduce_all/_any, sequence_mask (ops/bool_reduce.py, sequence_mask.py)
    "reduce_all": _stand_for("dim", "int", ("AxisTensor", "vector"), ("AxisTensorList", "list")),
    "reduce_any": _stand_for("dim", "int", ("AxisTensor", "vector"), ("AxisTensorList", "list")),
    # reduce_amax/_amin (ops/amax_amin.py), isclose/allclose (ops/closeness.py)
    "isclose": (_stand_for("rtol", "float", ("Rtol", "scalar"))
                + _stand_for("atol", "float", ("Atol", "scalar"))),
    "allclose": (_stand_for("rtol", "float", ("Rtol", "scalar"))
                 + _stand_for("atol", "float", ("Atol", "scalar"))),
    "reduce_amax": _stand_for("dim", "int", ("AxisTensor", "vector"), ("AxisTensorList", "list")),
    "reduce_amin": _stand_for("dim", "int", ("AxisTensor", "vector"), ("AxisTensorList", "list")),
    "sequence_mask": _stand_for("maxlen", "int", ("MaxLenTensor", "scalar")),
    "set_value": (_stand_for("starts", "int", ("StartsTensorList", "list"))
                  + _stand_for("ends", "int", ("EndsTensorList", "list"))
                  + _stand_for("steps", "int", ("StepsTensorList", "list"))),
    "reshape2": _stand_for("shape", "int", ("ShapeTensor", "list"), ("Shape", "vector")),
    "roll": _stand_for("shifts", "int", ("ShiftsTensor", "vector")),
    "scale": _stand_for("scale", "number", ("ScaleTensor", "scalar")),
    "slice": _BOUNDS,
    "strided_slice": _BOUNDS + _stand_for("strides", "int", ("StridesTensor", "vector"),
                                          ("StridesTensorList", "list")),
    "split": (_stand_for("axis", "int", ("AxisTensor", "scalar"))
              + _stand_for("sections", "int", ("SectionsTensorList", "list"))),
    "tile": _stand_for("repeat_times", "int", ("RepeatTimes", "vector"),
                       ("repeat_times_tensor", "list")),
    "top_k_v2": _stand_for("k", "int", ("K", "scalar")),
    "unsqueeze2": _stand_for("axes", "int", ("AxesTensor", "vector"), ("AxesTensorList", "list")),
}


def attribute_tensors(op_def) -> tuple[AttrTensor, ...]:
    """The attribute tensors of ``op_def``'s type (a gradient op: its forward op's)."""
    return ATTRIBUTE_TENSORS.get(op_def.grad_of or op_def.type, ())


def given(op_def, has_input) -> dict[str, AttrTensor]:
    """attribute -> the tensor that gives it, for the attribute tensors ``op_def`` reads
    and ``has_input(slot)`` says are given: the first given in Paddle's order of priority."""
    out: dict[str, AttrTensor] = {}
    for t in attribute_tensors(op_def):
        if t.slot in op_def.reads_attr_tensors and t.attr not in out and has_input(t.slot):
            out[t.attr] = t
    return out


def value_of(t: AttrTensor, values: list):
    """The attribute's value from the values of slot ``t.slot`` (numpy or device arrays):
    a list for a vector or a list, one number for a scalar; ints for int elements."""
    if not values or any(v is None or not hasattr(v, "shape") for v in values):
        raise ExecutionError(f"slot {t.slot}: attribute {t.attr} is read from this tensor, "
                             f"which holds no value in this run")
    host = [np.asarray(v.copy_to_host() if hasattr(v, "copy_to_host") else v) for v in values]
    if t.form == "vector":
        entries = list(host[0].ravel())
    elif any(h.size != 1 for h in host):      # check_attr_tensors says it in the op's words
        raise ExecutionError(f"slot {t.slot}: each tensor must hold exactly one element "
                             f"(attribute {t.attr}); sizes {[h.size for h in host]}")
    else:
        entries = [h.ravel()[0] for h in host]
    entries = [_python(e, t.elements) for e in entries]
    return entries[0] if t.form == "scalar" else entries


def _python(e, elements: str):
    if elements == "int":
        return int(e)
    if elements == "float":
        return float(e)
    return e.item() if hasattr(e, "item") else e


class RunTimeAttrs:
    """What a prepared op keeps of the rule: which of its attributes tensors give, and
    how to read them from the slot values at run time. Empty (false) for most ops, whose
    prepared op keeps None instead."""
    __slots__ = ("by_attr",)

    def __init__(self, op_def, inputs: dict):
        self.by_attr = given(op_def, lambda slot: bool(inputs.get(slot)))

    def __bool__(self) -> bool:
        return bool(self.by_attr)

    def value(self, name: str, read_slot):
        """Attribute ``name`` from its tensor; ``read_slot(slot)`` gives the slot's values."""
        t = self.by_attr[name]
        return value_of(t, read_slot(t.slot))

    def key(self, read_slot) -> tuple:
        """Every tensor-given attribute's value, for a cache keyed on what shapes depend
        on (fast_path.signature): equal shapes with another value are another key.
        A tensor that cannot be read yet gives a key equal to nothing, so the shape rule
        runs and says what is wrong in the op's words."""
        try:
            return tuple(_hashable(self.value(name, read_slot)) for name in self.by_attr)
        except (PaddleNBError, AttributeError, TypeError, ValueError):
            return (object(),)


def read_in_scope(op, op_def, scope) -> dict[str, tuple]:
    """attribute -> (its value, the slot it came from), for each attribute a tensor gives
    ``op`` (an Operator), read from ``scope``: what its kernel read there (the debugger
    shows it beside the op that ran). A tensor with no value there is left out."""
    out = {}
    for name, t in given(op_def, lambda slot: bool(op.input(slot))).items():
        try:
            out[name] = (value_of(t, [scope.find_var(n).get() for n in op.input(t.slot)]),
                         t.slot)
        except (PaddleNBError, AttributeError):
            continue
    return out


def _hashable(v):
    return tuple(v) if isinstance(v, list) else v


# --- ops that do not read theirs ----------------------------------------------------------------
def unread_attr_tensors(op_def, given_slots) -> list[AttrTensor]:
    """The attribute tensors among the input slots ``given_slots`` (the slots that name a
    variable) that ``op_def``'s kernels do not read. Each must be refused: Fluid takes the
    attribute's value from the tensor, this package would take the attribute's, and the
    two differ whenever the program needs the tensor (a shape known at run time)."""
    return [t for t in attribute_tensors(op_def)
            if t.slot in given_slots and t.slot not in op_def.reads_attr_tensors]


def attr_tensor_refusal(op_type: str, t: AttrTensor) -> tuple[str, str]:
    """(what is wrong, what was expected) for a refused attribute tensor: one text for
    the shape rule's error (after ``slot <t.slot>:``) and validation's problem."""
    return (f"stands for attribute {t.attr}, which Fluid reads from this tensor at run "
            f"time; paddle_nb does not yet read {op_type}'s {t.attr} from a tensor, and "
            f"refuses the op rather than run it on the attribute's value (another result)",
            f"no {t.slot} input, the value given in attribute {t.attr}")


def check_attr_tensors(ctx, op_def) -> None:
    """The rule's checks, in a shape-rule context (build time or run time): an unread
    attribute tensor is refused (``ctx.fail`` names the op, its block path, the slot, the
    attribute and the user's line); one the op reads must hold ``elements`` (an int shape,
    not a float one) and, for a scalar or a list entry, one element."""
    for t in attribute_tensors(op_def):
        names = ctx.input_names(t.slot)
        if not names:
            continue
        if t.slot not in op_def.reads_attr_tensors:
            message, expected = attr_tensor_refusal(op_def.type, t)
            ctx.fail(message, slot=t.slot, expected=expected, given=f"{t.slot} {names}")
        ctx.require_dtype(t.slot, t.elements)
        if t.form == "vector":
            continue
        for i, name in enumerate(names):
            shape = ctx.shape(t.slot, i)
            if any(d not in (1, -1) for d in shape):
                what = "one entry of" if t.form == "list" else "the value of"
                ctx.fail(f"must hold exactly one element: {what} attribute {t.attr}",
                         slot=t.slot, expected="shape [] or [1]",
                         given=f"{name}: shape {list(shape)}")
