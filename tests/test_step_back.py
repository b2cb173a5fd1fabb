"""Debugger.step_back (time travel by copy-on-write records) and the first bad value under
check_nan_inf, on real programs: the global block, While, IfElse, StaticRNN, the fused
rnn op, the backward pass and optimizer ops; replay, breakpoints, the bytes bound."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.errors import FeedError
from paddle_nb.interactive.debugger import BadValue, Debugger, DebuggerError

from models import while_powers, while_running_sum
from test_debugger import _expected, _ifelse, _mlp, _mlp_training, _op_index, _rnn


# --- the whole state the debugger shows: every scope below the debugger's, every value -----
def _copy(value):
    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, list):
        return [_copy(v) for v in value]
    if isinstance(value, pd.Scope):
        return ("scope", value.name)
    if hasattr(value, "rows"):                                  # SelectedRows
        return ("rows", value.rows.copy(), value.value.copy(), value.height)
    return value


def _forest(scope) -> dict:
    """{(scope names from the top, var name): a copy of its value (None: empty)}."""
    out = {}

    def walk(s, path):
        path = path + (s.name,)
        for name in s.local_var_names():
            v = s.find_local_var(name)
            out[path + (name,)] = _copy(v.get()) if v.is_initialized() else None
        for kid in s.kids:
            walk(kid, path)
    walk(scope, ())
    return out


def _same(a, b) -> bool:
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                and a.dtype == b.dtype and np.array_equal(a, b, equal_nan=a.dtype.kind == "f"))
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


def _assert_forest(got: dict, want: dict, where: str) -> None:
    assert set(got) == set(want), f"{where}: scopes/vars differ: " \
        f"extra {sorted(set(got) - set(want))[:5]}, missing {sorted(set(want) - set(got))[:5]}"
    bad = [k for k in want if not _same(got[k], want[k])]
    assert not bad, f"{where}: values differ for {bad[:5]}"


def _walk_back_and_forth(dbg, take_every=1):
    """Step to the end recording the forest after each step; then step back from the end
    to the first step, checking each position; then forward again (replay) the same way.
    Returns the results."""
    seen = []
    while (step := dbg.step()) is not None:
        seen.append((step, dbg.location(), list(dbg.changed), _forest(dbg.scope)))
    results = [r.copy() for r in dbg.results]
    end = _forest(dbg.scope)
    n = len(seen)
    assert dbg.finished and dbg.steps_taken == n
    for k in range(n, 0, -1):
        got = dbg.step_back()
        step, loc, changed, forest = seen[k - 1]
        assert got is step and dbg.current is step and dbg.location() == loc
        assert dbg.steps_taken == k and dbg.changed == changed and not dbg.finished
        assert dbg.history == [(s.block_idx, s.op_index, s.op.type) for s, *_ in seen[:k]]
        if k % take_every == 0 or k == 1:
            _assert_forest(_forest(dbg.scope), forest, f"back at step {k} {step!r}")
    for k in range(2, n + 1):
        step = dbg.step()
        assert step is seen[k - 1][0] and dbg.steps_taken == k and dbg.redo_count == n - k
        if k % take_every == 0:
            _assert_forest(_forest(dbg.scope), seen[k - 1][3], f"replayed to step {k}")
    assert dbg.step() is None and dbg.finished
    _assert_forest(_forest(dbg.scope), end, "the end, replayed")
    for got, want in zip(dbg.results, results):
        np.testing.assert_array_equal(got, want)
    return results


# --- the global block ------------------------------------------------------------------------
def test_step_back_in_the_global_block_restores_values_exactly():
    main, startup, feed, prob = _mlp()
    dbg = Debugger(main, feed, [prob], startup=startup)
    s1 = dbg.step()                                   # mul: writes fc_0.tmp_0
    s2 = dbg.step()                                   # elementwise_add: fc_0.tmp_1
    tmp1 = s2.scope.find_var("fc_0.tmp_1").get().copy()
    dbg.step()                                        # relu
    assert dbg.step_back() is s2
    assert dbg.location() == (0, 1) and dbg.steps_taken == 2 and dbg.changed == ["fc_0.tmp_1"]
    assert not s2.scope.find_var("fc_0.tmp_2").is_initialized()     # relu's output: absent
    np.testing.assert_array_equal(s2.scope.find_var("fc_0.tmp_1").get(), tmp1)
    assert dbg.step_back() is s1
    assert not s1.scope.find_var("fc_0.tmp_1").is_initialized()
    assert dbg.redo_count == 2 and dbg.history == [(0, 0, "mul")]
    # forward again: replayed from the records, then live to the end
    np.testing.assert_array_equal(dbg.step().scope.find_var("fc_0.tmp_1").get(), tmp1)
    assert dbg.run_to_end()[0] == pytest.approx(_expected(main, startup, feed, prob)[0])


def test_step_back_before_the_first_step_is_a_clear_error_and_changes_nothing():
    main, startup, feed, prob = _mlp()
    dbg = Debugger(main, feed, [prob], startup=startup)
    assert not dbg.can_step_back
    with pytest.raises(DebuggerError, match="nothing to step back to: no op has run yet"):
        dbg.step_back()
    assert dbg.current is None and dbg.steps_taken == 0 and not dbg.finished
    dbg.step()
    assert dbg.step_back() is None and dbg.current is None and dbg.steps_taken == 0
    with pytest.raises(DebuggerError, match="nothing to step back to"):
        dbg.step_back()
    with pytest.raises(DebuggerError, match="count"):
        dbg.step_back(0)
    assert dbg.step().op.type == "mul" and dbg.steps_taken == 1


def test_vars_created_by_a_later_op_become_absent_again():
    """A sub-block's op writes a name nothing declared: the kernel creates the variable
    in the op's scope; stepping back removes it."""
    main, startup, feed, out = _ifelse()
    dbg = Debugger(main, feed, [out], startup=startup)
    k = _op_index(main.global_block(), "conditional_block")
    dbg.run_to(0, k - 1)
    before = _forest(dbg.scope)
    inner = dbg.step()                                # the branch's first op, in a new scope
    assert inner.depth == 2 and inner.scope in dbg.current.frames[0].scope.kids
    dbg.step_back()
    assert inner.scope not in dbg.frames[0].scope.kids        # the kid scope is not made yet
    _assert_forest(_forest(dbg.scope), before, "before the branch")
    assert dbg.step() is inner and inner.scope in dbg.frames[0].scope.kids


