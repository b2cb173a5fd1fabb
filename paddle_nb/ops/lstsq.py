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
CPU's LAPACK: ops/lapack.py). No gradient, as in Paddle.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.in_python import in_python, like, several
from ..kernels.lowered import Call
from . import lapack as L
from .common import X, Y

DRIVERS = ("gels", "gelsy", "gelsd", "gelss")
WITH_SINGULAR_VALUES = ("gelsd", "gelss")


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


# The kernel's math, one function of host arrays and attributes (the kernel puts the
# results on its place), also called from a compiled block (kernels/cpu/linalg.py says why)
def lstsq_arrays(x, y, rcond, driver):
    """(Solution, Residuals, Rank, SingularValues)."""
    a, b = L.host_matrices(x, "lstsq", "X"), L.host_matrices(y, "lstsq", "Y")
    if a.shape[:-1] != b.shape[:-1]:
        raise ValueError(f"lstsq: slot Y: expected X's batch dims and rows "
                         f"{list(a.shape[:-1])}, given shape {list(b.shape)}")
    batch, (m, n), k = a.shape[:-2], a.shape[-2:], b.shape[-1]
    rcond = float(rcond)
    if rcond < 0:
        rcond = np.finfo(np.dtype(x.dtype)).eps * max(m, n)
    solution = np.zeros(batch + (n, k))
    rank = np.zeros(batch, np.int32)
    values = np.zeros(batch + (min(m, n),))
    if m and n:                          # numpy's LAPACK call refuses empty matrices
        # gelsd's least-norm solution, written out: V diag(1/s, s above the cutoff) U^T Y
        u, values, vh = np.linalg.svd(a, full_matrices=False)
        kept = values > rcond * values[..., :1]
        rank = kept.sum(axis=-1).astype(np.int32)
        inverse = np.divide(1.0, values, out=np.zeros_like(values), where=kept)
        solution = L.transpose(vh) @ (inverse[..., :, None] * (L.transpose(u) @ b))
    residuals = ((a @ solution - b) ** 2).sum(axis=-2) if m > n else np.zeros((0,))
    if driver not in WITH_SINGULAR_VALUES:
        values = np.zeros((0,))
    return (L.result(solution, x.dtype), L.result(residuals, x.dtype),
            L.result(rank, np.int32), L.result(values, x.dtype))


def _lstsq(ctx):
    L.set_results(ctx, ("Solution", "Residuals", "Rank", "SingularValues"),
                  lstsq_arrays(ctx.input("X"), ctx.input("Y"), ctx.attr("rcond"),
                               ctx.attr("driver")))


# one matrix pair: Residuals and SingularValues are vectors whether empty or not (a batch's
# have its rank unless empty, which its shapes decide, not its types)
lstsq_in_python = in_python(lstsq_arrays, several(like(0), like(0, ndim=1),
                                                    like(0, ndim=0, dtype=np.int32),
                                                    like(0, ndim=1)))


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
