"""data_norm and its gradient (Fluid's slots and attributes, as ``static.nn.data_norm``
saves them).

data_norm normalises each column c of X [N, C] with running statistics the layer keeps as
parameters, not with the batch's own: Means = BatchSum / BatchSize, Scales =
sqrt(BatchSize / BatchSquareSum), Y = (X - Means) * Scales.

Its gradient op is also how those statistics learn. Besides X@GRAD = Y@GRAD * Scales, it
writes into the statistics' "gradients" this batch's own statistics, which the optimizer
then folds into the parameters (Paddle's design): BatchSize@GRAD = N, BatchSum@GRAD = the
column sums of X, BatchSquareSum@GRAD = the column sums of (X - Means)^2 plus N * epsilon.
These are not derivatives, so only X has a gradient in this package's backward (the
gradient maker asks for X@GRAD alone) and only X@GRAD is checked against central
differences (tests/test_layer_ops.py); the op is declared by hand with Paddle's slots so
that programs Paddle saved, which ask for all four, load and run. Paddle's op also lists
BatchSize, BatchSum and BatchSquareSum as outputs (its GPU kernel updates them in place
with summary_decay_rate); its CPU kernel leaves them as they are, and so does this one.

Not built: ``slot_dim`` > 0 (per-slot statistics that skip empty slots) and
``enable_scale_and_shift`` (scale_w and bias after the normalisation): both are refused
with an error that says so.

In a compiled block both are kernels/cpu/data_norm.py's loops: the same correctly rounded
operation per element, and the column sums by the same product with ones, bit for bit.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.grad_maker import GradOp, grad_name
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..kernels.cpu import data_norm as KD
from ..kernels.lowered import Call
from . import arrays
from .batch_norm import require_float
from ..backends import CPU, CUDA

STATS = ("BatchSize", "BatchSum", "BatchSquareSum")


def _unsupported(ctx):
    if ctx.attr("slot_dim") not in (-1, 0):
        ctx.fail("data_norm with slot_dim (per-slot statistics) is not built here",
                 expected="slot_dim=-1", given=f"slot_dim={ctx.attr('slot_dim')}")
    if ctx.attr("enable_scale_and_shift"):
        ctx.fail("data_norm with enable_scale_and_shift is not built here",
                 expected="enable_scale_and_shift=False", given="True")


def _infer(ctx):
    _unsupported(ctx)
    require_float(ctx, "X")
    x = ctx.shape("X")
    if len(x) != 2:
        ctx.fail("data_norm normalises the columns of X [N, C]", slot="X",
                 expected="rank 2", given=ctx.describe_input("X"))
    for slot in STATS:
        ctx.require_same_dtype(slot, "X")
        got = ctx.shape(slot)
        if len(got) != 1 or (got[0] >= 0 and x[1] >= 0 and got[0] != x[1]):
            ctx.fail(f"{slot} holds one value per column of X", slot=slot,
                     expected=f"[{x[1]}]", given=ctx.describe_input(slot))
    ctx.set_output("Y", x, ctx.dtype("X"))
    for slot in ("Means", "Scales"):
        if ctx.has_output(slot):
            ctx.set_output(slot, [x[1]], ctx.dtype("X"))


def _data_norm(place):
    def run(ctx):
        x = ctx.input("X")
        size, total, squares = (ctx.input(s) for s in STATS)
        if tuple(size.shape) != (int(x.shape[1]),) or len(x.shape) != 2:
            raise ValueError(f"data_norm: statistics {list(size.shape)} do not fit X "
                             f"{list(x.shape)}")
        means = place.binary("elementwise_div", total, size, out=None)
        scales = place.unary("sqrt", place.binary("elementwise_div", size, squares, out=None),
                             1.0, None)
        centred = place.binary("elementwise_sub", x, means, out=None)
        ctx.set_output("Y", place.binary("elementwise_mul", centred, scales, out=None))
        ctx.set_output("Means", means)
        ctx.set_output("Scales", scales)
    return run


def _column_sums(place, a):
    """[C]: the sums of a [N, C]'s columns (a product with a row of ones)."""
    ones = arrays.full((1, int(a.shape[0])), 1, a.dtype, like=a)
    return place.matmul(ones, a, False, False).reshape((int(a.shape[1]),))


def _data_norm_grad(place):
    def run(ctx):
        x, means, scales = ctx.input("X"), ctx.input("Means"), ctx.input("Scales")
        dy = arrays.astype(ctx.input("Y@GRAD"), x.dtype)
        n, c = (int(d) for d in x.shape)
        ctx.set_output("X@GRAD", place.binary("elementwise_mul", dy, scales, out=None))
        if ctx.has_output("BatchSize@GRAD"):
            ctx.set_output("BatchSize@GRAD", arrays.full((c,), n, x.dtype, like=x))
        if ctx.has_output("BatchSum@GRAD"):
            ctx.set_output("BatchSum@GRAD", _column_sums(place, x))
        if ctx.has_output("BatchSquareSum@GRAD"):
            d = place.binary("elementwise_sub", x, means, out=None)
            sums = _column_sums(place, place.binary("elementwise_mul", d, d, out=None))
            eps = arrays.full((c,), x.dtype.type(n) * x.dtype.type(ctx.attr("epsilon")),
                              x.dtype, like=x)
            ctx.set_output("BatchSquareSum@GRAD",
                           place.binary("elementwise_add", sums, eps, out=None))
    return run


