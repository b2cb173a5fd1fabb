"""Scope (the Scope and Framework designs): lookup rules, the kid hierarchy, variables
and their kinds."""
import threading

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.scope import ScopeVariable


def test_var_finds_or_creates_locally_and_ignores_parents():
    g = pd.Scope()
    x = g.var("x")
    assert g.var("x") is x                       # found, not re-created
    kid = g.new_scope()
    assert kid.var("x") is not x                 # var() creates locally, shadowing
    assert kid.find_var("x") is kid.var("x")


def test_find_var_searches_parents_never_kids():
    g = pd.Scope()
    g.var("W").set(np.float32([0.5]))
    kid = g.new_scope()
    grandkid = kid.new_scope()
    kid.var("h").set(np.float32([1.0]))
    assert grandkid.find_var("W") is g.find_var("W")      # two levels up
    assert g.find_var("h") is None                       # kids are never searched
    assert kid.find_var("missing") is None


def test_shadowing_keeps_both_values():
    g = pd.Scope()
    g.var("x").set(np.float32([10]))
    kid = g.new_scope()
    kid.var("x").set(np.float32([20]))
    assert kid.find_var("x").get()[0] == 20
    assert g.find_var("x").get()[0] == 10


def test_kids_parent_drop_kids_and_delete_scope():
    g = pd.Scope()
    a, b = g.new_scope("a"), g.new_scope("b")
    a_var = a.var("t")
    a_var.set(np.ones(3))
    assert g.kids == [a, b] and a.parent is g and g.parent is None
    g.delete_scope(a)
    assert g.kids == [b]
    assert not a_var.is_initialized()             # variables die with their scope
    with pytest.raises(pd.ScopeError, match="not a kid"):
        g.delete_scope(a)
    with pytest.raises(pd.ScopeError, match="not a kid"):
        b.delete_scope(g.new_scope("c"))
    g.drop_kids()
    assert g.kids == []


def test_find_scope_and_local_var_names():
    g = pd.Scope()
    inner = g.new_scope("rnn").new_scope("step_3")
    g.var("a"), g.var("b")
    assert g.find_scope("step_3") is inner
    assert g.find_scope("nope") is None
    assert g.local_var_names() == ["a", "b"]
    assert inner.local_var_names() == []


def test_variables_are_created_only_by_a_scope():
    with pytest.raises(pd.ScopeError, match="only by a Scope"):
        ScopeVariable(pd.Scope(), object())


@pytest.mark.parametrize("value,kind", [
    (np.zeros((2, 3), np.float32), "tensor"), (3, "int"), (True, "bool"), (2.5, "float"),
    (np.float16(1.5), "half"), ("hello", "string"), ([np.zeros(2)], "tensor_array"),
])
def test_variable_kinds(value, kind):
    v = pd.Scope().var("v")
    v.set(value)
    assert v.kind == kind and v.is_type(kind)
    assert v.get() is value


def test_scope_and_list_of_scopes_kinds():
    g = pd.Scope()
    v = g.var("step_scopes")
    v.set([g.new_scope(), g.new_scope()])
    assert v.kind == "scopes"
    w = g.var("s")
    w.set(g)
    assert w.kind == "scope"


def test_get_mutable_is_lazy_and_checks_the_kind():
    v = pd.Scope().var("arr")
    assert not v.is_initialized()
    with pytest.raises(pd.ScopeError, match="no value"):
        v.get()
    arr = v.get_mutable("tensor_array")
    arr.append(np.ones(2))
    assert v.get_mutable("tensor_array") is arr and len(v.get()) == 1
    with pytest.raises(pd.ScopeError, match="holds a tensor_array, not a int"):
        v.get_mutable("int")
    with pytest.raises(pd.ScopeError, match="unknown variable kind"):
        pd.Scope().var("z").get_mutable("matrix")


def test_estimated_flag():
    v = pd.Scope().var("w")
    assert v.estimated is False
    v.estimated = True
    assert v.estimated


def test_current_global_and_scope_guard():
    assert pd.scope.current() is pd.scope.global_() is pd.global_scope()
    mine = pd.Scope()
    with pd.scope_guard(mine):
        assert pd.scope.current() is mine
        with pd.scope_guard(mine.new_scope()) as inner:
            assert pd.scope.current() is inner
        assert pd.scope.current() is mine
    assert pd.scope.current() is pd.global_scope()
    with pytest.raises(pd.ScopeError):
        with pd.scope_guard("not a scope"):
            pass


def test_scope_is_thread_safe():
    g = pd.Scope()
    errors = []

    def work(t):
        try:
            for i in range(300):
                g.var(f"v{i % 50}")
                kid = g.new_scope(f"t{t}_{i}")
                kid.var("x").set(i)
                assert kid.find_var("v0") is g.find_var("v0")
                g.delete_scope(kid)
        except Exception as e:   # noqa: BLE001
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert len(g.local_var_names()) == 50 and g.kids == []


def test_tree_shows_the_forest():
    g = pd.Scope()
    g.var("W").set(np.float32([0.25]))
    g.new_scope("step_0").var("h").set(np.float32([1, 2]))
    text = g.tree()
    assert "Scope 'global'" in text and "  Scope 'step_0'" in text
    assert "W: float32[1] [0.25]" in text and "    h: float32[2]" in text


def test_declare_makes_the_missing_variables_and_keeps_the_existing_ones():
    """What the executor does for a block's locals each time the block runs."""
    s = pd.Scope()
    kept = s.var("a")
    kept.set(np.float32([1]))
    s.declare(["a", "b", "c"])
    assert s.find_local_var("a") is kept and kept.get()[0] == 1
    assert s.local_var_names() == ["a", "b", "c"]
    assert not s.find_local_var("b").is_initialized()
    with pytest.raises(pd.ScopeError, match="non-empty string"):
        s.declare(["d", ""])
