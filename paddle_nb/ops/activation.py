"""Unary elementwise ops: relu, sigmoid, tanh, exp, log, square, gelu; and scale, cast.

The activations are this family's worked example of one home per op: each is a scalar
function of its input (and one of its gradient) under ``@pointwise``, which compiles it for
the CPU (a numba ufunc and a ``prange`` twin) and for CUDA (a device function in a
grid-stride kernel), then one ``register`` line that declares the op and its ``_grad``
op. The places look kernels up by name (``places.CPU.unary("tanh", ...)``), so the fused
ops and fc's activation reach the same code.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.grad_maker import Grad, GradOp, grad_name
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels.cpu.fastmath32 import fexp, fsigmoid, ftanh
from ..kernels.cpu.lazy_ufunc import FLOAT_1, FLOAT_2, INT_AND_FLOAT_1
from ..kernels.cuda import copy as CC
from ..kernels.cpu import fill as KF
from ..kernels.lowered import Call, Elementwise
from ..kernels.pointwise import KERNELS, pointwise
from ..kernels.scale import bias_then_scale, scale_then_bias
from .common import OUT, X, dtype_code_check, same_shape_as_x
from ..backends import CPU, CUDA

# Elements from which the CPU runs the prange twin: the first measured size (float32,
# 2 threads, powers of 2) where it took <= ~0.8x the serial loop's time.
MIN_PARALLEL_MATH = 32_768     # exp/tanh/sigmoid: measured crossover 16-24k elements
MIN_PARALLEL_LOG = 4_096       # log (a libm call per element): measured crossover < 2k
MIN_PARALLEL_CHEAP = 131_072   # relu/square: measured crossover ~64k elements
MIN_PARALLEL_GRAD = 65_536     # the gradients (2 reads, 1 write): measured crossover ~24k


def special_function(signatures, min_parallel=MIN_PARALLEL_LOG, params=0):
    """``@pointwise`` as the special functions take it (trigonometric.py,
    rounding_and_special.py, bessel_and_polygamma.py): without fastmath, so that no
    reciprocal is approximated and inf and NaN keep their meaning, and, as each element
    costs a libm call or a series, with the prange twin from MIN_PARALLEL_LOG elements (a
    cheap one names its own threshold)."""
    return pointwise(signatures, min_parallel, fastmath=False, params=params)


# --- the math: forward of X, and dX from (what the gradient reads, dOut) -------------------
# relu and its gradient let NaN through as numpy's maximum and Paddle do: the compares are
# written so that NaN takes the "keep" side (a NaN compares false), and their flags are
# FASTMATH32, without "nnan", which would let LLVM assume the compare never sees a NaN.
@pointwise(FLOAT_1, MIN_PARALLEL_CHEAP)
def relu(x):
    return x if not x <= 0 else 0           # NaN -> NaN (x > 0 would give 0)


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD)
def relu_grad(out, dout):
    # Paddle's dout * (out > 0): a NaN (or inf) dout stays NaN where the unit is off too
    return dout if out > 0 else dout * 0


@pointwise(FLOAT_1, MIN_PARALLEL_MATH)
def sigmoid(x):
    return fsigmoid(x)


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD, fastmath=True)
def sigmoid_grad(out, dout):
    return dout * out * (1 - out)


@pointwise(FLOAT_1, MIN_PARALLEL_MATH)
def tanh(x):
    return ftanh(x)


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD, fastmath=True)
def tanh_grad(out, dout):
    return dout * (1 - out * out)


@pointwise(FLOAT_1, MIN_PARALLEL_MATH)
def exp(x):
    return fexp(x)


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD, fastmath=True)
def exp_grad(out, dout):
    return dout * out


@pointwise(FLOAT_1, MIN_PARALLEL_LOG)
def log(x):
    # numpy semantics without a libm error path: log(0) = -inf, log(<0) = nan
    if x > 0:
        return math.log(x)
    return -math.inf if x == 0 else math.nan


# fastmath=False, said explicitly: "arcp" may round x / y as x * (1/y)
@pointwise(FLOAT_2, MIN_PARALLEL_GRAD, fastmath=False)
def log_grad(x, dout):
    return dout / x


@pointwise(INT_AND_FLOAT_1, MIN_PARALLEL_CHEAP, fastmath=True)
def square(x):
    return x * x


@pointwise(FLOAT_2, MIN_PARALLEL_GRAD, fastmath=True)
def square_grad(x, dout):
    return dout * 2 * x


# gelu, as Paddle computes it: exact, x * Phi(x) with Phi the normal CDF; or, with the
# attribute approximate, Hendrycks and Gimpel's tanh form. Computed in float64 (the
# constants are), rounded once to X's dtype.
SQRT_HALF, SQRT_2_OVER_PI, INV_SQRT_2PI, CUBIC = (
    math.sqrt(0.5), math.sqrt(2 / math.pi), 1 / math.sqrt(2 * math.pi), 0.044715)


@pointwise(FLOAT_1, MIN_PARALLEL_LOG)
def gelu(x):
    return 0.5 * x * (1.0 + math.erf(x * SQRT_HALF))


@pointwise(FLOAT_2, MIN_PARALLEL_LOG)
def gelu_grad(x, dout):
    # d/dx x * Phi(x) = Phi(x) + x * phi(x)
    return dout * (0.5 * (1.0 + math.erf(x * SQRT_HALF))
                   + x * INV_SQRT_2PI * math.exp(-0.5 * x * x))


@pointwise(FLOAT_1, MIN_PARALLEL_LOG)
def gelu_tanh(x):
    return 0.5 * x * (1.0 + math.tanh(SQRT_2_OVER_PI * (x + CUBIC * x * x * x)))


@pointwise(FLOAT_2, MIN_PARALLEL_LOG)
def gelu_tanh_grad(x, dout):
    t = math.tanh(SQRT_2_OVER_PI * (x + CUBIC * x * x * x))
    return dout * (0.5 * (1.0 + t)
                   + 0.5 * x * (1.0 - t * t) * SQRT_2_OVER_PI * (1.0 + 3.0 * CUBIC * x * x))


# --- the ops --------------------------------------------------------------------------------
def _named(op_type):
    """The kernel an op runs is the @pointwise kernel of its type's name."""
    return lambda ctx: op_type


