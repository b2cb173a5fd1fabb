"""Fast float32 ``exp``, ``tanh`` and ``sigmoid`` for numba kernels; float64 keeps libm.

Why: this numba has no Intel SVML, so ``math.exp`` / ``math.tanh`` on float32 are scalar
libm calls (``expf``, ``tanhf``) that stop the loop around them from vectorising: 15 ns
per element for tanh, 40x numpy's SIMD tanh. The approximations below are branch-free
(selects only), so LLVM vectorises them (AVX-512 on this machine).

Use them through the stubs ``fexp``, ``ftanh``, ``fsigmoid`` inside ``@njit`` code: a
float32 argument gets the approximation, anything else ``math.exp`` / ``math.tanh``.
Accuracy, float32 result against the float64 function, checked over every 97th float32
bit pattern (tests/test_cpu_kernels.py keeps a sample of it): exp <= 1 ulp (8.2e-8
relative, subnormal results included); tanh <= 5 ulp (2.9e-7 relative); sigmoid <= 3 ulp
(1.9e-7 relative) down to 1e-38. NaN gives NaN; exp(+inf) and overflow give inf, exp(-inf)
and underflow 0; tanh(+-inf) = +-1; sigmoid(+inf) = 1, sigmoid(-inf) = 0: as numpy.

Their fastmath flags are ``FASTMATH32``: "nnan"/"ninf" would make the NaN/inf selects
poison, and "reassoc" would fold the two-constant range reduction of exp back into one.

numba's cache keys a kernel on its own source file only, so a kernel in another file that
inlines these would keep its cached copy after this file changes: cache.py stamps every
kernel of the package with all of its files.

A NaN input raises the "invalid" FP flag in the vector compares here (x86 ordered compares
signal), so on the ufunc path numpy warns "invalid value encountered" where np.exp(nan)
does not; the values are right. Swapping NaN out first on the bits made tanh 1.65x slower
(an ``llvm.arithmetic.fence`` instead: 10x, no vectorising), so the warning stays.
"""
import math

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic, overload

FASTMATH32 = {"nsz", "arcp", "contract", "afn"}     # a set: numba takes no frozenset
_JIT32 = {"fastmath": FASTMATH32, "error_model": "numpy"}

_f32 = np.float32
_ONE = _f32(1.0)
_HALF = _f32(0.5)


@intrinsic
def _scale_by_pow2(typingctx, p, k):
    """``p * 2**k`` for float32 ``p`` and an integral float32 ``k`` in [-151, 128],
    as two multiplications by powers of two built from exponent bits, so results in the
    subnormal range round once, correctly, and ``k = 128`` overflows to inf."""
    if p != types.float32 or k != types.float32:
        return None

    def codegen(context, builder, sig, args):
        pv, kv = args
        i32, f32 = ir.IntType(32), ir.FloatType()
        n = builder.fptosi(kv, i32)
        h = builder.ashr(n, ir.Constant(i32, 1))
        bias = ir.Constant(i32, 127)
        s1 = builder.bitcast(builder.shl(builder.add(h, bias), ir.Constant(i32, 23)), f32)
        s2 = builder.bitcast(builder.shl(builder.add(builder.sub(n, h), bias),
                                         ir.Constant(i32, 23)), f32)
        return builder.fmul(builder.fmul(pv, s1), s2)

    return types.float32(types.float32, types.float32), codegen


@intrinsic
def maxnum(typingctx, a, b):
    """``llvm.maxnum``: the larger of two floats of one type, a NaN operand ignored. Unlike
    ``max()`` or a compare-and-select (which need "nnan"), LLVM vectorises a reduction
    over it (row maxima: 4.5x faster)."""
    if not (isinstance(a, types.Float) and a == b):
        return None

    def codegen(context, builder, sig, args):
        ty = args[0].type
        fn = builder.module.declare_intrinsic("llvm.maxnum", [ty], ir.FunctionType(ty, [ty, ty]))
        return builder.call(fn, args)

    return a(a, b), codegen


# exp: x = k ln2 + r, |r| <= ln2/2 (Cody-Waite, ln2 in two parts), exp(r) by Cephes'
# expf polynomial, times 2**k.
_LOG2E = _f32(1.4426950408889634)
_LN2_HI = _f32(0.693359375)
_LN2_LO = _f32(-2.12194440e-4)
_EXP_HI = _f32(89.0)        # exp(89) > FLT_MAX: inf comes out of the scaling
_EXP_LO = _f32(-104.0)      # exp(-104) < FLT_TRUE_MIN / 2: rounds to 0
_E0, _E1, _E2 = _f32(1.9875691500e-4), _f32(1.3981999507e-3), _f32(8.3334519073e-3)
_E3, _E4, _E5 = _f32(4.1665795894e-2), _f32(1.6666665459e-1), _f32(5.0000001201e-1)


