"""pd.passes: fc_fuse rewrites mul + elementwise_add (+ relu) into Paddle's fc op, on a
copy, only where nothing else reads the intermediates; the fused program gives the same
bits."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.examples import digits


def _types(program, block=0):
    return [op.type for op in program.block(block).ops]


@pytest.fixture(scope="module")
def trained():
    model = digits.build()
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(model.startup, scope=scope)
    x, y, _, _ = digits.load_data()
    for i in range(3):
        exe.run(model.main, feed={"x": x[i * 32:(i + 1) * 32], "label": y[i * 32:(i + 1) * 32]},
                scope=scope)
    return model, exe, scope, x[:100]


def test_an_inference_program_is_fused_into_fc_ops(trained):
    model, exe, scope, x = trained
    before = model.test.to_bytes()
    fused = pd.passes.apply(model.test)
    assert _types(model.test) == ["mul", "elementwise_add", "relu", "mul", "elementwise_add",
                                  "softmax"]
    assert _types(fused) == ["fc", "fc", "softmax"]
    assert model.test.to_bytes() == before                  # the original is untouched
    first, second = fused.global_block().ops[:2]
    assert first.attr("activation_type") == "relu" and second.attr("activation_type") == ""
    assert first.input("W") == ["fc_0.w_0"] and first.input("Bias") == ["fc_0.b_0"]
    # the fused op still points at the user's line, and the intermediates are gone
    assert "pd.layer.fc(x, hidden" in first.created_at
    assert not fused.global_block().has_var("fc_0.tmp_0")
    want, = exe.run(model.test, feed={"x": x}, fetch_list=[model.prob], scope=scope)
    got, = exe.run(fused, feed={"x": x}, fetch_list=[model.prob.name], scope=scope)
    assert np.array_equal(got, want)
    # and stepped, one fc at a time
    dbg = pd.Debugger(fused, feed={"x": x}, scope=scope)
    assert dbg.step().op.type == "fc"


def test_the_fused_program_saves_and_loads(trained):
    model, exe, scope, x = trained
    fused = pd.passes.apply(model.test)
    loaded = pd.Program.from_bytes(fused.to_bytes())
    assert _types(loaded) == ["fc", "fc", "softmax"]
    want, = exe.run(fused, feed={"x": x}, fetch_list=[model.prob.name], scope=scope)
    got, = exe.run(loaded, feed={"x": x}, fetch_list=[model.prob.name], scope=scope)
    assert np.array_equal(got, want)


def test_fc_fuse_leaves_a_training_program_as_it_is(trained):
    """Gradient ops read mul's product: fusing it away would break them."""
    model = trained[0]
    assert _types(pd.passes.apply(model.main, passes=["fc_fuse"])) == _types(model.main)


def test_kept_intermediates_are_not_fused_away(trained):
    """Keeping the sum before relu leaves relu out of the fc (and keeps the sum);
    keeping mul's product leaves that layer unfused."""
    model = trained[0]
    product = model.test.global_block().ops[0].output("Out")[0]
    pre = model.test.global_block().ops[1].output("Out")[0]          # the sum before relu
    fused = pd.passes.apply(model.test, passes=["fc_fuse"], keep=[pre])
    assert _types(fused) == ["fc", "relu", "fc", "softmax"]
    first = fused.global_block().ops[0]
    assert first.output("Out") == [pre] and first.attr("activation_type") == ""
    fused = pd.passes.apply(model.test, passes=["fc_fuse"], keep=[product])
    assert _types(fused) == ["mul", "elementwise_add", "relu", "fc", "softmax"]
    # where fc cannot take the add and relu, elewise_add_act_fuse still does
    fused = pd.passes.apply(model.test, keep=[product])
    assert _types(fused) == ["mul", "fused_elemwise_add_activation", "fc", "softmax"]


def test_only_weights_and_biases_that_are_parameters_fuse():
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        x = pd.data("x", [-1, 3])
        w = pd.data("w", [3, 4])              # weights fed, not a parameter
        y = pd.relu(pd.layers.elementwise_add(pd.matmul(x, w), pd.data("b", [4])))
    assert pd.passes.apply(main).global_block().ops[0].type != "fc"
    assert y is not None


def test_bad_arguments_say_what_is_wrong():
    with pytest.raises(ValueError, match="unknown pass.*fc_fuse"):
        pd.passes.apply(pd.Program(), passes=["fc_fusion"])
    with pytest.raises(TypeError, match="needs a Program"):
        pd.passes.apply("main")


