"""lstsq: the least-squares solution of X Solution = Y for each matrix pair (Fluid's slots
and attributes, as ``paddle.linalg.lstsq`` saves them).

X is [..., m, n] and Y [..., m, k] with the same batch dims. Solution [..., n, k] minimises
||X Solution - Y|| column by column; where X has not full rank (or m < n), the solution of
least norm. ``rcond``: singular values below rcond * the largest count as zero (a negative
rcond: eps * max(m, n), Paddle's default). Rank (int32, one per matrix) is the rank found
so. Residuals [..., k] are the squared residual norms when m > n (empty otherwise, as in
Paddle). SingularValues [..., min(m, n)] are X's singular values for the drivers that
compute them ('gelsd', 'gelss'); for 'gels' and 'gelsy' Paddle leaves them empty, and so
does this op. Every driver gives the same solution here, gelsd's: through the singular
value decomposition (LAPACK on the host, on both places, as Paddle 2.6.2 runs lstsq on the
CPU's LAPACK: ops/lapack.py; the math: kernels/cpu/lstsq.py). No gradient, as in Paddle.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.lstsq import WITH_SINGULAR_VALUES, lstsq_arrays, lstsq_in_python
from ..kernels.lowered import Call
from . import lapack as L
from .common import X, Y

DRIVERS = ("gels", "gelsy", "gelsd", "gelss")


def _lstsq_infer(ctx):
    xs = L.check_matrices(ctx, "lstsq", "X")
    ys = L.check_matrices(ctx, "lstsq", "Y")
    if ctx.dtype("Y") != ctx.dtype("X"):
        ctx.fail("X and Y must have the same element type", slot="Y",
                 expected=f"{ctx.describe_input('X')}'s type", given=ctx.describe_input("Y"))
    if len(xs) != len(ys) or any(a >= 0 and b >= 0 and a != b
                                 for a, b in zip(xs[:-1], ys[:-1])):
        ctx.fail("Y must have X's batch dims and X's number of rows", slot="Y",
                 expected=f"[{', '.join(map(str, xs[:-1]))}, k]", given=ctx.describe_input("Y"))
    batch, m, n, k = xs[:-2], xs[-2], xs[-1], ys[-1]
    dtype = ctx.dtype("X")
    ctx.set_output("Solution", batch + [n, k], dtype)
    ctx.set_output("Residuals", batch + [k] if m > n else [0], dtype)
    ctx.set_output("Rank", batch, "int32")
    with_s = ctx.attr("driver") in WITH_SINGULAR_VALUES
    ctx.set_output("SingularValues", batch + [min(m, n)] if with_s else [0], dtype)


# The math: kernels/cpu/lstsq.py (host arrays in, host results out), which a compiled block
# calls too (``lstsq_in_python``)
def _lstsq(ctx):
    L.set_results(ctx, ("Solution", "Residuals", "Rank", "SingularValues"),
                  lstsq_arrays(L.host(ctx.input("X")), L.host(ctx.input("Y")),
                               ctx.attr("rcond"), ctx.attr("driver")))


def _lowered_lstsq(info):
    if info.ndim("X") != 2:
        return None
    return Call(lstsq_in_python, ("X", "Y"), ("Solution", "Residuals", "Rank",
                                              "SingularValues"),
                (float(info.attr("rcond")), str(info.attr("driver"))))


register(OpDef(
    "lstsq", [X, Y],
    [Slot("Solution", "the least-squares (least-norm) solution"),
     Slot("Residuals", "the squared residual norms per column (m > n; else empty)",
          dispensable=True),
     Slot("Rank", "the rank of each matrix of X (int32)"),
     Slot("SingularValues", "X's singular values ('gelsd', 'gelss'; else empty)")],
    [Attr("rcond", A.FLOAT, -1.0, "singular values below rcond * the largest count as zero "
                                   "(negative: eps * max(m, n))"),
     Attr("driver", A.STRING, "gels", "the LAPACK driver Paddle calls: 'gels', 'gelsy', "
                                      "'gelsd' or 'gelss'",
          check=L.one_of(DRIVERS, "driver"))],
    comment="Solution = argmin ||X Solution - Y|| per matrix pair (least norm), with "
            "Residuals, Rank and SingularValues.",
    infer_shape=_lstsq_infer, kernels={"cpu": _lstsq, "cuda": _lstsq},
    lowered=_lowered_lstsq))