def _exp32(x):
    xc = x if x > _EXP_LO else _EXP_LO          # NaN and -inf -> _EXP_LO: k stays finite
    xc = xc if xc < _EXP_HI else _EXP_HI
    k = np.floor(xc * _LOG2E + _HALF)
    r = xc - k * _LN2_HI
    r = r - k * _LN2_LO
    p = _E0
    p = p * r + _E1
    p = p * r + _E2
    p = p * r + _E3
    p = p * r + _E4
    p = p * r + _E5
    p = p * (r * r) + r + _ONE
    y = _scale_by_pow2(p, k)
    return y if x == x else x


# tanh: x P(x^2) / Q(x^2), degree 4 over 4 in x^2, fitted here for minimax relative error
# on [0, 9.1] (iteratively reweighted least squares; numerator scaled so R(9.1) = 1), then
# rounded to float32. Computed on |x| clamped to 9.1, capped at 1 (float32 rounding lands
# a little above it near the clamp), sign copied back: tanh(+-inf) = +-1, -0.0 stays -0.0.
# Two multiply-adds fewer than Eigen's 13/6 rational (1e6 float32, 2 threads: 0.117 ms
# instead of 0.139; numpy 0.358). The float32 loop is bound by the FMA pipe, not memory.
_T_CLAMP = _f32(9.1)
_P0, _P1, _P2 = _f32(1.0), _f32(0.1337447315454483), _f32(0.00348780769854784)
_P3, _P4 = _f32(2.0481129467952996e-05), _f32(1.3177438695777255e-08)
_Q0, _Q1, _Q2 = _f32(1.0), _f32(0.4670778512954712), _f32(0.02584737539291382)
_Q3, _Q4 = _f32(0.0003272914618719369), _f32(7.704012432441232e-07)


def _tanh32(x):
    a = abs(x)
    t = _T_CLAMP if a > _T_CLAMP else a          # NaN passes through
    z = t * t
    p = z * _P4 + _P3
    p = p * z + _P2
    p = p * z + _P1
    p = p * z + _P0
    q = z * _Q4 + _Q3
    q = q * z + _Q2
    q = q * z + _Q1
    q = q * z + _Q0
    y = t * p / q
    y = _ONE if y > _ONE else y
    return math.copysign(y, x)


def _sigmoid32(x):
    # exp of -|x| never overflows; 1/(1+e) for x >= 0, e/(1+e) below (keeps tiny values)
    e = fexp(-abs(x))
    r = _ONE / (_ONE + e)
    return r if x >= 0 else e * r


def _exp_libm(x):
    return math.exp(x)


def _tanh_libm(x):
    return math.tanh(x)


def _sigmoid_libm(x):
    if x >= 0:                  # split by sign so exp never overflows
        return 1 / (1 + math.exp(-x))
    e = math.exp(x)
    return e / (1 + e)


def fexp(x):
    """exp(x): the float32 approximation for float32 in numba code, else libm."""
    return math.exp(x)


def ftanh(x):
    """tanh(x): the float32 approximation for float32 in numba code, else libm."""
    return math.tanh(x)


def fsigmoid(x):
    """1 / (1 + exp(-x)): the float32 approximation for float32 in numba code, else libm."""
    return _sigmoid_libm(x)


def _is_f32(x):
    return isinstance(x, types.Float) and x.bitwidth == 32


# The approximations are for the CPU's SIMD units; a CUDA kernel (kernels/pointwise.py
# compiles the same scalar functions for both places) gets libm's functions, which the GPU
# computes with its own fast instructions.
@overload(fexp, jit_options=_JIT32, target="cpu")
def _ov_fexp(x):
    return _exp32 if _is_f32(x) else _exp_libm


@overload(ftanh, jit_options=_JIT32, target="cpu")
def _ov_ftanh(x):
    return _tanh32 if _is_f32(x) else _tanh_libm


@overload(fsigmoid, jit_options=_JIT32, target="cpu")
def _ov_fsigmoid(x):
    return _sigmoid32 if _is_f32(x) else _sigmoid_libm


@overload(fexp, target="cuda")
def _ov_fexp_cuda(x):
    return _exp_libm


@overload(ftanh, target="cuda")
def _ov_ftanh_cuda(x):
    return _tanh_libm


@overload(fsigmoid, target="cuda")
def _ov_fsigmoid_cuda(x):
    return _sigmoid_libm
