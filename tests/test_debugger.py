"""The step debugger (paddle_nb/interactive/debugger.py) on real programs and real kernels:
stepping, stepping over and out of control flow, breakpoints, restarts, backward ops,
errors and interrupts."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core import registry
from paddle_nb.core.errors import ExecutionError, FeedError, FetchError, PaddleNBError
from paddle_nb.core.grad_maker import forward_name
from paddle_nb.interactive.debugger import Debugger, DebuggerError


# --- programs -----------------------------------------------------------------------------
def _mlp():
    """fc(relu) + fc(softmax): mul, elementwise_add, relu, mul, elementwise_add, softmax."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 3
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 4])
        h = pd.layer.fc(x, 8, act="relu")
        prob = pd.layer.fc(h, 3, act="softmax")
    xs = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    return main, startup, {"x": xs}, prob


def _mlp_training():
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 4
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 4])
        y = pd.data("y", [None, 1])
        h = pd.layer.fc(x, 8, act="relu")
        pred = pd.layer.fc(h, 1)
        loss = pd.mean(pd.layers.square_error_cost(pred, y))
        pd.optimizer.SGD(0.1).minimize(loss)
    rng = np.random.default_rng(1)
    feed = {"x": rng.standard_normal((6, 4)).astype(np.float32),
            "y": rng.standard_normal((6, 1)).astype(np.float32)}
    return main, startup, feed, loss


def _ifelse(train=False):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 5
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 3], "float64")
        x.stop_gradient = False
        cond = pd.layers.reduce_sum(x, dim=1, keep_dim=True) > 0.0
        ie = pd.ifelse()
        with ie.true_block():
            ie.output(pd.tanh(pd.layer.fc(x, 2, param_attr="w_true", bias_attr=False)))
        with ie.false_block():
            w = pd.create_parameter([3, 2], "float64", name="w_false",
                                    initializer=pd.Uniform(-1, 1, seed=3))
            ie.output(pd.matmul(x, w) * 2.0)
        out, = ie(cond)
        loss = pd.mean(out * out)
        if train:
            pd.optimizer.SGD(0.1).minimize(loss)
    xs = np.array([[1.0, 0.2, -0.3], [-1.0, -0.5, 0.1], [0.3, 0.3, 0.3], [-0.2, 0.1, -0.4]])
    return main, startup, {"x": xs}, out


T, B, D, H = 3, 2, 3, 2


