"""Matrix products: ``mul`` (Fluid's fc core, flattening by ``x_num_col_dims``), ``matmul``
and ``matmul_v2`` (numpy's matmul rules, batch dims broadcast, optional transposes)."""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.infer_shape import dims_compatible, numel
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, register
from ..core.validate import check_tensor_size
from ..kernels.cpu import matmul as K
from ..kernels.cuda import copy as CC
from ..kernels.cuda import matmul as CM
from ..kernels.cuda import reduce as CR
from .common import OUT, X, Y

_BLAS = (np.float32, np.float64)


def _blas_layout(a: np.ndarray) -> np.ndarray:
    """numba's np.dot takes C- or F-contiguous matrices (a transpose is F): copy only others."""
    return a if a.flags.c_contiguous or a.flags.f_contiguous else np.ascontiguousarray(a)


def matmul_2d(a: np.ndarray, b: np.ndarray, out=None) -> np.ndarray:
    """a @ b; ``out(shape, dtype)``, when given, makes the array the product is written
    into (a kernel context's ``out``: a reused buffer on the compiled path)."""
    if a.shape[0] * b.shape[-1] > a.size + b.size:      # an outer product grows: check it
        check_tensor_size((a.shape[0], b.shape[-1]), np.result_type(a, b), "matmul")
    if a.dtype == b.dtype and a.dtype.type in _BLAS:
        into = out((a.shape[0], b.shape[-1]), a.dtype) if out is not None else None
        return K.matmul2d(_blas_layout(a), _blas_layout(b), into)
    return np.matmul(a, b)        # integer matrices: BLAS has no integer gemm


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


class _Mul2d:
    """The 2-D product of each place, ``op(a) @ op(b)`` (``op``: transpose if asked) into
    ``out(shape, dtype)`` where the place can write into a given array."""

    @staticmethod
    def cpu(a, b, ta=False, tb=False, out=None):
        return matmul_2d(a.T if ta else a, b.T if tb else b, out)     # a transpose is a view

    @staticmethod
    def cuda(a, b, ta=False, tb=False, out=None):
        rows, cols = a.shape[1 if ta else 0], b.shape[0 if tb else 1]
        if rows * cols > a.size + b.size:                             # an outer product grows
            check_tensor_size((rows, cols), a.dtype, "mul")
        return CM.matmul(a, b, trans_a=ta, trans_b=tb)


def _mul(product):
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        xn, yn = ctx.attr("x_num_col_dims"), ctx.attr("y_num_col_dims")
        x2, y2 = x.reshape(_flat2d(x.shape, xn)), y.reshape(_flat2d(y.shape, yn))
        out = product(x2, y2, out=lambda shape, dtype: ctx.out("Out", shape, dtype))
        ctx.set_output("Out", out.reshape(tuple(x.shape[:xn] + y.shape[yn:])))
    return run


def _mul_grad(product):
    """Out = X2 @ Y2 (the flattened matrices): dX2 = dOut @ Y2^T, dY2 = X2^T @ dOut."""
    def run(ctx):
        x, y = ctx.input("X"), ctx.input("Y")
        xn, yn = ctx.attr("x_num_col_dims"), ctx.attr("y_num_col_dims")
        x2, y2 = x.reshape(_flat2d(x.shape, xn)), y.reshape(_flat2d(y.shape, yn))
        dout = ctx.input("Out@GRAD").reshape((x2.shape[0], y2.shape[1]))
        if ctx.has_output("X@GRAD"):
            dx = product(dout, y2, tb=True,
                         out=lambda shape, dtype: ctx.out("X@GRAD", shape, dtype))
            ctx.set_output("X@GRAD", dx.reshape(tuple(x.shape)))
        if ctx.has_output("Y@GRAD"):
            dy = product(x2, dout, ta=True,
                         out=lambda shape, dtype: ctx.out("Y@GRAD", shape, dtype))
            ctx.set_output("Y@GRAD", dy.reshape(tuple(y.shape)))
    return run


register(OpDef(
    "mul", [X, Y], [OUT],
    [Attr("x_num_col_dims", A.INT, 1, "X is flattened to a matrix: the first "
          "x_num_col_dims dims become rows"),
     Attr("y_num_col_dims", A.INT, 1, "Y is flattened likewise")],
    comment="Out = flatten(X) @ flatten(Y), reshaped to X.dims[:x_num_col_dims] + "
            "Y.dims[y_num_col_dims:].",
    infer_shape=_mul_infer, kernels={"cpu": _mul(_Mul2d.cpu), "cuda": _mul(_Mul2d.cuda)},
    grad=Grad(reads=["X", "Y"], kernel=_mul_grad(_Mul2d.cpu),
              cuda_kernel=_mul_grad(_Mul2d.cuda))))


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