@pytest.mark.parametrize("make", [_mlp, _mlp_training], ids=["inference", "training"])
def test_every_step_of_a_global_block_run_back_and_forth(make):
    main, startup, feed, fetch = make()
    dbg = Debugger(main, feed, [fetch], startup=startup)
    got = _walk_back_and_forth(dbg)
    # the parameters are as one uninterrupted run left them (sgd ran once, live)
    want_scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=want_scope)
    want = exe.run(main, feed=feed, fetch_list=[fetch], scope=want_scope)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    for p in main.all_parameters():
        np.testing.assert_array_equal(dbg.scope.find_var(p.name).get(),
                                      want_scope.find_var(p.name).get())


# --- the backward pass and the optimizer ------------------------------------------------------
@pytest.mark.parametrize("optimizer", ["sgd", "adam"])
def test_stepping_back_over_optimizer_ops_restores_parameters_and_moments(optimizer):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 4
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 4])
        y = pd.data("y", [None, 1])
        loss = pd.mean(pd.layers.square_error_cost(pd.layer.fc(pd.layer.fc(x, 8, act="relu"),
                                                               1), y))
        opt = pd.optimizer.SGD(0.1) if optimizer == "sgd" else pd.optimizer.Adam(0.01)
        opt.minimize(loss)
    rng = np.random.default_rng(1)
    feed = {"x": rng.standard_normal((6, 4)).astype(np.float32),
            "y": rng.standard_normal((6, 1)).astype(np.float32)}
    gb = main.global_block()
    first_opt = _op_index(gb, optimizer)
    dbg = Debugger(main, feed, [loss], startup=startup)
    persistable = [d.name for d in gb.table.vars.values() if d.persistable]
    start = {n: dbg.scope.find_var(n).get().copy() for n in persistable
             if dbg.scope.find_var(n) is not None and dbg.scope.find_var(n).is_initialized()}
    assert dbg.run_to(0, first_opt - 1).op.type != optimizer      # backward done, no update
    grads = {n: dbg.current.scope.find_var(n).get().copy()
             for op in gb.ops[first_opt:] for n in op.input("Grad")}
    dbg.run_to_end()
    moved = [n for n in start if not np.array_equal(dbg.scope.find_var(n).get(), start[n])]
    assert len(moved) >= 4          # the weights and biases (and, for adam, the moments)
    after = {n: dbg.scope.find_var(n).get().copy() for n in start}
    dbg.step_back(len(gb.ops) - first_opt + 1)    # from the end to the op before the first update
    assert dbg.location() == (0, first_opt - 1)
    for n, value in start.items():                 # every parameter and moment as it was
        np.testing.assert_array_equal(dbg.scope.find_var(n).get(), value, err_msg=n)
    for n, g in grads.items():
        np.testing.assert_array_equal(dbg.current.scope.find_var(n).get(), g)
    dbg.step_back(3)                               # into the backward pass
    assert dbg.current.op.attr("op_role") & 1
    assert dbg.run_to_end() is not None and dbg.finished
    for n, value in after.items():                 # forward again: the same update
        np.testing.assert_array_equal(dbg.scope.find_var(n).get(), value, err_msg=n)


