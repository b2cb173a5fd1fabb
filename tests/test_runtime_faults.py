"""Runtime faults (docs/robustness.md): feeds that cannot be used, a feed the program needs
but was not given, NaN/Inf checking, and a KeyboardInterrupt in the middle of a run or of a
Debugger's cont(). After each, the scope and the program stay usable: no kid scopes are
left, the parameters hold the values they had before the failed run, and the next run is
correct."""
import contextlib
import gc
import re

import numpy as np
import pytest

import paddle_nb as pd
from models import tanh_rnn
from paddle_nb.core import registry
from paddle_nb.interactive.debugger import Debugger


# --- programs -------------------------------------------------------------------------------
def _mlp_training(lr=0.1):
    """x[?, 4], y[?, 1] -> fc 8 relu -> fc 1 -> square error -> SGD on four parameters."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 4
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 4])
        y = pd.data("y", [None, 1])
        h = pd.layer.fc(x, 8, act="relu")
        pred = pd.layer.fc(h, 1)
        loss = pd.mean(pd.layers.square_error_cost(pred, y))
        pd.optimizer.SGD(lr).minimize(loss)
    rng = np.random.default_rng(1)
    feed = {"x": rng.standard_normal((6, 4)).astype(np.float32),
            "y": rng.standard_normal((6, 1)).astype(np.float32)}
    return main, startup, feed, loss


T, B, D, H = 4, 3, 2, 5


def _rnn_training():
    main, startup, hs = tanh_rnn(T, B, D, H, seed=2)
    with pd.program_guard(main, startup):
        loss = pd.mean(hs * 1.0)
        pd.optimizer.SGD(0.1).minimize(loss)
    feed = {"x": np.random.default_rng(3).standard_normal((T, B, D)).astype(np.float32)}
    return main, startup, feed, loss


def _live():
    gc.collect()        # scopes of earlier tests that nobody deleted count until collected
    return pd.scope.live_count()


def _params(main):
    return [p.name for p in main.all_parameters()]


def _values(scope, names):
    return {n: scope.find_var(n).get() for n in names}


def _state(scope):
    """Every variable of the scope: (kind, the value object, a copy of it)."""
    out = {}
    for n in scope.local_var_names():
        v = scope.find_local_var(n)
        value = v.get() if v.is_initialized() else None
        out[n] = (v.kind, value, np.array(value, copy=True) if value is not None else None)
    return out


def _assert_state_is(scope, before):
    now = _state(scope)
    assert now.keys() == before.keys()
    for n, (kind, value, copy) in before.items():
        assert now[n][0] == kind and now[n][1] is value, n          # the very same object
        if copy is not None:
            np.testing.assert_array_equal(now[n][1], copy, err_msg=n)  # ... unchanged


def _reference(main, startup, feed, fetch, runs=1):
    """Fetched values and final parameters of ``runs`` uninterrupted runs in a fresh scope."""
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=scope)
    for _ in range(runs):
        got = exe.run(main, feed=feed, fetch_list=[fetch], scope=scope)
    return got, {n: np.array(v) for n, v in _values(scope, _params(main)).items()}


@contextlib.contextmanager
def _kernel_patched(op_type, make):
    """Swap the CPU kernel of ``op_type`` for ``make(real_kernel)``, and put it back.
    Executors cache kernels in their prepared blocks, so a patched kernel should forward
    to the real one once disarmed (the tests below do) rather than be swapped back alone."""
    op_def = registry.lookup(op_type)
    real = op_def.kernels["cpu"]
    op_def.kernels["cpu"] = make(real)
    try:
        yield
    finally:
        op_def.kernels["cpu"] = real
    assert registry.lookup(op_type).kernels["cpu"] is real


def _interrupt_on_call(n, state):
    """A kernel maker: the ``n``-th call raises KeyboardInterrupt while ``state['armed']``."""
    def make(real):
        def kernel(ctx):
            state["calls"] += 1
            if state["armed"] and state["calls"] == n:
                state["armed"] = False
                raise KeyboardInterrupt
            return real(ctx)
        return kernel
    return make


# --- feeds ----------------------------------------------------------------------------------
class _NotArrayLike:
    pass


def _gen():
    yield 1.0


@pytest.mark.parametrize("name,value,pattern", [
    ("x", _NotArrayLike(), r"feed 'x': cannot convert _NotArrayLike to float32: .*not "
                           r"array-like"),
    ("x", None, r"cannot convert NoneType to float32: .*not array-like"),
    ("x", {"a": 1.0}, r"cannot convert dict to float32"),
    ("x", _gen(), r"cannot convert generator to float32"),
    ("x", [[1.0, 2.0, 3.0, 4.0], [1.0, 2.0]], r"cannot convert list to float32"),
    ("x", [[object()] * 4], r"cannot convert list to float32: .*list of other objects"),
    ("x", [[1j, 0, 0, 0]], r"holds complex128 values, not real numbers"),
    ("x", "text", r"cannot convert str to float32"),
    ("label", [[1.5], [2.0]], r"feed 'label': int64 cannot hold the given values exactly "
                              r"\(e.g. 1.5\)"),
    ("label", [[2**70]], r"cannot convert list to int64: it holds numbers no fixed-size "
                         r"type holds \(too large\?\): \[1180591620717411303424\]"),
    ("fc_0.w_0", np.ones((4, 3), np.float32), r"cannot feed 'fc_0.w_0': it is a parameter.*"
                                              r"scope.find_var\('fc_0.w_0'\).set"),
    ("learning_rate_0", np.float32([0.5]), r"cannot feed 'learning_rate_0': it is persistable"),
])
def test_feeds_that_cannot_be_used_are_refused_and_change_nothing(exe, name, value, pattern):
    x = pd.data("x", [None, 4])
    label = pd.data("label", [None, 1], "int64")
    prob = pd.layer.fc(x, 3, act="softmax")
    loss = pd.mean(pd.op.cross_entropy(X=prob, Label=label))
    pd.optimizer.SGD(0.5).minimize(loss)
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    before = _state(scope)
    feed = {"x": np.ones((2, 4), np.float32), "label": np.int64([[0], [1]])}
    feed[name] = value
    with pytest.raises(pd.FeedError, match=pattern):
        exe.run(feed=feed, fetch_list=[loss], scope=scope)
    _assert_state_is(scope, before)
    assert scope.kids == []


def test_lossless_python_feeds_are_converted(exe):
    x = pd.data("x", [None, 2])
    label = pd.data("label", [None, 1], "int64")
    flag = pd.data("flag", [None, 1], "bool")
    outs = [pd.layers.scale(x, 1.0), pd.layers.cast(label, "int64"), pd.layers.cast(flag, "bool")]
    got = exe.run(feed={"x": [[1, 2]], "label": [[3.0]], "flag": [[1]]}, fetch_list=outs)
    assert got[0].dtype == np.float32 and got[0].tolist() == [[1.0, 2.0]]
    assert got[1].dtype == np.int64 and got[1].tolist() == [[3]]
    assert got[2].dtype == np.bool_ and got[2].tolist() == [[True]]
    with pytest.raises(pd.FeedError, match=r"bool cannot hold the given values exactly \(e.g. 2\)"):
        exe.run(feed={"x": [[1, 2]], "label": [[3]], "flag": [[2]]}, fetch_list=outs)


def test_a_feed_the_program_needs_but_was_not_given_names_the_var_and_the_op(exe):
    main, startup, feed, loss = _mlp_training()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    before = _state(scope)
    gen = exe.steps(main, feed={"x": feed["x"]}, fetch_list=[loss], scope=scope)
    with pytest.raises(pd.FeedError) as info:
        next(gen)                              # at the first step, before any op runs
    msg = str(info.value)
    sub = [i for i, op in enumerate(main.global_block().ops) if op.type == "elementwise_sub"][0]
    assert msg.startswith(f"block 0 > op {sub} elementwise_sub: input slot Y: variable 'y' "
                          f"has no value: it is a data variable")
    assert "feed={'y': ...}" in msg
    assert re.search(r"op created at: .*test_runtime_faults.py.*square_error_cost", msg)
    _assert_state_is(scope, before)
    assert scope.kids == []
    # every missing feed is named, the first one in full
    with pytest.raises(pd.FeedError, match=r"variable 'x' has no value.*feed=\{'x': ..., "
                                           r"'y': ...\}\)\n  also not fed: 'y', read by "
                                           r"block 0 > op \d+ elementwise_sub \(slot Y\)"):
        exe.run(main, fetch_list=[loss], scope=scope)
    # a Debugger can still be made for the program (to look at it); its first step says so
    dbg = Debugger(main, {"x": feed["x"]}, [loss], scope=scope)
    with pytest.raises(pd.FeedError, match="variable 'y' has no value"):
        dbg.step()
    assert dbg.finished and scope.kids == []
    _assert_state_is(scope, before)


# --- NaN / Inf ------------------------------------------------------------------------------
def _rnn_with_log(train=False):
    """The step block takes a log of its input: a negative x at time step 2 makes NaN
    there, and the op that makes it is inside block 1."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 2
    with pd.program_guard(main, startup):
        x = pd.data("x", [T, B, D])
        h0 = pd.layers.fill_constant([B, D], "float32", 0.0)
        w = pd.create_parameter([D], "float32", name="w", initializer=pd.Constant(0.5))
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_pre = rnn.memory(init=h0)
            h = h_pre + pd.layers.log(x_t)
            rnn.update_memory(h_pre, h)
            rnn.output(pd.layers.exp(h) * w)
        out = rnn()
        loss = pd.mean(out)
        if train:
            pd.optimizer.SGD(0.1).minimize(loss)
    xs = np.full((T, B, D), 2.0, np.float32)
    xs[2, 0, :] = -1.0                  # two NaN at time step 2
    xs[2, 1, 0] = -5.0                  # and a third
    return main, startup, xs, out, loss