def _grad_infer(ctx):
    _unsupported(ctx)
    require_float(ctx, "Y@GRAD")
    ctx.require_gradient_fits("Y", want=ctx.shape("X"))       # (Y has X's shape)
    x = ctx.shape("X")
    if len(x) != 2:
        ctx.fail("data_norm_grad takes X [N, C]", slot="X", expected="rank 2",
                 given=ctx.describe_input("X"))
    for slot in ("Means", "Scales"):
        if ctx.shape(slot) != [x[1]] and x[1] >= 0 and ctx.shape(slot)[:1] != [-1]:
            ctx.fail(f"{slot} is data_norm's per-column {slot}", slot=slot,
                     expected=f"[{x[1]}]", given=ctx.describe_input(slot))
    ctx.set_output("X@GRAD", x, ctx.dtype("X"))
    for slot in STATS:
        if ctx.has_output(slot + "@GRAD"):
            ctx.set_output(slot + "@GRAD", [x[1]], ctx.dtype("X"))


def _grad_maker(op, no_grad):
    """data_norm_grad asked for X@GRAD only (the statistics' "gradients" are not
    derivatives; Paddle's backward asks for them, and the op writes them when asked)."""
    x = op.input("X")[0]
    if x in no_grad:
        return []
    return [GradOp("data_norm_grad",
                   {"X": [x], "Means": op.output("Means"), "Scales": op.output("Scales"),
                    "Y@GRAD": [grad_name(n) for n in op.output("Y")],
                    "scale_w": op.input("scale_w"), "bias": op.input("bias")},
                   {"X@GRAD": [grad_name(x)]}, dict(op.attrs))]


# --- inside a compiled block (kernels/lowered.py) ------------------------------------------
def _plain_floats(info, slots) -> bool:
    """No scale and shift or slots (refused by the kernels), X [N, C] and ``slots`` of one
    float dtype."""
    dtype = info.dtype("X")
    return info.attr("slot_dim") in (-1, 0) and not info.attr("enable_scale_and_shift") \
        and dtype.name in ("float32", "float64") and info.ndim("X") == 2 and \
        all(info.dtype(s) == dtype for s in slots)


def _lowered(info):
    if not _plain_floats(info, STATS):
        return None
    return Call(KD.data_normalized, ("X",) + STATS, ("Y", "Means", "Scales"))


def _lowered_grad(info):
    if not _plain_floats(info, ("Means", "Scales", "Y@GRAD")):
        return None
    return Call(KD.data_norm_grads, ("X", "Means", "Scales", "Y@GRAD"),
                ("X@GRAD",) + tuple(s + "@GRAD" for s in STATS),
                (float(info.attr("epsilon")),) +
                tuple(info.has_output(s + "@GRAD") for s in STATS))


_ATTRS = [
    Attr("epsilon", A.FLOAT, 1e-4, "added (times N) to BatchSquareSum@GRAD"),
    Attr("slot_dim", A.INT, -1, "per-slot statistics when > 0 (not built here)"),
    Attr("summary_decay_rate", A.FLOAT, 0.9999999, "the decay of the statistics (Paddle's "
         "GPU kernel)"),
    Attr("enable_scale_and_shift", A.BOOLEAN, False, "scale_w and bias after normalising "
         "(not built here)"),
    Attr("data_layout", A.STRING, "NCHW", "kept for Paddle compatibility (X is [N, C])"),
    Attr("sync_stats", A.BOOLEAN, False, "multi-GPU statistics (kept for Paddle "
         "compatibility)", extra=True)]
_OPTIONAL = [Slot("scale_w", "[C] (enable_scale_and_shift; not built here)", dispensable=True),
             Slot("bias", "[C] (enable_scale_and_shift; not built here)", dispensable=True)]

register(OpDef(
    "data_norm",
    _OPTIONAL + [Slot("X", "[N, C]"),
                 Slot("BatchSize", "[C]: the running count"),
                 Slot("BatchSum", "[C]: the running sum"),
                 Slot("BatchSquareSum", "[C]: the running sum of squared deviations")],
    [Slot("Y", "(X - Means) * Scales"),
     Slot("Means", "[C] = BatchSum / BatchSize", intermediate=True),
     Slot("Scales", "[C] = sqrt(BatchSize / BatchSquareSum)", intermediate=True)],
    _ATTRS,
    comment="Y = (X - BatchSum / BatchSize) * sqrt(BatchSize / BatchSquareSum), per column.",
    infer_shape=_infer, kernels={"cpu": _data_norm(CPU), "cuda": _data_norm(CUDA)},
    lowered=_lowered, grad=_grad_maker))

register(OpDef(
    "data_norm_grad",
    _OPTIONAL + [Slot("X", "the forward X"), Slot("Means", "the forward Means"),
                 Slot("Scales", "the forward Scales"), Slot("Y@GRAD", "gradient of Y")],
    [Slot("X@GRAD", "Y@GRAD * Scales", dispensable=True)]
    + [Slot(s + "@GRAD", f"this batch's {s[5:] or 'count'} (Paddle's statistic, not a "
            "derivative)", dispensable=True) for s in STATS]
    + [Slot(s, "Paddle's in-place update (its GPU kernel); left as it is", dispensable=True)
       for s in STATS]
    + [Slot(s + "@GRAD", "(enable_scale_and_shift; not built here)", dispensable=True)
       for s in ("scale_w", "bias")],
    _ATTRS,
    comment="X@GRAD = Y@GRAD * Scales; the statistics' slots get this batch's count, "
            "column sums and centred square sums.",
    infer_shape=_grad_infer,
    kernels={"cpu": _data_norm_grad(CPU), "cuda": _data_norm_grad(CUDA)},
    lowered=_lowered_grad, grad=NO_GRADIENT, grad_of="data_norm"))

