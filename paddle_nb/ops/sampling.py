"""Random sampling ops: bernoulli, poisson, multinomial (values drawn from distributions
a tensor gives), randint and randperm (from attributes); Fluid's slots and attributes, as
``paddle.bernoulli``, ``paddle.poisson``, ``paddle.multinomial``, ``paddle.randint``
(``randint_like``) and ``paddle.randperm`` save them. None has a gradient (Paddle's
poisson_grad is zeros and is never appended by its static backward for these programs).

- bernoulli: Out[i] = 1 with probability X[i] (in [0, 1], checked), else 0; X's dtype.
- poisson: Out[i] a Poisson count with mean X[i] (>= 0, checked); X's dtype.
- multinomial: X [C] or [R, C], non-negative weights per row; Out int64 [num_samples] or
  [R, num_samples] of category indices, drawn with or without ``replacement`` (without:
  each category at most once, so num_samples may not exceed a row's nonzero weights).
- randint: int32/int64 values uniform in [low, high), of ``shape`` (or the shape a
  ShapeTensor / ShapeTensorList gives at run time).
- randperm: a random ordering of 0..n-1 (int32, int64, float32 or float64).

Paddle's random numbers cannot be matched value for value; these match its distributions.
Every draw is counter-based (kernels/cpu/sampling.py), so the CPU and CUDA give the same
values for the same seed. randint and randperm take the ``seed`` attribute; the others have
no seed attribute in Fluid. Without one (or with seed 0) an op draws with a seed made from
the program's ``random_seed`` and the op's output names, so a seeded program gives
the same values every run, or, when the program's random_seed is 0 too, with a new seed
every run (``op_seed``).
"""
from __future__ import annotations

import math
import zlib

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.framework_pb2 import VarType
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core.limits import check_tensor_size
from ..kernels.cpu import sampling as SK
from ..kernels.cpu.random import fresh_seed
from ..kernels.cuda import sampling as SC
from ..kernels.lowered import Call
from . import arrays
from .batch_norm import require_float
from .common import FLOAT_TYPES, OUT, X, dtype_code_check, dtype_to_numpy


def program_seed(pop) -> int:
    """The seed of an op (a PreparedOp) with no seed of its own, from the program's
    ``random_seed`` mixed with the op's block and output names (so two such ops draw
    differently and a run draws what the last run drew); 0 when that is 0 too. Names, not
    the op's index: Executor.run's rewritten copy of a program (fc fused) numbers the ops
    otherwise than the program as written, which stepping and pd.CompiledProgram run."""
    base = getattr(getattr(pop, "program", None), "random_seed", 0)
    if not base:
        return 0
    block = pop.where.rsplit(" > op ", 1)[0]
    names = ",".join(pop.op.output_arg_names)
    return zlib.crc32(f"{base}:{block}:{pop.op.type}:{names}".encode()) + 1


def fixed_seed(pop, attrs) -> int:
    """The seed an op draws with when it is fixed (the ``seed`` attribute of randint and
    randperm, else program_seed), 0 when the op takes a new one every run."""
    seed = int(attrs.get("seed") or 0)
    return seed & (2**63 - 1) if seed else program_seed(pop)


def op_seed(ctx) -> int:
    """The seed of an op with no seed of its own: program_seed's, else a new one every
    run from numpy's generator (kernels/cpu/random.fresh_seed)."""
    return program_seed(ctx.op) or fresh_seed()


def attr_seed(ctx) -> int:
    """The ``seed`` attribute; 0 means op_seed's."""
    seed = int(ctx.attr("seed") or 0)
    return seed & (2**63 - 1) if seed else op_seed(ctx)


# --- in a compiled block (kernels/lowered.py) ----------------------------------------------
# Each form calls the kernel's own njit loop (kernels/cpu/sampling.py) with the seed the
# kernel takes: fixed_seed's, a constant of the compiled code (so a compiled program reads
# the program's random_seed when it is compiled, as it reads attributes), or 0: a new one
# from numpy's generator at the op's point of the run, as the interpreter draws it.
def _seed_of(info) -> int:
    return fixed_seed(info.pop, info.pop.attrs)


def _float_x(info) -> bool:
    return info.dtype("X").name in FLOAT_TYPES


def _lowered_draw_each(drawn):
    def lowered(info):
        return Call(drawn, ("X",), ("Out",), (_seed_of(info),)) if _float_x(info) else None
    return lowered


def _host_values(x) -> np.ndarray:
    return arrays.host(x)


def _check_range(x, low, high, op_type, what):
    """The op's values must be in [low, high] (NaN refused): a clear error, before any draw."""
    v = _host_values(x)
    bad = ~((v >= low) & (v <= high))
    if bad.any():
        pos = tuple(int(i) for i in np.argwhere(bad)[0])
        raise ValueError(f"{op_type}: slot X: {what} must be in [{low}, {high}]; expected "
                         f"values in that range, given X{list(pos)} = {v[pos]}")