def test_check_nan_inf_names_the_first_op_its_block_and_the_users_line():
    main, startup, xs, out, loss = _rnn_with_log(train=True)
    scope = pd.Scope()
    exe = pd.Executor(check_nan_inf=True)
    exe.run(startup, scope=scope)
    live = _live()
    with pytest.raises(pd.ExecutionError) as info:
        exe.run(main, feed={"x": xs}, fetch_list=[out], scope=scope)
    msg = str(info.value)
    step = main.block(1)
    k = [i for i, op in enumerate(step.ops) if op.type == "log"][0]
    log_out = step.ops[k].output("Out")[0]
    first = msg.splitlines()[0]
    assert first == (f"{step.path} > op {k} log: output Out (var {log_out!r}) has 3 NaN and "
                     f"0 Inf values")
    assert re.match(r"block 0 > recurrent@\d+ \(block 1\) > op \d+ log", first)
    assert re.search(r"in scope 'recurrent@\d+/step 2'", msg)        # the time step
    assert scope.find_var("w").get().tolist() == [0.5] * D            # no update kept
    assert re.search(r"input X \('x'\): float32\[3, 2\], finite, min -5, max 2", msg)
    assert re.search(r"op created at: .*test_runtime_faults.py.*pd.layers.log\(x_t\)", msg)
    assert "exp" not in first and msg.count(" NaN ") == 1           # only the first op
    e = info.value
    assert (e.var_name, e.output_slot, e.nan_count, e.inf_count) == (log_out, "Out", 3, 0)
    # the run scope and the step scopes are gone; the scope is usable
    assert scope.kids == [] and _live() == live
    good, = exe.run(main, feed={"x": np.abs(xs)}, fetch_list=[out], scope=scope)
    assert np.isfinite(good).all()


