"""Threads (docs/robustness.md): one Executor and one Program shared by threads that each
train in their own scope give exactly the serial results; the executor's caches are built
once and published whole; Scope operations race safely."""
import gc
import sys
import threading
import weakref

import numpy as np
import pytest

import paddle_nb as pd
from models import tanh_rnn
from paddle_nb.core import executor as executor_module

WORKERS = 8
STEPS = 10


@pytest.fixture(autouse=True)
def fast_switching():
    """Switch threads every microsecond (default 5 ms) so that races have a chance."""
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


# --- models ---------------------------------------------------------------------------------
def _mlp():
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 11
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 6])
        y = pd.data("y", [None, 1], "int64")
        h = pd.layer.fc(x, 16, act="relu")
        prob = pd.layer.fc(h, 3, act="softmax")
        loss = pd.mean(pd.op.cross_entropy(X=prob, Label=y))
        pd.optimizer.SGD(0.2).minimize(loss)

    def batch(rng):
        xs = rng.standard_normal((8, 6)).astype(np.float32)
        return {"x": xs, "y": (xs[:, :1] > 0).astype(np.int64) + (xs[:, 1:2] > 1)}
    return main, startup, loss, batch


def _rnn():
    T, B, D, H = 5, 4, 3, 6
    main, startup, hs = tanh_rnn(T, B, D, H, seed=12)
    with pd.program_guard(main, startup):
        loss = pd.mean(pd.layers.square_error_cost(hs, pd.layers.fill_constant(
            [T, B, H], "float32", 0.5)))
        pd.optimizer.SGD(0.5).minimize(loss)

    def batch(rng):
        return {"x": rng.standard_normal((T, B, D)).astype(np.float32)}
    return main, startup, loss, batch


def _train(exe, main, loss, batch, params, worker):
    """STEPS minibatches in a scope of its own, from copies of ``params``: the losses and
    the final parameters."""
    scope = pd.Scope()
    for name, value in params.items():
        scope.var(name).set(value.copy())
    rng = np.random.default_rng(100 + worker)
    losses = [exe.run(main, feed=batch(rng), fetch_list=[loss], scope=scope)[0]
              for _ in range(STEPS)]
    assert scope.kids == []
    return np.array(losses), {n: scope.find_var(n).get() for n in params}


def _in_threads(fn, n=WORKERS):
    """Run ``fn(i)`` in ``n`` threads started together; their results in order, or the
    first error raised again."""
    results, errors = [None] * n, []
    barrier = threading.Barrier(n)

    def work(i):
        try:
            barrier.wait()
            results[i] = fn(i)
        except BaseException as e:    # noqa: BLE001 (re-raised in the main thread)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
    return results


@pytest.mark.parametrize("model", [_mlp, _rnn], ids=["mlp", "rnn"])
def test_threads_sharing_an_executor_and_a_program_match_serial_runs(model, monkeypatch):
    main, startup, loss, batch = model()
    init = pd.Scope()
    pd.Executor().run(startup, scope=init)
    params = {p.name: init.find_var(p.name).get() for p in main.all_parameters()}
    params["learning_rate_0"] = init.find_var("learning_rate_0").get()

    serial = [_train(pd.Executor(), main, loss, batch, params, w) for w in range(WORKERS)]

    built = []
    real_block = executor_module.PreparedBlock

    class Counted(real_block):
        def __init__(self, program, block, place):
            built.append(block.idx)
            super().__init__(program, block, place)

    monkeypatch.setattr(executor_module, "PreparedBlock", Counted)
    shared = pd.Executor()                         # a cold cache, filled by the threads
    threaded = _in_threads(lambda w: _train(shared, main, loss, batch, params, w))

    for w, ((l1, p1), (l2, p2)) in enumerate(zip(serial, threaded)):
        np.testing.assert_array_equal(l1, l2, err_msg=f"worker {w}")
        assert l1[-1] < l1[0]                       # each really trained
        for n in p1:
            np.testing.assert_array_equal(p1[n], p2[n], err_msg=f"worker {w}: {n}")
    # every block was prepared once, though eight threads asked for it at the same moment
    assert sorted(built) == sorted(set(built)) and 0 in built
    assert len(built) == len(main.blocks)
    assert init.kids == []