# --- sub-blocks ---------------------------------------------------------------------------
def _while_arrays():
    """i = 0; while i < 4: acc += x[i] * 2; out[i] = acc; i += 1 (tensor arrays, in-place
    counter, a variable assigned in place)."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        _, _, _, stacked = while_running_sum(4)
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    return main, startup, {"x": xs}, stacked


def _while_trained():
    """total = x + x^2 + x^3 by a while loop, differentiated (while_grad)."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x, _, total = while_powers()
        gx, = pd.gradients([total], [x])
    return main, startup, {"x": np.array([1.5])}, gx


def _fused_lstm():
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 2
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [3, 2, 2])
        out, _ = pd.layer.lstm(x, 2, direction="bidirect", time_major=True)
        loss = pd.mean(out * out)
        pd.optimizer.SGD(0.1).minimize(loss)
    feed = {"x": np.random.default_rng(1).uniform(-1, 1, (3, 2, 2)).astype("float32")}
    return main, startup, feed, out


@pytest.mark.parametrize("make", [
    _while_arrays, _while_trained, lambda: _ifelse(), lambda: _ifelse(train=True),
    lambda: _rnn(), lambda: _rnn(train=True), _fused_lstm],
    ids=["while", "while-grad", "ifelse", "ifelse-train", "rnn", "rnn-train", "fused-lstm"])
def test_every_step_through_sub_blocks_back_and_forth(make):
    """At every position, stepping back shows exactly the scope forest (scopes, names,
    values) the run showed there: kid scopes made later are gone, scopes deleted later
    (inference frees each loop step's scope) are back with their values."""
    main, startup, feed, fetch = make()
    want = _expected(main, startup, feed, fetch)
    dbg = Debugger(main, feed, [fetch], startup=startup)
    got = _walk_back_and_forth(dbg)
    np.testing.assert_allclose(got[0], want[0], rtol=1e-6)
    assert dbg.history_dropped == 0