@pytest.mark.filterwarnings("ignore:invalid value encountered")   # NaN in, on purpose
def test_check_nan_inf_is_off_by_default_and_a_run_can_override_the_executor():
    main, startup, xs, out, loss = _rnn_with_log()
    scope = pd.Scope()
    quiet, strict = pd.Executor(), pd.Executor(check_nan_inf=True)
    quiet.run(startup, scope=scope)
    got, = quiet.run(main, feed={"x": xs}, fetch_list=[out], scope=scope)
    assert np.isnan(got).sum() == 3 * (T - 2)          # NaN from step 2 on, no error
    got, = strict.run(main, feed={"x": xs}, fetch_list=[out], scope=scope,
                      check_nan_inf=False)
    assert np.isnan(got).any()
    with pytest.raises(pd.ExecutionError, match="log: output Out .* has 3 NaN"):
        quiet.run(main, feed={"x": xs}, fetch_list=[out], scope=scope, check_nan_inf=True)
    assert not quiet.check_nan_inf and strict.check_nan_inf


@pytest.mark.filterwarnings("ignore:overflow encountered")
def test_inf_is_reported_and_int_outputs_are_not_checked(exe):
    x = pd.data("x", [None, 2])
    n = pd.data("n", [None, 2], "int64")
    m = pd.layers.scale(n, 2.0)                  # ints are never checked
    y = pd.layers.exp(x)
    xs = np.float32([[1, 100], [200, 0]])        # e^100 and e^200 overflow float32
    with pytest.raises(pd.ExecutionError, match=r"op 1 exp: output Out \(var .*\) has 0 NaN "
                                                r"and 2 Inf values"):
        exe.run(feed={"x": xs, "n": np.int64([[1, 2]])}, fetch_list=[m, y], check_nan_inf=True)


