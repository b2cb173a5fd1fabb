"""Diagonals: ``diagonal``, ``trace``, ``diag_v2`` and ``eye``, and the gradients of the
first three (Fluid's slots and attributes, as ``paddle.diagonal``, ``paddle.trace``,
``paddle.diag`` and ``paddle.eye`` save them).

A diagonal at ``offset`` of an R x C matrix is the elements (i + max(0, -offset),
i + max(0, offset)), as many as fit (none where the offset is past the edge). Each op
finds their positions in the matrix flattened, on the host (a few integers, moved to the
device on CUDA), and then only moves elements with the places' primitives:

- diagonal: axis1 and axis2 moved last, the matrices flattened to rows, a ``take`` of the
  positions; Out has the other axes, then the diagonal. Its gradient is the ``scatter_add``
  of dOut back to those positions (zeros elsewhere).
- trace: the sum of that diagonal (0 where it is empty); its gradient is dOut spread along
  the diagonal.
- diag_v2: a vector (or a 0-d value) becomes a square matrix with it on the diagonal and
  ``padding_value`` elsewhere (``scatter_rows`` into a full matrix); a matrix gives its
  diagonal as a vector.
- eye: ones where row == column (kernels/small_linalg.py), no input.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core.limits import check_tensor_size
from ..kernels.cpu import diagonals as KD
from ..kernels.cpu.reduce import MIN_PARALLEL_SUM
from ..kernels.cuda import device
from ..kernels.lowered import Call
from . import arrays
from .common import (FLOAT_TYPES, OUT, X, build_fail, dtype_code_check, dtype_to_numpy,
                     int_shape, numba_holds, run_fail)
from .matrix_products import LINALG, NUMBERS, require_types
from ..backends import CPU, CUDA

INPUT = Slot("Input", "the tensor whose diagonals are taken")


def _on(place, array: np.ndarray):
    """``array`` (small, made on the host) on ``place``: a device copy on CUDA."""
    return device.to_device(array) if place is CUDA else array


def diagonal_length(rows: int, cols: int, offset: int) -> int:
    """How many elements the diagonal at ``offset`` of a rows x cols matrix has (the
    rule's one home: kernels/cpu/diagonals.py)."""
    return int(KD.diagonal_length(rows, cols, offset))


def diagonal_positions(rows: int, cols: int, offset: int) -> np.ndarray:
    """The diagonal's positions in the matrix flattened row by row."""
    return KD.diagonal_positions(rows, cols, offset)


# --- diagonal and trace ----------------------------------------------------------------------
def _axes(rank: int, axis1: int, axis2: int, fail) -> tuple[int, int]:
    for name, a in (("axis1", axis1), ("axis2", axis2)):
        if not -rank <= a < rank:
            fail(f"{name} {a} is out of range", expected=f"axes in [{-rank}, {rank - 1}]",
                 given=f"axis1={axis1}, axis2={axis2} for a rank-{rank} Input")
    if axis1 % rank == axis2 % rank:
        fail("axis1 and axis2 must be different axes", expected="two different axes",
             given=f"axis1={axis1}, axis2={axis2}")
    return axis1 % rank, axis2 % rank


def _diagonal_infer(ctx, op_type: str, allowed, keep_diagonal: bool):
    require_types(ctx, ["Input"], allowed, op_type)
    shape = ctx.shape("Input")
    if len(shape) < 2:
        ctx.fail(f"{op_type} takes a tensor of rank 2 or more", slot="Input",
                 expected="at least 2 dims", given=ctx.describe_input("Input"))
    fail = build_fail(ctx, "Input")
    a1, a2 = _axes(len(shape), ctx.attr("axis1"), ctx.attr("axis2"), fail)
    rows, cols = shape[a1], shape[a2]
    length = -1 if rows < 0 or cols < 0 else diagonal_length(rows, cols, ctx.attr("offset"))
    out = [d for i, d in enumerate(shape) if i not in (a1, a2)]
    ctx.set_output("Out", out + [length] if keep_diagonal else out, ctx.dtype("Input"))


def _layout(ctx, x, op_type: str):
    """(perm moving axis1, axis2 last, the other axes' shape, rows, cols, positions)."""
    shape = int_shape(x)
    if len(shape) < 2:
        raise ValueError(f"{op_type}: slot Input: takes a tensor of rank 2 or more; expected "
                         f"at least 2 dims, given {list(shape)}")
    a1, a2 = _axes(len(shape), ctx.attr("axis1"), ctx.attr("axis2"), run_fail(op_type, "Input"))
    others = [i for i in range(len(shape)) if i not in (a1, a2)]
    rows, cols = shape[a1], shape[a2]
    return (others + [a1, a2], tuple(shape[i] for i in others), rows, cols,
            diagonal_positions(rows, cols, ctx.attr("offset")))


def _take_diagonal(place, x, ctx, op_type: str):
    """The diagonals as [*others, L]."""
    perm, others, rows, cols, positions = _layout(ctx, x, op_type)
    batch = int(np.prod(others, dtype=np.int64))
    shape = others + (len(positions),)
    if batch == 0 or len(positions) == 0:
        return place.full(shape, 0, x.dtype)
    moved = arrays.transpose(x, perm).reshape((batch, rows * cols))
    return place.take(moved, _on(place, positions), 1).reshape(shape)


def _put_diagonal(place, x, dout, ctx, op_type: str):
    """Zeros of Input's shape with dout [*others, L] on the diagonals."""
    perm, others, rows, cols, positions = _layout(ctx, x, op_type)
    batch = int(np.prod(others, dtype=np.int64))
    if batch == 0 or len(positions) == 0:
        return place.full(int_shape(x), 0, x.dtype)
    dout = arrays.astype(dout, x.dtype).reshape((batch, len(positions)))
    spread = place.scatter_add((batch, rows * cols), _on(place, positions), dout, 1)
    back = list(np.argsort(perm))
    return arrays.transpose(spread.reshape(others + (rows, cols)), back)


DIAGONAL_TYPES = ("bool",) + NUMBERS


def _diagonal(place):
    def run(ctx):
        ctx.set_output("Out", _take_diagonal(place, ctx.input("Input"), ctx, "diagonal"))
    return run


def _diagonal_grad(place):
    def run(ctx):
        x = ctx.input("Input")
        ctx.set_output("Input@GRAD", arrays.copy(_put_diagonal(place, x, ctx.input("Out@GRAD"),
                                                               ctx, "diagonal_grad")))
    return run


# --- in a compiled block (kernels/lowered.py): kernels/cpu/diagonals.py -----------------------
def _moved(info) -> tuple | None:
    """(perm moving axis1, axis2 last, its inverse) for the Input the interpreter's run
    saw, or None where the compiled forms do not apply."""
    rank = info.ndim("Input")
    if rank < 2 or not numba_holds(info.dtype("Input")):
        return None
    a1, a2 = _axes(rank, info.attr("axis1"), info.attr("axis2"), run_fail("diagonal"))
    perm = tuple(i for i in range(rank) if i not in (a1, a2)) + (a1, a2)
    return perm, tuple(int(i) for i in np.argsort(perm))


def _lowered_diagonal(op_type: str, grad: bool):
    """diagonal's and trace's forms (trace's float sums: the interpreter's row sums)."""
    def lowered(info):
        moved = _moved(info)
        if moved is None:
            return None
        perm, inverse = moved
        offset, rank = int(info.attr("offset")), info.ndim("Input")
        if grad:
            if info.dtype("Out@GRAD") != info.dtype("Input"):
                return None
            return Call(KD.diagonal_spread, ("Input", "Out@GRAD"), ("Input@GRAD",),
                        (perm, inverse, offset, op_type == "trace"))
        if op_type == "diagonal":
            return Call(KD.diagonal_of, ("Input",), ("Out",), (perm, offset, rank - 1))
        integer = info.dtype("Input").kind in "iu"
        if not integer and info.dtype("Input").name not in FLOAT_TYPES:
            return "no lowered form for these dtypes: the compiled sums are of reals"
        if math.prod(info.shape("Input")) >= MIN_PARALLEL_SUM:
            return "large: the interpreter splits its sums across the cores"
        return Call(KD.trace_of, ("Input",), ("Out",),
                    (perm, offset, integer, rank - 2, rank - 1))
    return lowered


DIAGONAL_ATTRS = [
    Attr("offset", A.INT, 0, "which diagonal: 0 the main one, > 0 above it, < 0 below"),
    Attr("axis1", A.INT, 0, "the axis of the matrices' rows"),
    Attr("axis2", A.INT, 1, "the axis of the matrices' columns")]

register(OpDef(
    "diagonal", [INPUT], [OUT], DIAGONAL_ATTRS,
    comment="Out = the diagonal at offset of the matrices on axis1, axis2 (Out: the other "
            "axes, then the diagonal).",
    infer_shape=lambda ctx: _diagonal_infer(ctx, "diagonal", DIAGONAL_TYPES, True),
    kernels={"cpu": _diagonal(CPU), "cuda": _diagonal(CUDA)},
    lowered=_lowered_diagonal("diagonal", grad=False),
    grad=Grad(reads=["Input"], kernel=_diagonal_grad(CPU), cuda_kernel=_diagonal_grad(CUDA),
              lowered=_lowered_diagonal("diagonal", grad=True))))


def _trace(place):
    def run(ctx):
        x = ctx.input("Input")
        diag = _take_diagonal(place, x, ctx, "trace")
        if int_shape(diag)[-1] == 0 or int(diag.size) == 0:
            out = place.full(int_shape(diag)[:-1], 0, x.dtype)
        else:
            length = int_shape(diag)[-1]              # summed as rows: a 0-d sum is a reshape
            rows = diag.reshape((int(diag.size) // length, length))
            out = place.sum_axes(rows, [1], False).reshape(int_shape(diag)[:-1])
        ctx.set_output("Out", out)
    return run


def _trace_grad(place):
    """dOut of each matrix spread along its diagonal."""
    def run(ctx):
        x = ctx.input("Input")
        _, others, rows, cols, positions = _layout(ctx, x, "trace_grad")
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape(others + (1,))
        spread = place.broadcast_to(dout, others + (len(positions),))
        ctx.set_output("Input@GRAD", arrays.copy(_put_diagonal(place, x, spread, ctx,
                                                               "trace_grad")))
    return run


register(OpDef(
    "trace", [INPUT], [OUT], DIAGONAL_ATTRS,
    comment="Out = the sum of the diagonal at offset of the matrices on axis1, axis2.",
    infer_shape=lambda ctx: _diagonal_infer(ctx, "trace", NUMBERS, False),
    kernels={"cpu": _trace(CPU), "cuda": _trace(CUDA)},
    lowered=_lowered_diagonal("trace", grad=False),
    grad=Grad(reads=["Input"], kernel=_trace_grad(CPU), cuda_kernel=_trace_grad(CUDA),
              lowered=_lowered_diagonal("trace", grad=True))))


# --- diag_v2 ---------------------------------------------------------------------------------
def _diag_v2_infer(ctx):
    require_types(ctx, ["X"], NUMBERS, "diag_v2")
    xs, offset = ctx.shape("X"), ctx.attr("offset")
    if len(xs) > 2:
        ctx.fail("diag_v2 takes a vector (made a matrix) or a matrix (its diagonal taken)",
                 slot="X", expected="a 0-d, 1-D or 2-D tensor", given=ctx.describe_input("X"))
    if len(xs) <= 1:
        n = xs[0] if xs else 1
        size = n + abs(offset) if n >= 0 else -1
        ctx.set_output("Out", [size, size], ctx.dtype("X"))
    else:
        length = -1 if min(xs) < 0 else diagonal_length(xs[0], xs[1], offset)
        ctx.set_output("Out", [length], ctx.dtype("X"))


def _diag_v2(place):
    def run(ctx):
        x, offset = ctx.input("X"), ctx.attr("offset")
        shape = int_shape(x)
        if len(shape) > 2:
            raise ValueError(f"diag_v2: slot X: takes a 0-d, 1-D or 2-D tensor; expected rank "
                             f"<= 2, given {list(shape)}")
        if len(shape) == 2:
            positions = diagonal_positions(shape[0], shape[1], offset)
            out = place.full((len(positions),), 0, x.dtype) if not len(positions) else \
                place.take(x.reshape((shape[0] * shape[1],)), _on(place, positions), 0)
        else:
            n = shape[0] if shape else 1
            size = n + abs(offset)
            check_tensor_size((size, size), x.dtype, "diag_v2")
            pad = x.dtype.type(ctx.attr("padding_value"))
            out = place.full((size * size,), pad, x.dtype)
            if n:
                out = place.scatter_rows(out, _on(place, diagonal_positions(size, size, offset)),
                                         x.reshape((n,)), True)
            out = out.reshape((size, size))
        ctx.set_output("Out", out)
    return run


def _diag_v2_grad(place):
    """A vector's gradient is dOut's diagonal; a matrix's is dOut on its diagonal."""
    def run(ctx):
        x, offset = ctx.input("X"), ctx.attr("offset")
        shape = int_shape(x)
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype)
        if len(shape) == 2:
            positions = diagonal_positions(shape[0], shape[1], offset)
            dx = place.full(shape, 0, x.dtype) if not len(positions) else \
                place.scatter_add((shape[0] * shape[1],), _on(place, positions),
                                  dout.reshape((len(positions),)), 0).reshape(shape)
        else:
            n = shape[0] if shape else 1
            size = n + abs(offset)
            dx = place.full(shape, 0, x.dtype) if not n else \
                place.take(dout.reshape((size * size,)),
                           _on(place, diagonal_positions(size, size, offset)), 0).reshape(shape)
        ctx.set_output("X@GRAD", dx)
    return run


def _lowered_diag_v2(grad: bool):
    """A vector's matrix (dX: dOut's diagonal) or a matrix's diagonal (dX: dOut on it)."""
    def lowered(info):
        x = info.dtype("X")
        if not numba_holds(x) or info.ndim("X") not in (1, 2) or (
                grad and info.dtype("Out@GRAD") != x):
            return None
        offset = int(info.attr("offset"))
        if info.ndim("X") == 2:
            if grad:
                return Call(KD.diag_matrix_grad, ("X", "Out@GRAD"), ("X@GRAD",), (offset,))
            return Call(KD.diag_vector, ("X",), ("Out",), (offset,))
        if grad:
            return Call(KD.diag_vector_grad, ("X", "Out@GRAD"), ("X@GRAD",), (offset,))
        pad = x.type(info.attr("padding_value"))      # as the kernel makes it
        return Call(KD.diag_matrix, ("X",), ("Out",), (offset, pad))
    return lowered


register(OpDef(
    "diag_v2", [X], [OUT],
    [Attr("offset", A.INT, 0, "which diagonal: 0 the main one, > 0 above it, < 0 below"),
     Attr("padding_value", A.FLOAT, 0.0, "a vector's matrix holds it off the diagonal")],
    comment="A vector X: Out = the square matrix with X on the diagonal at offset (padding_"
            "value elsewhere); a matrix X: Out = its diagonal at offset.",
    infer_shape=_diag_v2_infer, kernels={"cpu": _diag_v2(CPU), "cuda": _diag_v2(CUDA)},
    lowered=_lowered_diag_v2(grad=False),
    grad=Grad(reads=["X"], kernel=_diag_v2_grad(CPU), cuda_kernel=_diag_v2_grad(CUDA),
              lowered=_lowered_diag_v2(grad=True))))


# --- eye -------------------------------------------------------------------------------------
EYE_TYPES = ("int32", "int64", "float32", "float64")


def _eye_shape(rows: int, cols: int, fail) -> tuple[int, int]:
    cols = rows if cols == -1 else cols
    if rows < 0 or cols < 0:
        fail("num_rows and num_columns must be >= 0 (num_columns -1: num_rows)",
             expected="sizes >= 0", given=f"num_rows={rows}, num_columns={cols}")
    return rows, cols


def _eye_infer(ctx):
    if dtypes.name(ctx.attr("dtype")) not in EYE_TYPES:
        ctx.fail("eye makes int32, int64, float32 or float64 elements (Paddle's CPU kernels)",
                 expected="one of those", given=f"dtype={dtypes.name(ctx.attr('dtype'))}")
    fail = build_fail(ctx)
    rows, cols = _eye_shape(ctx.attr("num_rows"), ctx.attr("num_columns"), fail)
    check_tensor_size((rows, cols), dtype_to_numpy(ctx.attr("dtype")), "eye")
    ctx.set_output("Out", [rows, cols], ctx.attr("dtype"))


def _eye(place):
    def run(ctx):
        fail = run_fail("eye")
        rows, cols = _eye_shape(ctx.attr("num_rows"), ctx.attr("num_columns"), fail)
        dtype = dtype_to_numpy(ctx.attr("dtype"))
        check_tensor_size((rows, cols), dtype, "eye")
        ctx.set_output("Out", LINALG[place].eyes((), rows, cols, dtype))
    return run


def _lowered_eye(info):
    """kernels/cpu/diagonals.eye_of: its size is the attributes'."""
    dtype = dtype_to_numpy(info.attr("dtype"))
    rows, cols = _eye_shape(info.attr("num_rows"), info.attr("num_columns"), run_fail("eye"))
    return Call(KD.eye_of, (), ("Out",), (int(rows), int(cols), dtype.type(0), dtype.type(1)))


register(OpDef(
    "eye", [], [OUT],
    [Attr("num_rows", A.LONG, 0, "the rows"),
     Attr("num_columns", A.LONG, -1, "the columns (-1: num_rows)"),
     Attr("dtype", A.INT, 5, "the element type (a VarType code)",
          check=dtype_code_check("iuf"))],
    comment="Out = the num_rows x num_columns matrix with ones on the diagonal.",
    infer_shape=_eye_infer, kernels={"cpu": _eye(CPU), "cuda": _eye(CUDA)},
    lowered=_lowered_eye, grad=NO_GRADIENT))
