"""Python operators on Variables: ``a + b``, ``a * 2``, ``x @ w``, ``x > 15``...

Each builds the same op a layer would (elementwise_add, scale, matmul_v2, greater_than).
``==`` stays identity (Variables are used as dict keys); use ``pd.equal`` for the op.
Attached here (``pd.<name>`` runs ``patch_variable`` once) rather than in the core, so the
core never imports the layers.

The other operand is checked first (``x + "a"`` is a BuildError naming the operator, not a
half-built op), and numpy defers to these methods (``__array_ufunc__ = None``): without
that, ``np.ones(3) + x`` would have numpy call ``x.__radd__`` once per element.
"""
from __future__ import annotations

from ..builders import arg_checks as check
from ..core.variable import Variable
from .base import fill_constant
from .elementwise import (elementwise_add, elementwise_div, elementwise_mul, elementwise_sub,
                          greater_than, less_than, scale)
from .tensor import matmul


def _other(symbol: str, b):
    """The operand that is not ``self``: a Variable or a number (True counts as 1, as in
    Python); anything else names the operator."""
    return check.variable_or_number(f"operator {symbol}", "other", b)


def _is_number(b) -> bool:
    return not isinstance(b, Variable)


def _add(a, b):
    b = _other("+", b)
    return scale(a, 1.0, float(b)) if _is_number(b) else elementwise_add(a, b)


def _sub(a, b):
    b = _other("-", b)
    return scale(a, 1.0, -float(b)) if _is_number(b) else elementwise_sub(a, b)


def _rsub(a, b):
    return scale(a, -1.0, float(_other("-", b)))


def _mul(a, b):
    b = _other("*", b)
    return scale(a, float(b)) if _is_number(b) else elementwise_mul(a, b)


def _div(a, b):
    b = _other("/", b)
    if not _is_number(b):
        return elementwise_div(a, b)
    if float(b) == 0.0:       # 1 / 0 would be Python's ZeroDivisionError, half-way through
        raise check.refuse("operator /", "other", "a Variable or a nonzero number", b)
    return scale(a, 1.0 / float(b))


def _rdiv(a, b):
    return elementwise_div(fill_constant([1], a.dtype, float(_other("/", b))), a)


def _matmul(a, b):
    return matmul(a, check.variable("operator @", "other", b))


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
    Variable.__neg__ = lambda a: scale(a, -1.0)
    Variable.__matmul__ = _matmul
    Variable.__rmatmul__ = lambda a, b: matmul(check.variable("operator @", "other", b), a)
    Variable.__gt__ = _compare(">", greater_than)
    Variable.__lt__ = _compare("<", less_than)