def test_step_back_from_inside_a_while_to_the_op_before_it_and_forward_again():
    main, startup, feed, stacked = _while_arrays()
    gb = main.global_block()
    w = _op_index(gb, "while")
    dbg = Debugger(main, feed, [stacked], startup=startup)
    dbg.run_to(0, w - 1)
    before = _forest(dbg.scope)
    aw = _op_index(main.block(1), "write_to_array")
    dbg.add_breakpoint(1, aw)                      # array_write inside the loop
    dbg.cont()
    dbg.cont()                                     # the second iteration
    assert dbg.current.depth == 2 and dbg.frames[-1].scope.name.endswith("step 1")
    out_array = main.block(1).ops[aw].output("Out")[0]
    assert dbg.changed == [out_array]
    assert len(dbg.current.scope.find_var(out_array).get()) == 2      # a tensor array
    while dbg.current.depth == 2 or dbg.location() != (0, w - 1):
        dbg.step_back()
    _assert_forest(_forest(dbg.scope), before, "back before the while")
    assert [k.name for k in dbg.frames[0].scope.kids] == []
    # forward again: the breakpoint stops the replay at the same places
    assert dbg.cont().scope.name.endswith("step 0") and dbg.redo_count > 0
    assert dbg.cont().scope.name.endswith("step 1") and dbg.redo_count == 0   # the frontier
    dbg.clear_breakpoints()
    np.testing.assert_allclose(dbg.run_to_end()[0], np.cumsum(feed["x"] * 2, axis=0))


def test_step_back_out_of_an_rnn_step_and_over_the_recurrent_op():
    main, startup, feed, hs = _rnn()
    dbg = Debugger(main, feed, [hs], startup=startup)
    rec = dbg.step_over()                          # the recurrent op, run whole
    assert rec.op.type == "recurrent" and dbg.steps_taken == 4 * 3 + 1
    out = rec.scope.find_var("rnn_0.out_0").get().copy()
    inner = dbg.step_back()                        # its last inner step: time step 2
    assert inner.depth == 2 and inner.op.type == "rnn_memory_helper"
    assert not rec.scope.find_var("rnn_0.out_0").is_initialized()
    np.testing.assert_array_equal(inner.scope.find_local_var("x").get(), feed["x"][2])
    dbg.step_back(4)                               # time step 1, whose scope was reused
    np.testing.assert_array_equal(dbg.current.scope.find_local_var("x").get(), feed["x"][1])
    dbg.step_back(4)                               # time step 0, in the same scope as 2
    assert dbg.current.scope is inner.scope
    np.testing.assert_array_equal(dbg.current.scope.find_local_var("x").get(), feed["x"][0])
    assert dbg.step_out() is rec                   # replayed: the very same step
    np.testing.assert_array_equal(rec.scope.find_var("rnn_0.out_0").get(), out)


# --- breakpoints, replay, the end --------------------------------------------------------
def test_breakpoints_stop_a_replay_and_step_over_replays_whole_ops():
    main, startup, feed, prob = _mlp()
    dbg = Debugger(main, feed, [prob], startup=startup)
    dbg.run_to_end()
    results = dbg.results[0].copy()
    assert dbg.step_back().op_index == 5           # from the end: the last op, scopes back
    assert dbg.results is not None and not dbg.finished and dbg.current.depth == 1
    np.testing.assert_array_equal(dbg.current.scope.find_var(prob.name).get(), results)
    dbg.step_back(5)
    assert dbg.location() == (0, 0) and dbg.redo_count == 5
    dbg.add_breakpoint(0, 3)
    assert dbg.cont().op_index == 3                # the breakpoint stops the replay
    assert dbg.step_over().op_index == 4
    assert dbg.cont() is None and dbg.finished and dbg.scope.kids == []
    np.testing.assert_array_equal(dbg.results[0], results)


def test_restart_after_stepping_back_leaves_no_scopes_behind():
    main, startup, feed, hs = _rnn(train=True)
    dbg = Debugger(main, feed, [hs], startup=startup)
    live = pd.scope.live_count()
    for _ in range(5):
        dbg.run_to_end()
        dbg.step_back(20)                          # scopes revived from the end
        dbg.restart()
        dbg.run_to(2, 1)
        dbg.step_back(8)                           # scopes made later are detached
        dbg.restart()
        assert dbg.scope.kids == [] and not dbg.can_step_back and dbg.history == []
    assert pd.scope.live_count() <= live