def _no_params(ctx, dtype):
    return ()


def scalar_params(*names):
    """params_of: the attributes ``names`` in the kernel's dtype."""
    return lambda ctx, dtype: tuple(dtype.type(ctx.attr(n)) for n in names)


def _forward(place, op_type: str, kernel_of, params_of):
    """Out = f(X, *params) in X's dtype, f the kernel ``kernel_of(ctx)`` names and
    ``params_of(ctx, dtype)`` its scalar arguments (pow's factor)."""
    def run(ctx):
        x = ctx.input("X")
        ctx.set_output("Out", place.apply(KERNELS[kernel_of(ctx)], x,
                                          *params_of(ctx, x.dtype),
                                          out=ctx.out("Out", x.shape, x.dtype),
                                          out_dtype=x.dtype))
    run.__name__ = f"{place.name}_{op_type}"
    return run


def _backward(place, op_type: str, kernel_of, params_of, reads: str):
    """X@GRAD = f'(<reads>, Out@GRAD, *params) in Out@GRAD's dtype (f' the kernel named
    ``kernel_of(ctx)`` + "_grad"; the grad op carries the forward op's attributes)."""
    def run(ctx):
        dout = ctx.input("Out@GRAD")
        ctx.set_output("X@GRAD", place.apply(KERNELS[kernel_of(ctx) + "_grad"],
                                             ctx.input(reads), dout,
                                             *params_of(ctx, dout.dtype),
                                             out=ctx.out("X@GRAD", dout.shape, dout.dtype),
                                             out_dtype=dout.dtype))
    run.__name__ = f"{place.name}_{op_type}_grad"
    return run


def _lowered_forward(kernel_of, params_of):
    """The forward op in a compiled block (kernels/lowered.py): the same scalar function,
    fused into the loop of its neighbours."""
    return lambda info: Elementwise(KERNELS[kernel_of(info)], ("X",),
                                    params=params_of(info, info.dtype("X")))


def _lowered_backward(kernel_of, params_of, reads: str):
    return lambda info: Elementwise(KERNELS[kernel_of(info) + "_grad"], (reads, "Out@GRAD"),
                                    "X@GRAD", params_of(info, info.dtype("Out@GRAD")))


def _real_like_x(ctx):
    """Out has X's shape and dtype; X holds real numbers (the CUDA kernels compute with
    real math functions, so a complex X would silently lose its imaginary part)."""
    ctx.require_dtype("X", "real")
    same_shape_as_x(ctx)


def _float_like_x(ctx):
    """Out has X's shape and dtype; X holds floats (as Paddle's kernels for these: in an
    integer type the result would be truncated to a few values, or wrap)."""
    ctx.require_dtype("X", "float")
    same_shape_as_x(ctx)


