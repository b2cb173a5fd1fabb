"""Counting: ``histogram`` and ``bincount`` (Fluid's slots and attributes, as
``paddle.histogram`` and ``paddle.bincount`` save them; neither has a gradient).

- histogram: ``bins`` equal-width bins over [min, max] (ints in Paddle 2.6.2's op); where
  min == max (both 0 by default) the range is X's own smallest and largest value, widened
  by 1 on each side if those are equal. Values outside the range (and NaN) are not
  counted; max itself goes into the last bin. Out: int64 counts.
- bincount: Out[v] = how many elements of X (non-negative ints) equal v, or the sum of
  their Weights; Out has max(X) + 1 bins, at least ``minlength``. Out is int64 without
  Weights; with them float32 for float32 Weights and float64 otherwise (Paddle 2.6.2's
  kernel gives float64 for int Weights too).

Both count on the place that holds X (kernels/counting.py, atomic adds on CUDA). What
depends on the data is read back first: histogram's default range (two numbers) and
bincount's largest value, which decides Out's size (so X comes to the host, as
masked_select's mask does), checked before any bin is written.

In a compiled block histogram with a range given by its attributes is the CPU's counting
loop (kernels/counting.histogram_counts), the same arithmetic. With X's own range (min ==
max) it stays in the interpreter, which reads the range from the data and checks it.
bincount is the same loop too (kernels/cpu/value_sized.bincount_counts / bincount_sums),
after the interpreter's checks (a negative value, more bins than the tensor size limit)
raising first: its Out's size, X's largest value, is found on each run.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core import limits
from ..core.limits import check_tensor_size
from ..kernels import counting as K
from ..kernels.cpu import value_sized as KV
from ..kernels.lowered import Call
from . import arrays
from .common import OUT, X, build_fail, run_fail
from .matrix_products import NUMBERS
from ..backends import CPU, CUDA

COUNTERS = {CPU: K.CPU, CUDA: K.CUDA}
INTS = ("int32", "int64")


def _require(ctx, slot: str, allowed, op_type: str) -> None:
    if dtypes.name(ctx.dtype(slot)) not in allowed:
        ctx.fail(f"{op_type} takes {' or '.join(allowed)} elements in {slot} (Paddle's CPU "
                 "kernels)", slot=slot, expected="one of those", given=ctx.describe_input(slot))


# --- histogram -------------------------------------------------------------------------------
def _histogram_attrs(bins: int, lo: int, hi: int, fail) -> None:
    if bins < 1:
        fail("bins must be at least 1", expected="bins >= 1", given=f"bins={bins}")
    if hi < lo:
        fail("max must not be below min", expected="min <= max", given=f"min={lo}, max={hi}")


def _histogram_infer(ctx):
    _require(ctx, "X", NUMBERS, "histogram")
    bins = ctx.attr("bins")
    fail = build_fail(ctx)
    _histogram_attrs(bins, ctx.attr("min"), ctx.attr("max"), fail)
    check_tensor_size((bins,), np.dtype(np.int64), "histogram")
    ctx.set_output("Out", [bins], dtypes.to_code("int64"))


def _range(place, x, lo: int, hi: int) -> tuple[float, float]:
    """[lo, hi] as Paddle sets it: the attributes, or X's range where they are equal."""
    if lo == hi and int(x.size):
        every = list(range(len(x.shape)))
        lo = arrays.host_scalar(place.fold_axes(x, every, False, "min")).item()
        hi = arrays.host_scalar(place.fold_axes(x, every, False, "max")).item()
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"histogram: slot X: the range of the bins must be finite; expected "
                         f"finite values where min == max, given X's range [{lo}, {hi}]")
    return lo, hi


def _histogram(place):
    def run(ctx):
        x, bins = ctx.input("X"), ctx.attr("bins")
        fail = run_fail("histogram")
        _histogram_attrs(bins, ctx.attr("min"), ctx.attr("max"), fail)
        lo, hi = _range(place, x, ctx.attr("min"), ctx.attr("max"))
        ctx.set_output("Out", COUNTERS[place].histogram(x, lo, hi, bins))
    return run


def _lowered_histogram(info):
    """A range from the attributes (min < max) and one of Paddle's CPU types; X's own range
    (min == max) is read from the data in the interpreter."""
    lo, hi, bins = info.attr("min"), info.attr("max"), info.attr("bins")
    if lo >= hi or bins < 1 or info.dtype("X").name not in ("int32", "int64", "float32",
                                                            "float64"):
        return None
    return Call(K.histogram_counts, ("X",), ("Out",),
                K.histogram_args(info.dtype("X"), lo, hi, bins))