def test_a_kernel_error_can_be_stepped_back_from():
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 4])
        y = pd.relu(x)
        z = pd.layers.reshape(y, [3, -1])          # fine for 3 rows, not for 2
    dbg = Debugger(main, {"x": np.ones((2, 4), np.float32)}, [z], startup=startup)
    with pytest.raises(pd.ExecutionError):
        dbg.cont()
    assert dbg.finished and dbg.error is not None
    step = dbg.step_back()                         # the relu, its scope alive again
    assert step.op.type == "relu" and not dbg.finished
    np.testing.assert_array_equal(step.scope.find_var(y.name).get(), np.ones((2, 4)))
    assert dbg.step() is None and dbg.finished     # replaying the end does not raise again


# --- the bytes bound ------------------------------------------------------------------------
def test_a_tiny_history_budget_drops_old_records_and_says_so():
    main, startup, feed, prob = _mlp_training()
    big = Debugger(main, feed, [prob], startup=startup)
    big.run_to(0, 6)
    per_step = big.history_bytes_held / 7
    budget = int(per_step * 3)
    dbg = Debugger(main, feed, [prob], startup=startup, history_bytes=budget)
    held = []
    for _ in range(12):
        dbg.step()
        held.append(dbg.history_bytes_held)
        assert dbg.history_bytes_held <= budget
    assert dbg.history_dropped > 0 and max(held) > 0
    kept = dbg.steps_taken - dbg.history_dropped
    dbg.step_back(kept)                            # all that is kept can be undone
    where = dbg.location()
    with pytest.raises(DebuggerError, match=rf"history dropped: .*history_bytes={budget}"):
        dbg.step_back()
    assert dbg.location() == where                 # nothing changed
    dbg.run_to_end()
    assert dbg.history_bytes_held <= budget


