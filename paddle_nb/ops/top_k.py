"""top_k_v2: the k largest (or smallest) values along an axis and where they are, and its
gradient (Fluid's slots and attributes, as ``paddle.topk`` saves them).

The axis is moved last (the places' ``rows``) so one primitive serves every axis:
``top_k_rows`` on each (rows, n) matrix, and for the gradient ``put_along_rows``, which
adds each dOut at the position Indices names (checked first, as every position read from
a tensor: kernels/check.py). Order, as Paddle's CPU kernel: NaN counts as the largest
value; equal values come in the order of their positions. The result is always sorted
(``sorted=False`` lets Paddle return any order; sorted is one of them).

In a compiled block the op is kernels/cpu/sorting.top_k_along (the interpreter's
``top_k_rows`` loop, with the axis moved inside it) and its gradient
kernels/cpu/indexing.put_along (take_along_axis' gradient: range-checked, each dOut added
at its position in Indices' order, as the interpreter's ``put_along_rows``).
"""
from __future__ import annotations

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import indexing as INDEXING
from ..kernels.cpu import sorting as KSORT
from ..kernels.lowered import Call
from . import arrays
from .common import OUT, X
from .indices import _axis_in
from ..backends import CPU, CUDA


def _top_k_infer(ctx):
    if dtypes.name(ctx.dtype("X")) not in ("int32", "int64", "float32", "float64"):
        ctx.fail("top_k_v2 needs int32, int64, float32 or float64 elements (Paddle's CPU "
                 "kernels)", slot="X", expected="one of those", given=ctx.describe_input("X"))
    xs = ctx.require_rank("X", 1)
    axis = _axis_in(ctx, ctx.attr("axis"), len(xs))
    out = list(xs)
    if ctx.attr_from_tensor("k"):                # K's value: known when it runs
        out[axis] = -1
    else:
        k = ctx.attr("k")
        if k < 1 or 0 <= xs[axis] < k:
            ctx.fail("k must be between 1 and the size of the axis", slot="X",
                     expected=f"1 <= k <= {xs[axis]} (X's axis {axis})", given=f"k={k}")
        out[axis] = k
    ctx.set_output("Out", out, ctx.dtype("X"))
    ctx.set_output("Indices", out, dtypes.to_code("int64"))


def _k(ctx, n: int) -> int:
    """k: the attribute (the K tensor's value where one is given), checked."""
    k = int(ctx.attr("k"))
    if not 1 <= k <= n:
        raise ValueError(f"top_k_v2: k={k} is out of range: expected 1 <= k <= {n} (the "
                         f"size of X's axis)")
    return k


def set_first_k(ctx, place, x, axis: int, k: int, largest: bool) -> None:
    """Out, the k largest (smallest) values of each line of X along ``axis`` in order, and
    Indices, their positions there (top_k_v2; argsort with k the whole line)."""
    values, positions = place.top_k_rows(place.rows(x, axis), k, largest)
    shape = tuple(k if i == axis else int(d) for i, d in enumerate(x.shape))
    ctx.set_output("Out", place.unrows(values, shape, axis))
    ctx.set_output("Indices", place.unrows(positions, shape, axis))


def _top_k(place):
    def run(ctx):
        x = ctx.input("X")
        axis = ctx.attr("axis") % x.ndim
        set_first_k(ctx, place, x, axis, _k(ctx, int(x.shape[axis])), ctx.attr("largest"))
    return run


def _top_k_grad(place):
    """dX: zeros with each dOut at the position Indices names along axis."""
    def run(ctx):
        x, indices, dout = ctx.input("X"), ctx.input("Indices"), ctx.input("Out@GRAD")
        axis = ctx.attr("axis") % x.ndim
        n = int(x.shape[axis])
        check.indices(indices, n, slot="Indices", what="position",
                      counted=f"X's axis {axis} has {n} entries")
        dx = place.put_along_rows(n, place.rows(indices, axis),
                                  place.rows(arrays.astype(dout, x.dtype), axis))
        ctx.set_output("X@GRAD", place.unrows(dx, tuple(x.shape), axis))
    return run


# --- in a compiled block (kernels/lowered.py) -----------------------------------------------
SORTABLE = ("int32", "int64", "float32", "float64")     # Paddle's CPU kernels' types


def lowered_first_k(k_of, largest_attr: str):
    """The form of set_first_k for top_k_v2 and argsort: ``k_of(info)`` the k (-1: the
    whole axis, whatever its size), ``largest_attr`` the attribute saying largest first."""
    def lowered(info):
        rank = info.ndim("X")
        if info.dtype("X").name not in SORTABLE or rank == 0:   # (0-d argsort: a copy)
            return None
        axis = info.attr("axis") % rank
        order = tuple([d for d in range(rank) if d != axis] + [axis])
        inverse = tuple(order.index(d) for d in range(rank))
        return Call(KSORT.top_k_along, ("X",), ("Out", "Indices"),
                    (order, inverse, k_of(info), bool(info.attr(largest_attr)),
                     info.dtype("X").kind == "f"))
    return lowered


def lowered_put_back(info):
    """The gradient's form: each dOut added into zeros at the position Indices names along
    axis, for a dOut of X's dtype (the kernel casts another first)."""
    rank = info.ndim("X")
    if rank == 0 or info.ndim("Indices") != rank or \
            info.dtype("Out@GRAD") != info.dtype("X") or \
            info.dtype("X").name not in SORTABLE:
        return None
    return Call(INDEXING.put_along, ("X", "Indices", "Out@GRAD"), ("X@GRAD",),
                (info.attr("axis") % rank,))


def _top_k_grad_infer(ctx):
    """dOut has Indices' shape (Out's); dX has X's."""
    xs, ids = ctx.shape("X"), ctx.shape("Indices")
    axis = _axis_in(ctx, ctx.attr("axis"), len(xs))
    if len(ids) != len(xs) or any(a >= 0 and b >= 0 and a != b
                                  for i, (a, b) in enumerate(zip(ids, xs)) if i != axis):
        ctx.fail("Indices must have X's shape but along axis", slot="Indices",
                 expected=f"{xs} with k along axis {axis}", given=ctx.describe_input("Indices"))
    if ctx.has_value("Out@GRAD"):
        ctx.require_gradient_fits("Out", want=ids)
    ctx.set_output("X@GRAD", xs, ctx.dtype("X"))


register(OpDef(
    "top_k_v2", [X, Slot("K", "k as a 1-element tensor (instead of the k attribute)",
                         dispensable=True)],
    [OUT, Slot("Indices", "where each value of Out is along axis (int64)")],
    [Attr("k", A.INT, 1, "how many values to keep"),
     Attr("axis", A.INT, -1, "the axis searched"),
     Attr("largest", A.BOOLEAN, True, "the largest values (False: the smallest)"),
     Attr("sorted", A.BOOLEAN, True, "sort the values (they always are here)")],
    comment="Out, Indices = the k largest (or smallest) values of X along axis, in order, "
            "and their positions.",
    infer_shape=_top_k_infer, kernels={"cpu": _top_k(CPU), "cuda": _top_k(CUDA)},
    lowered=lowered_first_k(lambda info: int(info.attr("k")), "largest"),
    grad=Grad(reads=["X", "Indices", "K"], grads_of=["Out"], writes=["X"],
              kernel=_top_k_grad(CPU), cuda_kernel=_top_k_grad(CUDA),
              infer_shape=_top_k_grad_infer, lowered=lowered_put_back),
    reads_attr_tensors=("K",)))