def _rnn(train=False):
    """h_t = sigmoid(x[t] @ W + h_{t-1}); the recurrent op is op 0 of block 0."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [T, B, D], "float64")
        h0 = pd.data("h0", [B, H], "float64")
        W = pd.create_parameter([D, H], "float64", name="W", initializer=pd.Normal(0, 0.5, 1))
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_pre = rnn.memory(init=h0)
            h = pd.sigmoid(pd.matmul(x_t, W) + h_pre)
            rnn.update_memory(h_pre, h)
            rnn.output(h)
        hs = rnn()
        loss = pd.mean(hs)
        if train:
            pd.optimizer.SGD(0.1).minimize(loss)
    rng = np.random.default_rng(2)
    feed = {"x": rng.standard_normal((T, B, D)), "h0": rng.standard_normal((B, H))}
    return main, startup, feed, hs


def _expected(main, startup, feed, fetch):
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=scope)
    return exe.run(main, feed=feed, fetch_list=[fetch], scope=scope)


def _op_index(block, type_, nth=0):
    return [i for i, op in enumerate(block.ops) if op.type == type_][nth]


# --- stepping -----------------------------------------------------------------------------
def test_stepping_an_mlp_runs_block_0_in_order_and_fetches_what_run_fetches():
    main, startup, feed, prob = _mlp()
    dbg = Debugger(main, feed, [prob], startup=startup)
    assert dbg.current is None and dbg.frames == () and dbg.location() is None
    assert not dbg.finished and dbg.results is None and dbg.steps_taken == 0
    seen = []
    while (step := dbg.step()) is not None:
        seen.append(step)
        assert dbg.current is step and step.depth == 1 and dbg.frames == step.frames
    ops = main.global_block().ops
    assert [s.op for s in seen] == ops
    assert dbg.history == [(0, i, op.type) for i, op in enumerate(ops)]
    assert dbg.finished and dbg.error is None and dbg.steps_taken == len(ops) == 6
    assert dbg.current is None and dbg.frames == () and dbg.changed == []
    np.testing.assert_array_equal(dbg.results[0], _expected(main, startup, feed, prob)[0])
    assert dbg.scope.kids == []                    # the run scope went with the run
    assert dbg.step() is None and dbg.step_over() is None and dbg.cont() is None


def test_after_n_steps_the_current_op_its_outputs_and_the_scope_are_what_numpy_says():
    main, startup, feed, prob = _mlp()
    dbg = Debugger(main, feed, [prob], startup=startup)
    p = {n: dbg.scope.find_var(n).get() for n in ("fc_0.w_0", "fc_0.b_0")}
    xs = feed["x"]

    step = dbg.step()                              # the op that just ran: mul
    assert step.op.type == "mul" and dbg.location() == (0, 0)
    assert dbg.changed == ["fc_0.tmp_0"]
    np.testing.assert_allclose(step.scope.find_var("fc_0.tmp_0").get(), xs @ p["fc_0.w_0"],
                               rtol=1e-5)
    assert not step.scope.find_var("fc_0.tmp_1").is_initialized()   # not run yet

    dbg.step()
    step = dbg.step()
    assert step is dbg.current and step.op.type == "relu" and dbg.steps_taken == 3
    assert dbg.changed == ["fc_0.tmp_2"]
    want = np.maximum(xs @ p["fc_0.w_0"] + p["fc_0.b_0"], 0)
    np.testing.assert_allclose(dbg.current.scope.find_var("fc_0.tmp_2").get(), want,
                               rtol=1e-5, atol=1e-6)
    assert dbg.current.scope.parent is dbg.scope                    # the run scope
    assert dbg.frame_stack() == [{"block_idx": 0, "block_path": "block 0",
                                  "scope_name": "run", "owner_type": None,
                                  "owner_index": None}]


def test_step_enters_an_ifelse_branch_and_step_over_skips_it():
    main, startup, feed, out = _ifelse()
    gb = main.global_block()
    k = _op_index(gb, "conditional_block")
    true_block = gb.ops[k].attr("sub_block")
    dbg = Debugger(main, feed, [out], startup=startup)
    assert dbg.run_to(0, k - 1).op.type == "split_lod_tensor"

    step = dbg.step()                              # into the true branch, depth 2
    assert step.depth == 2 and step.block_idx == true_block and step.op_index == 0
    assert step.op.type == "mul"                   # the branch's fc
    outer, inner = dbg.frames
    assert (outer.block_idx, outer.owner) == (0, None)
    assert inner.owner == gb.ops[k] and inner.owner.type == "conditional_block"
    assert inner.scope.name == f"conditional_block@{k}/branch"
    assert inner.scope.parent is outer.scope
    assert [f["owner_type"] for f in dbg.frame_stack()] == [None, "conditional_block"]
    assert dbg.frame_stack()[1]["owner_index"] == k
    # the branch sees only its rows: those whose sum is > 0
    rows = feed["x"][feed["x"].sum(axis=1) > 0]
    w = dbg.scope.find_var("w_true").get()
    np.testing.assert_allclose(step.scope.find_var(dbg.changed[0]).get(), rows @ w)

    while dbg.current.depth == 2:                  # the branch's ops, then its owner
        dbg.step()
    assert dbg.location() == (0, k) and dbg.current.op.type == "conditional_block"
    assert dbg.current.depth == 1 and "ifelse_0.true_output_0" in dbg.changed

    before = dbg.steps_taken
    step = dbg.step_over()                         # the false branch runs whole
    assert step.op == gb.ops[k + 1] and step.op.type == "conditional_block"
    false_block = gb.ops[k + 1].attr("sub_block")
    ran = dbg.history[before:]
    assert [b for b, _, _ in ran[:-1]] == [false_block] * (len(ran) - 1) and len(ran) > 1

    dbg.restart()                                  # step_over from the op before it
    dbg.run_to(0, k - 1)
    assert dbg.step_over().op == gb.ops[k]
    assert dbg.run_to_end()[0] == pytest.approx(_expected(main, startup, feed, out)[0])


def test_step_over_before_the_first_step_skips_a_leading_control_flow_op():
    main, startup, feed, hs = _rnn()
    dbg = Debugger(main, feed, [hs], startup=startup)
    step = dbg.step_over()
    assert step.op.type == "recurrent" and step.depth == 1 and dbg.location() == (0, 0)
    assert dbg.steps_taken == 4 * T + 1            # four step-block ops per time step


def _numpy_rnn(scope, feed):
    W, h, hs = scope.find_var("W").get(), feed["h0"], []
    for x_t in feed["x"]:
        h = 1 / (1 + np.exp(-(x_t @ W + h)))
        hs.append(h)
    return np.stack(hs)


@pytest.mark.parametrize("train", [False, True], ids=["inference", "training"])
def test_rnn_steps_through_each_time_step_scope(train):
    main, startup, feed, hs = _rnn(train)
    dbg = Debugger(main, feed, [hs], startup=startup)
    rnn_op = main.global_block().ops[0]
    for t in range(T):
        step = dbg.step()                          # first op of the step block at time t
        assert step.depth == 2 and step.block_idx == 1 and step.op_index == 0
        frame = dbg.frames[-1]
        assert frame.owner == rnn_op and frame.scope is step.scope
        # training keeps every step scope for the gradient; inference uses two in turn
        assert frame.scope.name == f"recurrent@0/step {t if train else t % 2}"
        # the step input shadows the outer sequence: in the step scope x is x[t]
        np.testing.assert_array_equal(step.scope.find_local_var("x").get(), feed["x"][t])
        np.testing.assert_array_equal(dbg.frames[0].scope.find_var("x").get(), feed["x"])
        for _ in range(3):
            dbg.step()
        assert dbg.current.op.type == "rnn_memory_helper"
    step = dbg.step()
    assert step.op == rnn_op and step.depth == 1
    np.testing.assert_allclose(step.scope.find_var("rnn_0.out_0").get(),
                               _numpy_rnn(dbg.scope, feed))


def test_step_out_of_the_step_block_lands_on_the_recurrent_op():
    main, startup, feed, hs = _rnn(train=True)
    dbg = Debugger(main, feed, [hs], startup=startup)
    dbg.step()
    dbg.step()
    assert dbg.current.depth == 2
    step = dbg.step_out()
    assert step.op.type == "recurrent" and step.depth == 1 and dbg.location() == (0, 0)
    assert dbg.changed == ["rnn_0.out_0", "rnn_0.scopes_0"]
    np.testing.assert_allclose(step.scope.find_var("rnn_0.out_0").get(),
                               _numpy_rnn(dbg.scope, feed))
    # the backward: recurrent_grad runs its gradient block in the kept scopes, last first
    step = dbg.run_to(2, 0)
    assert dbg.frames[-1].owner.type == "recurrent_grad"
    assert dbg.frames[-1].scope.name == f"recurrent@0/step {T - 1}"
    assert dbg.step_out().op.type == "recurrent_grad"
    # step_out at depth 1 is cont(): to the end here
    assert dbg.step_out() is None and dbg.finished and dbg.scope.kids == []


# --- breakpoints --------------------------------------------------------------------------
def test_breakpoints_cont_and_run_to():
    main, startup, feed, prob = _mlp()
    dbg = Debugger(main, feed, [prob], startup=startup)
    dbg.add_breakpoint(0, 2)
    dbg.add_breakpoint(0, 4)
    assert dbg.breakpoints == {(0, 2), (0, 4)}
    assert dbg.cont().op_index == 2 and dbg.current.op.type == "relu"
    assert dbg.cont().op_index == 4                # leaves the breakpoint it sits on
    assert dbg.cont() is None and dbg.finished
    np.testing.assert_array_equal(dbg.results[0], _expected(main, startup, feed, prob)[0])

    dbg.restart()
    assert dbg.run_to(0, 1).op_index == 1          # a temporary breakpoint
    assert dbg.run_to(0, 5).op_index == 2          # a real breakpoint comes first
    assert dbg.breakpoints == {(0, 2), (0, 4)}
    dbg.remove_breakpoint(0, 4)
    dbg.remove_breakpoint(0, 4)                    # not set: nothing to do
    assert dbg.run_to(0, 5).op.type == "softmax"
    dbg.restart()
    dbg.clear_breakpoints()
    assert dbg.breakpoints == set() and dbg.cont() is None and dbg.steps_taken == 6


def test_a_breakpoint_in_the_rnn_step_block_stops_once_per_time_step():
    main, startup, feed, hs = _rnn()
    dbg = Debugger(main, feed, [hs], startup=startup)
    dbg.add_breakpoint(1, 2)                        # the sigmoid
    xs = []
    while (step := dbg.cont()) is not None:
        assert step.op.type == "sigmoid" and step.depth == 2
        xs.append(step.scope.find_local_var("x").get())
    np.testing.assert_array_equal(np.stack(xs), feed["x"])
    # step_over stops at a breakpoint inside the op it steps over, as pdb and gdb do
    dbg.restart()
    assert dbg.step_over().op.type == "sigmoid"
    assert dbg.run_to_end()[0] == pytest.approx(_expected(main, startup, feed, hs)[0])


@pytest.mark.parametrize("where, words", [
    ((7, 0), "no block 7: this program has blocks 0..0"),
    ((0, 6), "no op 6 in block 0: it has 6 ops (0..5)"),
    ((0, -1), "no op -1"),
    (("0", 1), "no block '0'"),
])
def test_a_breakpoint_that_does_not_exist_is_a_clear_error(where, words):
    main, startup, feed, prob = _mlp()
    dbg = Debugger(main, feed, [prob], startup=startup)
    for command in (dbg.add_breakpoint, dbg.remove_breakpoint, dbg.run_to):
        with pytest.raises(DebuggerError, match=words.replace("(", r"\(").replace(")", r"\)")):
            command(*where)
    assert issubclass(DebuggerError, PaddleNBError)
    assert dbg.breakpoints == set() and dbg.steps_taken == 0
    dbg.add_breakpoint(np.int64(0), np.int64(3))   # numpy indices are fine
    assert dbg.breakpoints == {(0, 3)}


# --- restarts -----------------------------------------------------------------------------
def test_restart_gives_the_same_results_and_leaves_no_scopes_behind():
    main, startup, feed, hs = _rnn(train=True)
    main_hs = _expected(main, startup, feed, hs)[0]
    dbg = Debugger(main, feed, [hs], startup=startup)
    # SGD changes W, so compare before the update: fetch from the forward part only
    first = dbg.run_to_end()[0]
    np.testing.assert_allclose(first, main_hs)
    assert dbg.scope.kids == []
    dbg.run_to(1, 1)                               # a finished debugger: nothing happens
    dbg.restart()
    live = pd.scope.live_count()
    for _ in range(20):
        dbg.run_to(2, 3)                           # deep inside recurrent_grad's steps
        assert dbg.current.depth == 2 and len(dbg.scope.kids) == 1
        dbg.restart()
        assert dbg.scope.kids == [] and dbg.current is None and dbg.history == []
    assert pd.scope.live_count() <= live
    # parameters stay between runs: W moved by SGD, so the result differs...
    assert not np.allclose(dbg.run_to_end()[0], first)
    # ...until the startup program initialises it again
    dbg.restart(rerun_startup=True)
    np.testing.assert_allclose(dbg.run_to_end()[0], first)


def test_feed_and_fetch_errors_surface_at_construction():
    main, startup, feed, prob = _mlp()
    with pytest.raises(FeedError, match="cannot feed 'z'"):
        Debugger(main, {"z": feed["x"]}, [prob], startup=startup)
    with pytest.raises(FetchError, match="cannot fetch 'nope'"):
        Debugger(main, feed, ["nope"], startup=startup)


def test_defaults_are_the_default_program_a_fresh_scope_and_the_cpu():
    x = pd.data("x", [None, 2])
    y = pd.relu(x)
    dbg = Debugger(feed={"x": np.float32([[-1, 2]])}, fetch_list=[y])
    assert dbg.program is pd.default_main_program() and dbg.scope is not pd.scope.global_()
    assert dbg.step().op.type == "relu" and dbg.step() is None
    np.testing.assert_array_equal(dbg.results[0], [[0, 2]])


# --- backward ops -------------------------------------------------------------------------
def test_training_steps_reach_the_backward_ops_and_link_them_to_their_forward_ops():
    main, startup, feed, loss = _mlp_training()
    gb = main.global_block()
    dbg = Debugger(main, feed, [loss], startup=startup)
    seen = []
    while (step := dbg.step()) is not None:
        if step.op.type == "sgd":
            break
        seen.append(step.op)
    roles = [op.attr("op_role", 0) for op in seen]
    assert 257 in roles and 1 in roles                      # the loss fill and the grads
    for grad_op in [op for op in seen if op.type == "mul_grad"]:
        fwd = dbg.forward_op_of(grad_op)
        assert fwd.type == "mul" and fwd.block.idx == 0 and fwd.idx < grad_op.idx
        assert fwd.output("Out") == [forward_name(n) for n in grad_op.input("Out@GRAD")]
    muls = [i for i, op in enumerate(gb.ops) if op.type == "mul"]
    mul_grads = [op for op in gb.ops if op.type == "mul_grad"]
    assert [dbg.forward_op_of(op).idx for op in mul_grads] == muls[::-1]
    assert dbg.forward_op_of(gb.ops[0]) is None                        # a forward op
    fill = next(op for op in gb.ops if op.attr("op_role", 0) == 257)
    assert dbg.forward_op_of(fill) is None                             # reads no gradient
    assert dbg.forward_op_of(step.op) is None                          # sgd: optimizer
    # the sgd that just ran: w <- w - 0.1 * w@GRAD, with the values in the scopes
    w = step.op.input("Param")[0]
    grad = step.scope.find_var(w + "@GRAD").get()
    assert dbg.changed == [w]
    before = _expected_param(startup, w)
    np.testing.assert_allclose(dbg.scope.find_var(w).get(), before - 0.1 * grad, rtol=1e-6)


def _expected_param(startup, name):
    scope = pd.Scope()
    pd.Executor().run(startup, scope=scope)
    return scope.find_var(name).get()


def test_forward_op_of_control_flow_grad_ops_and_ops_in_gradient_blocks():
    main, startup, feed, out = _ifelse(train=True)
    gb = main.global_block()
    dbg = Debugger(main, feed, [out], startup=startup)
    cb_grads = [op for op in gb.ops if op.type == "conditional_block_grad"]
    assert len(cb_grads) == 2
    for g in cb_grads:
        fwd = dbg.forward_op_of(g)
        assert fwd.type == "conditional_block" and fwd.block.idx == 0
        # the very branch it differentiates: the one whose scopes it reads
        assert fwd.output("Scope") == g.input("Scope")
        assert fwd.attr("sub_block") == main.block(g.attr("sub_block")).forward_block_idx
    # inside a gradient block, the forward op is in the block it differentiates
    tanh_grad = next(op for b in main.blocks for op in b.ops if op.type == "tanh_grad")
    fwd = dbg.forward_op_of(tanh_grad)
    assert fwd.type == "tanh" and fwd.block.idx == tanh_grad.block.forward_block_idx
    # and stepping the backward enters that gradient block under conditional_block_grad
    k = gb.ops.index(cb_grads[0])
    dbg.run_to(0, k - 1)
    step = dbg.step()
    assert step.depth == 2 and dbg.frames[-1].owner == cb_grads[0]
    assert dbg.step_out().op == cb_grads[0]

    pd.reset()
    main, startup, feed, hs = _rnn(train=True)
    dbg = Debugger(main, feed, [hs], startup=startup)
    rg = next(op for op in main.global_block().ops if op.type == "recurrent_grad")
    assert dbg.forward_op_of(rg) == main.global_block().ops[0]
    mg = next(op for op in main.block(2).ops if op.type == "matmul_v2_grad")
    assert dbg.forward_op_of(mg) == main.block(1).ops[0]


def test_forward_op_of_works_on_a_program_paddle_saved():
    import os
    path = os.path.join(os.path.dirname(__file__), "fixtures", "paddle_control_flow",
                        "recurrent.pdesc")
    program = pd.Program.from_bytes(open(path, "rb").read())
    dbg = Debugger(program, feed=None, fetch_list=None)   # nothing run: linking is static
    gb = program.global_block()
    rg = next(op for op in gb.ops if op.type == "recurrent_grad")
    assert dbg.forward_op_of(rg) == next(op for op in gb.ops if op.type == "recurrent")
    grad_block = program.block(rg.attr("sub_block"))
    step_block = program.block(grad_block.forward_block_idx)
    for g in grad_block.ops:
        if g.type == "mul_grad":
            fwd = dbg.forward_op_of(g)
            assert fwd.type == "mul" and fwd.block.idx == step_block.idx
            assert fwd.output("Out") == [forward_name(n) for n in g.input("Out@GRAD")]
    eag = [op for op in gb.ops if op.type == "elementwise_add_grad"][0]
    assert dbg.forward_op_of(eag).type == "elementwise_add"


# --- errors and interrupts ----------------------------------------------------------------
def test_a_kernel_error_ends_the_run_and_restart_works():
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 4])
        y = pd.relu(x)
        z = pd.layers.reshape(y, [3, -1])          # fine for 3 rows, not for 2
    dbg = Debugger(main, {"x": np.ones((2, 4), np.float32)}, [z], startup=startup)
    dbg.step()
    with pytest.raises(ExecutionError, match="op 1 reshape2") as info:
        dbg.cont()
    assert dbg.finished and dbg.error is info.value and dbg.results is None
    assert dbg.current is None and dbg.scope.kids == []
    assert dbg.history == [(0, 0, "relu")]         # the failing op never completed
    assert dbg.step() is None
    dbg.restart()
    assert dbg.error is None and not dbg.finished
    with pytest.raises(ExecutionError):
        dbg.run_to_end()                           # the same feed fails the same way
    dbg.feed = {"x": np.ones((3, 4), np.float32)}  # a widget may change the feed
    dbg.restart()
    assert dbg.run_to_end()[0].shape == (3, 4)


def _interrupting(monkeypatch, op_type):
    op_def = registry.lookup(op_type)
    real = op_def.kernels["cpu"]
    calls = []

    def interrupted(ctx):
        calls.append(1)
        raise KeyboardInterrupt

    monkeypatch.setitem(op_def.kernels, "cpu", interrupted)
    return real, calls


def test_keyboard_interrupt_during_cont_leaves_the_debugger_usable(monkeypatch):
    main, startup, feed, prob = _mlp()
    real, calls = _interrupting(monkeypatch, "relu")
    dbg = Debugger(main, feed, [prob], startup=startup)
    with pytest.raises(KeyboardInterrupt):
        dbg.cont()
    assert calls and dbg.finished and isinstance(dbg.error, KeyboardInterrupt)
    assert dbg.current is None and dbg.frames == () and dbg.scope.kids == []
    monkeypatch.undo()
    assert registry.lookup("relu").kernels["cpu"] is real
    dbg.restart()
    assert dbg.run_to_end()[0] == pytest.approx(_expected(main, startup, feed, prob)[0])


def test_keyboard_interrupt_inside_a_sub_block_drops_its_scopes(monkeypatch):
    main, startup, feed, hs = _rnn(train=True)
    dbg = Debugger(main, feed, [hs], startup=startup)
    dbg.step()
    live = pd.scope.live_count()
    _interrupting(monkeypatch, "sigmoid")
    dbg.restart()                                  # the patched kernel is used from here
    with pytest.raises(KeyboardInterrupt):
        dbg.cont()
    assert dbg.finished and dbg.scope.kids == [] and pd.scope.live_count() < live
    monkeypatch.undo()
    dbg.restart()
    np.testing.assert_allclose(dbg.run_to_end()[0], _expected(main, startup, feed, hs)[0])


def test_fetch_names_are_the_program_names_of_the_results_in_order():
    x = pd.minibatch([[1.0, 2.0]])
    y = pd.softmax(x)
    total = pd.mean(y)
    for fetch, want in (([y, total.name], [y.name, total.name]), ((total,), [total.name]),
                        (y, [y.name]), (y.name, [y.name]), (None, [])):
        d = Debugger(fetch_list=fetch)
        assert d.fetch_names == want
        d.run_to_end()
        assert len(d.results) == len(want)
