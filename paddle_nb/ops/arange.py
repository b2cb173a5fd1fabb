"""range: the arithmetic progression start, start + step, ... up to end (exclusive), as
``paddle.arange`` saves it (Start, End and Step are 1-element tensors; no gradient).

Its length comes from the values, known only at run time, so the kernel works it out
(Paddle's formula, in the inputs' type) and checks the tensor's size before anything is
allocated: a step of 0, a step away from end, NaN bounds or a length of 2**40 are errors
naming the op, never a hang or an out-of-memory. Values are ``start + i * step`` on both
places (the places' ``arange``; kernels/cuda/scan.py on the device). In a compiled block
kernels/cpu/arange.py counts and fills when the block runs, with the same checks.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import dtypes
from ..core.registry import NO_GRADIENT, OpDef, Slot, register
from ..core import limits
from ..core.limits import check_tensor_size
from . import arrays
from ..kernels.cpu.arange import arange_of, range_count
from ..kernels.lowered import Call
from .common import OUT
from ..backends import CPU, CUDA

BOUNDS = ("Start", "End", "Step")
TYPES = ("int32", "int64", "float32", "float64")


def _range_infer(ctx):
    for slot in BOUNDS:
        ctx.require_one_element(slot)
        if dtypes.name(ctx.dtype(slot)) not in TYPES:
            ctx.fail("range counts in int32, int64, float32 or float64", slot=slot,
                     expected=" or ".join(TYPES), given=ctx.describe_input(slot))
        ctx.require_same_dtype(slot, "Start")
    ctx.set_output("Out", [-1], ctx.dtype("Start"))


def range_size(start, end, step) -> int:
    """How many values Paddle's range makes (numpy scalars of one type); a ValueError
    where the progression never reaches end or its bounds are not numbers."""
    if step == 0:
        raise ValueError(f"range: Step is 0, so the values never reach End ({end})")
    if (start < end and step < 0) or (start > end and step > 0):
        sign = "positive" if start < end else "negative"
        raise ValueError(f"range: Step {step} moves away from End: from Start {start} "
                         f"to End {end} the step must be {sign}")
    integer = np.dtype(type(start)).kind in "iu"
    if not integer:
        with np.errstate(all="ignore"):
            count = abs((end - start) / step)      # in the inputs' type, as Paddle's
        if not math.isfinite(count):
            raise ValueError(f"range: Start {start}, End {end}, Step {step} give no finite "
                             "number of values")
    # the count itself: kernels/cpu/arange.py, which the compiled form calls too (here
    # with no limit: check_tensor_size words the error)
    return int(range_count(start, end, step, integer, np.iinfo(np.int64).max))


def _range(place):
    def run(ctx):
        start, end, step = (arrays.host(ctx.input(s)).reshape(-1)[0] for s in BOUNDS)
        dtype = np.dtype(type(start))
        size = range_size(start, end, step)
        check_tensor_size((size,), dtype, "range")
        wide = int if dtype.kind in "iu" else float
        ctx.set_output("Out", place.arange(size, wide(start), wide(step), dtype))
    return run


def _lowered_range(info):
    """kernels/cpu/arange.arange_of: the count from the values when the block runs, at
    most the elements the tensor size limit allows (a larger one raises, and the
    interpreter's rerun words the error)."""
    dtype = info.dtype("Start")
    if dtype.name not in TYPES or any(info.dtype(s) != dtype for s in BOUNDS):
        return None
    return Call(arange_of, BOUNDS, ("Out",),
                (dtype.kind in "iu", limits.MAX_TENSOR_BYTES // dtype.itemsize))


register(OpDef(
    "range", [Slot("Start", "the first value (1 element)"),
              Slot("End", "the bound, not included (1 element)"),
              Slot("Step", "the difference between values (1 element)")], [OUT], [],
    comment="Out = [Start, Start + Step, ...] up to End (exclusive), 1-D.",
    infer_shape=_range_infer, kernels={"cpu": _range(CPU), "cuda": _range(CUDA)},
    lowered=_lowered_range,
    grad=NO_GRADIENT))
