"""RNN (the Block and Scope design's RNNOp, Fluid's StaticRNN): results, BPTT gradients,
spellings, errors."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.examples import block_and_scope

from gradcheck import check_gradients


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def test_block_and_scope_doc_rnn_example_runs_as_written():
    built = block_and_scope.build(block_and_scope.RNN)
    o1, o2 = built["o1"], built["o2"]

    exe = pd.Executor()
    exe.run(pd.default_startup_program())
    got1, got2 = exe.run(fetch_list=[o1, o2])
    want_a, want_b, hv = [], [], 0.0
    for xv in (10, 20, 30):                    # the design's C++ loop
        a_t, b_t = 0.314 * xv, 0.375 * hv
        hv = _sigmoid(a_t + b_t)
        want_a.append([a_t])
        want_b.append([b_t])
    np.testing.assert_allclose(got1, want_a, rtol=1e-6)
    np.testing.assert_allclose(got2, want_b, rtol=1e-6)
    assert got1.shape == (3, 1)                # stacked over time: [T, ...]


def _recurrent_op_program(reverse_memory_without_init=True):
    """Fluid's test_recurrent_op: h = sigmoid(x W + h_prev U) with a memory given by init
    and a second one given by shape and batch_ref."""
    T, B, D, H = 3, 2, 3, 2
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [T, B, D], "float64")
        h0 = pd.data("h0", [B, H], "float64")
        x.stop_gradient = h0.stop_gradient = False
        W = pd.create_parameter([D, H], "float64", name="W", initializer=pd.Normal(0, 0.5, 1))
        U = pd.create_parameter([H, H], "float64", name="U", initializer=pd.Normal(0, 0.5, 2))
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_pre = rnn.memory(init=h0)
            c_pre = rnn.memory(shape=[-1, H], batch_ref=x_t, init_value=0.5)
            h = pd.sigmoid(pd.matmul(x_t, W) + pd.matmul(h_pre, U))
            c = c_pre * 0.9 + h
            rnn.update_memory(h_pre, h)
            rnn.update_memory(c_pre, c)
            rnn.output(h, c)
        hs, cs = rnn()
        loss = pd.mean(hs) + pd.mean(cs * cs)
    return main, startup, (T, B, D, H), hs, cs, loss


def _numpy_recurrent(xs, h0, W, U):
    h, c = h0, np.full_like(h0, 0.5)
    hs, cs = [], []
    for x_t in xs:
        h = _sigmoid(x_t @ W + h @ U)
        c = c * 0.9 + h
        hs.append(h)
        cs.append(c)
    return np.stack(hs), np.stack(cs)


def test_two_memories_one_without_init_forward():
    main, startup, (T, B, D, H), hs, cs, loss = _recurrent_op_program()
    rng = np.random.default_rng(0)
    xs, h0 = rng.standard_normal((T, B, D)), rng.standard_normal((B, H))
    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    got_h, got_c = exe.run(main, feed={"x": xs, "h0": h0}, fetch_list=[hs, cs], scope=scope)
    want_h, want_c = _numpy_recurrent(xs, h0, scope.find_var("W").get(),
                                      scope.find_var("U").get())
    np.testing.assert_allclose(got_h, want_h, rtol=1e-12)
    np.testing.assert_allclose(got_c, want_c, rtol=1e-7)     # 0.9 is a float32 attribute
    assert "fill_constant_batch_size_like" in [op.type for op in main.global_block().ops]


def test_bptt_gradients_match_central_differences():
    main, startup, (T, B, D, H), hs, cs, loss = _recurrent_op_program()
    rng = np.random.default_rng(1)
    feed = {"x": rng.standard_normal((T, B, D)), "h0": rng.standard_normal((B, H))}
    check_gradients(main, startup, loss, feed, ["x", "h0", "W", "U"])
    types = [op.type for op in main.global_block().ops]
    assert "recurrent_grad" in types


def test_block_and_scope_doc_stepnet_reuses_a_parent_parameter():
    a = pd.Variable(shape=[20, 20])
    b = pd.fc(a, params=["fc.w", "fc.b"])

    rnn = pd.create_rnn()
    with rnn.stepnet():
        x = a.as_step_input()
        # reuse fc's parameter
        fc_without_b = pd.get_variable("fc.w")
        rnn.output(pd.matmul(pd.layers.reshape(x, [1, 20]), fc_without_b))
    out = rnn()

    assert [p.name for p in pd.default_main_program().all_parameters()] == ["fc.w", "fc.b"]
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(pd.default_startup_program(), scope=scope)
    av = np.random.default_rng(2).standard_normal((20, 20)).astype(np.float32)
    got_b, got_out = exe.run(feed={a.name: av}, fetch_list=[b, out], scope=scope)
    w, bias = scope.find_var("fc.w").get(), scope.find_var("fc.b").get()
    np.testing.assert_allclose(got_b, av @ w + bias, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got_out[:, 0, :], av @ w, rtol=1e-5, atol=1e-5)


def test_block_design_rnn_op_with_add_input_and_add_output():
    xv = pd.data("x", [4, 2, 3])
    yv = pd.data("y", [4, 2, 3])
    rnn = pd.rnn_op()
    with rnn.stepnet():
        a = rnn.add_input(xv)
        b = rnn.add_input(yv)
        c = pd.fc(pd.add(a, b), size=2, params=["w", "b"])
        rnn.add_output(c)
    out = rnn()
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(pd.default_startup_program(), scope=scope)
    rng = np.random.default_rng(3)
    xs, ys = (rng.standard_normal((4, 2, 3)).astype(np.float32) for _ in range(2))
    got, = exe.run(feed={"x": xs, "y": ys}, fetch_list=[out], scope=scope)
    w, b = scope.find_var("w").get(), scope.find_var("b").get()
    np.testing.assert_allclose(got, (xs + ys) @ w + b, rtol=1e-5, atol=1e-6)


def test_inference_uses_two_scopes_and_frees_them():
    main, startup, (T, B, D, H), hs, cs, loss = _recurrent_op_program()
    test = pd.prune(main.clone(for_test=True), [hs])
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(startup, scope=scope)
    feed = {"x": np.zeros((T, B, D)), "h0": np.zeros((B, H))}
    most = 0
    for step in exe.steps(test, feed=feed, scope=scope):
        if step.block_idx != 0:
            run_scope = step.scope.parent
            most = max(most, len(run_scope.kids))
    assert most == 2 and scope.kids == []
    # training keeps one scope per time step until the backward pass is done
    with pd.program_guard(main, startup):
        pd.optimizer.SGD(0.1).minimize(loss)
    exe.run(startup, scope=scope)
    kept = 0
    for step in exe.steps(main, feed=feed, scope=scope):
        if step.op.type == "recurrent_grad":
            kept = len(step.scope.kids)
    assert kept == T and scope.kids == []


def test_rnn_misuse_errors():
    x = pd.data("x", [3, 2, 2])
    rnn = pd.rnn()
    with pytest.raises(pd.BuildError, match=r"must be called inside 'with rnn_0.step\(\):'"):
        rnn.memory(init=x)
    with pytest.raises(pd.BuildError, match="was never updated"):
        with rnn.step():
            rnn.step_input(x)
            rnn.memory(shape=[-1, 2], batch_ref=x)
    rnn2 = pd.rnn()
    with pytest.raises(pd.BuildError, match=r"must be called after its step block"):
        with rnn2.step():
            rnn2.step_input(x)
            rnn2()
    with pytest.raises(pd.BuildError, match="same number of time steps"):
        with pd.rnn().step() as r:
            r.step_input(x)
            r.step_input(pd.data("y", [5, 2, 2]))
    with pytest.raises(pd.BuildError, match="as_step_input.*inside an RNN"):
        x.as_step_input()
