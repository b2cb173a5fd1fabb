"""bilinear_tensor_product and its gradient (Fluid's slots, as ``F.bilinear``,
``nn.Bilinear`` and ``static.nn.bilinear_tensor_product`` save them).

For each row b of X [B, M] and Y [B, N] and each of the K slices of Weight [K, M, N]:

    Out[b, k] = X[b] . Weight[k] . Y[b]^T  (+ Bias[0, k])

Written as matrix products (the places' ``matmul``: BLAS on the CPU, the tiled kernel on
CUDA), with T[b, k, :] = X[b] . Weight[k] (one [B, M] x [M, K*N] product):

    Out  = T . Y[b] per row                      ([B, K, N] x [B, N, 1])
    dY   = dOut[b] . T[b] per row                ([B, 1, K] x [B, K, N])
    dX   = dOut[b] . S[b] per row, S[b, k, :] = Weight[k] . Y[b]   ([B, 1, K] x [B, K, M])
    dW   = dOut^T . (X[b] outer Y[b])            ([K, B] x [B, M*N])
    dBias = ones[1, B] . dOut                    (the column sums)

In a compiled block both are kernels/cpu/bilinear_tensor_product.py's njit steps: the same
products through matmul.py's product and batched_product, bit for bit.
"""
from __future__ import annotations

from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import OpDef, Slot, register
from ..kernels.cpu import bilinear_tensor_product as KB
from ..kernels.lowered import Call
from . import arrays
from .batch_norm import require_float
from ..backends import CPU, CUDA


def _infer(ctx):
    for slot in ("X", "Y", "Weight") + (("Bias",) if ctx.has_input("Bias") else ()):
        require_float(ctx, slot)
    ctx.require_same_dtype("X", "Y")
    ctx.require_same_dtype("X", "Weight")
    x, y, w = ctx.shape("X"), ctx.shape("Y"), ctx.shape("Weight")
    if len(x) != 2 or len(y) != 2 or len(w) != 3:
        ctx.fail("bilinear_tensor_product takes matrices X [B, M], Y [B, N] and Weight "
                 "[K, M, N]", slot="Weight", expected="ranks 2, 2 and 3",
                 given=f"X {x}, Y {y}, Weight {w}")
    checks = (("Y", y[0], x[0], "Y's rows must be X's"),
              ("Weight", w[1], x[1], "Weight's dim 1 must be X's width"),
              ("Weight", w[2], y[1], "Weight's dim 2 must be Y's width"))
    for slot, got, want, msg in checks:
        if got >= 0 and want >= 0 and got != want:
            ctx.fail(msg, slot=slot, expected=str(want), given=ctx.describe_input(slot))
    if ctx.has_input("Bias"):
        ctx.require_same_dtype("X", "Bias")
        b = ctx.shape("Bias")
        if len(b) != 2 or b[0] not in (1, -1) or (b[1] >= 0 and w[0] >= 0 and b[1] != w[0]):
            ctx.fail("Bias is one row of K values", slot="Bias", expected=f"[1, {w[0]}]",
                     given=ctx.describe_input("Bias"))
    ctx.set_output("Out", [x[0], w[0]], ctx.dtype("X"))


def _dims(x, w):
    return int(x.shape[0]), int(w.shape[0]), int(w.shape[1]), int(w.shape[2])


def _rows_times_slices(place, x, w):
    """T [B, K, N]: T[b, k] = X[b] . Weight[k]."""
    b, k, m, n = _dims(x, w)
    w2 = arrays.transpose(w, [1, 0, 2]).reshape((m, k * n))
    return place.matmul(x, w2, False, False).reshape((b, k, n))


def _check_runtime(x, y, w):
    b, k, m, n = _dims(x, w)
    if tuple(x.shape) != (b, m) or tuple(y.shape) != (b, n):
        raise ValueError(f"bilinear_tensor_product: X {list(x.shape)}, Y {list(y.shape)} "
                         f"do not fit Weight {list(w.shape)}")


def _forward(place):
    def run(ctx):
        x, y, w = ctx.input("X"), ctx.input("Y"), ctx.input("Weight")
        _check_runtime(x, y, w)
        b, k, _, n = _dims(x, w)
        t = _rows_times_slices(place, x, w)
        out = place.matmul(t, y.reshape((b, n, 1)), False, False).reshape((b, k))
        if ctx.has_input("Bias"):
            out = place.binary("elementwise_add", out, ctx.input("Bias"), out=None)
        ctx.set_output("Out", out)
    return run