def test_the_bytes_held_are_what_the_records_copied():
    """A step that overwrites a [1000, 1000] float64 holds about two copies of it (its
    value before and after), counted once however many records share them."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [1000, 1000], "float64")
        y = pd.layers.scale(x, 2.0)
        pd.layers.assign(pd.layers.scale(x, 3.0), output=y)      # y overwritten in place
    dbg = Debugger(main, {"x": np.ones((1000, 1000))}, [y], startup=startup)
    dbg.step()                                     # y = 2x: before absent, after 8 MB
    assert 8e6 <= dbg.history_bytes_held < 8.1e6
    dbg.step()                                     # the 3x temporary: 8 MB more
    dbg.step()                                     # y overwritten: its 2x copy is shared
    assert 24e6 <= dbg.history_bytes_held < 24.1e6
    small = Debugger(main, {"x": np.ones((1000, 1000))}, [y], startup=startup,
                     history_bytes=10_000_000)
    small.run_to_end()
    assert small.history_bytes_held <= 10_000_000 and small.history_dropped >= 2


# --- the first bad value ------------------------------------------------------------------
def _log_model(where):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 3
    with pd.program_guard(main, startup):
        u = pd.data("u", [None, 3])
        if where == "global":
            feature = pd.layers.log(u)                                   # BAD_LOG_LINE
        else:
            feature = pd.cond(pd.mean(u) > -100.0,
                              lambda: pd.layers.log(u) * 1.0,           # BAD_COND_LINE
                              lambda: u * 0.0)
        out = pd.mean(pd.layer.fc(feature, 2))
    feed = {"u": np.float32([[1.0, 2.0, 3.0], [0.5, -0.7, 2.0]])}
    return main, startup, feed, out


def _line_of(marker: str) -> int:
    with open(__file__) as f:
        return next(i for i, line in enumerate(f, 1) if marker in line and "def " not in line
                    and "_line_of" not in line)


@pytest.mark.parametrize("where, marker", [("global", "BAD_LOG_LINE"),
                                           ("sub-block", "BAD_COND_LINE")])
def test_check_nan_inf_stops_at_the_first_bad_value_with_its_scope_alive(where, marker):
    main, startup, feed, out = _log_model(where)
    dbg = Debugger(main, feed, [out], startup=startup, check_nan_inf=True)
    with np.errstate(invalid="ignore"):
        step = dbg.cont()
    assert step is not None and step.op.type == "log" and not dbg.finished
    bad = dbg.bad_value
    assert isinstance(bad, BadValue) and bad.op_type == "log"
    assert bad.location == dbg.location() and bad.step == dbg.steps_taken
    assert (bad.slot, bad.nan, bad.inf, bad.index) == ("Out", 1, 0, (1, 1))
    assert np.isnan(bad.value) and bad.shape == [2, 3] and bad.dtype == "float32"
    assert bad.name == step.op.output("Out")[0]
    assert f"line {_line_of(marker)}" in bad.created_at and __file__ in bad.created_at
    assert len(bad.inputs) == 1 and bad.inputs[0]["slot"] == "X"
    assert bad.inputs[0]["name"] == "u" and bad.inputs[0]["values"][1][1] == pytest.approx(-0.7)
    assert bad.inputs[0]["min"] == pytest.approx(-0.7) and bad.inputs[0]["nan"] == 0
    if where == "sub-block":
        assert step.depth == 2 and bad.scope_name.endswith("/branch")
        assert bad.block_path == step.block_path and "block 0" in bad.block_path
    else:
        assert step.depth == 1 and bad.block_path == "block 0"
    # the op has run and its scope is alive: the NaN is there to look at
    assert np.isnan(step.scope.find_var(bad.name).get()[1, 1])
    text = str(bad)
    assert "first NaN/Inf" in text and "log" in text and "1 NaN and 0 Inf" in text
    assert "[1, 1]" in text and f"line {_line_of(marker)}" in text and "'u'" in text
    # step back from the bad op works; stepping on replays to it and stops there again
    dbg.step_back()
    assert dbg.bad_value is bad
    assert dbg.cont() is step
    with np.errstate(invalid="ignore"):
        results = dbg.cont()                       # it stops once: then on to the end
    assert results is None and dbg.finished and np.isnan(dbg.results[0])
    dbg.restart()
    assert dbg.bad_value is None


def test_check_nan_inf_off_runs_through_and_executor_run_still_raises():
    main, startup, feed, out = _log_model("global")
    dbg = Debugger(main, feed, [out], startup=startup)
    with np.errstate(invalid="ignore"):
        assert dbg.cont() is None and dbg.bad_value is None and np.isnan(dbg.results[0])
    scope = pd.Scope()
    pd.Executor().run(startup, scope=scope)
    with np.errstate(invalid="ignore"), pytest.raises(pd.ExecutionError, match="op 0 log"):
        pd.Executor(check_nan_inf=True).run(main, feed=feed, fetch_list=[out], scope=scope)


def test_check_nan_inf_refuses_a_feed_with_a_nan():
    main, startup, feed, out = _log_model("global")
    with pytest.raises(FeedError, match="feed 'u' has 1 NaN"):
        Debugger(main, {"u": np.float32([[np.nan, 1, 1]])}, [out], startup=startup,
                 check_nan_inf=True)


# --- the DebuggerView: the Back button, the bad value, the panes --------------------------
def test_the_back_button_steps_back_and_is_disabled_when_nothing_can_be_undone():
    from paddle_nb.notebook.widgets import DebuggerView
    main, startup, feed, prob = _mlp()
    view = DebuggerView.from_program(main, feed=feed, fetch_list=[prob], startup=startup)
    assert not view.controls.can_step_back
    view.controls._handle_custom_msg({"cmd": "step_back"}, [])     # as the page sends it
    assert "nothing to step back to" in view.status and view.controls.state == "error"
    for _ in range(3):
        view.controls._handle_custom_msg({"cmd": "step"}, [])
    assert view.controls.can_step_back and view.highlight == [0, 2]
    view.controls._handle_custom_msg({"cmd": "step_back"}, [])
    assert view.highlight == [0, 1] and view.controls.state == "paused"
    assert view.status == ("ran block 0 > op 1 elementwise_add (step 2) — next: block 0 > op 2 "
                           "relu — 1 step behind the live run: stepping forward replays it")
    model = view.scope_view.model
    from paddle_nb.notebook.scope_model import find_scope_node, find_var
    run = find_scope_node(model, "run")
    assert [v["name"] for v in run["vars"] if v["changed"]] == ["fc_0.tmp_1"]
    assert find_var(run, "fc_0.tmp_2")["kind"] == "empty"           # relu's output: gone
    view.handle_message({"cmd": "run_to_end"})
    assert view.controls.state == "finished" and view.controls.can_step_back
    results = list(view.controls.results)
    view.handle_message({"cmd": "step_back"})      # from the end: the results stay
    assert view.controls.state == "paused" and view.highlight == [0, 5]
    assert view.controls.results == results
    view.handle_message({"cmd": "restart"})
    assert not view.controls.can_step_back and view.controls.results == []


def test_the_view_says_when_history_was_dropped():
    from paddle_nb.notebook.widgets import DebuggerView
    main, startup, feed, loss = _mlp_training()
    view = DebuggerView.from_program(main, feed=feed, fetch_list=[loss], startup=startup,
                                     history_bytes=500)
    for _ in range(6):
        view.handle_message({"cmd": "step"})
    assert "can no longer be undone (history_bytes=500)" in view.status
    while view.controls.can_step_back:
        view.handle_message({"cmd": "step_back"})
    view.handle_message({"cmd": "step_back"})
    assert "history dropped" in view.status and "history_bytes=500" in view.status


def test_the_view_shows_the_first_bad_value():
    from paddle_nb.notebook.widgets import DebuggerView
    main, startup, feed, out = _log_model("sub-block")
    view = DebuggerView.from_program(main, feed=feed, fetch_list=[out], startup=startup,
                                     check_nan_inf=True)
    assert view.controls.alert == ""
    with np.errstate(invalid="ignore"):
        view.handle_message({"cmd": "continue"})
    assert view.controls.state == "paused" and "log" in view.status
    alert = view.controls.alert
    assert alert.startswith("first NaN/Inf at step") and f"line {_line_of('BAD_COND_LINE')}" \
        in alert and "input X ('u')" in alert
    assert str(view.debugger.bad_value) == alert
    view.handle_message({"cmd": "step_back"})
    assert "(the debugger is at step" in view.controls.alert


def test_the_panes_share_the_width_and_scroll_inside_their_own_boxes():
    from paddle_nb.notebook.widgets import DebuggerView, views_dir
    main, startup, feed, prob = _mlp()
    view = DebuggerView.from_program(main, feed=feed, fetch_list=[prob], startup=startup)
    panes = view.children[1]
    assert "pd-panes" in panes._dom_classes and panes.layout.flex_flow == "row wrap"
    program, scopes = panes.children
    assert "pd-pane-program" in program._dom_classes and "pd-pane-scope" in scopes._dom_classes
    for pane in (program, scopes):
        assert pane.layout.min_width == "0" and pane.layout.overflow == "auto"
    # both fit side by side in a ~1000 px notebook (its output area is ~930 px)
    basis = [int(p.layout.flex.split()[-1].rstrip("px")) for p in (program, scopes)]
    assert sum(basis) + 8 <= 900
    css = (views_dir() / "widgets.css").read_text()
    assert ".pd-panes > * { min-width: 0; max-width: 100%; overflow: auto; }" in css
    js = (views_dir() / "debugger_view.js").read_text()
    assert '"step_back"' in js and "can_step_back" in js and "pd-alert" in js
    still = view.snapshot()
    assert "pd-panes" in still.children[1]._dom_classes
