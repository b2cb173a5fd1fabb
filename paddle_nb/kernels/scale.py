"""``scale``'s math, written once for both places: ``x * scale + bias`` and
``(x + bias) * scale``, ``@pointwise`` scalar functions whose two last arguments are the
op's attributes (pointwise.py: ``params``), one value for the whole array.

From each, ``@pointwise`` makes the CPU's numba ufunc and the CUDA grid-stride kernel.
The CPU is called with the scale and bias in X's float type (the ufunc's float32 loop
computes in float32, as the ufunc this replaced did); CUDA with Python floats, so the
kernel computes in float64 and stores in the output's type (integer tensors too, truncated,
as the CPU's numpy path for them does: ops/activation.py). ``fastmath=False``: no fused
multiply-add, so both orders round as numpy's ``x * s + b`` rounds. No ``prange`` twin:
scale never had one measured.

The scale op (ops/activation.py), the places' ``scale`` and the "scale" functor of the
fused ops (backends/shared.py) and ``cuda.elementwise.unary`` all run these two.
"""
from .cpu.lazy_ufunc import FLOAT_3
from .pointwise import pointwise


@pointwise(FLOAT_3, fastmath=False, params=2)
def scale_then_bias(x, scale, bias):
    return x * scale + bias


@pointwise(FLOAT_3, fastmath=False, params=2)
def bias_then_scale(x, scale, bias):
    return (x + bias) * scale
