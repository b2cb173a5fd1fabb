"""Matrix products: ``mul`` (Fluid's fc core, flattening by ``x_num_col_dims``), ``matmul``
and ``matmul_v2`` (numpy's matmul rules, batch dims broadcast, optional transposes), and
``bmm`` (``paddle.bmm``: two 3-D stacks of matrices, the same batch, no broadcasting).

Every product of two operands (these, and mv, dot, kron, cross) is declared by
``declare_product``: X and a second operand in, Out out, a gradient op that reads both."""
from __future__ import annotations

import math
from functools import partial

import numpy as np

from ..core import attrs as A
from ..core.infer_shape import dims_compatible, numel
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu import matmul as KM
from ..kernels.lowered import Call
from .common import OUT, X, Y
from ..backends import CPU, CUDA
from ..backends.products import BLAS_TYPES


# --- a product's declaration, and its plainest kernel ----------------------------------------
def declare_product(op_type: str, comment: str, infer_shape, forward, backward, attrs=(),
                    second=Y, lowered=None, grad_lowered=None) -> None:
    """Register ``op_type``, Out = a product of X and ``second`` (Y; mv's Vec), wired as
    every product here is: its gradient op reads both operands and writes both gradients.
    ``forward`` and ``backward`` make a place's kernel from the place (``forward(CPU)``);
    ``lowered`` and ``grad_lowered``: the two ops' forms in a compiled block
    (kernels/lowered.py)."""
    register(OpDef(op_type, [X, second], [OUT], list(attrs), comment=comment,
                   infer_shape=infer_shape,
                   kernels={"cpu": forward(CPU), "cuda": forward(CUDA)}, lowered=lowered,
                   grad=Grad(reads=["X", second.name], kernel=backward(CPU),
                             cuda_kernel=backward(CUDA), lowered=grad_lowered)))


def plain_product(place, second: str = "Y"):
    """Out = X @ ``second`` by the place's matmul, no transposes, no factor (bmm, mv)."""
    def run(ctx):
        ctx.set_output("Out", place.matmul(ctx.input("X"), ctx.input(second), False, False))
    return run


# --- mul ----------------------------------------------------------------------------------
def _flat2d(shape, num_col_dims):
    return numel(shape[:num_col_dims]), numel(shape[num_col_dims:])


def _products_can_match(a, b) -> bool:
    """Whether the dims ``a`` and ``b`` can have the same product at run time, when -1
    (unknown) dims take any size >= 0. A product with unknown dims is a multiple of its
    known dims: X [2, -1, 3] flattened at 1 has 3k columns, which are never 4 rows."""
    (ka, ua), (kb, ub) = _known_part(a), _known_part(b)
    if not ua and not ub:
        return ka == kb
    if ua and ub:
        return True              # both sides can be 0 (or a common multiple)
    fixed, factor = (ka, kb) if not ua else (kb, ka)
    return fixed == 0 if factor == 0 else fixed % factor == 0


def _count_text(dims) -> str:
    """``12``, or ``a multiple of 3`` where some of ``dims`` are unknown."""
    known, unknown = _known_part(dims)
    return f"a multiple of {known}" if unknown else str(known)


def _known_part(dims):
    """(product of the known dims, whether any dim is unknown)."""
    known, unknown = 1, False
    for d in dims:
        if d < 0:
            unknown = True
        else:
            known *= d
    return known, unknown


def _check_operands(ctx):
    """Numbers of one element type, each at least a vector (a 0-d operand has no dim to
    contract)."""
    ctx.require_dtype("X", "number")
    ctx.require_same_dtype("Y", "X")
    ctx.require_rank("X", 1)
    ctx.require_rank("Y", 1)


def _mul_infer(ctx):
    _check_operands(ctx)
    xs, ys = ctx.shape("X"), ctx.shape("Y")
    xn, yn = ctx.attr("x_num_col_dims"), ctx.attr("y_num_col_dims")
    if not (0 < xn < len(xs) + 1 and 0 < yn < len(ys)):
        ctx.fail("x_num_col_dims / y_num_col_dims do not split the inputs into matrices",
                 expected=f"0 < x_num_col_dims <= {len(xs)}, 0 < y_num_col_dims < {len(ys)}",
                 given=f"x_num_col_dims={xn}, y_num_col_dims={yn}, X {xs}, Y {ys}")
    if not _products_can_match(xs[xn:], ys[:yn]):
        x_cols, y_rows = _count_text(xs[xn:]), _count_text(ys[:yn])
        ctx.fail("X's columns must equal Y's rows", slot="Y",
                 expected=f"Y with {x_cols} rows (X {ctx.describe_input('X')} flattened at "
                          f"x_num_col_dims={xn} has {x_cols} columns)",
                 given=f"Y {ctx.describe_input('Y')} with {y_rows} rows")
    ctx.set_output("Out", xs[:xn] + ys[yn:], ctx.dtype("X"))


