"""kthvalue, mode and nanmedian: a value picked from each row of X by rank along an axis
(or axes), where it is, and their gradients (Fluid's slots and attributes, as
``paddle.kthvalue``, ``paddle.mode`` and ``paddle.nanmedian`` save them).

Each op sorts its rows ascending first (the axis moved last, the places' ``rows`` and
``top_k_rows``: NaN last, ties in the order of their positions), then reads each sorted row
once (kernels/order_statistics.py). The gradients put each dOut back at the position the
forward op found (the places' ``put_along_rows``).

- kthvalue: the k-th smallest (NaN counting as the largest) and its position.
- mode: the most frequent value (the smallest of equally frequent ones; each NaN counts
  once) and its last position, as Paddle's CPU kernel gives them for rows of up to 16
  values. Paddle sorts a row with ``std::sort`` and picks kthvalue with
  ``std::nth_element``, neither of which keeps ties in order: where a row holds equal
  values, the position Paddle reports may be another of them (the value is the same).
- nanmedian: the median of the values that are not NaN (the mean of the two middle ones
  for an even count; NaN for a row of NaN only), over ``axis`` (a list; empty: every
  element). MedianIndex, which only the gradient reads, holds two positions per output
  (each within the flattened reduced axes; twice the same for an odd count, -1 for none);
  the gradient gives each half of dOut (the whole for an odd count). Paddle's MedianIndex
  has a larger buffer whose first entries are these.

In a compiled block each op and gradient is one njit function (kernels/cpu/
order_statistics.py) running the interpreter's own sort and row loops, so the values and
positions are the interpreter's, bit for bit.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels import order_statistics as K
from ..kernels.cpu import order_statistics as KL
from ..kernels.lowered import Call
from . import arrays
from .common import OUT, X
from .indices import _axis_in
from ..backends import CPU, CUDA

# the element types Paddle's CPU kernels of all three are registered for
RANKABLE = ("int32", "int64", "float32", "float64")
KERNELS = {CPU: K.CPU, CUDA: K.CUDA}


def _check_dtype(ctx, op_type: str) -> None:
    if dtypes.name(ctx.dtype("X")) not in RANKABLE:
        ctx.fail(f"{op_type} needs int32, int64, float32 or float64 elements (Paddle's CPU "
                 "kernels)", slot="X", expected="one of those", given=ctx.describe_input("X"))


def _reduced_shape(shape, axes, keepdim: bool) -> list[int]:
    if keepdim:
        return [1 if i in axes else d for i, d in enumerate(shape)]
    return [d for i, d in enumerate(shape) if i not in axes]


# --- kthvalue and mode: one axis ---------------------------------------------------------
def _one_axis_infer(op_type: str):
    def infer(ctx):
        _check_dtype(ctx, op_type)
        xs = ctx.shape("X")
        axis = _axis_in(ctx, ctx.attr("axis"), len(xs))
        if op_type == "kthvalue":
            k = ctx.attr("k")
            n = xs[axis] if xs else 1
            if k < 1 or 0 <= n < k:
                ctx.fail("k must be between 1 and the size of the axis", slot="X",
                         expected=f"1 <= k <= {n} (X's axis {axis})", given=f"k={k}")
        out = _reduced_shape(xs, {axis} if xs else set(), ctx.attr("keepdim"))
        ctx.set_output("Out", out, ctx.dtype("X"))
        ctx.set_output("Indices", out, dtypes.to_code("int64"))
    return infer


def _one_axis(place, op_type: str):
    def run(ctx):
        x = ctx.input("X")
        shape = tuple(int(d) for d in x.shape)
        axis = ctx.attr("axis") % max(len(shape), 1)
        rows = place.rows(x.reshape((1,)), 0) if not shape else place.rows(x, axis)
        n = int(rows.shape[1])
        if n == 0:
            raise ValueError(f"{op_type}: slot X: the axis searched is empty; expected at "
                             f"least one value along axis {axis}, given shape {list(shape)}")
        values, positions = place.top_k_rows(rows, n, False)
        if op_type == "kthvalue":
            k = int(ctx.attr("k"))
            if not 1 <= k <= n:
                raise ValueError(f"kthvalue: k={k} is out of range: expected 1 <= k <= {n} "
                                 f"(the size of X's axis)")
            out, index = KERNELS[place].kth(values, positions, k)
        else:
            out, index = KERNELS[place].mode(values, positions)
        out_shape = tuple(_reduced_shape(shape, {axis} if shape else set(),
                                         ctx.attr("keepdim")))
        ctx.set_output("Out", out.reshape(out_shape))
        ctx.set_output("Indices", index.reshape(out_shape))
    return run


def _one_axis_grad(place, op_type: str):
    """dX: zeros with each dOut at the position Indices names along axis."""
    def run(ctx):
        x, indices, dout = ctx.input("X"), ctx.input("Indices"), ctx.input("Out@GRAD")
        shape = tuple(int(d) for d in x.shape)
        dout = arrays.astype(dout, x.dtype)
        if not shape:
            ctx.set_output("X@GRAD", arrays.copy(dout).reshape(()))
            return
        axis = ctx.attr("axis") % len(shape)
        n, count = shape[axis], int(np.prod(shape, dtype=np.int64)) // max(shape[axis], 1)
        if int(indices.size) != count or int(dout.size) != count:
            raise ValueError(f"{op_type}: slots Indices and Out@GRAD: expected {count} "
                             f"values (one per row of X along axis {axis}), given "
                             f"{int(indices.size)} and {int(dout.size)}")
        check.indices(indices, n, slot="Indices", what="position",
                      counted=f"X's axis {axis} has {n} entries")
        dx = place.put_along_rows(n, indices.reshape((count, 1)), dout.reshape((count, 1)))
        ctx.set_output("X@GRAD", place.unrows(dx, shape, axis))
    return run


# --- in a compiled block (kernels/lowered.py) ---------------------------------------------
def _order(rank: int, axes: list[int]) -> tuple[tuple, tuple]:
    """(the kept dims then ``axes``, its inverse permutation)."""
    order = tuple([d for d in range(rank) if d not in axes] + list(axes))
    return order, tuple(order.index(d) for d in range(rank))


def _picked_form(info, fn, slots: tuple, axes: list[int], which: int, k: int):
    """X of rank >= 1 and a dtype of Paddle's kernels (a 0-D X is one row of one value:
    left to the interpreter)."""
    rank = info.ndim("X")
    if rank == 0 or info.dtype("X").name not in RANKABLE:
        return None
    order, _ = _order(rank, axes)
    return Call(fn, ("X",), slots,
                (order, rank - len(axes), bool(info.attr("keepdim")), info.ndim("Out"),
                 which, k, info.dtype("X").kind == "f"))


def _lowered_one_axis(op_type: str):
    which = K.KTH if op_type == "kthvalue" else K.MODE

    def lowered(info):
        rank = max(info.ndim("X"), 1)
        k = int(info.attr("k")) if op_type == "kthvalue" else 0
        return _picked_form(info, KL.picked_with_indices, ("Out", "Indices"),
                            [info.attr("axis") % rank], which, k)
    return lowered


def _lowered_put_back(info, axes: list[int], per_row: int, half: bool):
    """The gradients: float X, dOut of X's dtype (the kernels cast another first)."""
    rank = info.ndim("X")
    if rank == 0 or info.dtype("X").kind != "f" or \
            info.dtype("Out@GRAD") != info.dtype("X"):
        return None
    order, inverse = _order(rank, axes)
    return Call(KL.put_back, ("X", "Indices" if per_row == 1 else "MedianIndex", "Out@GRAD"),
                ("X@GRAD",), (order, inverse, rank - len(axes), per_row, half))


