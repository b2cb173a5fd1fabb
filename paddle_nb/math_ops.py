"""Python operators on Variables: ``a + b``, ``a * 2``, ``x @ w``, ``x > 15``...

Each builds the same op a layer would (elementwise_add, scale, matmul_v2, greater_than).
``==`` stays identity (Variables are used as dict keys); use ``pd.equal`` for the op.
Attached here rather than in the core so the core never imports the layers.
"""
from __future__ import annotations

from numbers import Number

from . import layers as L
from .core.variable import Variable


def _add(a, b):
    return L.scale(a, 1.0, float(b)) if isinstance(b, Number) else L.elementwise_add(a, b)


def _sub(a, b):
    return L.scale(a, 1.0, -float(b)) if isinstance(b, Number) else L.elementwise_sub(a, b)


def _rsub(a, b):
    return L.scale(a, -1.0, float(b))


def _mul(a, b):
    return L.scale(a, float(b)) if isinstance(b, Number) else L.elementwise_mul(a, b)


def _div(a, b):
    return L.scale(a, 1.0 / float(b)) if isinstance(b, Number) else L.elementwise_div(a, b)


def _rdiv(a, b):
    return L.elementwise_div(L.fill_constant([1], a.dtype, float(b)), a)


def patch_variable() -> None:
    Variable.__add__ = _add
    Variable.__radd__ = _add
    Variable.__sub__ = _sub
    Variable.__rsub__ = _rsub
    Variable.__mul__ = _mul
    Variable.__rmul__ = _mul
    Variable.__truediv__ = _div
    Variable.__rtruediv__ = _rdiv
    Variable.__neg__ = lambda a: L.scale(a, -1.0)
    Variable.__matmul__ = lambda a, b: L.matmul(a, b)
    Variable.__gt__ = lambda a, b: L.greater_than(a, b)
    Variable.__lt__ = lambda a, b: L.less_than(a, b)