def _mul(place):
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        xn, yn = ctx.attr("x_num_col_dims"), ctx.attr("y_num_col_dims")
        x2, y2 = x.reshape(_flat2d(x.shape, xn)), y.reshape(_flat2d(y.shape, yn))
        out = place.product(x2, y2, out=lambda shape, dtype: ctx.out("Out", shape, dtype))
        ctx.set_output("Out", out.reshape(tuple(x.shape[:xn] + y.shape[yn:])))
    return run


def _mul_grad(place):
    """Out = X2 @ Y2 (the flattened matrices): dX2 = dOut @ Y2^T, dY2 = X2^T @ dOut."""
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        xn, yn = ctx.attr("x_num_col_dims"), ctx.attr("y_num_col_dims")
        x2, y2 = x.reshape(_flat2d(x.shape, xn)), y.reshape(_flat2d(y.shape, yn))
        dout = ctx.input("Out@GRAD").reshape((x2.shape[0], y2.shape[1]))
        if ctx.has_output("X@GRAD"):
            dx = place.product(dout, y2, tb=True,
                         out=lambda shape, dtype: ctx.out("X@GRAD", shape, dtype))
            ctx.set_output("X@GRAD", dx.reshape(tuple(x.shape)))
        if ctx.has_output("Y@GRAD"):
            dy = place.product(x2, dout, ta=True,
                         out=lambda shape, dtype: ctx.out("Y@GRAD", shape, dtype))
            ctx.set_output("Y@GRAD", dy.reshape(tuple(y.shape)))
    return run


# --- in a compiled block (kernels/lowered.py): BLAS from numba code, as the kernels call it
def _blas_operands(info, slots) -> bool:
    """Do ``slots`` hold float32 or float64 arrays of one dtype (what the CPU kernels
    give to BLAS; other types go to numpy's matmul and stay in the interpreter)?"""
    dtype = info.dtype(slots[0])
    return dtype.type in BLAS_TYPES and all(info.dtype(s) == dtype for s in slots)


def _lowered_mul(info):
    if not _blas_operands(info, ("X", "Y")):
        return None
    xn, yn = info.attr("x_num_col_dims"), info.attr("y_num_col_dims")
    return Call(KM.mul, ("X", "Y"), ("Out",), (xn, yn, xn + info.ndim("Y") - yn))


def _lowered_mul_grad(info):
    if not _blas_operands(info, ("X", "Y", "Out@GRAD")):
        return None
    attrs = (info.attr("x_num_col_dims"), info.attr("y_num_col_dims"))
    return tuple(Call(fn, ("X", "Y", "Out@GRAD"), (slot,), attrs)
                 for fn, slot in ((KM.mul_grad_x, "X@GRAD"), (KM.mul_grad_y, "Y@GRAD"))
                 if info.has_output(slot)) or None


declare_product(
    "mul", "Out = flatten(X) @ flatten(Y), reshaped to X.dims[:x_num_col_dims] + "
           "Y.dims[y_num_col_dims:].", _mul_infer, _mul, _mul_grad,
    lowered=_lowered_mul, grad_lowered=_lowered_mul_grad,
    attrs=[Attr("x_num_col_dims", A.INT, 1, "X is flattened to a matrix: the first "
                "x_num_col_dims dims become rows"),
           Attr("y_num_col_dims", A.INT, 1, "Y is flattened likewise")])


# --- matmul / matmul_v2 ------------------------------------------------------------------
def _contracted_dims(rank_x, rank_y, tx, ty):
    """Which dim of X and of Y a matmul sums over, counted from the end: X's last (its
    second-to-last when transposed), Y's second-to-last (its last when transposed); a
    vector's only dim."""
    return (-2 if tx and rank_x >= 2 else -1), (-1 if ty or rank_y == 1 else -2)


