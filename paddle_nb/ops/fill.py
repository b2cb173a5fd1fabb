"""Ops that make values: fill_constant, assign, assign_value, uniform_random,
gaussian_random. Initialisers in a startup program are made of these."""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.framework_pb2 import VarType
from ..core.grad_maker import GradOp, grad_name
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core.infer_shape import numel
from ..core.limits import check_tensor_size
from ..kernels.cpu import random as rk
from ..kernels.cpu.fill import copied, filled, filled_like
from ..kernels.cuda import random as crk
from ..kernels.lowered import Call
from . import arrays
from .common import (OUT, X, attr_tensor_slots, dtype_code_check, dtype_to_numpy,
                     numba_holds, same_shape_as_x)
from ..backends import CPU, CUDA

_FP32 = VarType.FP32
# the shape as inputs in place of the attribute (fill_constant, uniform_random...)
_SHAPE_INPUTS = attr_tensor_slots("ShapeTensor", "ShapeTensorList", "shape")


def _shape_and_dtype(ctx) -> None:
    ctx.set_output("Out", ctx.int_list_attr("shape"), ctx.attr("dtype"))


def _concrete(shape, dtype=None, what: str = "the op") -> tuple[int, ...]:
    """The shape attribute as a tuple, refused (before anything is allocated) when a dim is
    unknown or the tensor would be larger than limits.MAX_TENSOR_BYTES."""
    if any(d < 0 for d in shape):
        raise ValueError(f"shape {list(shape)} has an unknown (-1) dimension; a value op "
                         "needs a concrete shape")
    if dtype is not None:
        check_tensor_size(shape, dtype, what)
    return tuple(int(d) for d in shape)


# --- fill_constant ------------------------------------------------------------------
def _fill_constant(place):
    def attributes(ctx):
        dtype = dtype_to_numpy(ctx.attr("dtype"))
        value = ctx.attr("value")          # a ValueTensor's, where one is given
        if not ctx.has_input("ValueTensor"):
            value = ctx.attr("str_value") or value      # the exact text of `value`
        return _concrete(ctx.attr("shape"), dtype, "fill_constant"), float(value), dtype

    def run(ctx):
        # (read from the attributes once per prepared op: a training step runs several)
        shape, value, dtype = ctx.resolved("fill", lambda: attributes(ctx))
        ctx.set_output("Out", place.full(shape, value, dtype))
    return run


# --- in a compiled block (kernels/lowered.py): new arrays made by kernels/cpu/fill.py ----------
def _element(value: float, dtype):
    """The element np.full writes for ``value`` in ``dtype`` (made once, when the block is
    compiled), or None where the compiled forms do not fill (complex, float16)."""
    dtype = np.dtype(dtype)
    if dtype.kind not in "biuf" or not numba_holds(dtype):
        return None
    return np.full((), value, dtype)[()]


def _lowered_fill_constant(info):
    shape = info.attr("shape")
    element = _element(float(info.attr("str_value") or info.attr("value")),
                       dtype_to_numpy(info.attr("dtype")))
    if element is None or any(d < 0 for d in shape) or info.has_input("ValueTensor"):
        return None
    return Call(filled, (), ("Out",), (tuple(int(d) for d in shape), element))


def _lowered_fill_like(info):
    """fill_any_like's (and fill_zeros_like's: 0 in X's dtype) form."""
    code = info.attr("dtype") if info.pop.op_def.attr("dtype") else -1
    dtype = info.dtype("X") if code is None or code < 0 else dtype_to_numpy(code)
    element = _element(info.attr("value") if info.pop.op_def.attr("value") else 0.0, dtype)
    return None if element is None else Call(filled_like, ("X",), ("Out",), (element,))


def _lowered_assign(info):
    return Call(copied, ("X",), ("Out",)) if numba_holds(info.dtype("X")) else None