def _lowered_one_axis_grad(info):
    return _lowered_put_back(info, [info.attr("axis") % max(info.ndim("X"), 1)], 1, False)


def _one_axis_op(op_type: str, attrs: list, comment: str):
    register(OpDef(
        op_type, [X],
        [OUT, Slot("Indices", "where each value of Out is along axis (int64)")], attrs,
        comment=comment, infer_shape=_one_axis_infer(op_type),
        kernels={"cpu": _one_axis(CPU, op_type), "cuda": _one_axis(CUDA, op_type)},
        lowered=_lowered_one_axis(op_type),
        grad=Grad(reads=["X", "Indices"], grads_of=["Out"], writes=["X"],
                  kernel=_one_axis_grad(CPU, op_type + "_grad"),
                  cuda_kernel=_one_axis_grad(CUDA, op_type + "_grad"),
                  lowered=_lowered_one_axis_grad)))


AXIS = Attr("axis", A.INT, -1, "the axis searched (negative: from the end)")
KEEPDIM = Attr("keepdim", A.BOOLEAN, False, "keep the searched axis as a dim of 1")
_one_axis_op("kthvalue", [Attr("k", A.INT, 1, "which smallest value (1: the smallest)"),
                          AXIS, KEEPDIM],
             "Out, Indices = the k-th smallest value of X along axis and its position.")
_one_axis_op("mode", [AXIS, KEEPDIM],
             "Out, Indices = the most frequent value of X along axis (the smallest of "
             "equally frequent ones) and its last position.")


# --- nanmedian: a list of axes -------------------------------------------------------------
def _axes(ctx, rank: int) -> list[int]:
    """The reduced axes, each in range and once, ascending (empty: all of them)."""
    axes = [int(a) for a in ctx.attr("axis") or []]
    for a in axes:
        if not -max(rank, 1) <= a < max(rank, 1):
            raise ValueError(f"nanmedian: attribute axis: {a} is out of range; expected "
                             f"axes in [{-rank}, {rank - 1}], given axis={axes}")
    chosen = sorted({a % max(rank, 1) for a in axes}) if axes else list(range(rank))
    if len(chosen) != len(axes) and axes:
        raise ValueError(f"nanmedian: attribute axis: each axis once; given axis={axes}")
    return [a for a in chosen if a < rank]


