"""as_complex, as_real: a float tensor whose last dim holds (real, imaginary) pairs read as
a complex tensor, and back (the slots ``paddle.as_complex`` / ``paddle.as_real`` save in
Paddle 2.6.2).

``as_complex``: X float32 [..., 2] -> Out complex64 [...] (float64 -> complex128);
``as_real`` the inverse. Each is the other's gradient, as Paddle's backward writes them:
dX of as_complex is as_real(dOut), and the other way round. On the CPU both are numpy
views of the same bytes (copied when X is not contiguous); on CUDA one grid-stride kernel
per direction moves each element's two halves (kernels/cuda/complex_view.py). In a
compiled block each is an njit loop moving the halves into a new array
(kernels/cpu/complex_view.py: a form returns new arrays, never views of its inputs): the
same numbers as the interpreter's views.
"""
from __future__ import annotations

import numpy as np

from ..core.framework_pb2 import VarType
from ..core.grad_maker import GradOp, grad_name
from ..core.registry import OpDef, register
from ..kernels.cpu.complex_view import complex64_of, complex128_of, pairs_of
from ..kernels.cuda.complex_view import complex_to_pairs, pairs_to_complex
from ..kernels.cuda.device import empty, flat, launch
from ..kernels.lowered import Call
from .common import OUT, X

COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64),
              np.dtype(np.float64): np.dtype(np.complex128)}
REAL_OF = {c: f for f, c in COMPLEX_OF.items()}
_COMPLEX_CODE = {VarType.FP32: VarType.COMPLEX64, VarType.FP64: VarType.COMPLEX128}
_REAL_CODE = {c: f for f, c in _COMPLEX_CODE.items()}


# --- in a compiled block (kernels/lowered.py) ---------------------------------------------
def _lowered_as_complex(info):
    if info.ndim("X") == 0 or info.shape("X")[-1] != 2:
        return None
    fn = complex64_of if info.dtype("X") == np.float32 else complex128_of
    return Call(fn, ("X",), ("Out",))


def _lowered_as_real(info):
    return Call(pairs_of, ("X",), ("Out",), (REAL_OF[info.dtype("X")].type(0),))


# --- shape rules ------------------------------------------------------------------------
def _as_complex_infer(ctx):
    if ctx.dtype("X") not in _COMPLEX_CODE:
        ctx.fail("as_complex needs float32 or float64 pairs", slot="X",
                 expected="float32 or float64", given=ctx.describe_input("X"))
    xs = ctx.shape("X")
    if not xs or xs[-1] not in (2, -1):
        ctx.fail("as_complex reads the last dim as (real, imaginary) pairs", slot="X",
                 expected="a last dim of 2", given=ctx.describe_input("X"))
    ctx.set_output("Out", xs[:-1], _COMPLEX_CODE[ctx.dtype("X")])


def _as_real_infer(ctx):
    if ctx.dtype("X") not in _REAL_CODE:
        ctx.fail("as_real needs a complex tensor", slot="X", expected="complex64 or "
                 "complex128", given=ctx.describe_input("X"))
    ctx.set_output("Out", [*ctx.shape("X"), 2], _REAL_CODE[ctx.dtype("X")])


# --- kernels ----------------------------------------------------------------------------
def _cpu_as_complex(ctx):
    x = ctx.input("X")
    if x.ndim == 0 or x.shape[-1] != 2:
        raise ValueError(f"as_complex: input slot X: expected a last dim of 2, given "
                         f"{list(x.shape)}")
    ctx.set_output("Out", np.ascontiguousarray(x).view(COMPLEX_OF[x.dtype])
                   .reshape(x.shape[:-1]))


def _cuda_as_complex(ctx):
    x = ctx.input("X")
    shape = tuple(x.shape)          # (a device array's shape takes no negative index)
    if not shape or shape[-1] != 2:
        raise ValueError(f"as_complex: input slot X: expected a last dim of 2, given "
                         f"{list(shape)}")
    out = empty(shape[:-1], COMPLEX_OF[np.dtype(x.dtype)])
    launch(pairs_to_complex, out.size, flat(x), flat(out))
    ctx.set_output("Out", out)


def _cpu_as_real(ctx):
    x = ctx.input("X")
    ctx.set_output("Out", np.ascontiguousarray(x).view(REAL_OF[x.dtype])
                   .reshape((*x.shape, 2)))


def _cuda_as_real(ctx):
    x = ctx.input("X")
    out = empty((*tuple(x.shape), 2), REAL_OF[np.dtype(x.dtype)])
    launch(complex_to_pairs, x.size, flat(x), flat(out))
    ctx.set_output("Out", out)


# --- the ops ----------------------------------------------------------------------------
def _other_way(grad_type: str):
    """dX = the other op of dOut (Paddle's backward: as_real of as_complex's dOut)."""
    def maker(op, no_grad):
        if op.input("X")[0] in no_grad:
            return []
        return [GradOp(grad_type, {"X": [grad_name(op.output("Out")[0])]},
                       {"Out": [grad_name(op.input("X")[0])]}, {})]
    return maker


register(OpDef("as_complex", [X], [OUT], [],
               comment="Out = X's last dim of (real, imaginary) pairs as complex numbers.",
               infer_shape=_as_complex_infer,
               kernels={"cpu": _cpu_as_complex, "cuda": _cuda_as_complex},
               lowered=_lowered_as_complex,
               grad=_other_way("as_real")))
register(OpDef("as_real", [X], [OUT], [],
               comment="Out = complex X as (real, imaginary) pairs in a new last dim of 2.",
               infer_shape=_as_real_infer,
               kernels={"cpu": _cpu_as_real, "cuda": _cuda_as_real},
               lowered=_lowered_as_real,
               grad=_other_way("as_complex")))
