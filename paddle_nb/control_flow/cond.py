"""Scalar conditions as Paddle lowers them: ``cond``, ``case``, ``switch_case``, ``Switch``.

``cond(pred, true_fn, false_fn)`` builds each branch in its own block run by a
``conditional_block`` (the false one on ``logical_not(pred)``); each branch copies its
results to variables outside with ``assign``, and ``select_input`` picks the taken branch's
by ``cast(pred, int32)``. ``case`` is nested ``cond``s, ``switch_case`` is ``case`` on
``branch_index == key``. ``Switch`` (the Block and Scope design's SwitchOp, Fluid's Switch)
runs the first case whose condition holds, else ``default``: its blocks write outer variables
directly.
"""
from __future__ import annotations

import contextlib

from ..builders import arg_checks as check
from ..layers.base import append, fill_constant
from ..layers.declare import assign
from ..layers.elementwise import cast, equal, logical_and, logical_not
from ..core import unique_name
from ..core.program import default_main_program
from ..core.variable import Variable
from .blocks import append_conditional_block, misuse, sub_block


def _check_pred(pred, builder="cond", name="pred"):
    """A scalar condition: one bool value (a row-wise one is pd.ifelse's)."""
    check.variable(builder, name, pred, dtype="bool", one_element=True,
                   hint="; for one condition per row use pd.ifelse()")


def _flatten(out):
    if out is None:
        return None
    items = list(out) if isinstance(out, (list, tuple)) else [out]
    for o in items:
        if not isinstance(o, Variable):
            raise misuse(f"a branch must return Variables (or nothing), got {o!r}")
    return items


def _branch(pred, fn):
    """Build ``fn`` in a block run when ``pred`` holds; return the outer copies of its
    results (or None)."""
    outer = default_main_program().current_block()
    with sub_block() as sub:
        results = _flatten(fn()) if fn is not None else None
        copies = None
        if results is not None:
            copies = []
            for r in results:
                c = outer.create_var(unique_name.generate("cond.out"), list(r.shape), r.dtype)
                assign(r, output=c)
                copies.append(c)
    append_conditional_block(outer, sub, [pred], is_scalar=True)
    return copies


def cond(pred, true_fn=None, false_fn=None, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()``; both branches must return the same
    number of Variables (or both nothing)."""
    _check_pred(pred)
    check.function("cond", "true_fn", true_fn, optional=True)
    check.function("cond", "false_fn", false_fn, optional=True)
    true_out = _branch(pred, true_fn)
    false_out = _branch(logical_not(pred), false_fn)
    if true_out is None and false_out is None:
        return None
    if true_out is None or false_out is None or len(true_out) != len(false_out):
        count = lambda o: "nothing" if o is None else f"{len(o)} Variables"   # noqa: E731
        raise misuse(f"cond: the branches must return the same number of outputs; true_fn "
                     f"returned {count(true_out)}, false_fn {count(false_out)}")
    mask = cast(pred, "int32")
    merged = [append("select_input", {"X": [f, t], "Mask": [mask]}, out_dtype=t.dtype)
              for t, f in zip(true_out, false_out)]
    return merged[0] if len(merged) == 1 else merged


def case(pred_fn_pairs, default=None, name=None):
    """The first pair whose predicate holds runs; else ``default`` (or the last pair)."""
    # every pair is checked before the first cond is built
    want = "a non-empty list of (bool Variable, function) pairs"
    if not isinstance(pred_fn_pairs, (list, tuple)) or not pred_fn_pairs:
        raise check.refuse("case", "pred_fn_pairs", want, pred_fn_pairs)
    pairs = list(pred_fn_pairs)
    for i, pair in enumerate(pairs):
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise check.refuse("case", f"pred_fn_pairs[{i}]", "a (bool Variable, function) "
                               "pair", pair)
        _check_pred(pair[0], "case", f"pred_fn_pairs[{i}][0]")
        check.function("case", f"pred_fn_pairs[{i}][1]", pair[1])
    check.function("case", "default", default, optional=True)
    if default is None:
        pairs, default = pairs[:-1], pairs[-1][1]

    def build(i):
        if i == len(pairs):
            return default()
        pred, fn = pairs[i]
        return cond(pred, fn, lambda: build(i + 1))
    return build(0)


def switch_case(branch_index, branch_fns, default=None, name=None):
    """Run ``branch_fns[branch_index]`` (a dict, a list of (key, fn), or a list of fns),
    else ``default`` (or the branch with the largest key)."""
    check.variable("switch_case", "branch_index", branch_index, dtype="int", one_element=True)
    want = "a dict {int: function}, a list of (int, function) pairs, or a list of functions"
    if isinstance(branch_fns, dict):
        items = list(branch_fns.items())
    elif isinstance(branch_fns, (list, tuple)):   # [(key, fn), ...] or [fn, ...] by position
        items = [entry if isinstance(entry, tuple) else (i, entry)
                 for i, entry in enumerate(branch_fns)]
    else:
        raise check.refuse("switch_case", "branch_fns", want, branch_fns)
    if not items or not all(len(e) == 2 and check.is_int(e[0]) and callable(e[1])
                            for e in items):
        raise check.refuse("switch_case", "branch_fns", want, branch_fns)
    if len({key for key, _ in items}) != len(items):
        raise check.refuse("switch_case", "branch_fns", "distinct keys", branch_fns)
    items = sorted(items, key=lambda e: e[0])
    check.function("switch_case", "default", default, optional=True)
    if default is None:
        items, default = items[:-1], items[-1][1]
    pairs = [(equal(branch_index, fill_constant([1], branch_index.dtype, key)), fn)
             for key, fn in items]
    return case(pairs, default) if pairs else default()


class Switch:
    """``with pd.switch() as s:`` then ``with s.case(cond):`` ... ``with s.default():``.
    The first case whose condition holds runs (the Block and Scope design's SwitchOp)."""

    def __init__(self, name=None):
        self._none_yet = None     # "no earlier case held", as a bool Variable
        self._inside = False

    def __enter__(self):
        self._inside = True
        return self

    def __exit__(self, *exc):
        self._inside = False
        return False

    @contextlib.contextmanager
    def case(self, condition):
        if not self._inside:
            raise misuse("Switch.case() must be used inside 'with pd.switch() as s:'")
        _check_pred(condition, "Switch.case", "condition")
        runs = condition if self._none_yet is None else logical_and(self._none_yet,
                                                                       condition)
        not_this = logical_not(condition)
        self._none_yet = not_this if self._none_yet is None else logical_and(self._none_yet,
                                                                               not_this)
        outer = default_main_program().current_block()
        with sub_block() as sub:
            yield
        append_conditional_block(outer, sub, [runs], is_scalar=True)

    @contextlib.contextmanager
    def default(self):
        if self._none_yet is None:
            raise misuse("Switch.default() needs at least one case() before it")
        outer = default_main_program().current_block()
        with sub_block() as sub:
            yield
        append_conditional_block(outer, sub, [self._none_yet], is_scalar=True)


def switch(name=None) -> Switch:
    return Switch(name)