register(OpDef(
    "fill_constant",
    [*_SHAPE_INPUTS, Slot("ValueTensor", "value as a tensor", dispensable=True)],
    [OUT],
    [Attr("dtype", A.INT, _FP32, "VarType code of Out's element type",
          check=dtype_code_check()),
     Attr("shape", A.LONGS, [1], "Out's shape"),
     Attr("value", A.FLOAT, 0.0, "the value every element gets"),
     Attr("str_value", A.STRING, "", "the value as text (exact for large integers)",
          extra=True),
     Attr("force_cpu", A.BOOLEAN, False, "keep Out on the CPU", extra=True)],
    comment="Out = a tensor of `shape` filled with `value`.",
    infer_shape=_shape_and_dtype,
    kernels={"cpu": _fill_constant(CPU), "cuda": _fill_constant(CUDA)},
    lowered=_lowered_fill_constant,
    grad=NO_GRADIENT, allocates=("shape", "dtype"), grad_plumbing=True,
    reads_attr_tensors=("ShapeTensor", "ShapeTensorList", "ValueTensor")))


# --- assign / assign_value ------------------------------------------------------------
def _assign(ctx):
    ctx.set_output("Out", arrays.copy(ctx.input("X")))


def _assign_grad(op, no_grad):
    """The gradient of a copy is a copy."""
    if op.input("X")[0] in no_grad:
        return []
    return [GradOp("assign", {"X": [grad_name(op.output("Out")[0])]},
                   {"Out": [grad_name(op.input("X")[0])]})]


register(OpDef(
    "assign", [X], [OUT], comment="Out = a copy of X.",
    infer_shape=same_shape_as_x,
    kernels={"cpu": _assign, "cuda": _assign}, lowered=_lowered_assign,
    grad=_assign_grad))


# --- fill_zeros_like / fill_any_like ----------------------------------------------------------
def _fill_any_like(ctx):
    x = ctx.input("X")
    code = ctx.attr("dtype")
    dtype = x.dtype if code is None or code < 0 else dtype_to_numpy(code)
    ctx.set_output("Out", arrays.full(tuple(x.shape), ctx.attr("value"), dtype, like=x))


def _fill_zeros_like(ctx):
    ctx.set_output("Out", arrays.zeros_like(ctx.input("X")))


def _like_x(ctx):
    code = ctx.attr("dtype") if ctx.op_def.attr("dtype") else -1
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X") if code is None or code < 0 else code)


register(OpDef(
    "fill_zeros_like", [X], [OUT], comment="Out = zeros of X's shape and dtype (the gradient "
    "of a variable no op differentiated).", infer_shape=_like_x,
    kernels={"cpu": _fill_zeros_like, "cuda": _fill_zeros_like}, lowered=_lowered_fill_like,
    grad=NO_GRADIENT, grad_plumbing=True))

register(OpDef(
    "fill_any_like", [X], [OUT],
    [Attr("value", A.FLOAT, 0.0, "the value every element gets"),
     Attr("dtype", A.INT, -1, "VarType code of Out's element type; -1: X's",
          check=dtype_code_check(minus_one=True))],
    comment="Out = a tensor of X's shape filled with value.", infer_shape=_like_x,
    kernels={"cpu": _fill_any_like, "cuda": _fill_any_like}, lowered=_lowered_fill_like,
    grad=NO_GRADIENT, grad_plumbing=True))

_VALUE_FIELDS = (("fp32_values", A.FLOATS), ("fp64_values", A.FLOAT64S),
                 ("int32_values", A.INTS), ("int64_values", A.LONGS),
                 ("bool_values", A.INTS))


def _values_of(ctx) -> list:
    """The values stored for the op's dtype, in the field Paddle writes for it (float16 in
    fp32_values, the small integer types in int32_values); Paddle 3 stores SCALARS in
    ``values``. A field of another type is not read: float values are not bools."""
    kind = dtype_to_numpy(ctx.attr("dtype"))
    field = {"bool": "bool_values", "float64": "fp64_values", "int64": "int64_values"}.get(
        kind.name, "fp32_values" if kind.kind == "f" else "int32_values")
    return ctx.attr(field) or ctx.attr("values") or []


