"""Matrix products: ``mul`` (Fluid's fc core, flattening by ``x_num_col_dims``), ``matmul``
and ``matmul_v2`` (numpy's matmul rules, batch dims broadcast, optional transposes)."""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.infer_shape import dims_compatible, numel
from ..core.registry import Attr, OpDef, register
from ..kernels.cpu import matmul as K
from .common import OUT, X, Y

_BLAS = (np.float32, np.float64)


def matmul_2d(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == b.dtype and a.dtype.type in _BLAS:
        return K.matmul2d(np.ascontiguousarray(a), np.ascontiguousarray(b))
    return np.matmul(a, b)        # integer matrices: BLAS has no integer gemm


# --- mul ----------------------------------------------------------------------------------
def _flat2d(shape, num_col_dims):
    return numel(shape[:num_col_dims]), numel(shape[num_col_dims:])


def _mul_infer(ctx):
    xs, ys = ctx.shape("X"), ctx.shape("Y")
    xn, yn = ctx.attr("x_num_col_dims"), ctx.attr("y_num_col_dims")
    if not (0 < xn < len(xs) + 1 and 0 < yn < len(ys)):
        ctx.fail("x_num_col_dims / y_num_col_dims do not split the inputs into matrices",
                 expected=f"0 < x_num_col_dims <= {len(xs)}, 0 < y_num_col_dims < {len(ys)}",
                 given=f"x_num_col_dims={xn}, y_num_col_dims={yn}, X {xs}, Y {ys}")
    x_cols = _flat2d(xs, xn)[1]
    y_rows = _flat2d(ys, yn)[0]
    if not dims_compatible(x_cols, y_rows):
        ctx.fail("X's columns must equal Y's rows", slot="Y",
                 expected=f"Y with {x_cols} rows (X {ctx.describe_input('X')} flattened at "
                          f"x_num_col_dims={xn} has {x_cols} columns)",
                 given=f"Y {ctx.describe_input('Y')} with {y_rows} rows")
    ctx.set_output("Out", xs[:xn] + ys[yn:], ctx.dtype("X"))


def _mul(ctx):
    x, y = ctx.input("X"), ctx.input("Y")
    xn, yn = ctx.attr("x_num_col_dims"), ctx.attr("y_num_col_dims")
    x2 = x.reshape(_flat2d(x.shape, xn))
    y2 = y.reshape(_flat2d(y.shape, yn))
    ctx.set_output("Out", matmul_2d(x2, y2).reshape(x.shape[:xn] + y.shape[yn:]))


register(OpDef(
    "mul", [X, Y], [OUT],
    [Attr("x_num_col_dims", A.INT, 1, "X is flattened to a matrix: the first "
          "x_num_col_dims dims become rows"),
     Attr("y_num_col_dims", A.INT, 1, "Y is flattened likewise")],
    comment="Out = flatten(X) @ flatten(Y), reshaped to X.dims[:x_num_col_dims] + "
            "Y.dims[y_num_col_dims:].",
    infer_shape=_mul_infer, kernels={"cpu": _mul}))


# --- matmul / matmul_v2 ------------------------------------------------------------------
def _matmul_shape(ctx, xs, ys, tx, ty):
    xs, ys = list(xs), list(ys)
    if len(xs) >= 2 and tx:
        xs[-1], xs[-2] = xs[-2], xs[-1]
    if len(ys) >= 2 and ty:
        ys[-1], ys[-2] = ys[-2], ys[-1]
    x2 = [1] + xs if len(xs) == 1 else xs
    y2 = ys + [1] if len(ys) == 1 else ys
    if not dims_compatible(x2[-1], y2[-2]):
        ctx.fail("X's last dim must equal Y's second-to-last (after transposes)", slot="Y",
                 expected=f"Y[-2] == {x2[-1]}",
                 given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}, "
                       f"transpose X={tx}, Y={ty}")
    bx, by = x2[:-2], y2[:-2]
    n = max(len(bx), len(by))
    bx, by = [1] * (n - len(bx)) + bx, [1] * (n - len(by)) + by
    batch = []
    for a, b in zip(bx, by):
        if a == 1 or b == 1 or dims_compatible(a, b):
            batch.append(b if a == 1 else a)
        else:
            ctx.fail("batch dims of X and Y cannot be broadcast", slot="Y",
                     given=f"X {ctx.describe_input('X')}, Y {ctx.describe_input('Y')}")
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
        xb = np.ascontiguousarray(np.broadcast_to(x2, batch + (m, k))).reshape(-1, m, k)
        yb = np.ascontiguousarray(np.broadcast_to(y2, batch + (k, n))).reshape(-1, k, n)
        out = K.batched_matmul(xb, yb).reshape(batch + (m, n))
    else:
        out = np.matmul(x2, y2)
    if x.ndim == 1:
        out = out[..., 0, :]
    if y.ndim == 1:
        out = out[..., 0]
    return out


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
    infer_shape=_matmul_v2_infer, kernels={"cpu": _matmul_v2}))


def _matmul_infer(ctx):
    ctx.set_output("Out", _matmul_shape(ctx, ctx.shape("X"), ctx.shape("Y"),
                                        ctx.attr("transpose_X"), ctx.attr("transpose_Y")),
                   ctx.dtype("X"))


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
    infer_shape=_matmul_infer, kernels={"cpu": _matmul}))
