"""Activations with random noise: rrelu and gumbel_softmax, and their gradients (Fluid's
slots and attributes, as ``F.rrelu`` / ``nn.RReLU`` and ``F.gumbel_softmax`` save them).

rrelu (randomised leaky ReLU): each negative element is scaled by its own slope drawn from
U(lower, upper) (training), or by (lower + upper) / 2 (``is_test``); Noise holds each
element's slope (1 where X >= 0), and dX = dOut * Noise.

gumbel_softmax: softmax((X + g) / temperature) along ``axis``, g = -log(-log(u)) Gumbel
noise per element, so each row is a "soft" sample of a category with probabilities
softmax(X); ``hard`` gives the one-hot vector of the row's largest entry instead. Its
gradient treats the noise as fixed: dX = Out * (dOut - sum(dOut * Out)) / temperature.
Paddle 2.6.2's gumbel_softmax_grad leaves out the 1 / temperature (its gradient is
temperature times too large); this one is what central differences give
(tests/test_sampling_ops.py). In hard mode Out is one-hot and the formula gives 0, as
Paddle's op does (``F.gumbel_softmax``'s straight-through estimator is not the op's).

Neither op has a seed in Fluid: the noise's seed is ops/sampling.py's ``op_seed`` (from the
program's random_seed, else new each run); the draws are counter-based
(kernels/cpu/sampling.py), the same on the CPU and CUDA for one seed.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu import sampling as SK
from ..kernels.cuda import sampling as SC
from ..kernels.lowered import Call
from . import arrays
from .batch_norm import require_float
from ..backends import CPU, CUDA
from .common import FLOAT_TYPES, in_unit_interval
from .sampling import op_seed, program_seed


# --- rrelu ------------------------------------------------------------------------------------
_SLOPE_CHECK = in_unit_interval("expected a slope in [0, 1]")


def _rrelu_infer(ctx):
    require_float(ctx, "X")
    lower, upper = ctx.attr("lower"), ctx.attr("upper")
    if not lower <= upper:
        ctx.fail("rrelu draws slopes from [lower, upper]", expected="lower <= upper",
                 given=f"lower={lower}, upper={upper}")
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))
    if ctx.has_output("Noise"):
        ctx.set_output("Noise", ctx.shape("X"), ctx.dtype("X"))


def _slopes(ctx) -> tuple[float, float]:
    """(lower, upper) of the slopes drawn: the attributes (training) or both the middle of
    [lower, upper] (is_test: a draw from U(mid, mid))."""
    lower, upper = float(ctx.attr("lower")), float(ctx.attr("upper"))
    if ctx.attr("is_test"):
        lower = upper = (lower + upper) / 2
    return lower, upper


def _noise(ctx, x):
    """Each element's slope."""
    lower, upper = _slopes(ctx)
    seed = op_seed(ctx)
    if arrays.on_device(x):
        return SC.rrelu_noise(x, lower, upper, seed)
    noise = np.empty(x.shape, x.dtype)
    SK.rrelu_noise(np.ascontiguousarray(x).reshape(-1), lower, upper, np.uint64(seed),
                   noise.reshape(-1))
    return noise


def _rrelu(place):
    def run(ctx):
        x = ctx.input("X")
        noise = _noise(ctx, x)
        ctx.set_output("Out", place.binary("elementwise_mul", x, noise, out=None))
        ctx.set_output("Noise", noise)
    return run


def _rrelu_grad(place):
    def run(ctx):
        noise = ctx.input("Noise")
        dout = arrays.astype(ctx.input("Out@GRAD"), noise.dtype)
        ctx.set_output("X@GRAD", place.binary("elementwise_mul", dout, noise, out=None))
    return run


# --- in a compiled block (kernels/lowered.py): the kernels' loops (kernels/cpu/sampling.py)
# with the seed the kernel takes (ops/sampling.py's forms say how) ---------------------------
def _floats(info, slot: str) -> bool:
    return info.dtype(slot).name in FLOAT_TYPES


def _lowered_rrelu(info):
    if not _floats(info, "X"):
        return None
    return Call(SK.rrelu_drawn, ("X",), ("Out", "Noise"),
                (*_slopes(info), program_seed(info.pop)))


def _lowered_rrelu_grad(info):
    return Call(SK.rrelu_grad_drawn, ("Out@GRAD", "Noise"), ("X@GRAD",)) \
        if _floats(info, "Noise") and _floats(info, "Out@GRAD") else None


register(OpDef(
    "rrelu", [Slot("X", "the input")],
    [Slot("Out", "X, each negative element times its slope"),
     Slot("Noise", "each element's slope (1 where X >= 0)", intermediate=True)],
    [Attr("is_test", A.BOOLEAN, False, "inference: the slope is (lower + upper) / 2"),
     Attr("lower", A.FLOAT, 1.0 / 8, "the smallest slope drawn", check=_SLOPE_CHECK),
     Attr("upper", A.FLOAT, 1.0 / 3, "the largest slope drawn", check=_SLOPE_CHECK)],
    comment="Out = X where X >= 0, else X times a slope drawn from U(lower, upper) "
            "((lower + upper) / 2 with is_test).",
    infer_shape=_rrelu_infer, kernels={"cpu": _rrelu(CPU), "cuda": _rrelu(CUDA)},
    lowered=_lowered_rrelu,
    grad=Grad(reads=["X", "Noise"], writes=["X"], kernel=_rrelu_grad(CPU),
              cuda_kernel=_rrelu_grad(CUDA), lowered=_lowered_rrelu_grad)))