def _backward(place):
    def run(ctx):
        x, y, w = ctx.input("X"), ctx.input("Y"), ctx.input("Weight")
        _check_runtime(x, y, w)
        b, k, m, n = _dims(x, w)
        dout = arrays.astype(ctx.input("Out@GRAD"), x.dtype).reshape((b, k))
        drow = dout.reshape((b, 1, k))
        if ctx.has_output("X@GRAD"):
            s = place.matmul(y, w.reshape((k * m, n)), False, True).reshape((b, k, m))
            ctx.set_output("X@GRAD", place.matmul(drow, s, False, False).reshape((b, m)))
        if ctx.has_output("Y@GRAD"):
            t = _rows_times_slices(place, x, w)
            ctx.set_output("Y@GRAD", place.matmul(drow, t, False, False).reshape((b, n)))
        if ctx.has_output("Weight@GRAD"):
            outer = place.matmul(x.reshape((b, m, 1)), y.reshape((b, 1, n)), False, False)
            dw = place.matmul(dout, outer.reshape((b, m * n)), True, False)
            ctx.set_output("Weight@GRAD", dw.reshape((k, m, n)))
        if ctx.has_output("Bias@GRAD"):
            ones = arrays.full((1, b), 1, x.dtype, like=x)
            ctx.set_output("Bias@GRAD", place.matmul(ones, dout, False, False))
    return run


def _grad_infer(ctx):
    """Each gradient has its variable's shape; dOut is [B, K]."""
    x, w = ctx.shape("X"), ctx.shape("Weight")
    ctx.require_gradient_fits("Out", want=[x[0], w[0]] if len(w) == 3 else None)
    for slot in ("X", "Y", "Weight"):
        if ctx.has_output(slot + "@GRAD"):
            ctx.set_output(slot + "@GRAD", ctx.shape(slot), ctx.dtype(slot))
    if ctx.has_output("Bias@GRAD"):
        ctx.set_output("Bias@GRAD", [1, w[0] if len(w) == 3 else -1], ctx.dtype("X"))
    if dtypes.name(ctx.dtype("Out@GRAD")) not in ("float32", "float64"):
        ctx.fail("Out@GRAD must be float32 or float64", slot="Out@GRAD",
                 expected="a float tensor", given=ctx.describe_input("Out@GRAD"))


def _floats(info, slots) -> bool:
    """Each of ``slots`` float32 or float64, X's dtype; X, Y and Weight of ranks 2, 2, 3."""
    dtype = info.dtype("X")
    return dtype.name in ("float32", "float64") and \
        all(info.dtype(s) == dtype for s in slots) and \
        (info.ndim("X"), info.ndim("Y"), info.ndim("Weight")) == (2, 2, 3)


def _lowered(info):
    if not info.has_input("Bias"):
        return Call(KB.bilinear, ("X", "Y", "Weight"), ("Out",)) \
            if _floats(info, ("Y", "Weight")) else None
    if not _floats(info, ("Y", "Weight", "Bias")):
        return None
    return Call(KB.bilinear_biased, ("X", "Y", "Weight", "Bias"), ("Out",))


def _lowered_grad(info):
    if not _floats(info, ("Y", "Weight", "Out@GRAD")):
        return None
    return Call(KB.bilinear_grads, ("X", "Y", "Weight", "Out@GRAD"),
                ("X@GRAD", "Y@GRAD", "Weight@GRAD", "Bias@GRAD"),
                tuple(info.has_output(s + "@GRAD") for s in ("X", "Y", "Weight", "Bias")))


register(OpDef(
    "bilinear_tensor_product",
    [Slot("X", "the first input [B, M]"), Slot("Y", "the second input [B, N]"),
     Slot("Weight", "K matrices [K, M, N]"),
     Slot("Bias", "[1, K], added to each row", dispensable=True)],
    [Slot("Out", "[B, K]: Out[b, k] = X[b] Weight[k] Y[b]^T + Bias[0, k]")], [],
    comment="Out[b, k] = X[b] . Weight[k] . Y[b]^T + Bias[0, k].",
    infer_shape=_infer, kernels={"cpu": _forward(CPU), "cuda": _forward(CUDA)},
    lowered=_lowered,
    grad=Grad(reads=["X", "Y", "Weight"], writes=["X", "Y", "Weight", "Bias"],
              kernel=_backward(CPU), cuda_kernel=_backward(CUDA), infer_shape=_grad_infer,
              lowered=_lowered_grad)))