def _assign_value_infer(ctx):
    shape = ctx.attr("shape")
    if any(d < 0 for d in shape) or len(_values_of(ctx)) != numel(shape):
        ctx.fail(f"holds {len(_values_of(ctx))} {dtypes.name(ctx.attr('dtype'))} values for "
                 f"shape {list(shape)}", expected=f"{numel(shape)} values, a shape without -1",
                 given=f"{len(_values_of(ctx))} values")
    ctx.set_output("Out", shape, ctx.attr("dtype"))


def _assign_value_array(ctx) -> np.ndarray:
    dtype = dtype_to_numpy(ctx.attr("dtype"))
    shape = _concrete(ctx.attr("shape"), dtype, "assign_value")
    return np.asarray(_values_of(ctx), dtype=dtype).reshape(shape)


def _assign_value(ctx):
    """The constants live in the op (on the host): one copy to the device on CUDA."""
    ctx.set_output("Out", arrays.to_place(ctx.place, _assign_value_array(ctx)))


# the most values assign_value's form writes into its source as literals (a larger constant
# is one copy in the interpreter; numba would compile a tuple of thousands of elements)
_MAX_LITERAL_VALUES = 1024


def _lowered_assign_value(info):
    """Out from the op's values, converted to Out's dtype here as the kernel converts them
    (numpy), written into the source as a tuple of exactly those values."""
    array = _assign_value_array(info)
    if not numba_holds(array.dtype) or array.size == 0:
        return None
    if array.size > _MAX_LITERAL_VALUES:
        return f"more than {_MAX_LITERAL_VALUES} values: one copy in the interpreter"
    return Call(rk.valued, (), ("Out",), (tuple(array.ravel().tolist()), array.shape,
                                       array.dtype.type(0)))


def _values_fill_shape(values: dict) -> str | None:
    """The stored values must be exactly as many as a (known) shape has places."""
    shape = values.get("shape")
    if not isinstance(shape, list) or any(not isinstance(d, int) or d < 0 for d in shape):
        return None
    given = next((len(values[f]) for f, _ in _VALUE_FIELDS
                  if isinstance(values.get(f), list) and values[f]), None)
    want = math.prod(shape)
    if given is not None and given != want:
        return f"shape={A.format_value(shape)} needs {want} values, given {given}"
    return None


register(OpDef(
    "assign_value", [], [OUT],
    [Attr("shape", A.INTS, [], "Out's shape"),
     Attr("dtype", A.INT, _FP32, "VarType code of Out's element type",
          check=dtype_code_check("biuf"))]
    + [Attr(f, t, [], f"the values, for {f.split('_')[0]} tensors") for f, t in _VALUE_FIELDS],
    comment="Out = the constant values stored in the op (how `pd.var(value)` is built).",
    infer_shape=_assign_value_infer, kernels={"cpu": _assign_value, "cuda": _assign_value},
    lowered=_lowered_assign_value, grad=NO_GRADIENT, allocates=("shape", "dtype"),
    check_attrs=_values_fill_shape))


def assign_value_attrs(array: np.ndarray) -> dict:
    """The attributes of an assign_value op that produces ``array``."""
    code = dtypes.to_code(array.dtype)
    field = {VarType.FP32: "fp32_values", VarType.FP64: "fp64_values",
             VarType.INT32: "int32_values", VarType.INT64: "int64_values",
             VarType.BOOL: "bool_values"}.get(code)
    if field is None:
        raise TypeError(f"assign_value cannot hold {array.dtype} values")
    flat = array.ravel()
    values = [int(v) for v in flat] if code in (VarType.BOOL, VarType.INT32, VarType.INT64) \
        else [float(v) for v in flat]
    return {"shape": list(array.shape), "dtype": code, field: values}


# --- random ----------------------------------------------------------------------------
def _seed(ctx) -> int:
    seed = ctx.attr("seed")
    # seed 0 means "a different sequence every run", as in Paddle
    return int(seed) if seed else rk.fresh_seed()


