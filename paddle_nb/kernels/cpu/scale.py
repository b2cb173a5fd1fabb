"""``scale``'s kernels as numba ufuncs (see lazy_ufunc.py): ``x * scale + bias`` and
``(x + bias) * scale``, the scale and bias passed as scalars of x's dtype. Callers pass
``out=`` arrays of the input's dtype.

(The activations are ``@pointwise`` scalar functions in their op family's file,
ops/activation.py: scale stays here because its scalars are arguments, not elements.)
"""
from .lazy_ufunc import FLOAT_3, ufunc


@ufunc(FLOAT_3)
def scale_then_bias(x, scale, bias):
    return x * scale + bias


@ufunc(FLOAT_3)
def bias_then_scale(x, scale, bias):
    return (x + bias) * scale