def activation(op_type: str, formula: str, reads: str, infer=_float_like_x, attrs=(),
               kernel_of=None, params_of=_no_params, inputs=(), act: bool = True,
               check_attrs=None, reads_attr_tensors=(), params=(), also_reads=()):
    """Declare the op ``op_type`` (slots X and ``inputs`` -> Out) and its ``_grad`` op
    (X@GRAD from Out@GRAD and the forward slot ``reads``), with a kernel for each place.
    They run the @pointwise kernels named ``op_type`` and ``op_type + "_grad"``, or, with
    ``kernel_of(ctx)``, the ones its attributes pick, with the scalar arguments
    ``params_of(ctx, dtype)`` gives. ``params``: attributes that are those arguments, in
    order (declared after ``attrs``, and passed in X's dtype). ``act``: a layer's ``act=``
    may name it; ``check_attrs``: the OpDef's check of its attributes together;
    ``reads_attr_tensors``: the ``inputs`` that stand for an attribute and that
    ``params_of`` reads; ``also_reads``: forward slots Paddle's gradient op reads besides
    ``reads`` (its kernels need only ``reads``)."""
    kernel_of = kernel_of or _named(op_type)
    if params:
        params_of = scalar_params(*(attr.name for attr in params))
    register(OpDef(
        op_type, [X, *inputs], [OUT], [*attrs, *params],
        comment=f"Out = {formula}, elementwise.", infer_shape=infer,
        kernels={"cpu": _forward(CPU, op_type, kernel_of, params_of),
                 "cuda": _forward(CUDA, op_type, kernel_of, params_of)},
        lowered=_lowered_forward(kernel_of, params_of),
        grad=Grad(reads=[reads, *also_reads, *(s.name for s in inputs)], writes=["X"],
                  kernel=_backward(CPU, op_type, kernel_of, params_of, reads),
                  cuda_kernel=_backward(CUDA, op_type, kernel_of, params_of, reads),
                  lowered=_lowered_backward(kernel_of, params_of, reads)),
        unary=True, activation=act, check_attrs=check_attrs,
        reads_attr_tensors=tuple(reads_attr_tensors)))


activation("relu", "max(X, 0)", "Out", infer=_real_like_x)
activation("sigmoid", "1 / (1 + exp(-X))", "Out")
activation("tanh", "tanh(X)", "Out")
activation("exp", "exp(X)", "Out")
activation("log", "ln(X)", "X", act=False)     # undefined for half of a layer's outputs
activation("square", "X * X", "X", infer=_real_like_x)
activation("gelu", "X * Phi(X) (Phi: the normal CDF; approximate: the tanh form)", "X",
           attrs=[Attr("approximate", A.BOOLEAN, False, "use the tanh approximation")],
           kernel_of=lambda ctx: "gelu_tanh" if ctx.attr("approximate") else "gelu")


# scale: the attributes are the parameters of a @pointwise function (kernels/scale.py)
def _scale_kernel(ctx):
    return scale_then_bias if ctx.attr("bias_after_scale") else bias_then_scale


def _scale_glue(ctx, dtype):
    """(CPU loop, scale, bias) for float inputs of ``dtype``, from the attributes."""
    return _scale_kernel(ctx).cpu, dtype.type(ctx.attr("scale")), dtype.type(ctx.attr("bias"))


def _scale(ctx):
    x = ctx.input("X")
    if x.dtype.type in (np.float32, np.float64):   # the common case
        kernel, s, b = ctx.resolved(x.dtype, lambda: _scale_glue(ctx, x.dtype))
        ctx.set_output("Out", kernel(x, s, b, out=ctx.out("Out", x.shape, x.dtype)))
        return
    s = ctx.attr("scale")               # (a ScaleTensor's value, where one is given)
    if x.dtype.kind in "iu":            # in float64, truncated back (numpy's arithmetic)
        ctx.set_output("Out", KF.scaled_integers(x, float(s), float(ctx.attr("bias")),
                                                 bool(ctx.attr("bias_after_scale"))))
        return
    # float16: computed in float32, as Paddle does (a scale of 1e-30 is 0 in float16,
    # and inf * 0 would be NaN)
    w = x.astype(np.float32) if x.dtype == np.float16 else x
    out = (w * s + ctx.attr("bias")) if ctx.attr("bias_after_scale") \
        else (w + ctx.attr("bias")) * s
    ctx.set_output("Out", np.asarray(out).astype(x.dtype))


def _cuda_scale(ctx):
    x = ctx.input("X")
    s = float(ctx.attr("scale"))       # a ScaleTensor's value (one 1-element copy), if given
    # integer tensors too: computed in float64, stored (truncated) in X's dtype, as on CPU
    ctx.set_output("Out", _scale_kernel(ctx).cuda(x, s, float(ctx.attr("bias")),
                                                  out_dtype=x.dtype))