def _matmul_shape(ctx, xs, ys, tx, ty, names=("trans_x", "trans_y")):
    """The shape of op(X) @ op(Y) with numpy's rules; ``names`` are the op's transpose
    attributes, for the error."""
    _check_operands(ctx)
    given_x, given_y = list(xs), list(ys)
    xs, ys = list(xs), list(ys)
    if len(xs) >= 2 and tx:
        xs[-1], xs[-2] = xs[-2], xs[-1]
    if len(ys) >= 2 and ty:
        ys[-1], ys[-2] = ys[-2], ys[-1]
    x2 = [1] + xs if len(xs) == 1 else xs
    y2 = ys + [1] if len(ys) == 1 else ys
    both = (f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}, "
            f"{names[0]}={tx}, {names[1]}={ty}")
    if not dims_compatible(x2[-1], y2[-2]):
        ix, iy = _contracted_dims(len(given_x), len(given_y), tx, ty)
        ctx.fail("X's last dim must equal Y's second-to-last (after transposes)", slot="Y",
                 expected=f"Y[{iy}] == {x2[-1]}",
                 given=f"X[{ix}] = {given_x[ix]} but Y[{iy}] = {given_y[iy]}: {both}")
    bx, by = x2[:-2], y2[:-2]
    n = max(len(bx), len(by))
    bx, by = [1] * (n - len(bx)) + bx, [1] * (n - len(by)) + by
    batch = []
    for i, (a, b) in enumerate(zip(bx, by)):
        if a == 1 or b == 1 or dims_compatible(a, b):
            batch.append(b if a == 1 else a)
        else:
            # counted from the end, as broadcasting aligns them
            at = i - n - 2
            ctx.fail("batch dims of X and Y cannot be broadcast", slot="Y",
                     expected=f"batch dim {at} equal in X and Y, or 1 in one of them",
                     given=f"X[{at}] = {a} but Y[{at}] = {b}: {both}")
    out = batch + [x2[-2], y2[-1]]
    if len(xs) == 1:
        out.pop(-2)
    if len(ys) == 1:
        out.pop(-1)
    return out


# --- the gradient, once for both places ----------------------------------------------------
def _batch_shape(a: tuple, b: tuple) -> tuple:
    """The broadcast batch dims (equal ones, attention's, without numpy's machinery)."""
    return tuple(a) if tuple(a) == tuple(b) else np.broadcast_shapes(a, b)


def matmul_nd_grad(place, x, y, dout, tx: bool, ty: bool, alpha: float = 1.0):
    """dX, dY of Out = alpha * op(X) @ op(Y) (op = transpose if asked), batch dims
    broadcast; each case is two products with transpose flags (no transposed copies on
    CUDA, views on the CPU), then the broadcast batch dims summed away."""
    tx, ty = tx and x.ndim >= 2, ty and y.ndim >= 2          # vectors are not transposed
    x2 = x.reshape((1, x.shape[0])) if x.ndim == 1 else x
    y2 = y.reshape((y.shape[0], 1)) if y.ndim == 1 else y
    xs, ys = tuple(x2.shape), tuple(y2.shape)
    out_shape = _batch_shape(xs[:-2], ys[:-2]) + (
        xs[-1] if tx else xs[-2], ys[-2] if ty else ys[-1])
    d = dout.reshape(tuple(out_shape))
    mm = place.matmul
    if len(ys) == 2 and len(xs) > 2 and not tx:
        # one matrix Y for every batch: fold the batch dims into rows, so dY is one
        # product that sums over the batch (not a batch of products and a sum)
        rows = math.prod(xs[:-1])               # spelled out: device arrays take no -1
        x_rows = x2.reshape((rows, int(xs[-1])))
        d_rows = d.reshape((rows, int(out_shape[-1])))
        dx = mm(d_rows, y2, False, not ty, alpha)       # d @ op(Y)^T
        dy = mm(d_rows, x_rows, True, False, alpha) if ty else \
            mm(x_rows, d_rows, True, False, alpha)       # op(Y)'s gradient, as Y
        return dx.reshape(tuple(x.shape)), dy.reshape(tuple(y.shape))
    if not tx and not ty:       # dX = d @ Y^T, dY = X^T @ d
        dx, dy = mm(d, y2, False, True, alpha), mm(x2, d, True, False, alpha)
    elif tx and not ty:         # dX = Y @ d^T, dY = X @ d
        dx, dy = mm(y2, d, False, True, alpha), mm(x2, d, False, False, alpha)
    elif not tx and ty:         # dX = d @ Y, dY = d^T @ X
        dx, dy = mm(d, y2, False, False, alpha), mm(d, x2, True, False, alpha)
    else:                       # dX = Y^T @ d^T, dY = d^T @ X^T
        dx, dy = mm(y2, d, True, True, alpha), mm(d, x2, True, True, alpha)
    return (place.sum_to(dx, xs).reshape(tuple(x.shape)),
            place.sum_to(dy, ys).reshape(tuple(y.shape)))