# --- gumbel_softmax ------------------------------------------------------------------------
def _axis(axis: int, rank: int) -> int:
    if not -rank <= axis < max(rank, 1):
        raise ValueError(f"gumbel_softmax: axis {axis} is out of range for a rank-{rank} X; "
                         f"expected an axis in [{-rank}, {rank - 1}]")
    return axis % max(rank, 1)


def _gumbel_infer(ctx):
    require_float(ctx, "X")
    rank = len(ctx.shape("X"))
    if rank == 0:
        ctx.fail("gumbel_softmax takes at least one axis of categories", slot="X",
                 expected="rank >= 1", given=ctx.describe_input("X"))
    ctx.require_range("axis", ctx.attr("axis"), -rank, rank)
    t = ctx.attr("temperature")
    if not t > 0:
        ctx.fail("the temperature must be positive", expected="temperature > 0",
                 given=f"temperature={t}")
    ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"))


def _to_rows(x, axis: int):
    """x with ``axis`` moved last, as rows [R, C]; the permutation used."""
    rank = len(x.shape)
    perm = [d for d in range(rank) if d != axis] + [axis]
    moved = arrays.transpose(x, perm)
    return moved.reshape((-1, int(x.shape[axis]))), moved.shape, perm


def _from_rows(rows, moved_shape, perm):
    back = [perm.index(d) for d in range(len(perm))]
    return arrays.transpose(rows.reshape(tuple(moved_shape)), back)


def _gumbel_softmax(ctx):
    x = ctx.input("X")
    axis = _axis(int(ctx.attr("axis")), len(x.shape))
    rows, moved, perm = _to_rows(x, axis)
    t, hard, seed = float(ctx.attr("temperature")), bool(ctx.attr("hard")), op_seed(ctx)
    if arrays.on_device(x):
        out = SC.gumbel_softmax(rows, t, hard, seed)
    else:
        out = np.empty(rows.shape, rows.dtype)
        SK.gumbel_softmax(np.ascontiguousarray(rows), t, hard, np.uint64(seed), out)
    ctx.set_output("Out", _from_rows(out, moved, perm))


def _gumbel_softmax_grad(place):
    """dX = (Out * dOut - Out * sum(Out * dOut)) / temperature, along axis."""
    def run(ctx):
        out = ctx.input("Out")
        dout = arrays.astype(ctx.input("Out@GRAD"), out.dtype)
        axis = _axis(int(ctx.attr("axis")), len(out.shape))
        o_rows, moved, perm = _to_rows(out, axis)
        d_rows, _, _ = _to_rows(dout, axis)
        dx_rows = place.softmax_grad_rows(o_rows, d_rows)
        dx_rows = place.scale(dx_rows, 1.0 / float(ctx.attr("temperature")))
        ctx.set_output("X@GRAD", _from_rows(dx_rows, moved, perm))
    return run


def _axis_moves(info, slot: str):
    """(perm, back): the permutation moving the op's axis of ``slot`` last and its
    inverse, as _to_rows makes them; None where the kernel has no rows to draw."""
    shape = info.shape(slot)
    rank = len(shape)
    axis = int(info.attr("axis"))
    if not _floats(info, slot) or not -rank <= axis < rank or not shape[axis % rank] > 0:
        return None
    axis %= rank
    perm = tuple(d for d in range(rank) if d != axis) + (axis,)
    return perm, tuple(perm.index(d) for d in range(rank))


def _lowered_gumbel_softmax(info):
    moves = _axis_moves(info, "X")
    if moves is None:
        return None
    return Call(SK.gumbel_softmax_drawn, ("X",), ("Out",),
                (*moves, float(info.attr("temperature")), bool(info.attr("hard")),
                 program_seed(info.pop)))


def _lowered_gumbel_softmax_grad(info):
    moves = _axis_moves(info, "Out")
    if moves is None or not _floats(info, "Out@GRAD"):
        return None
    return Call(SK.gumbel_softmax_grad_rows, ("Out", "Out@GRAD"), ("X@GRAD",),
                (*moves, 1.0 / float(info.attr("temperature"))))


register(OpDef(
    "gumbel_softmax", [Slot("X", "unnormalised log-probabilities")],
    [Slot("Out", "a soft (or, with hard, one-hot) sample per row along axis")],
    [Attr("temperature", A.FLOAT, 1.0, "> 0: small values give samples near one-hot"),
     Attr("hard", A.BOOLEAN, False, "give the one-hot vector of each row's largest entry"),
     Attr("axis", A.INT, -1, "the axis of the categories")],
    comment="Out = softmax((X + g) / temperature) along axis, g Gumbel noise (hard: "
            "one-hot of its argmax).",
    infer_shape=_gumbel_infer, kernels={"cpu": _gumbel_softmax, "cuda": _gumbel_softmax},
    lowered=_lowered_gumbel_softmax,
    grad=Grad(reads=["Out"], grads_of=["Out"], writes=["X"],
              kernel=_gumbel_softmax_grad(CPU), cuda_kernel=_gumbel_softmax_grad(CUDA),
              lowered=_lowered_gumbel_softmax_grad)))