def _lowered_scale(info):
    """Float X: the scalar function of the CPU kernel, scale and bias in X's dtype; an
    integer X: the CPU kernel's loop (float16 stays in the interpreter)."""
    dtype = info.dtype("X")
    if dtype.kind in "iu":
        return Call(KF.scaled_integers, ("X",), ("Out",),
                    (float(info.attr("scale")), float(info.attr("bias")),
                     bool(info.attr("bias_after_scale"))))
    if dtype.type not in (np.float32, np.float64):
        return None
    return Elementwise(_scale_kernel(info), ("X",),
                       params=(dtype.type(info.attr("scale")), dtype.type(info.attr("bias"))))


def _scale_grad(op, no_grad):
    """d(scale*X + bias)/dX = scale: the gradient is another scale op, without bias."""
    if op.input("X")[0] in no_grad:
        return []
    inputs = {"X": [grad_name(op.output("Out")[0])]}
    if op.input("ScaleTensor"):
        inputs["ScaleTensor"] = op.input("ScaleTensor")
    return [GradOp("scale", inputs, {"Out": [grad_name(op.input("X")[0])]},
                   {"scale": op.attr("scale", 1.0), "bias": 0.0, "bias_after_scale": True})]


register(OpDef(
    "scale", [X, Slot("ScaleTensor", "scale as a 1-element tensor", dispensable=True)], [OUT],
    [Attr("scale", A.FLOAT, 1.0, "the factor"),
     Attr("bias", A.FLOAT, 0.0, "the offset"),
     Attr("bias_after_scale", A.BOOLEAN, True, "Out = X*scale + bias if true, "
          "(X + bias)*scale if false")],
    comment="Out = scale * X + bias (or scale * (X + bias)).",
    infer_shape=same_shape_as_x, kernels={"cpu": _scale, "cuda": _cuda_scale},
    lowered=_lowered_scale, grad=_scale_grad, reads_attr_tensors=("ScaleTensor",)))


def _cast_infer(ctx):
    """in_dtype must name X's type: the gradient casts back to it."""
    if ctx.attr("in_dtype") != ctx.dtype("X"):
        ctx.fail("attribute in_dtype must be X's element type (the gradient is a cast back "
                 "to it)", slot="X", expected=f"in_dtype={ctx.dtype('X')} "
                 f"({dtypes.name(ctx.dtype('X'))})", given=f"in_dtype={ctx.attr('in_dtype')}")
    ctx.set_output("Out", ctx.shape("X"), ctx.attr("out_dtype"))


def _cast(ctx):
    to = dtypes.to_numpy(ctx.attr("out_dtype"))
    ctx.set_output("Out", np.asarray(ctx.input("X")).astype(to))


def _cuda_cast(ctx):
    ctx.set_output("Out", CC.astype(ctx.input("X"), dtypes.to_numpy(ctx.attr("out_dtype"))))


def _cast_grad(op, no_grad):
    """The gradient of a cast is the cast back."""
    if op.input("X")[0] in no_grad:
        return []
    return [GradOp("cast", {"X": [grad_name(op.output("Out")[0])]},
                   {"Out": [grad_name(op.input("X")[0])]},
                   {"in_dtype": op.attr("out_dtype"), "out_dtype": op.attr("in_dtype")})]


# the dtypes whose conversions compiled code makes bit for bit as numpy's astype (checked
# for NaN, infinities and out-of-range values too: tests/test_lowered_forms.py)
_CAST_LOWERED = {np.dtype(t) for t in (np.float64, np.float32, np.int64, np.int32, np.bool_)}


def _lowered_cast(info):
    to = dtypes.to_numpy(info.attr("out_dtype"))
    if info.dtype("X") not in _CAST_LOWERED or np.dtype(to) not in _CAST_LOWERED:
        return None
    return Call(KF.converted, ("X",), ("Out",), (np.dtype(to).type(0),))


register(OpDef(
    "cast", [X], [OUT],
    [Attr("in_dtype", A.INT, 5, "VarType code of X's element type",
          check=dtype_code_check()),
     Attr("out_dtype", A.INT, 5, "VarType code of Out's element type",
          check=dtype_code_check())],
    comment="Out = X converted to out_dtype.",
    infer_shape=_cast_infer, kernels={"cpu": _cast, "cuda": _cuda_cast}, lowered=_lowered_cast,
    grad=_cast_grad))