def _nanmedian_infer(ctx):
    _check_dtype(ctx, "nanmedian")
    xs = ctx.shape("X")
    try:
        axes = set(_axes(ctx, len(xs)))
    except ValueError as e:
        ctx.fail(str(e), slot="X")
    out = _reduced_shape(xs, axes, ctx.attr("keepdim"))
    ctx.set_output("Out", out, ctx.dtype("X"))
    count = 1
    for d in out:
        count = -1 if d < 0 or count < 0 else count * d
    ctx.set_output("MedianIndex", [-1 if count < 0 else 2 * count], dtypes.to_code("int64"))


def _median_rows(place, x, axes):
    """x as (kept elements, reduced elements) rows: the reduced axes moved last."""
    shape = tuple(int(d) for d in x.shape)
    kept = [i for i in range(len(shape)) if i not in axes]
    m = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    rows = int(np.prod([shape[k] for k in kept], dtype=np.int64))
    if kept and axes and kept + axes != list(range(len(shape))):
        x = arrays.transpose(x, kept + axes)
    return x.reshape((rows, m)), kept


def _nanmedian(place):
    def run(ctx):
        x = ctx.input("X")
        axes = _axes(ctx, x.ndim)
        rows, _ = _median_rows(place, x, axes)
        if int(rows.shape[1]) == 0:
            raise ValueError(f"nanmedian: slot X: the reduced axes are empty; expected at "
                             f"least one value, given shape {list(x.shape)}")
        values, positions = place.top_k_rows(rows, int(rows.shape[1]), False)
        out, index = KERNELS[place].nanmedian(values, positions)
        shape = tuple(_reduced_shape(tuple(int(d) for d in x.shape), set(axes),
                                     ctx.attr("keepdim")))
        ctx.set_output("Out", out.reshape(shape))
        ctx.set_output("MedianIndex", index)
    return run


def _nanmedian_grad(place):
    """dX: half of dOut at each of the two middle positions (all of it at the one middle
    position of an odd count; none for a row of NaN), the reduced axes put back."""
    def run(ctx):
        x, index, dout = ctx.input("X"), ctx.input("MedianIndex"), ctx.input("Out@GRAD")
        shape = tuple(int(d) for d in x.shape)
        axes = _axes(ctx, len(shape))
        kept = [i for i in range(len(shape)) if i not in axes]
        m = int(np.prod([shape[a] for a in axes], dtype=np.int64))
        rows = int(np.prod([shape[k] for k in kept], dtype=np.int64))
        if int(index.size) != 2 * rows or int(dout.size) != rows:
            raise ValueError(f"nanmedian_grad: slots MedianIndex and Out@GRAD: expected "
                             f"{2 * rows} and {rows} values, given {int(index.size)} and "
                             f"{int(dout.size)}")
        check.indices(index, m, slot="MedianIndex", what="position", ignore=-1,
                      counted=f"the reduced axes hold {m} values")
        half = place.scale(arrays.astype(dout, x.dtype).reshape((rows, 1)), 0.5)
        halves = place.broadcast_to(half, (rows, 2))
        dx = place.put_along_rows(m, index.reshape((rows, 2)), halves, ignore=-1)
        moved = tuple(shape[k] for k in kept) + tuple(shape[a] for a in axes)
        dx = dx.reshape(moved)
        if kept and axes and kept + axes != list(range(len(shape))):
            dx = arrays.transpose(dx, list(np.argsort(kept + axes)))
        ctx.set_output("X@GRAD", dx.reshape(shape))
    return run


def _listed_axes(info) -> list[int] | None:
    """nanmedian's reduced axes as the kernel reads them (``_axes`` reads only ``attr``,
    which an OpInfo has), or None where it refuses them."""
    try:
        return _axes(info, info.ndim("X"))
    except ValueError:
        return None


def _lowered_nanmedian(info):
    axes = _listed_axes(info)
    if axes is None:
        return None
    return _picked_form(info, KL.picked, ("Out", "MedianIndex"), axes, K.NANMEDIAN, 0)


def _lowered_nanmedian_grad(info):
    axes = _listed_axes(info)
    return None if axes is None else _lowered_put_back(info, axes, 2, True)


register(OpDef(
    "nanmedian", [X],
    [OUT, Slot("MedianIndex", "the two middle positions of each median, within the reduced "
                              "axes flattened (int64; for the gradient)", intermediate=True)],
    [Attr("axis", A.INTS, [], "the axes reduced (empty: every axis)"),
     Attr("keepdim", A.BOOLEAN, True, "keep each reduced axis as a dim of 1")],
    comment="Out = the median of X's values that are not NaN over axis (the mean of the two "
            "middle ones for an even count).",
    infer_shape=_nanmedian_infer,
    kernels={"cpu": _nanmedian(CPU), "cuda": _nanmedian(CUDA)},
    lowered=_lowered_nanmedian,
    grad=Grad(reads=["X", "MedianIndex"], grads_of=["Out"], writes=["X"],
              kernel=_nanmedian_grad(CPU), cuda_kernel=_nanmedian_grad(CUDA),
              lowered=_lowered_nanmedian_grad)))
