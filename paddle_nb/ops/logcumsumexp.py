"""logcumsumexp: running log-sum-exp along an axis, ``Out_j = log(sum of exp(X_i), i <= j)``
(Fluid's slots and attributes, as ``paddle.logcumsumexp`` saves them), and its gradient.

The attributes are cumsum's (ops/cumsum.py): ``flatten`` scans X as one row (Out is 1-D;
``paddle.logcumsumexp`` without an axis sets it), ``exclusive`` leaves each element out of
its own sum (the first is log(0) = -inf), ``reverse`` scans from the end. Each step is a
``logaddexp`` (the larger term plus log1p of the other's exp), so nothing overflows;
kernels/running_scans.py has the lines, and the gradient without overflow.

Paddle 2.6.2 starts its scan from the lowest finite number instead of -inf, so where
every summed element is -inf (and for the first element of an exclusive scan) it gives
-1.8e308 (float64; -3.4e38 in float32) where the log of an empty sum is -inf; this
package gives -inf.
"""
from __future__ import annotations

from ..core import dtypes
from ..core.grad_maker import Grad
from ..core.registry import OpDef, register
from ..kernels import running_scans as K
from ..kernels.cpu import scans as KS
from ..kernels.lowered import Call
from .common import FLOAT_TYPES, OUT, X
from .cumsum import _along, _cumsum_infer, running_scan, scan_attrs


def _logcumsumexp_infer(ctx):
    if dtypes.name(ctx.dtype("X")) not in ("float32", "float64"):
        ctx.fail("logcumsumexp needs float32 or float64 elements (Paddle's CPU kernels)",
                 slot="X", expected="one of those", given=ctx.describe_input("X"))
    _cumsum_infer(ctx)                       # the axis and flatten rules are cumsum's


def _logcumsumexp_grad(kernels):
    """dX from X (the inclusive sums recomputed) and dOut; Out is read by Paddle's op."""
    def run(ctx):
        x = ctx.input("X")
        shape = tuple(int(d) for d in x.shape)
        xs, axis = _along(ctx, x)
        dout = ctx.input("Out@GRAD")
        if int(dout.size) != int(x.size):
            raise ValueError(f"logcumsumexp_grad: slot Out@GRAD: expected {int(x.size)} "
                             f"values (X's), given shape {list(dout.shape)}")
        dout = dout.reshape(tuple(int(d) for d in xs.shape))
        dx = kernels.logcumsumexp_grad(xs, dout, axis, ctx.attr("exclusive"),
                                       ctx.attr("reverse"))
        ctx.set_output("X@GRAD", dx.reshape(shape))
    return run


def _lowered(grad: bool):
    """logcumsumexp's (``grad``: its gradient's) form: kernels/cpu/reduce.py's calls of
    running_scans' CPU loops, along the axis or (``flatten``) of X as one row."""
    def lowered(info):
        rank = info.ndim("X")
        if info.dtype("X").name not in FLOAT_TYPES or rank == 0 and not info.attr("flatten"):
            return None
        ends = (bool(info.attr("exclusive")), bool(info.attr("reverse")))
        if info.attr("flatten"):
            if grad:
                return Call(KS.logcumsumexp_flat_grad, ("X", "Out@GRAD"), ("X@GRAD",), ends)
            return Call(KS.logcumsumexp_flat, ("X",), ("Out",), ends)
        axis = info.attr("axis") % rank
        if grad:
            return Call(KS.logcumsumexp_along_grad, ("X", "Out@GRAD"), ("X@GRAD",),
                        (axis, *ends))
        return Call(KS.logcumsumexp_along, ("X",), ("Out",), (axis, *ends))
    return lowered


register(OpDef(
    "logcumsumexp", [X], [OUT],
    scan_attrs("the axis scanned", "scan"),
    comment="Out = log(cumsum(exp(X))) along axis, computed without overflow.",
    infer_shape=_logcumsumexp_infer,
    kernels={"cpu": running_scan(K.CPU.logcumsumexp),
             "cuda": running_scan(K.CUDA.logcumsumexp)},
    lowered=_lowered(grad=False),
    grad=Grad(reads=["X", "Out"], writes=["X"], kernel=_logcumsumexp_grad(K.CPU),
              cuda_kernel=_logcumsumexp_grad(K.CUDA), lowered=_lowered(grad=True))))
