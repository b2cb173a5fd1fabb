"""Self-check cells of the teaching notebooks: ``check(...)`` says right, or why not.

An exercise cell leaves ``...`` where the student's answer goes; the self-check cell below
it calls :func:`check`. A placeholder still there prints "not answered yet" and does not
raise, so *Run All* still runs the whole notebook (nothing later depends on an answer); a
wrong answer raises, told what was expected in words (the hint), never by printing the
answer, so a student can try again. ``tests/test_notebooks.py`` runs every notebook with
the solutions filled in (each check must tick) and as is (no check may tick on ``...``).

    check("number of ops", n_ops, len(block.ops), hint="count the lines of to_code()")
"""
from __future__ import annotations

import numpy as np


class SelfCheckError(AssertionError):
    """A self-check that did not pass: shown without a traceback in IPython."""

    def _render_traceback_(self):
        return [f"\u2718 {self}"]


def _unanswered(value) -> bool:
    if value is Ellipsis:
        return True
    if isinstance(value, (list, tuple, set, dict)):
        items = value.values() if isinstance(value, dict) else value
        return any(_unanswered(v) for v in items)
    return False


def _same(given, expected, rtol: float, atol: float) -> bool:
    if isinstance(expected, (set, frozenset)):
        return set(given) == set(expected)
    if isinstance(expected, (str, bool)) or expected is None:
        return given == expected
    if isinstance(expected, dict):
        return (isinstance(given, dict) and given.keys() == expected.keys()
                and all(_same(given[k], expected[k], rtol, atol) for k in expected))
    try:
        g, e = np.asarray(given), np.asarray(expected)
        if g.shape != e.shape:
            return False
        if e.dtype.kind in "fc" or g.dtype.kind in "fc":
            return bool(np.allclose(g, e, rtol=rtol, atol=atol, equal_nan=True))
        return bool(np.array_equal(g, e))
    except (TypeError, ValueError):
        return given == expected


def check(what: str, given, expected, hint: str = "", rtol: float = 1e-4,
          atol: float = 1e-6) -> None:
    """Print a tick, or raise :class:`SelfCheckError` saying what is off, or (while the
    answer is still ``...``) say it is not answered yet. Checks that need the answer to
    compute their expectation go under ``if answered(x):``.

    Numbers and arrays compare with tolerance (shapes must match), sets ignore order,
    everything else compares with ``==``."""
    if _unanswered(given):
        _not_yet(what)
        return
    if not _same(given, expected, rtol, atol):
        shown = np.array2string(np.asarray(given), threshold=12) \
            if isinstance(given, np.ndarray) else repr(given)
        raise SelfCheckError(f"{what}: not yet: you have {shown}." + (f" Hint: {hint}"
                                                                       if hint else ""))
    print(f"\u2714 {what}: right")


def check_that(what: str, ok, hint: str = "") -> None:
    """For answers that are a property rather than a value (``loss < 0.1``)."""
    if _unanswered(ok):
        _not_yet(what)
        return
    if not bool(ok):
        raise SelfCheckError(f"{what}: not yet." + (f" Hint: {hint}" if hint else ""))
    print(f"\u2714 {what}: right")


def answered(*values) -> bool:
    """True once no ``...`` placeholder is left in ``values``."""
    return not any(_unanswered(v) for v in values)


def _not_yet(what: str) -> None:
    print(f"\u2026 {what}: not answered yet: replace the ... in the exercise cell above "
          "with your answer and run both cells again")