register(OpDef(
    "histogram", [X], [OUT],
    [Attr("bins", A.LONG, 100, "how many equal-width bins"),
     Attr("min", A.INT, 0, "the range's lower end (min == max: X's own range)"),
     Attr("max", A.INT, 0, "the range's upper end")],
    comment="Out[b] = how many elements of X fall into bin b of bins equal bins over "
            "[min, max] (int64).",
    infer_shape=_histogram_infer, kernels={"cpu": _histogram(CPU), "cuda": _histogram(CUDA)},
    lowered=_lowered_histogram, grad=NO_GRADIENT))


# --- bincount --------------------------------------------------------------------------------
WEIGHTS = Slot("Weights", "a weight per element of X (summed instead of counted)",
               dispensable=True)


def _bincount_dtype(weights_dtype) -> str:
    """Out's element type: int64 counts; float32 sums of float32 Weights; else float64."""
    if weights_dtype is None:
        return "int64"
    return "float32" if weights_dtype == "float32" else "float64"


def _bincount_infer(ctx):
    _require(ctx, "X", INTS, "bincount")
    if len(ctx.shape("X")) != 1:
        ctx.fail("bincount counts the values of a 1-D tensor", slot="X",
                 expected="a 1-D tensor", given=ctx.describe_input("X"))
    weights = None
    if ctx.has_input("Weights"):
        _require(ctx, "Weights", NUMBERS, "bincount")
        ws, xs = ctx.shape("Weights"), ctx.shape("X")
        if len(ws) != 1 or (ws[0] >= 0 and xs[0] >= 0 and ws[0] != xs[0]):
            ctx.fail("Weights holds one weight per element of X", slot="Weights",
                     expected=f"[{xs[0]}]", given=ctx.describe_input("Weights"))
        weights = dtypes.name(ctx.dtype("Weights"))
    if ctx.attr("minlength") < 0:
        ctx.fail("minlength must be >= 0", expected="minlength >= 0",
                 given=f"minlength={ctx.attr('minlength')}")
    ctx.set_output("Out", [-1], dtypes.to_code(_bincount_dtype(weights)))


def _bincount(place):
    def run(ctx):
        x = ctx.input("X")
        weights = ctx.input("Weights") if ctx.has_input("Weights") else None
        minlength = ctx.attr("minlength")
        if len(x.shape) != 1 or (weights is not None and tuple(weights.shape) != tuple(x.shape)):
            raise ValueError(f"bincount: slot X: X must be 1-D and Weights hold one weight per "
                             f"element; expected Weights of shape {list(x.shape)}, given "
                             f"X {list(x.shape)}"
                             + (f", Weights {list(weights.shape)}" if weights is not None else ""))
        if minlength < 0:
            raise ValueError(f"bincount: minlength must be >= 0; expected minlength >= 0, "
                             f"given {minlength}")
        values = arrays.host(x)            # Out's size depends on the largest value
        if values.size and values.min() < 0:
            raise ValueError(f"bincount: slot X: every element must be non-negative; expected "
                             f"values >= 0, given {int(values.min())}")
        size = max(int(values.max()) + 1 if values.size else 0, minlength)
        dtype = np.dtype(_bincount_dtype(None if weights is None else weights.dtype.name))
        check_tensor_size((size,), dtype, "bincount")
        if weights is not None:
            weights = arrays.astype(weights, dtype)
        ctx.set_output("Out", COUNTERS[place].bincount(x, weights, size, dtype))
    return run


def _lowered_bincount(info):
    """The interpreter's counting loop into Out's size worked out from X on each run
    (kernels/cpu/value_sized.py), at most the bins the tensor size limit allows."""
    minlength = info.attr("minlength")
    if info.ndim("X") != 1 or info.dtype("X").name not in INTS or minlength < 0:
        return None
    if not info.has_input("Weights"):
        return Call(KV.bincount_counts, ("X",), ("Out",),
                    (minlength, limits.MAX_TENSOR_BYTES // 8))
    if info.ndim("Weights") != 1 or info.dtype("Weights").name not in NUMBERS:
        return None
    out = np.dtype(_bincount_dtype(info.dtype("Weights").name))
    return Call(KV.bincount_sums, ("X", "Weights"), ("Out",),
                (minlength, out.type(0), limits.MAX_TENSOR_BYTES // out.itemsize))


register(OpDef(
    "bincount", [X, WEIGHTS], [OUT],
    [Attr("minlength", A.INT, 0, "Out has at least this many bins")],
    comment="Out[v] = how many elements of X equal v (or the sum of their Weights); "
            "max(X) + 1 bins, at least minlength.",
    infer_shape=_bincount_infer, kernels={"cpu": _bincount(CPU), "cuda": _bincount(CUDA)},
    lowered=_lowered_bincount, grad=NO_GRADIENT))
