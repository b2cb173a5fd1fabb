"""Python operators on Variables: ``a + b``, ``a * 2``, ``x @ w``, ``x > 15``...

Each builds the same op a layer would (elementwise_add, scale, matmul_v2, greater_than).
``==`` stays identity (Variables are used as dict keys); use ``pd.equal`` for the op.
Attached here rather than in the core so the core never imports the layers.

The other operand is checked first (``x + "a"`` is a BuildError naming the operator, not a
half-built op), and numpy defers to these methods (``__array_ufunc__ = None``): without
that, ``np.ones(3) + x`` would have numpy call ``x.__radd__`` once per element.
"""
from __future__ import annotations

from . import arg_checks as check
from . import layers as L
from .core.variable import Variable


def _other(symbol: str, b):
    """The operand that is not ``self``: a Variable or a number (True counts as 1, as in
    Python); anything else names the operator."""
    return check.variable_or_number(f"operator {symbol}", "other", b)


def _is_number(b) -> bool:
    return not isinstance(b, Variable)


def _add(a, b):
    b = _other("+", b)
    return L.scale(a, 1.0, float(b)) if _is_number(b) else L.elementwise_add(a, b)


def _sub(a, b):
    b = _other("-", b)
    return L.scale(a, 1.0, -float(b)) if _is_number(b) else L.elementwise_sub(a, b)


def _rsub(a, b):
    return L.scale(a, -1.0, float(_other("-", b)))


def _mul(a, b):
    b = _other("*", b)
    return L.scale(a, float(b)) if _is_number(b) else L.elementwise_mul(a, b)


def _div(a, b):
    b = _other("/", b)
    if not _is_number(b):
        return L.elementwise_div(a, b)
    if float(b) == 0.0:       # 1 / 0 would be Python's ZeroDivisionError, half-way through
        raise check.refuse("operator /", "other", "a Variable or a nonzero number", b)
    return L.scale(a, 1.0 / float(b))


def _rdiv(a, b):
    return L.elementwise_div(L.fill_constant([1], a.dtype, float(_other("/", b))), a)


def _matmul(a, b):
    return L.matmul(a, check.variable("operator @", "other", b))


def _compare(symbol: str, build):
    return lambda a, b: build(a, _other(symbol, b))


def patch_variable() -> None:
    Variable.__array_ufunc__ = None
    Variable.__add__ = _add
    Variable.__radd__ = _add
    Variable.__sub__ = _sub
    Variable.__rsub__ = _rsub
    Variable.__mul__ = _mul
    Variable.__rmul__ = _mul
    Variable.__truediv__ = _div
    Variable.__rtruediv__ = _rdiv
    Variable.__neg__ = lambda a: L.scale(a, -1.0)
    Variable.__matmul__ = _matmul
    Variable.__rmatmul__ = lambda a, b: L.matmul(check.variable("operator @", "other", b), a)
    Variable.__gt__ = _compare(">", L.greater_than)
    Variable.__lt__ = _compare("<", L.less_than)