def test_a_nan_feed_or_parameter_is_named_as_such(exe):
    x = pd.data("x", [None, 2])
    y = pd.layer.fc(x, 2)
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    with pytest.raises(pd.FeedError, match=r"feed 'x' has 1 NaN and 1 Inf values "
                                           r"\(check_nan_inf is on\)"):
        exe.run(feed={"x": np.float32([[np.nan, np.inf]])}, fetch_list=[y], scope=scope,
                check_nan_inf=True)
    w = scope.find_var("fc_0.w_0")
    w.set(np.where(np.eye(2, dtype=bool), np.float32(np.nan), w.get()))
    with pytest.raises(pd.ExecutionError) as info:
        exe.run(feed={"x": np.float32([[1, 2]])}, fetch_list=[y], scope=scope,
                check_nan_inf=True)
    msg = str(info.value)
    assert msg.startswith("block 0 > op 0 mul: output Out")
    assert "input Y ('fc_0.w_0'): float32[2, 2] already had 2 NaN and 0 Inf values (not made " \
           "by an op of this run" in msg


def test_a_nan_in_a_tensor_array_item_is_found():
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        w = pd.create_parameter([2], "float32", name="w", initializer=pd.Constant(1.0))
        arr = pd.create_array("float32")
        pd.array_write(w, pd.layers.fill_constant([1], "int64", 0), array=arr)
        n = pd.array_length(arr)
    scope = pd.Scope()
    exe = pd.Executor(check_nan_inf=True)
    exe.run(startup, scope=scope)
    scope.find_var("w").set(np.float32([np.nan, 1]))
    with pytest.raises(pd.ExecutionError,
                       match=r"write_to_array: output Out \(item 0 of tensor array "
                             r"'array_0'\) has 1 NaN and 0 Inf values"):
        exe.run(main, fetch_list=[n], scope=scope)


def _nan_on_call(n, state):
    """A kernel maker: the ``n``-th call writes its result, then NaN over ParamOut."""
    def make(real):
        def kernel(ctx):
            real(ctx)
            state["calls"] += 1
            if state["armed"] and state["calls"] == n:
                state["armed"] = False
                bad = np.array(ctx.output_value("ParamOut"), copy=True)
                bad.flat[0] = np.nan
                ctx.set_output("ParamOut", bad)
        return kernel
    return make


