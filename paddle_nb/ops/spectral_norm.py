"""spectral_norm and its gradient (Fluid's slots and attributes, as ``nn.SpectralNorm``
and ``static.nn.spectral_norm`` save them).

Out = Weight / sigma, sigma Weight's largest singular value estimated by ``power_iters``
rounds of power iteration from U and V (kernels/cpu/spectral_norm.py). Weight is seen as a
matrix [h, m]: its axis ``dim`` first (h = that axis's size), all the others flattened
behind it in order (m). U [h] and V [m] are inputs the layer keeps as parameters; like
Paddle's op, this one does not write the iterated vectors back.

The gradient is the derivative of that whole function: through sigma and through the
power iteration's u and v, which depend on Weight too (U and V, the starting vectors, get
none). That is what central differences measure, for any power_iters. Paddle 2.6.2's
spectral_norm_grad is not a derivative: it computes
dOut * (1 - u v^T * sum(Weight / sigma)) / sigma, elementwise (the sum should be of
dOut * Weight / sigma, and added, not multiplied); its values in the coverage table are
left out of the comparison (paddle_nb/coverage/paddle_wrong.py).

In a compiled block both call the same pass (kernels/cpu/spectral_norm.py's
spectral_normalized and its _grad: the axis moved, the pass, moved back), bit for bit.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import spectral_norm as KS
from ..kernels.cuda import spectral_norm as CS
from ..kernels.lowered import Call
from . import arrays
from .batch_norm import require_float


# the kernels keep every iterate for the gradient: a bound on that memory (Paddle's layers
# use 1 or 2; a power iteration converges long before this)
MAX_POWER_ITERS = 1000


def _matrix_dims(shape, dim: int) -> tuple[int, int]:
    h = shape[dim]
    rest = [d for i, d in enumerate(shape) if i != dim]
    m = -1 if any(d < 0 for d in rest) else int(np.prod(rest, dtype=np.int64))
    return h, m


def _infer(ctx):
    for slot in ("Weight", "U", "V"):
        require_float(ctx, slot)
        ctx.require_same_dtype(slot, "Weight")
    shape = ctx.shape("Weight")
    if len(shape) < 2:
        ctx.fail("spectral_norm normalises a matrix (or a tensor seen as one)",
                 slot="Weight", expected="rank >= 2", given=ctx.describe_input("Weight"))
    dim = ctx.require_range("dim", ctx.attr("dim"), -len(shape), len(shape)) % len(shape)
    iters, eps = ctx.attr("power_iters"), ctx.attr("eps")
    if not isinstance(iters, int) or not 0 <= iters <= MAX_POWER_ITERS:
        ctx.fail("power_iters counts iterations (each one's vectors are kept for the "
                 "gradient)", expected=f"0 <= power_iters <= {MAX_POWER_ITERS}",
                 given=f"power_iters={iters!r}")
    if not eps > 0:
        ctx.fail("eps keeps the normalisation finite", expected="eps > 0",
                 given=f"eps={eps!r}")
    h, m = _matrix_dims(shape, dim)
    for slot, want in (("U", h), ("V", m)):
        got = ctx.shape(slot)
        if len(got) != 1 or (want >= 0 and got[0] >= 0 and got[0] != want):
            along = "rows" if slot == "U" else "columns"
            ctx.fail(f"{slot} is a vector of Weight's matrix {along}",
                     slot=slot, expected=f"[{want}]", given=ctx.describe_input(slot))
    ctx.set_output("Out", shape, ctx.dtype("Weight"))


def _as_matrix(w, dim: int):
    """(matrix [h, m], the permutation that moved ``dim`` first)."""
    rank = len(w.shape)
    perm = [dim] + [d for d in range(rank) if d != dim]
    moved = arrays.transpose(w, perm) if dim else w
    h, m = _matrix_dims([int(d) for d in w.shape], dim)
    return moved.reshape((h, m)), perm


def _from_matrix(mat, like_shape, perm):
    moved = mat.reshape(tuple(int(like_shape[p]) for p in perm))
    if perm[0] == 0:
        return moved
    return arrays.transpose(moved, [perm.index(d) for d in range(len(perm))])


def _check_runtime(w, u, v, dim):
    h, m = _matrix_dims([int(d) for d in w.shape], dim)
    if tuple(u.shape) != (h,) or tuple(v.shape) != (m,):
        raise ValueError(f"spectral_norm: U {list(u.shape)} and V {list(v.shape)} do not "
                         f"fit Weight {list(w.shape)} seen as [{h}, {m}]")


def _arguments(ctx):
    w, u, v = ctx.input("Weight"), ctx.input("U"), ctx.input("V")
    dim = int(ctx.attr("dim")) % len(w.shape)
    _check_runtime(w, u, v, dim)
    mat, perm = _as_matrix(w, dim)
    return w, mat, perm, u, v, int(ctx.attr("power_iters")), float(ctx.attr("eps"))


def _scratch(mat, iters: int):
    """The kernel's record of the power iteration (every u, every v, each step's norms)
    and its four gradient vectors."""
    h, m = mat.shape
    return (np.empty((iters + 1, h), mat.dtype), np.empty((iters + 1, m), mat.dtype),
            np.zeros((iters + 1, 2), mat.dtype)), [np.empty(n, mat.dtype) for n in (h, m, m, h)]


def _spectral_norm(ctx):
    w, mat, perm, u, v, iters, eps = _arguments(ctx)
    if arrays.on_device(w):
        out = CS.spectral_norm(mat, u, v, iters, eps)
    else:
        mat = np.ascontiguousarray(mat)
        out = np.empty(mat.shape, mat.dtype)
        record, vectors = _scratch(mat, iters)
        KS.spectral_norm_pass(mat, u, v, iters, eps, *record, out, *vectors, False)
    ctx.set_output("Out", _from_matrix(out, w.shape, perm))


def _spectral_norm_grad(ctx):
    w, mat, perm, u, v, iters, eps = _arguments(ctx)
    dout = arrays.astype(ctx.input("Out@GRAD"), w.dtype)
    dmat, _ = _as_matrix(dout, perm[0])
    if arrays.on_device(w):
        dw = CS.spectral_norm_grad(mat, u, v, iters, eps, dmat)
    else:
        mat = np.ascontiguousarray(mat)
        dw = np.array(dmat, dtype=mat.dtype, order="C")      # overwritten with dW
        record, vectors = _scratch(mat, iters)
        KS.spectral_norm_pass(mat, u, v, iters, eps, *record, dw, *vectors, True)
    ctx.set_output("Weight@GRAD", _from_matrix(dw, w.shape, perm))


def _lowered(grad: bool):
    def lowered(info):
        dtype, rank = info.dtype("Weight"), info.ndim("Weight")
        if dtype.name not in ("float32", "float64") or rank < 2 or \
                any(info.dtype(s) != dtype for s in ("U", "V") + (("Out@GRAD",) if grad
                                                                  else ())):
            return None
        dim, iters = info.attr("dim"), info.attr("power_iters")
        if not -rank <= dim < rank or not isinstance(iters, int) or \
                not 0 <= iters <= MAX_POWER_ITERS:
            return None
        order = (dim % rank,) + tuple(d for d in range(rank) if d != dim % rank)
        consts = (order, tuple(order.index(d) for d in range(rank)), iters,
                  float(info.attr("eps")))
        if grad:
            return Call(KS.spectral_normalized_grad, ("Weight", "U", "V", "Out@GRAD"),
                        ("Weight@GRAD",), consts)
        return Call(KS.spectral_normalized, ("Weight", "U", "V"), ("Out",), consts)
    return lowered


register(OpDef(
    "spectral_norm",
    [Slot("Weight", "the weight to normalise (rank >= 2)"),
     Slot("U", "[h]: the left vector the power iteration starts from"),
     Slot("V", "[m]: the right vector the power iteration starts from")],
    [Slot("Out", "Weight / sigma")],
    [Attr("dim", A.INT, 0, "the axis of Weight that is the matrix's rows"),
     Attr("power_iters", A.INT, 1, "rounds of power iteration before sigma"),
     Attr("eps", A.FLOAT, 1e-12, "added to the vector norms before dividing")],
    comment="Out = Weight / sigma, sigma its largest singular value (power iteration "
            "from U, V).",
    infer_shape=_infer,
    kernels={"cpu": _spectral_norm, "cuda": _spectral_norm}, lowered=_lowered(False),
    grad=Grad(reads=["Weight", "U", "V"], writes=["Weight"], kernel=_spectral_norm_grad,
              cuda_kernel=_spectral_norm_grad, lowered=_lowered(True))))