def matmul_nd(x: np.ndarray, y: np.ndarray, tx: bool, ty: bool) -> np.ndarray:
    if tx and x.ndim >= 2:
        x = np.swapaxes(x, -1, -2)
    if ty and y.ndim >= 2:
        y = np.swapaxes(y, -1, -2)
    x2 = x[None, :] if x.ndim == 1 else x
    y2 = y[:, None] if y.ndim == 1 else y
    if x2.ndim == 2 and y2.ndim == 2:
        out = matmul_2d(x2, y2)
    elif x.dtype == y.dtype and x.dtype.type in _BLAS:
        batch = np.broadcast_shapes(x2.shape[:-2], y2.shape[:-2])
        m, k, n = x2.shape[-2], x2.shape[-1], y2.shape[-1]
        check_tensor_size(batch + (max(m * k, k * n, m * n),), np.result_type(x, y), "matmul")
        n_batch = int(np.prod(batch))      # spelled out: reshape(-1, 0, k) cannot infer -1
        xb = np.ascontiguousarray(np.broadcast_to(x2, batch + (m, k))).reshape(n_batch, m, k)
        yb = np.ascontiguousarray(np.broadcast_to(y2, batch + (k, n))).reshape(n_batch, k, n)
        out = K.batched_matmul(xb, yb).reshape(batch + (m, n))
    else:
        out = np.matmul(x2, y2)
    if x.ndim == 1:
        out = out[..., 0, :]
    if y.ndim == 1:
        out = out[..., 0]
    return out


def _sum_to(g: np.ndarray, shape) -> np.ndarray:
    """Sum the broadcast batch dims of ``g`` away so it has ``shape``."""
    lead = g.ndim - len(shape)
    if lead:
        g = g.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, (a, b) in enumerate(zip(g.shape[:-2], shape[:-2])) if b == 1 and a != 1)
    return np.ascontiguousarray(g.sum(axis=axes, keepdims=True) if axes else g)


# --- the same on the device -------------------------------------------------------------
def _as_batches(a, batch, rows, cols):
    """``a`` (rank >= 2) as a (B, rows, cols) device array for the kernel: batch dims
    broadcast to ``batch`` (materialised by copy.broadcast_to only when they differ and
    are not all 1, since the kernel reuses a batch of 1 itself)."""
    lead = tuple(int(d) for d in a.shape[:-2])
    if lead == tuple(batch) or int(np.prod(lead, dtype=np.int64)) == 1:
        return a.reshape((int(np.prod(lead, dtype=np.int64)), rows, cols))
    full = CC.broadcast_to(a, tuple(batch) + (rows, cols))
    return full.reshape((int(np.prod(batch, dtype=np.int64)), rows, cols))


def cuda_matmul_nd(x, y, tx: bool, ty: bool, alpha: float = 1.0):
    """matmul_nd on device arrays: transposes and alpha are done by the kernel."""
    tx, ty = tx and x.ndim >= 2, ty and y.ndim >= 2
    x2 = x.reshape((1, x.shape[0])) if x.ndim == 1 else x
    y2 = y.reshape((y.shape[0], 1)) if y.ndim == 1 else y
    xs, ys = tuple(x2.shape), tuple(y2.shape)   # plain tuples (the simulator's shapes
    m, k = (xs[-1], xs[-2]) if tx else (xs[-2], xs[-1])   # refuse negative indices)
    n = ys[-2] if ty else ys[-1]
    batch = np.broadcast_shapes(xs[:-2], ys[:-2])
    if batch:
        check_tensor_size(batch + (max(m * k, k * n, m * n),), x.dtype, "matmul")
    xb = _as_batches(x2, batch, *xs[-2:])
    yb = _as_batches(y2, batch, *ys[-2:])
    out_shape = batch + (m, n)
    if x.ndim == 1:
        out_shape = out_shape[:-2] + out_shape[-1:]
    if y.ndim == 1:
        out_shape = out_shape[:-1]
    return CM.matmul(xb, yb, tx, ty, alpha).reshape(tuple(out_shape))


def _cuda_sum_to(g, shape):
    """_sum_to on the device: sum the broadcast batch dims of ``g`` away."""
    g_shape, shape = tuple(g.shape), tuple(shape)
    lead = len(g_shape) - len(shape)
    axes = list(range(lead)) + [lead + i for i, (a, b) in enumerate(zip(g_shape[lead:-2],
                                                                         shape[:-2]))
                                if b == 1 and a != 1]
    if not axes:
        return g
    return CR.sum_axes(g, axes, keepdims=True).reshape(tuple(shape))