def test_a_nan_made_by_an_optimizer_op_leaves_every_parameter_as_before_the_run():
    main, startup, feed, loss = _mlp_training()
    names = _params(main)
    sgd = [op for op in main.global_block().ops if op.type == "sgd"]
    assert len(sgd) == len(names) == 4
    scope = pd.Scope()
    exe = pd.Executor(check_nan_inf=True)
    exe.run(startup, scope=scope)
    before = _state(scope)
    state = {"calls": 0, "armed": True}
    with _kernel_patched("sgd", _nan_on_call(3, state)):
        with pytest.raises(pd.ExecutionError) as info:
            exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
        assert state["calls"] == 3
        bad_op = sgd[2]
        assert str(info.value).startswith(
            f"block 0 > op {bad_op.idx} sgd: output ParamOut (var "
            f"{bad_op.output('ParamOut')[0]!r}) has 1 NaN and 0 Inf values")
        # two optimizer ops had already updated their parameters: both are undone
        _assert_state_is(scope, before)
        assert scope.kids == []
        got, = exe.run(main, feed=feed, fetch_list=[loss], scope=scope)   # disarmed now
    want, params = _reference(main, startup, feed, loss)
    np.testing.assert_array_equal(got, want[0])
    for n in names:
        np.testing.assert_array_equal(scope.find_var(n).get(), params[n], err_msg=n)


def test_stepping_with_check_nan_inf_stops_at_the_op():
    main, startup, xs, out, loss = _rnn_with_log()
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=scope)
    seen = []
    with pytest.raises(pd.ExecutionError, match="log: output Out"):
        for step in exe.steps(main, feed={"x": xs}, fetch_list=[out], scope=scope,
                              check_nan_inf=True):
            seen.append((step.block_idx, step.op.type))
    # steps 0 and 1 of the RNN ran whole; step 2 stopped at its log
    assert seen.count((1, "log")) == 2 and scope.kids == []


# --- KeyboardInterrupt ----------------------------------------------------------------------
def test_keyboard_interrupt_in_a_kernel_undoes_the_run_and_the_next_run_is_right(exe):
    main, startup, feed, loss = _mlp_training()
    names = _params(main)
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    exe.run(main, feed=feed, fetch_list=[loss], scope=scope)      # prepared, warm
    before = _state(scope)
    live = _live()
    state = {"calls": 0, "armed": True}
    with _kernel_patched("sgd", _interrupt_on_call(3, state)):
        shared = pd.Executor()                      # prepares with the patched kernel
        with pytest.raises(KeyboardInterrupt) as info:
            shared.run(main, feed=feed, fetch_list=[loss], scope=scope)
        assert state["calls"] == 3                  # two parameters were already updated ...
        _assert_state_is(scope, before)             # ... and are back to their old values
        assert scope.kids == [] and _live() == live
        assert any(re.match(r"paddle_nb: interrupted in block 0 > op \d+ sgd; the run was "
                            r"undone", note) for note in info.value.__notes__)
        # the same executor (its cached kernel now forwards) and the program go on
        got, = shared.run(main, feed=feed, fetch_list=[loss], scope=scope)
    want, params = _reference(main, startup, feed, loss, runs=2)
    np.testing.assert_array_equal(got, want[0])
    for n in names:
        np.testing.assert_array_equal(scope.find_var(n).get(), params[n], err_msg=n)
    got, = exe.run(main, feed=feed, fetch_list=[loss], scope=scope)   # another executor
    assert np.isfinite(got) and scope.kids == []


def test_keyboard_interrupt_between_ops_says_so_and_undoes_the_run(exe, monkeypatch):
    """An interrupt that arrives outside every op (here: while the result is fetched,
    after every sgd ran) is noted too, and the run is undone all the same."""
    main, startup, feed, loss = _mlp_training()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    before = _state(scope)

    def fetch(*args):
        raise KeyboardInterrupt
    monkeypatch.setattr(pd.Executor, "_fetch", fetch)
    with pytest.raises(KeyboardInterrupt) as info:
        exe.run(main, feed=feed, fetch_list=[loss], scope=scope)
    assert info.value.__notes__ == ["paddle_nb: interrupted in Executor.run, between ops; "
                                    "the run was undone (parameters keep their values from "
                                    "before it)"]
    _assert_state_is(scope, before)
    assert scope.kids == []