def test_plans_for_feeds_are_published_whole():
    main, startup, loss, batch = _mlp()
    exe = pd.Executor()
    pb = exe.prepare(main)
    feeds = [frozenset(s) for s in ({"x"}, {"y"}, {"x", "y"}, set())]
    plans = _in_threads(lambda w: [pb.plan_for(f) for f in feeds * 50])
    first = plans[0][:len(feeds)]
    for got in plans:
        assert got == first * 50
    assert first[2] == (frozenset(), ()) and first[0][1] == ("y",)


def test_a_shared_executor_keeps_no_program_alive():
    exe = pd.Executor()
    refs = []

    def run_programs(w):
        for _ in range(5):
            main, startup, loss, batch = _mlp()
            scope = pd.Scope()
            exe.run(startup, scope=scope)
            exe.run(main, feed=batch(np.random.default_rng(w)), fetch_list=[loss], scope=scope)
            refs.append(weakref.ref(main))

    programs = [_mlp() for _ in range(WORKERS)]        # names are made in the main thread
    del programs
    for w in range(2):                                 # building programs is not threaded
        run_programs(w)
    gc.collect()
    assert refs and all(r() is None for r in refs)


# --- scopes ---------------------------------------------------------------------------------
def test_scope_deletes_race_creation_and_lookups():
    """Threads make kid scopes, grandkids and variables and look names up through them,
    while other threads delete kids one by one and drop them all. Nothing raises but the
    ScopeError of deleting a kid another thread already deleted; lookups find the parent's
    variables or nothing; in the end every scope is gone."""
    gc.collect()
    live = pd.scope.live_count()
    g = pd.Scope()
    for i in range(20):
        g.var(f"p{i}").set(np.float32([i]))
    stop = threading.Event()
    makers_done = []

    def maker(w):
        rng = np.random.default_rng(w)
        made = 0
        for i in range(400):
            kid = g.new_scope(f"w{w}/{i}")
            kid.var("h").set(np.float32([i]))
            grandkid = kid.new_scope("inner")
            grandkid.var("x")
            j = int(rng.integers(20))
            found = grandkid.find_var(f"p{j}")
            # the parent's variable, or nothing once a deleter cut the grandkid loose
            assert found is None or found is g.find_var(f"p{j}")
            h = kid.find_var("h")
            try:
                assert h is None or h.get()[0] == i
            except pd.ScopeError as e:            # a deleter destroyed kid meanwhile
                assert "was deleted" in str(e)
            made += 1
            if i % 50 == 0:
                g.tree()                          # walks kids while they change
        return {"made": made}

    def deleter(w):
        rng = np.random.default_rng(50 + w)
        out = {"deleted": 0, "not_a_kid": 0, "dropped": 0}
        while not stop.is_set():
            kids = g.kids
            if kids:
                kid = kids[int(rng.integers(len(kids)))]
                try:
                    g.delete_scope(kid)
                    out["deleted"] += 1
                except pd.ScopeError as e:        # another deleter was first
                    assert "is not a kid" in str(e)
                    out["not_a_kid"] += 1
            if rng.random() < 0.05:
                g.drop_kids()
                out["dropped"] += 1
        return out

    def work(i):
        if i >= 6:
            return deleter(i)
        try:
            return maker(i)
        finally:
            makers_done.append(i)
            if len(makers_done) == 6:
                stop.set()

    results = _in_threads(work)
    assert sum(r.get("made", 0) for r in results) == 6 * 400
    assert sum(r.get("deleted", 0) for r in results) > 0
    assert sum(r.get("dropped", 0) for r in results) > 0
    g.drop_kids()
    assert g.kids == [] and len(g.local_var_names()) == 20
    g = None                                      # the last reference
    gc.collect()
    assert pd.scope.live_count() == live
