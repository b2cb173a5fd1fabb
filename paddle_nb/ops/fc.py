"""``fc``: Paddle's fused fully connected op, Out = act(Input2D @ W + Bias).

Programs never contain it as built: ``pd.layer.fc`` appends ``mul`` and
``elementwise_add`` (and an activation op), the ops a learner can step through and
differentiate. Paddle's inference passes (``fc_fuse_pass``) rewrite that pattern into one
``fc`` op, and inference models saved after those passes contain it; paddle_nb's own pass
(passes/fc_fuse.py) does the same rewrite. Like Paddle's, it has no gradient: a fused
program is for running, the unfused one for training. Its kernel is the three ops' kernels
run one after another on one output array, so a fused program gives the same bits; one
kernel function serves both places (backends/). In a compiled block it is
kernels/cpu/fc.fully_connected: mul's compiled product, then the bias and relu in place.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..kernels.cpu import fc as KFC
from ..kernels.cuda import copy as CC
from ..kernels.lowered import Call
from . import arrays
from .matmul import _flat2d
from ..backends import CPU, CUDA
from ..backends.products import BLAS_TYPES

ACTIVATIONS = ("", "relu")      # what Paddle's fc accepts
PAD = 4                         # padding_weights: W carries 4 extra rows and columns


def _activation_check(value):
    return None if value in ACTIVATIONS else \
        f"{value!r} is not an activation fc applies; expected one of {list(ACTIVATIONS)}"


def _weights_shape(ctx):
    """(rows, cols) of the weights W holds (without padding_weights' 4 extra each)."""
    rows, cols = ctx.shape("W")
    pad = PAD if ctx.attr("padding_weights") else 0
    return rows - pad if rows >= 0 else rows, cols - pad if cols >= 0 else cols


def _fc_infer(ctx):
    ctx.require_dtype("Input", "float")
    ctx.require_same_dtype("W", "Input")
    if len(ctx.shape("W")) != 2:
        ctx.fail("W must be a matrix", slot="W", expected="W of rank 2",
                 given=f"W {ctx.describe_input('W')}")
    xs, n_col = ctx.shape("Input"), ctx.attr("in_num_col_dims")
    if not 0 < n_col < len(xs):
        ctx.fail("in_num_col_dims must leave Input at least one column dim", slot="Input",
                 expected=f"1 <= in_num_col_dims < {len(xs)} (Input's rank)",
                 given=f"in_num_col_dims={n_col}, Input {ctx.describe_input('Input')}")
    rows, cols = _weights_shape(ctx)
    if ctx.attr("padding_weights") and (0 <= rows < 1 or 0 <= cols < 1):
        ctx.fail("padding_weights: W must hold 4 padding rows and columns around the weights",
                 slot="W", expected="W of at least [5, 5]",
                 given=f"W {ctx.describe_input('W')}")
    k = 1
    for d in xs[n_col:]:
        k = -1 if d < 0 or k < 0 else k * d
    if k >= 0 and rows >= 0 and k != rows:
        ctx.fail("Input's columns must equal W's rows", slot="W",
                 expected=f"W with {k} rows (Input {ctx.describe_input('Input')} flattened at "
                          f"in_num_col_dims={n_col})",
                 given=f"W {ctx.describe_input('W')}"
                       + (" (padding_weights: 4 rows less)" if ctx.attr("padding_weights")
                          else ""))
    if ctx.has_input("Bias"):
        ctx.require_same_dtype("Bias", "Input")
        bias = ctx.shape("Bias")
        if bias not in ([cols], [1, cols]) and cols >= 0 and -1 not in bias:
            ctx.fail("Bias must have one value per output column", slot="Bias",
                     expected=f"Bias of shape [{cols}] or [1, {cols}]",
                     given=f"Bias {ctx.describe_input('Bias')}")
    ctx.set_output("Out", xs[:n_col] + [cols], ctx.dtype("Input"))


def _crop(w):
    """The weights inside padding_weights' 4 extra rows and columns: a strided view on
    the host, a contiguous copy on the device (device arrays reshape only then)."""
    if arrays.on_device(w):
        rows, cols = w.shape
        return CC.gather(CC.copy_if_strided(w), (rows - PAD, cols - PAD), (cols, 1))
    return w[:-PAD, :-PAD]


def _fc(place):
    """mul's product, elementwise_add's sum and relu, in place on one array where the
    place writes into a given one (the CPU)."""
    def run(ctx):
        x, w = ctx.input("Input"), ctx.input("W")
        if ctx.attr("padding_weights"):
            w = _crop(w)
        n_col = ctx.attr("in_num_col_dims")
        out = place.product(x.reshape(_flat2d(x.shape, n_col)), w,
                            out=lambda shape, dtype: ctx.out("Out", shape, dtype))
        bias = ctx.input("Bias")
        if bias is not None:
            out = place.binary("elementwise_add", out, bias.reshape((1, bias.size)), out)
        if ctx.attr("activation_type") == "relu":
            out = place.unary("relu", out, 0.0, out)
        ctx.set_output("Out", out.reshape(tuple(x.shape[:n_col]) + (w.shape[1],)))
    run.__name__ = f"{place.name}_fc"
    return run


def _lowered_fc(info):
    """kernels/cpu/fc.fully_connected, for float32/float64 operands of one dtype (the
    product the CPU kernel gives to BLAS); Bias the literal None where absent."""
    slots = ("Input", "W", "Bias") if info.has_input("Bias") else ("Input", "W")
    dtype = info.dtype("Input")
    if dtype.type not in BLAS_TYPES or any(info.dtype(s) != dtype for s in slots):
        return None
    n_col = info.attr("in_num_col_dims")
    consts = (n_col, n_col + 1, PAD if info.attr("padding_weights") else 0,
              info.attr("activation_type") == "relu")
    return Call(KFC.fully_connected, slots, ("Out",),
                consts if info.has_input("Bias") else (None, *consts))


register(OpDef(
    "fc", [Slot("Input", "the input, flattened to a matrix at in_num_col_dims"),
           Slot("W", "the weights [columns of Input, size]"),
           Slot("Bias", "the bias [size] or [1, size]", dispensable=True)],
    [Slot("Out", "act(Input @ W + Bias)")],
    [Attr("in_num_col_dims", A.INT, 1, "Input's leading dims that stay rows",
          check=lambda v: None if v >= 1 else f"{v} is not >= 1"),
     Attr("activation_type", A.STRING, "", "'' or 'relu'", check=_activation_check),
     Attr("padding_weights", A.BOOLEAN, False, "W holds the weights padded by 4 rows and "
          "columns (as Paddle's inference passes may save it)"),
     Attr("use_mkldnn", A.BOOLEAN, False, "kept for Paddle compatibility", extra=True)],
    comment="Out = act(Input @ W + Bias): mul, elementwise_add and relu fused, as Paddle's "
            "fc_fuse_pass makes it (no gradient: for running a program, not training it).",
    infer_shape=_fc_infer, kernels={"cpu": _fc(CPU), "cuda": _fc(CUDA)}, grad=NO_GRADIENT,
    lowered=_lowered_fc))

