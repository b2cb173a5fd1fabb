"""argsort: the values of X sorted along an axis and where each came from, and its gradient
(Fluid's slots and attributes, as ``paddle.argsort`` and ``paddle.sort`` save them: both
are this one op; ``sort`` returns Out, ``argsort`` returns Indices).

A sort is a top-k that keeps every value, so the kernel is top_k_v2's (ops/top_k.py): the
axis moved last (the places' ``rows``), ``top_k_rows`` with k = the whole row, and for
the gradient ``put_along_rows``, which puts each dOut back at the position Indices names
(checked first, as every position read from a tensor: kernels/check.py).

Order, as Paddle's CPU kernel: ascending puts NaN last, ``descending`` puts NaN first;
equal values keep the order of their positions (ties by position). Paddle 2.6.2 sorts each
row with ``std::sort``, which keeps that order only for rows of up to 16 values (measured:
longer rows may list ties in another order); Out is the same either way, Indices may
differ between ties there. 2.6.2 has no ``stable`` attribute.

In a compiled block: top_k_v2's forms (ops/top_k.py) with k the whole axis.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from . import arrays
from .common import X
from .indices import _axis_in
from .top_k import SORTABLE, lowered_first_k, lowered_put_back, set_first_k
from ..backends import CPU, CUDA

def _argsort_infer(ctx):
    if dtypes.name(ctx.dtype("X")) not in SORTABLE:
        ctx.fail("argsort needs int32, int64, float32 or float64 elements (Paddle's CPU "
                 "kernels)", slot="X", expected="one of those", given=ctx.describe_input("X"))
    shape = ctx.shape("X")
    _axis_in(ctx, ctx.attr("axis"), len(shape))        # a 0-d X takes axis 0 or -1
    ctx.set_output("Out", shape, ctx.dtype("X"))
    ctx.set_output("Indices", shape, dtypes.to_code("int64"))


def _argsort(place):
    def run(ctx):
        x = ctx.input("X")
        if x.ndim == 0:                      # one value: itself, from position 0
            ctx.set_output("Out", arrays.copy(x))
            ctx.set_output("Indices", arrays.full((), 0, np.int64, like=x))
            return
        axis = ctx.attr("axis") % x.ndim
        set_first_k(ctx, place, x, axis, int(x.shape[axis]), ctx.attr("descending"))
    return run


def _argsort_grad(place):
    """dX: each dOut put back where its value came from (the position Indices names)."""
    def run(ctx):
        x, indices, dout = ctx.input("X"), ctx.input("Indices"), ctx.input("Out@GRAD")
        dout = arrays.astype(dout, x.dtype)
        if x.ndim == 0:
            ctx.set_output("X@GRAD", arrays.copy(dout).reshape(()))
            return
        axis = ctx.attr("axis") % x.ndim
        n = int(x.shape[axis])
        check.indices(indices, n, slot="Indices", what="position",
                      counted=f"X's axis {axis} has {n} entries")
        dx = place.put_along_rows(n, place.rows(indices, axis), place.rows(dout, axis))
        ctx.set_output("X@GRAD", place.unrows(dx, tuple(int(d) for d in x.shape), axis))
    return run


def _argsort_grad_infer(ctx):
    """Indices and dOut have X's shape (a sort keeps every value); dX has it too."""
    xs = ctx.shape("X")
    _axis_in(ctx, ctx.attr("axis"), len(xs))
    ctx.require_dtype("Indices", "int")
    ids = ctx.shape("Indices")
    if len(ids) != len(xs) or any(a >= 0 and b >= 0 and a != b for a, b in zip(ids, xs)):
        ctx.fail("Indices must have X's shape", slot="Indices", expected=str(xs),
                 given=ctx.describe_input("Indices"))
    if ctx.has_value("Out@GRAD"):
        ctx.require_gradient_fits("Out", want=xs)
    ctx.set_output("X@GRAD", xs, ctx.dtype("X"))


register(OpDef(
    "argsort", [X],
    [Slot("Out", "X sorted along axis"),
     Slot("Indices", "the position along axis each value of Out comes from (int64)")],
    [Attr("axis", A.INT, -1, "the axis sorted (negative: from the end)"),
     Attr("descending", A.BOOLEAN, False, "largest first (False: smallest first)")],
    comment="Out, Indices = X sorted along axis (ties in the order of their positions) "
            "and where each value came from.",
    infer_shape=_argsort_infer, kernels={"cpu": _argsort(CPU), "cuda": _argsort(CUDA)},
    lowered=lowered_first_k(lambda info: -1, "descending"),
    grad=Grad(reads=["X", "Indices"], grads_of=["Out"], writes=["X"],
              kernel=_argsort_grad(CPU), cuda_kernel=_argsort_grad(CUDA),
              infer_shape=_argsort_grad_infer, lowered=lowered_put_back)))