# Executor.run runs the program's fused copy (passes/): the step's add and tanh are one
# fused_elemwise_add_activation there, and their gradients one _grad op.
@pytest.mark.parametrize("op_type, n", [
    ("fused_elemwise_add_activation", 1),            # the forward pass: time steps 0
    ("fused_elemwise_add_activation", T - 1),        # and T - 2
    ("fused_elemwise_add_activation_grad", 2),       # the backward, in the gradient block
    ("sgd", 2),                                      # after one parameter was updated
])
def test_keyboard_interrupt_inside_an_rnn_drops_every_step_scope(op_type, n):
    main, startup, feed, loss = _rnn_training()
    names = _params(main)
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=scope)
    before = _state(scope)
    live = _live()
    state = {"calls": 0, "armed": True}
    with _kernel_patched(op_type, _interrupt_on_call(n, state)):
        exe2 = pd.Executor()
        with pytest.raises(KeyboardInterrupt):
            exe2.run(main, feed=feed, fetch_list=[loss], scope=scope)
        assert state["calls"] == n
        assert scope.kids == [] and _live() == live
        _assert_state_is(scope, before)
        got, = exe2.run(main, feed=feed, fetch_list=[loss], scope=scope)
    want, params = _reference(main, startup, feed, loss)
    np.testing.assert_array_equal(got, want[0])
    for p in names:
        np.testing.assert_array_equal(scope.find_var(p).get(), params[p], err_msg=p)


def test_keyboard_interrupt_in_a_kernel_during_debugger_cont_undoes_the_run():
    main, startup, feed, loss = _mlp_training()
    names = _params(main)
    state = {"calls": 0, "armed": True}
    with _kernel_patched("sgd", _interrupt_on_call(2, state)):
        dbg = Debugger(main, feed, [loss], startup=startup)
        before = _state(dbg.scope)
        with pytest.raises(KeyboardInterrupt):
            dbg.cont()
        assert dbg.finished and isinstance(dbg.error, KeyboardInterrupt)
        assert dbg.scope.kids == []
        _assert_state_is(dbg.scope, before)         # the first sgd's update is undone
    dbg.restart()
    assert dbg.run_to_end()[0] == _reference(main, startup, feed, loss)[0][0]
    params = _reference(main, startup, feed, loss)[1]
    for n in names:
        np.testing.assert_array_equal(dbg.scope.find_var(n).get(), params[n], err_msg=n)


def test_keyboard_interrupt_between_debugger_steps_keeps_what_ran(monkeypatch):
    """Ctrl-C in the debugger's own code, between two ops: the Debugger closes the run (no
    fault in the executor), so the ops that ran keep their effects, as after a restart():
    each parameter holds its old value or its updated one, never a mix within one."""
    main, startup, feed, loss = _mlp_training()
    names = _params(main)
    ops = main.global_block().ops
    first_sgd = [i for i, op in enumerate(ops) if op.type == "sgd"][0]
    dbg = Debugger(main, feed, [loss], startup=startup)
    old = {n: np.array(v) for n, v in _values(dbg.scope, names).items()}
    real_advance = dbg._advance

    def advance():
        step = real_advance()
        if step is not None and step.op_index == first_sgd + 1:
            raise KeyboardInterrupt           # as if it arrived just after this step
        return step

    monkeypatch.setattr(dbg, "_advance", advance)
    with pytest.raises(KeyboardInterrupt):
        dbg.cont()
    monkeypatch.undo()
    assert dbg.finished and dbg.scope.kids == []
    new = _reference(main, startup, feed, loss)[1]
    updated = [n for n in names if not np.array_equal(dbg.scope.find_var(n).get(), old[n])]
    assert len(updated) == 2                  # the two sgd ops that ran
    for n in names:
        want = new[n] if n in updated else old[n]
        np.testing.assert_array_equal(dbg.scope.find_var(n).get(), want, err_msg=n)
    dbg.restart(rerun_startup=True)
    assert dbg.run_to_end()[0] == _reference(main, startup, feed, loss)[0][0]
