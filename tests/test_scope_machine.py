"""A stateful hypothesis test: random Scope operations (var, set, find_var, new_scope,
delete_scope, drop_kids, erase_vars, find_scope) against a plain Python model of the
scope tree."""
from __future__ import annotations

import gc

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st
from hypothesis.stateful import Bundle, RuleBasedStateMachine, invariant, rule

import paddle_nb as pd
from paddle_nb.core import scope as scope_mod

from property_settings import DETERMINISTIC

VAR_NAMES = ["x", "W", "h", "step_scopes"]
SCOPE_NAMES = ["", "", "a", "b", "rnn"]      # "": the scope picks its own name


class ModelScope:
    """What a Scope should be: its parent, kids in order, variables in creation order."""

    def __init__(self, real, parent):
        self.real, self.parent = real, parent
        self.kids: list[ModelScope] = []
        self.vars: dict = {}          # name -> the Variable object the scope handed out
        self.values: dict = {}        # name -> the token last set
        self.alive = True

    def subtree(self) -> list["ModelScope"]:
        out = [self]
        for k in self.kids:
            out += k.subtree()
        return out

    def find(self, name):
        s = self
        while s is not None:
            if name in s.vars:
                return s.vars[name]
            s = s.parent
        return None


class ScopeMachine(RuleBasedStateMachine):
    """Rules: var / set / find_var / new_scope / delete_scope (of a kid and of a non-kid) /
    drop_kids / erase_vars / find_scope. ``live_count()`` is compared with gc switched off
    inside each rule, so collecting other tests' garbage cannot change it meanwhile."""

    live = Bundle("live")

    def __init__(self):
        super().__init__()
        self.model: list[ModelScope] = []      # every scope ever made, dead ones included
        self.tokens = 0

    def _live(self):
        return [m for m in self.model if m.alive]

    @rule(target=live)
    def new_root(self):
        real = pd.Scope()
        m = ModelScope(real, None)
        self.model.append(m)
        assert real.parent is None and real.kids == [] and real.alive
        return m

    @rule(target=live, parent=live, name=st.sampled_from(SCOPE_NAMES))
    def new_scope(self, parent, name):
        if not parent.alive:
            return parent                          # (a bundle may hold dead scopes)
        gc.disable()
        try:
            before = scope_mod.live_count()
            real = parent.real.new_scope(name)
            assert scope_mod.live_count() == before + 1
        finally:
            gc.enable()
        m = ModelScope(real, parent)
        parent.kids.append(m)
        self.model.append(m)
        assert real.parent is parent.real
        if name:
            assert real.name == name
        return m

    @rule(s=live, name=st.sampled_from(VAR_NAMES))
    def var(self, s, name):
        if not s.alive:
            return
        v = s.real.var(name)
        if name in s.vars:
            assert v is s.vars[name], "var() must find the existing variable"
        else:
            assert s.find(name) is None or v is not s.find(name), \
                "var() creates locally even when an ancestor has the name"
            s.vars[name] = v
        assert v.scope is s.real

    @rule(s=live, name=st.sampled_from(VAR_NAMES))
    def set(self, s, name):
        if not s.alive:
            return
        v = s.real.var(name)
        s.vars.setdefault(name, v)
        self.tokens += 1
        v.set(np.float32([self.tokens]))
        s.values[name] = self.tokens

    @rule(s=live, name=st.sampled_from(VAR_NAMES + ["missing"]))
    def find_var(self, s, name):
        got = s.real.find_var(name)
        if not s.alive:
            assert got is None, "a deleted scope finds nothing"
            return
        want = s.find(name)
        assert got is want, f"find_var({name!r}): self, then ancestors, never kids"
        assert (name in s.real) == (want is not None)
        owner = s
        while owner is not None and name not in owner.vars:
            owner = owner.parent
        if owner is not None and name in owner.values:
            assert got.get()[0] == owner.values[name]

    @rule(s=live, names=st.lists(st.sampled_from(VAR_NAMES + ["missing"]), max_size=3))
    def erase_vars(self, s, names):
        if not s.alive:
            return
        s.real.erase_vars(names)
        for n in names:
            s.vars.pop(n, None)
            s.values.pop(n, None)

    def _destroyed(self, kid: ModelScope, parent: ModelScope):
        dead = kid.subtree()
        for d in dead:
            d.alive = False
        for d in dead:        # a destroyed scope's variables die with it
            for v in d.vars.values():
                assert not v.is_initialized()
            assert not d.real.alive and d.real.kids == [] and d.real.local_var_names() == []
            assert d.real.parent is None
            d.vars, d.values, d.kids = {}, {}, []
        parent.kids = [k for k in parent.kids if k is not kid]
        return len(dead)

    @rule(data=st.data())
    def delete_kid(self, data):
        parents = [m for m in self._live() if m.kids]
        if not parents:
            return
        parent = data.draw(st.sampled_from(parents))
        kid = data.draw(st.sampled_from(parent.kids))
        gc.disable()
        try:
            before = scope_mod.live_count()
            parent.real.delete_scope(kid.real)
            n = self._destroyed(kid, parent)
            assert before - scope_mod.live_count() == n, "live_count drops by the scopes destroyed"
        finally:
            gc.enable()
        assert kid.real not in parent.real.kids

    @rule(a=live, b=live)
    def delete_non_kid(self, a, b):
        if b in a.kids:
            return
        snapshot = self._snapshot()
        gc.disable()
        try:
            before = scope_mod.live_count()
            with pytest.raises(pd.ScopeError):
                a.real.delete_scope(b.real)
            assert scope_mod.live_count() == before
        finally:
            gc.enable()
        assert self._snapshot() == snapshot, "a refused delete_scope changes nothing"

    @rule(s=live)
    def drop_kids(self, s):
        if not s.alive:
            return
        gc.disable()
        try:
            before = scope_mod.live_count()
            s.real.drop_kids()
            n = sum(self._destroyed(k, s) for k in list(s.kids))
            assert before - scope_mod.live_count() == n
        finally:
            gc.enable()
        assert s.real.kids == []

    @rule(s=live, name=st.sampled_from(SCOPE_NAMES[2:]))
    def find_scope(self, s, name):
        if not s.alive:
            return

        def dfs(m):
            for k in m.kids:
                if k.real.name == name:
                    return k.real
                found = dfs(k)
                if found is not None:
                    return found
            return None
        assert s.real.find_scope(name) is dfs(s)

    def _snapshot(self):
        return [(id(m.real), m.real.alive, id(m.real.parent), [id(k) for k in m.real.kids],
                 m.real.local_var_names()) for m in self.model]

    @invariant()
    def tree_matches_the_model(self):
        for m in self.model:
            if not m.alive:
                assert not m.real.alive and m.real.kids == [] and m.real.parent is None
                continue
            assert m.real.alive
            assert m.real.parent is (m.parent.real if m.parent else None)
            assert m.real.kids == [k.real for k in m.kids], "kids, in creation order"
            assert m.real.local_var_names() == list(m.vars)
            for name, v in m.vars.items():
                assert m.real.find_local_var(name) is v


ScopeMachine.TestCase.settings = settings(max_examples=200, stateful_step_count=40,
                                          **DETERMINISTIC)
TestScopeMachine = ScopeMachine.TestCase