# --- the gradient, once for both places ----------------------------------------------------
def _cpu_product(a, b, ta: bool, tb: bool, alpha: float = 1.0):
    out = matmul_nd(a, b, ta, tb)
    return out if alpha == 1.0 else (out * alpha).astype(out.dtype)


class _CPU:
    product = staticmethod(_cpu_product)
    sum_to = staticmethod(_sum_to)


class _CUDA:
    product = staticmethod(cuda_matmul_nd)      # transposes and alpha done by the kernel
    sum_to = staticmethod(_cuda_sum_to)


def matmul_nd_grad(place, x, y, dout, tx: bool, ty: bool, alpha: float = 1.0):
    """dX, dY of Out = alpha * op(X) @ op(Y) (op = transpose if asked), batch dims
    broadcast; each case is two products with transpose flags (no transposed copies on
    CUDA, views on the CPU), then the broadcast batch dims summed away."""
    tx, ty = tx and x.ndim >= 2, ty and y.ndim >= 2          # vectors are not transposed
    x2 = x.reshape((1, x.shape[0])) if x.ndim == 1 else x
    y2 = y.reshape((y.shape[0], 1)) if y.ndim == 1 else y
    xs, ys = tuple(x2.shape), tuple(y2.shape)
    out_shape = np.broadcast_shapes(xs[:-2], ys[:-2]) + (
        xs[-1] if tx else xs[-2], ys[-2] if ty else ys[-1])
    d = dout.reshape(tuple(out_shape))
    mm = place.product
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


def _matmul_v2(ctx):
    ctx.set_output("Out", matmul_nd(ctx.input("X"), ctx.input("Y"),
                                    ctx.attr("trans_x"), ctx.attr("trans_y")))


register(OpDef(
    "matmul_v2", [X, Y], [OUT],
    [Attr("trans_x", A.BOOLEAN, False, "transpose X's last two dims first"),
     Attr("trans_y", A.BOOLEAN, False, "transpose Y's last two dims first")],
    comment="Out = X @ Y with numpy's matmul rules (batch dims broadcast).",
    infer_shape=_matmul_v2_infer,
    kernels={"cpu": _matmul_v2, "cuda": lambda ctx: ctx.set_output("Out", cuda_matmul_nd(
        ctx.input("X"), ctx.input("Y"), ctx.attr("trans_x"), ctx.attr("trans_y")))},
    grad=Grad(reads=["X", "Y"], kernel=_matmul_grad_kernel(_CPU, "trans_x", "trans_y"),
              cuda_kernel=_matmul_grad_kernel(_CUDA, "trans_x", "trans_y"))))


def _matmul_infer(ctx):
    ctx.set_output("Out", _matmul_shape(ctx, ctx.shape("X"), ctx.shape("Y"),
                                        ctx.attr("transpose_X"), ctx.attr("transpose_Y"),
                                        ("transpose_X", "transpose_Y")), ctx.dtype("X"))


def _matmul(ctx):
    out = matmul_nd(ctx.input("X"), ctx.input("Y"), ctx.attr("transpose_X"),
                    ctx.attr("transpose_Y"))
    alpha = ctx.attr("alpha")
    ctx.set_output("Out", out if alpha == 1.0 else (out * alpha).astype(out.dtype))


register(OpDef(
    "matmul", [X, Y], [OUT],
    [Attr("transpose_X", A.BOOLEAN, False, "transpose X's last two dims first"),
     Attr("transpose_Y", A.BOOLEAN, False, "transpose Y's last two dims first"),
     Attr("alpha", A.FLOAT, 1.0, "Out is multiplied by alpha")],
    comment="Out = alpha * (X @ Y) (Fluid's v1 matmul).",
    infer_shape=_matmul_infer,
    kernels={"cpu": _matmul, "cuda": lambda ctx: ctx.set_output("Out", cuda_matmul_nd(
        ctx.input("X"), ctx.input("Y"), ctx.attr("transpose_X"), ctx.attr("transpose_Y"),
        ctx.attr("alpha")))},
    grad=Grad(reads=["X", "Y"],
              kernel=_matmul_grad_kernel(_CPU, "transpose_X", "transpose_Y", "alpha"),
              cuda_kernel=_matmul_grad_kernel(_CUDA, "transpose_X", "transpose_Y", "alpha"))))