def _matmul_grad_kernel(place, tx_attr: str, ty_attr: str, alpha_attr: str | None = None):
    def run(ctx):
        alpha = ctx.attr(alpha_attr) if alpha_attr else 1.0
        dx, dy = matmul_nd_grad(place, ctx.input("X"), ctx.input("Y"), ctx.input("Out@GRAD"),
                                ctx.attr(tx_attr), ctx.attr(ty_attr), alpha)
        ctx.set_output("X@GRAD", dx)
        ctx.set_output("Y@GRAD", dy)
    return run


def _matmul_v2_infer(ctx):
    ctx.set_output("Out", _matmul_shape(ctx, ctx.shape("X"), ctx.shape("Y"),
                                        ctx.attr("trans_x"), ctx.attr("trans_y")), ctx.dtype("X"))


def _matmul_kernel(place, tx_attr: str, ty_attr: str, alpha_attr: str | None = None):
    def run(ctx):
        alpha = ctx.attr(alpha_attr) if alpha_attr else 1.0
        ctx.set_output("Out", place.matmul(ctx.input("X"), ctx.input("Y"), ctx.attr(tx_attr),
                                           ctx.attr(ty_attr), alpha))
    return run


# --- in a compiled block: the products matmul_nd and matmul_nd_grad make, as they make them
# matmul_nd_grad's products for operands of one batch shape, by (trans_x, trans_y): dX and
# dY, each as (its two operands, whether each is transposed)
_GRAD_PRODUCTS = {
    (False, False): ((("Out@GRAD", "Y"), (False, True)), (("X", "Out@GRAD"), (True, False))),
    (True, False): ((("Y", "Out@GRAD"), (False, True)), (("X", "Out@GRAD"), (False, False))),
    (False, True): ((("Out@GRAD", "Y"), (False, False)), (("Out@GRAD", "X"), (True, False))),
    (True, True): ((("Y", "Out@GRAD"), (True, True)), (("Out@GRAD", "X"), (True, True))),
}


def _product_kind(info, slots, tx: bool, ty: bool):
    """How backends/products.matmul_nd multiplies these operands: "matrices" (one
    product), "rows" (a stack X times one matrix Y: X's batch dims folded into rows),
    "stacks" (two stacks of one batch shape: a product per matrix), or why the form
    declines: vectors, broadcast batch dims, or stacks the interpreter splits across the
    cores (its prange loop or numpy's threaded BLAS: batched_matmul's own choice)."""
    if not _blas_operands(info, slots):
        return None
    rank_x, rank_y = info.ndim("X"), info.ndim("Y")
    if rank_x == 1 or rank_y == 1:
        return None                                   # numpy's vector rules: interpreted
    if rank_x == 2 and rank_y == 2:
        return "matrices"
    if rank_y == 2 and not tx:
        return "rows"
    xs, ys = info.shape("X"), info.shape("Y")
    if rank_x != rank_y or xs[:-2] != ys[:-2]:
        return "its operands broadcast: the interpreter copies them to one batch shape"
    n = ys[-2] if ty else ys[-1]
    if KM.splits_across_cores(math.prod(xs[:-2]), xs[-1] * xs[-2] * n):
        return "large: the interpreter splits it across the cores"
    return "stacks"


def _flags(info, tx_attr, ty_attr, alpha_attr):
    """(trans_x, trans_y, alpha) from the op's attributes; an attribute named None is the
    op's fixed value (bmm: no transposes, no factor)."""
    return (bool(tx_attr and info.attr(tx_attr)), bool(ty_attr and info.attr(ty_attr)),
            info.attr(alpha_attr) if alpha_attr else 1.0)


def _lowered_matmul(tx_attr: str | None, ty_attr: str | None, alpha_attr: str | None = None):
    def lowered(info):
        tx, ty, alpha = _flags(info, tx_attr, ty_attr, alpha_attr)
        kind = _product_kind(info, ("X", "Y"), tx, ty)
        if kind == "matrices":
            return Call(KM.product, ("X", "Y"), ("Out",), (tx, ty, alpha))
        if kind == "rows":
            return Call(KM.rows_product, ("X", "Y"), ("Out",), (ty, alpha))
        if kind == "stacks":
            return Call(KM.batched_product, ("X", "Y"), ("Out",), (tx, ty, alpha))
        return kind
    return lowered