# --- bernoulli, poisson: one draw per element ------------------------------------------------
def _same_as_x(ctx):
    require_float(ctx, "X")
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _draw_each(op_type: str, high: float, what: str, on_device, on_host):
    """The kernel of an op drawing one value per element of X, each X in [0, high]:
    ``on_device(x, seed)`` gives Out on the device; ``on_host(x_flat, seed, out_flat)``
    fills it on the host."""
    def run(ctx):
        x = ctx.input("X")
        _check_range(x, 0.0, high, op_type, what)
        seed = op_seed(ctx)
        if arrays.on_device(x):
            ctx.set_output("Out", on_device(x, seed))
            return
        out = np.empty(x.shape, x.dtype)
        on_host(np.ascontiguousarray(x).reshape(-1), np.uint64(seed), out.reshape(-1))
        ctx.set_output("Out", out)
    return run


_bernoulli = _draw_each("bernoulli", 1.0, "each probability", SC.bernoulli, SK.bernoulli)
_poisson = _draw_each("poisson", np.inf, "each mean", SC.poisson, SK.poisson)


register(OpDef(
    "bernoulli", [X], [OUT], [],
    comment="Out[i] = 1 with probability X[i], else 0 (X in [0, 1]).",
    infer_shape=_same_as_x, kernels={"cpu": _bernoulli, "cuda": _bernoulli},
    lowered=_lowered_draw_each(SK.bernoulli_drawn), grad=NO_GRADIENT))

register(OpDef(
    "poisson", [X], [OUT], [],
    comment="Out[i] = a count drawn from the Poisson distribution with mean X[i] >= 0.",
    infer_shape=_same_as_x, kernels={"cpu": _poisson, "cuda": _poisson},
    lowered=_lowered_draw_each(SK.poisson_drawn), grad=NO_GRADIENT))


# --- multinomial ---------------------------------------------------------------------------
def _multinomial_infer(ctx):
    require_float(ctx, "X")
    shape = ctx.shape("X")
    if len(shape) not in (1, 2):
        ctx.fail("multinomial takes weights [C] or rows of weights [R, C]", slot="X",
                 expected="rank 1 or 2", given=ctx.describe_input("X"))
    samples = ctx.attr("num_samples")
    if not isinstance(samples, int) or samples < 1:
        ctx.fail("num_samples must be positive", expected="num_samples >= 1",
                 given=f"num_samples={samples!r}")
    if not ctx.attr("replacement") and shape[-1] >= 0 and samples > shape[-1]:
        ctx.fail("without replacement each category is drawn at most once", slot="X",
                 expected=f"num_samples <= {shape[-1]} categories",
                 given=f"num_samples={samples}")
    ctx.set_output("Out", list(shape[:-1]) + [samples], VarType.INT64)


def _multinomial(ctx):
    x = ctx.input("X")
    samples, replacement = int(ctx.attr("num_samples")), bool(ctx.attr("replacement"))
    _check_range(x, 0.0, np.inf, "multinomial", "each weight")
    v = _host_values(x)
    rows = v.reshape((-1, v.shape[-1]))
    nonzero = (rows > 0).sum(axis=1)
    if rows.shape[1] and (nonzero == 0).any():
        raise ValueError("multinomial: slot X: a row of weights is all zeros; expected "
                         "some positive weight in each row")
    if not replacement and (nonzero < samples).any():
        raise ValueError(f"multinomial: slot X: without replacement a row needs as many "
                         f"positive weights as num_samples; expected >= {samples}, given a "
                         f"row with {int(nonzero.min())}")
    seed = op_seed(ctx)
    out_shape = tuple(int(d) for d in x.shape)[:-1] + (samples,)
    if arrays.on_device(x):
        ctx.set_output("Out", SC.multinomial(x.reshape(rows.shape), samples, replacement,
                                             seed).reshape(out_shape))
        return
    out = np.empty((rows.shape[0], samples), np.int64)
    SK.multinomial(np.ascontiguousarray(rows), samples, replacement, np.uint64(seed), out)
    ctx.set_output("Out", out.reshape(out_shape))


def _lowered_multinomial(info):
    if not _float_x(info) or not info.shape("X")[-1] > 0:
        return None
    return Call(SK.multinomial_drawn, ("X",), ("Out",),
                (int(info.attr("num_samples")), bool(info.attr("replacement")), _seed_of(info)))


register(OpDef(
    "multinomial", [X], [OUT],
    [Attr("num_samples", A.INT, 1, "how many categories to draw per row"),
     Attr("replacement", A.BOOLEAN, False, "draw with replacement (a category may repeat)")],
    comment="Out = num_samples category indices per row, drawn with the (unnormalised) "
            "weights X.",
    infer_shape=_multinomial_infer, kernels={"cpu": _multinomial, "cuda": _multinomial},
    lowered=_lowered_multinomial, grad=NO_GRADIENT))


# --- randint, randperm ---------------------------------------------------------------------
_SHAPE_INPUTS = [Slot("ShapeTensor", "shape as a 1-D int tensor", dispensable=True),
                 Slot("ShapeTensorList", "shape as 1-element int tensors", dispensable=True,
                      duplicable=True)]