def _cpu_random(draw, *params):
    """uniform_random / gaussian_random on the host (kernels/cpu/random.py): ``draw(n,
    *params, seed)`` gives n float64 values, cast to Out's dtype."""
    def run(ctx):
        op_type = ctx.op.op.type
        # drawn as float64, then cast: check the larger of the two
        shape = _concrete(ctx.attr("shape"), np.dtype(np.float64), op_type)
        check_tensor_size(shape, dtype_to_numpy(ctx.attr("dtype")), op_type)
        n = int(np.prod(shape)) if shape else 1
        values = draw(n, *[float(ctx.attr(p)) for p in params], _seed(ctx))
        ctx.set_output("Out", values.reshape(shape).astype(dtype_to_numpy(ctx.attr("dtype"))))
    run.__name__ = f"cpu_{draw.__name__}"
    return run


def _cuda_random(draw, *params):
    """uniform_random / gaussian_random on the device (kernels/cuda/random.py): a
    counter-based hash of (seed, index), so a nonzero seed gives the same values each run,
    though not the CPU kernel's values (another generator)."""
    def run(ctx):
        dtype = dtype_to_numpy(ctx.attr("dtype"))
        shape = _concrete(ctx.attr("shape"), dtype, ctx.op.op.type)
        values = [float(ctx.attr(p)) for p in params]
        ctx.set_output("Out", draw(shape, *values, _seed(ctx), dtype))
    run.__name__ = f"cuda_{draw.__name__}"
    return run


def _lowered_random(filled_fn, *params):
    """uniform_random's / gaussian_random's form: ``filled_fn`` (kernels/cpu/random.py)
    draws with ``uniform`` / ``gaussian``, the kernel's own njit loop, from the seed the
    kernel takes (0: a new one from numpy's generator at this point of the run)."""
    def lowered(info):
        dtype = dtype_to_numpy(info.attr("dtype"))
        shape = info.attr("shape")
        if not numba_holds(dtype) or any(d < 0 for d in shape):
            return None
        shape = tuple(int(d) for d in shape)
        return Call(filled_fn, (), ("Out",),
                    (shape, math.prod(shape), *[float(info.attr(p)) for p in params],
                     int(info.attr("seed") or 0), dtype.type(0)))
    return lowered


def _random_op(op_type: str, params: list, comment: str, cpu_draw, cuda_draw, filled_fn,
               extra=()) -> OpDef:
    """uniform_random / gaussian_random: Out of the ``shape`` and ``dtype`` attributes
    (or ShapeTensor...), drawn with the distribution's two ``params`` attributes."""
    names = [attr.name for attr in params]
    return OpDef(
        op_type, _SHAPE_INPUTS, [OUT],
        [Attr("shape", A.LONGS, [1], "Out's shape"), *params,
         Attr("seed", A.INT, 0, "random seed; 0 = a new seed every run"),
         Attr("dtype", A.INT, _FP32, "VarType code of Out's element type",
              check=dtype_code_check("f")), *extra],
        comment=comment, infer_shape=_shape_and_dtype,
        kernels={"cpu": _cpu_random(cpu_draw, *names), "cuda": _cuda_random(cuda_draw, *names)},
        lowered=_lowered_random(filled_fn, *names), grad=NO_GRADIENT, allocates=("shape", "dtype"),
        reads_attr_tensors=("ShapeTensor", "ShapeTensorList"))


register(_random_op(
    "uniform_random",
    [Attr("min", A.FLOAT, -1.0, "lower bound"),
     Attr("max", A.FLOAT, 1.0, "upper bound (exclusive)")],
    "Out = values drawn uniformly from [min, max).", rk.uniform, crk.uniform,
    rk.uniform_filled,
    extra=[Attr("diag_num", A.INT, 0, "kept for Paddle compatibility (unused)", extra=True),
           Attr("diag_step", A.INT, 0, "kept for Paddle compatibility (unused)", extra=True),
           Attr("diag_val", A.FLOAT, 1.0, "kept for Paddle compatibility (unused)",
                extra=True)]))

register(_random_op(
    "gaussian_random",
    [Attr("mean", A.FLOAT, 0.0, "mean of the normal distribution"),
     Attr("std", A.FLOAT, 1.0, "standard deviation")],
    "Out = values drawn from a normal distribution N(mean, std^2).", rk.gaussian,
    crk.gaussian, rk.gaussian_filled))