def _lowered_matmul_grad(tx_attr: str | None, ty_attr: str | None, alpha_attr: str | None = None):
    def lowered(info):
        tx, ty, alpha = _flags(info, tx_attr, ty_attr, alpha_attr)
        kind = _product_kind(info, ("X", "Y", "Out@GRAD"), tx, ty)
        if kind == "rows":
            calls = ((KM.rows_product_grad_x, "X@GRAD"), (KM.rows_product_grad_y, "Y@GRAD"))
            return tuple(Call(fn, ("X", "Y", "Out@GRAD"), (slot,), (ty, alpha))
                         for fn, slot in calls if info.has_output(slot)) or None
        if kind not in ("matrices", "stacks"):
            return kind
        fn = KM.product if kind == "matrices" else KM.batched_product
        products = _GRAD_PRODUCTS[tx, ty]
        return tuple(Call(fn, operands, (slot,), (*transposed, alpha))
                     for slot, (operands, transposed) in zip(("X@GRAD", "Y@GRAD"), products)
                     if info.has_output(slot)) or None
    return lowered


_V2_ATTRS = {"tx_attr": "trans_x", "ty_attr": "trans_y"}     # what its kernels read
declare_product(
    "matmul_v2", "Out = X @ Y with numpy's matmul rules (batch dims broadcast).",
    _matmul_v2_infer, partial(_matmul_kernel, **_V2_ATTRS),
    partial(_matmul_grad_kernel, **_V2_ATTRS),
    lowered=_lowered_matmul(**_V2_ATTRS), grad_lowered=_lowered_matmul_grad(**_V2_ATTRS),
    attrs=[Attr("trans_x", A.BOOLEAN, False, "transpose X's last two dims first"),
           Attr("trans_y", A.BOOLEAN, False, "transpose Y's last two dims first")])


def _matmul_infer(ctx):
    ctx.set_output("Out", _matmul_shape(ctx, ctx.shape("X"), ctx.shape("Y"),
                                        ctx.attr("transpose_X"), ctx.attr("transpose_Y"),
                                        ("transpose_X", "transpose_Y")), ctx.dtype("X"))


# what its kernels read: the transposes and the factor
_V1_ATTRS = {"tx_attr": "transpose_X", "ty_attr": "transpose_Y", "alpha_attr": "alpha"}
declare_product(
    "matmul", "Out = alpha * (X @ Y) (Fluid's v1 matmul).", _matmul_infer,
    partial(_matmul_kernel, **_V1_ATTRS), partial(_matmul_grad_kernel, **_V1_ATTRS),
    lowered=_lowered_matmul(**_V1_ATTRS), grad_lowered=_lowered_matmul_grad(**_V1_ATTRS),
    attrs=[Attr("transpose_X", A.BOOLEAN, False, "transpose X's last two dims first"),
           Attr("transpose_Y", A.BOOLEAN, False, "transpose Y's last two dims first"),
           Attr("alpha", A.FLOAT, 1.0, "Out is multiplied by alpha")])


# --- bmm: matmul_v2 of two 3-D stacks, with its own stricter shape rule ---------------------
def _bmm_infer(ctx):
    _check_operands(ctx)
    xs, ys = ctx.shape("X"), ctx.shape("Y")
    for slot, shape in (("X", xs), ("Y", ys)):
        if len(shape) != 3:
            ctx.fail("bmm multiplies 3-D stacks of matrices", slot=slot,
                     expected="[batch, rows, columns]", given=ctx.describe_input(slot))
    if not dims_compatible(xs[0], ys[0]):
        ctx.fail("X and Y must hold the same number of matrices (bmm does not broadcast)",
                 slot="Y", expected=f"Y[0] == X[0] = {xs[0]}",
                 given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
    if not dims_compatible(xs[2], ys[1]):
        ctx.fail("X's columns must equal Y's rows", slot="Y", expected=f"Y[1] == X[2] = "
                 f"{xs[2]}", given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
    ctx.set_output("Out", [xs[0] if xs[0] >= 0 else ys[0], xs[1], ys[2]], ctx.dtype("X"))


def _bmm_grad(place):
    def run(ctx):
        dx, dy = matmul_nd_grad(place, ctx.input("X"), ctx.input("Y"), ctx.input("Out@GRAD"),
                                False, False)
        ctx.set_output("X@GRAD", dx)
        ctx.set_output("Y@GRAD", dy)
    return run


_BMM_ATTRS = {"tx_attr": None, "ty_attr": None}       # bmm has no transposes
declare_product("bmm", "Out[b] = X[b] @ Y[b] for each b: X [B, M, K], Y [B, K, N], "
                       "Out [B, M, N].", _bmm_infer, plain_product, _bmm_grad,
                lowered=_lowered_matmul(**_BMM_ATTRS),
                grad_lowered=_lowered_matmul_grad(**_BMM_ATTRS))