# --- recurrent_hoist ------------------------------------------------------------------------
def _rnn64(T=4, B=3, D=2, H=3, seed=5):
    """h_t = tanh(x_t Wx + h_{t-1} Wh) in float64 (pd.layer.fc: mul ops), x differentiable,
    loss = mean(h*h)."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = seed
    with pd.program_guard(main, startup):
        x = pd.data("x", [T, B, D], "float64")
        x.stop_gradient = False
        h0 = pd.layers.fill_constant([B, H], "float64", 0.0)
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_pre = rnn.memory(init=h0)
            h = pd.tanh(pd.layer.fc(x_t, H, param_attr=pd.ParamAttr(
                "wx", initializer=pd.Normal(0, 0.6, 1)), bias_attr=False)
                + pd.layer.fc(h_pre, H, param_attr=pd.ParamAttr(
                    "wh", initializer=pd.Normal(0, 0.6, 2)), bias_attr=False))
            rnn.update_memory(h_pre, h)
            rnn.output(h)
        hs = rnn()
        loss = pd.mean(hs * hs)
    feed = {"x": np.random.default_rng(seed).standard_normal((T, B, D))}
    return main, startup, loss, feed


def _assert_trains_alike(main, rewritten, startup, loss, exact: bool):
    """Three SGD steps of the benchmark RNN (T5 B3 D4 H6) as written and rewritten, from
    the same start: the same losses and parameters, bit for bit where ``exact`` (else to
    1e-6: a product over all steps may sum in another order)."""
    from benchmarks_path import rnn_bench   # noqa: PLC0415

    def same(got, want, what):
        if exact:
            assert np.array_equal(got, want), what
        else:
            np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7, err_msg=what)
    exe = pd.Executor()
    a, b = pd.Scope(), pd.Scope()
    exe.run(startup, scope=a)
    exe.run(startup, scope=b)
    feed = rnn_bench.sequence(t=5, b=3, d=4)
    for step in range(3):
        want, = exe.run(main, feed=feed, fetch_list=[loss], scope=a)
        got, = exe.run(rewritten, feed=feed, fetch_list=[loss.name], scope=b)
        same(got, want, f"loss at step {step}")
    for name in ("wx", "wh", "bh"):
        same(b.find_var(name).get(), a.find_var(name).get(), name)


def test_recurrent_hoist_moves_the_input_projection_out_of_the_loop():
    from benchmarks_path import rnn_bench   # noqa: PLC0415
    main, startup, loss = rnn_bench.build(t=5, b=3, d=4, h=6)
    fused = pd.passes.apply(main, passes=["recurrent_hoist"])
    types = _types(fused)
    r, rg = types.index("recurrent"), types.index("recurrent_grad")
    assert types[r - 1] == "mul" and fused.global_block().ops[r - 1].attr("x_num_col_dims") == 2
    assert types[rg + 1] == "mul_grad"                        # W@GRAD in one product
    assert "mul" in _types(main, 1) and _types(fused, 1).count("mul") == 1     # wh's stays
    assert _types(fused, 2).count("mul_grad") == 1
    assert fused.global_block().ops[r].input("parameters") == ["wh", "bh"]
    assert not pd.validate(fused)
    _assert_trains_alike(main, fused, startup, loss, exact=False)


@pytest.mark.parametrize("passes", [["recurrent_hoist"], None], ids=["hoist", "all"])
def test_recurrent_hoist_gradients_match_central_differences(passes):
    """The rewritten backward (the step block's gradient of the projection handed out by
    recurrent_grad, one mul_grad for Wx and x; with all passes, the step's add and tanh
    fused forward and backward too) against numbers."""
    main, startup, loss, feed = _rnn64()
    forward = main.clone()
    with pd.program_guard(main, startup):
        grads = pd.gradients([loss], [main.global_block().var(n) for n in ("x", "wx", "wh")])
    fused = pd.passes.apply(main, passes=passes)
    assert "mul_grad" in _types(fused)
    if passes is None:
        assert "fused_elemwise_add_activation" in _types(fused, 1)
        grad_block = fused.global_block().ops[_types(fused).index("recurrent_grad")]
        assert "fused_elemwise_add_activation_grad" in _types(fused, grad_block.attr(
            "sub_block"))
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    analytic = exe.run(fused, feed=feed, fetch_list=[g.name for g in grads], scope=scope)
    eps = 1e-6

    def loss_at(name, value):
        f = dict(feed)
        saved = None
        if name in feed:
            f[name] = value
        else:
            saved = scope.find_var(name).get()
            scope.find_var(name).set(value)
        out, = exe.run(forward, feed=f, fetch_list=[loss.name], scope=scope)
        if saved is not None:
            scope.find_var(name).set(saved)
        return float(out)

    for name, got in zip(("x", "wx", "wh"), analytic):
        base = feed[name] if name in feed else scope.find_var(name).get().copy()
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            up, down = base.copy(), base.copy()
            up[idx] += eps
            down[idx] -= eps
            numeric[idx] = (loss_at(name, up) - loss_at(name, down)) / (2 * eps)
        np.testing.assert_allclose(got, numeric, rtol=1e-5, atol=1e-7, err_msg=name)


def test_recurrent_hoist_leaves_a_step_input_read_twice():
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [4, 2, 3])
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_pre = rnn.memory(shape=[2, 3], batch_ref=x_t)
            h = pd.tanh(pd.layer.fc(x_t, 3, bias_attr=False) + x_t + h_pre)   # x_t read twice
            rnn.update_memory(h_pre, h)
            rnn.output(h)
        rnn()
    assert "mul" in _types(main, 1)
    assert _types(pd.passes.apply(main, passes=["recurrent_hoist"]), 1) == _types(main, 1)


# --- recurrent_grad_trim ---------------------------------------------------------------------
def _grad_block_types(program):
    rg = program.global_block().ops[_types(program).index("recurrent_grad")]
    return _types(program, rg.attr("sub_block"))


def test_recurrent_grad_trim_drops_copies_and_unread_zeros_and_trains_the_same_bits():
    from benchmarks_path import rnn_bench   # noqa: PLC0415
    main, startup, loss = rnn_bench.build(t=5, b=3, d=4, h=6)
    before = _grad_block_types(main)
    trimmed = pd.passes.apply(main, passes=["recurrent_grad_trim"])
    after = _grad_block_types(trimmed)
    assert "rnn_memory_helper_grad" in before and before.count("fill_zeros_like") == 2
    assert after == [t for t in before if t not in ("rnn_memory_helper_grad",
                                                    "fill_zeros_like")]
    assert not pd.validate(trimmed)
    _assert_trains_alike(main, trimmed, startup, loss, exact=True)
    # every pass together: four ops per backward time step, where the program has seven
    assert _grad_block_types(pd.passes.apply(main)) == [
        "sum", "fused_elemwise_add_activation_grad", "elementwise_add_grad", "mul_grad"]


def test_recurrent_grad_trim_keeps_a_gradient_named_in_keep():
    from benchmarks_path import rnn_bench   # noqa: PLC0415
    main, _, _ = rnn_bench.build(t=3, b=2, d=2, h=2)
    rg = main.global_block().ops[_types(main).index("recurrent_grad")]
    grad_block = main.block(rg.attr("sub_block"))
    zeroed = [op.output("Out")[0] for op in grad_block.ops if op.type == "fill_zeros_like"]
    kept = pd.passes.apply(main, passes=["recurrent_grad_trim"], keep=zeroed[:1])
    assert _grad_block_types(kept).count("fill_zeros_like") == 1


def test_show_passes_puts_the_rewritten_program_beside_the_original(trained):
    model = trained[0]
    view = pd.show_passes(model.test)
    (left_title, left), (right_title, right) = (box.children for box in view.children)
    assert "as written" in left_title.value and "fc_fuse" in right_title.value
    assert "block 0: 6" in left_title.value and "block 0: 3" in right_title.value
    ops = lambda v: [op["type"] for op in v.model["blocks"][0]["ops"]]   # noqa: E731
    assert ops(left)[:3] == ["mul", "elementwise_add", "relu"]
    assert ops(right) == ["fc", "fc", "softmax"]


def test_fc_runs_a_program_paddle_saved_and_matches_its_numbers():
    """Three fc ops appended and run by PaddlePaddle 2.6.2 (relu and bias; two column dims
    without bias; padding_weights), saved with what Paddle's CPU kernel computed
    (tests/fixtures/paddle/make_fc_fixture.py)."""
    from pathlib import Path   # noqa: PLC0415
    here = Path(__file__).parent / "fixtures" / "paddle"
    program = pd.Program.from_bytes((here / "fc_ops.pdesc").read_bytes())
    saved = np.load(here / "fc_io.npz")
    assert _types(program) == ["fc", "fc", "fc"]
    feed = {k: saved[k] for k in saved.files if not k.endswith("_out")}
    outs = [k for k in saved.files if k.endswith("_out")]
    got = pd.Executor().run(program, feed=feed, fetch_list=outs, scope=pd.Scope())
    for name, value in zip(outs, got):
        np.testing.assert_allclose(value, saved[name], rtol=1e-5, atol=1e-6, err_msg=name)