def _randint_infer(ctx):
    low, high = ctx.attr("low"), ctx.attr("high")
    if not high > low:
        ctx.fail("randint draws from [low, high): high must exceed low",
                 expected="low < high", given=f"low={low}, high={high}")
    if ctx.attr("dtype") not in (VarType.INT32, VarType.INT64):
        ctx.fail("randint makes int32 or int64 values", expected="dtype int32 or int64",
                 given=f"dtype={dtypes.name(ctx.attr('dtype'))}")
    if ctx.has_input("ShapeTensor") and len(ctx.shape("ShapeTensor")) != 1:
        ctx.fail("ShapeTensor holds one int per dim of Out", slot="ShapeTensor",
                 expected="a 1-D int tensor", given=ctx.describe_input("ShapeTensor"))
    ctx.set_output("Out", ctx.int_list_attr("shape"), ctx.attr("dtype"))


def _randint(ctx):
    shape = tuple(int(d) for d in ctx.attr("shape") or [])
    if any(d < 0 for d in shape):
        raise ValueError(f"randint: shape {list(shape)} has a negative dimension")
    dtype = dtype_to_numpy(ctx.attr("dtype"))
    check_tensor_size(shape, dtype, "randint")
    low, high, seed = int(ctx.attr("low")), int(ctx.attr("high")), attr_seed(ctx)
    if ctx.place.kind == "cuda":
        ctx.set_output("Out", SC.randint(shape, low, high, seed, dtype))
        return
    out = np.empty(shape, dtype)
    SK.randint(np.int64(low), np.int64(high), np.uint64(seed), out.reshape(-1))
    ctx.set_output("Out", out)


def _lowered_randint(info):
    shape = tuple(int(d) for d in info.attr("shape") or [])
    if any(d < 0 for d in shape):
        return None
    return Call(SK.randint_drawn, (), ("Out",),
                (shape, math.prod(shape), int(info.attr("low")), int(info.attr("high")),
                 _seed_of(info), dtype_to_numpy(info.attr("dtype")).type(0)))


register(OpDef(
    "randint", _SHAPE_INPUTS, [OUT],
    [Attr("low", A.INT, 0, "the smallest value drawn"),
     Attr("high", A.INT, 0, "one past the largest value drawn"),
     Attr("shape", A.LONGS, [], "Out's shape"),
     Attr("dtype", A.INT, VarType.INT64, "VarType code of Out's element type (int32, int64)",
          check=dtype_code_check("i")),
     Attr("seed", A.INT, 0, "random seed; 0 = a new seed every run")],
    comment="Out = integers drawn uniformly from [low, high).",
    infer_shape=_randint_infer, kernels={"cpu": _randint, "cuda": _randint},
    lowered=_lowered_randint, grad=NO_GRADIENT, allocates=("shape", "dtype"),
    reads_attr_tensors=("ShapeTensor", "ShapeTensorList")))

_PERM_DTYPES = (VarType.INT32, VarType.INT64, VarType.FP32, VarType.FP64)


def _randperm_infer(ctx):
    n = ctx.attr("n")
    if not isinstance(n, int) or n < 0:
        ctx.fail("randperm orders 0..n-1: n must be >= 0", expected="n >= 0",
                 given=f"n={n!r}")
    if ctx.attr("dtype") not in _PERM_DTYPES:
        ctx.fail("randperm makes int32, int64, float32 or float64 values",
                 expected="one of those dtypes", given=f"dtype={dtypes.name(ctx.attr('dtype'))}")
    if ctx.attr("dtype") in (VarType.FP32, VarType.FP64) and n > 2**24:
        ctx.fail("float values above 2**24 are not exact integers", expected="n <= 2**24 "
                 "for a float dtype", given=f"n={n}")
    ctx.set_output("Out", [n], ctx.attr("dtype"))


def _randperm(ctx):
    n, dtype, seed = int(ctx.attr("n")), dtype_to_numpy(ctx.attr("dtype")), attr_seed(ctx)
    check_tensor_size((n,), dtype, "randperm")
    if ctx.place.kind == "cuda":
        ctx.set_output("Out", SC.randperm(n, seed, dtype))
        return
    out = np.empty(n, dtype)
    SK.randperm_into(np.uint64(seed), out)
    ctx.set_output("Out", out)


def _lowered_randperm(info):
    return Call(SK.randperm_drawn, (), ("Out",),
                (int(info.attr("n")), _seed_of(info), dtype_to_numpy(info.attr("dtype")).type(0)))


register(OpDef(
    "randperm", [], [OUT],
    [Attr("n", A.INT, 1, "how many values: Out is 0..n-1 in a random order"),
     Attr("dtype", A.INT, VarType.INT64, "VarType code of Out's element type"),
     Attr("seed", A.INT, 0, "random seed; 0 = a new seed every run")],
    comment="Out = 0, 1, ..., n-1 in a random order.",
    infer_shape=_randperm_infer, kernels={"cpu": _randperm, "cuda": _randperm},
    lowered=_lowered_randperm, grad=NO_GRADIENT))
