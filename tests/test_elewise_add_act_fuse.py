"""elewise_add_act_fuse (passes/) and the op it makes, fused_elemwise_add_activation
(ops/fused_elemwise.py): an add and an activation as one op, forward and backward, on a
copy of the program, giving the same bits; and the op against numbers PaddlePaddle saved."""
from pathlib import Path

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.examples import digits

FIXTURES = Path(__file__).parent / "fixtures" / "paddle"


def _types(program, block=0):
    return [op.type for op in program.block(block).ops]


def _digits_batches(n=3, size=32):
    x, y, _, _ = digits.load_data()
    return [{"x": x[i * size:(i + 1) * size], "label": y[i * size:(i + 1) * size]}
            for i in range(n)]


def test_a_training_program_fuses_forward_and_backward_and_trains_the_same_bits():
    model = digits.build()
    fused = pd.passes.apply(model.main, passes=["elewise_add_act_fuse"])
    before, after = _types(model.main), _types(fused)
    assert before.count("relu") == 1 and "relu" not in after
    assert after.count("fused_elemwise_add_activation") == 1
    assert after.count("fused_elemwise_add_activation_grad") == 1
    assert "relu_grad" not in after and len(after) == len(before) - 2
    op = fused.global_block().ops[after.index("fused_elemwise_add_activation")]
    assert op.attr("functor_list") == ["relu", "elementwise_add"]
    assert "pd.layer.fc(x, hidden" in op.created_at          # the user's line travels
    assert not pd.validate(fused)
    exe = pd.Executor()
    a, b = pd.Scope(), pd.Scope()
    exe.run(model.startup, scope=a)
    exe.run(model.startup, scope=b)
    for feed in _digits_batches():
        want, = pd.Executor().run(model.main, feed=feed, fetch_list=[model.loss], scope=a)
        got, = exe.run(fused, feed=feed, fetch_list=[model.loss.name], scope=b)
        assert np.array_equal(got, want)
    for p in model.main.global_block().all_parameters():
        assert np.array_equal(a.find_var(p.name).get(), b.find_var(p.name).get()), p.name


def _add_then(act_builder, keep_sum=False):
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        x, y = pd.data("x", [-1, 4]), pd.data("y", [4])
        s = pd.layers.elementwise_add(x, y)
        out = act_builder(s)
    return main, s, out


@pytest.mark.parametrize("act, fused", [(pd.tanh, True), (pd.layers.sigmoid, True),
                                        (lambda s: pd.layers.scale(s, 2.0), True),
                                        (lambda s: pd.layers.scale(s, 2.0, bias=1.0), False),
                                        (pd.layers.exp, False)],
                         ids=["tanh", "sigmoid", "scale", "scale_with_bias", "exp"])
def test_which_activations_fuse(act, fused):
    main, _, out = _add_then(act)
    rewritten = pd.passes.apply(main, passes=["elewise_add_act_fuse"])
    assert ("fused_elemwise_add_activation" in _types(rewritten)) == fused
    feed = {"x": np.random.default_rng(1).standard_normal((3, 4)).astype(np.float32),
            "y": np.random.default_rng(2).standard_normal(4).astype(np.float32)}
    want, = pd.Executor().run(main, feed=feed, fetch_list=[out])
    got, = pd.Executor().run(rewritten, feed=feed, fetch_list=[out.name])
    assert np.array_equal(got, want)


def test_a_sum_read_elsewhere_or_kept_is_not_fused_away():
    main, s, out = _add_then(pd.relu)
    kept = pd.passes.apply(main, passes=["elewise_add_act_fuse"], keep=[s])
    assert _types(kept) == _types(main)
    with pd.program_guard(main, pd.Program()):
        pd.mean(s)                                # a second reader of the sum
    assert _types(pd.passes.apply(main, passes=["elewise_add_act_fuse"])) == _types(main)


def test_an_input_rewritten_between_the_two_ops_stops_the_fusion():
    """add(x, y) ... y = something ... relu: moving the add to relu would read the new y."""
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        x = pd.data("x", [2, 3])
        y = pd.layers.fill_constant([2, 3], "float32", 1.0)
        s = pd.layers.elementwise_add(x, y)
        pd.layers.assign(pd.layers.fill_constant([2, 3], "float32", 5.0), output=y)
        pd.relu(s)
    assert _types(main)[-2:] == ["assign", "relu"]
    assert _types(pd.passes.apply(main, passes=["elewise_add_act_fuse"])) == _types(main)


def test_the_op_runs_what_paddle_saved_and_matches_its_numbers():
    """Six fused_elemwise_activation ops appended by hand in PaddlePaddle 2.6.2, with the
    gradient ops Paddle's backward made for them, and what Paddle's CPU kernels computed
    (tests/fixtures/paddle/make_fused_elemwise_fixture.py)."""
    program = pd.Program.from_bytes((FIXTURES / "fused_elemwise_ops.pdesc").read_bytes())
    saved = np.load(FIXTURES / "fused_elemwise_io.npz")
    types = _types(program)
    assert types.count("fused_elemwise_activation") == 6
    assert types.count("fused_elemwise_activation_grad") == 6
    feed = {k: saved[k] for k in saved.files if k[-2:] in ("_x", "_y", "_w")}
    fetch = [k for k in saved.files if k not in feed]
    got = dict(zip(fetch, pd.Executor().run(program, feed=feed, fetch_list=fetch,
                                            scope=pd.Scope())))
    # Paddle 2.6.2 is wrong here: for Binary(X, tanh(Y)) without a saved IntermediateOut
    # its CPU kernel takes tanh's derivative at Y instead of at tanh(Y), i.e.
    # sum(dOut * X * (1 - Y^2)); the analytic gradient below is what we must give.
    wrong = "mul_tanh_y@GRAD"
    x, y, w = (saved[f"mul_tanh_{s}"].astype(np.float64) for s in "xyw")
    np.testing.assert_allclose(saved[wrong], (w * x * (1 - y * y)).sum(0), rtol=1e-5)
    np.testing.assert_allclose(got[wrong], (w * x).sum(0) * (1 - np.tanh(y) ** 2), rtol=1e-5)
    for name in fetch:
        if name != wrong:
            np.testing.assert_allclose(got[name], saved[name], rtol=1e-5, atol=1e-6,
                                       err_msg=name)


def test_a_bad_functor_list_names_the_pairs_it_takes():
    main = pd.Program()
    block = main.global_block()
    for name in ("x", "y", "o"):
        block.create_var(name=name, shape=[2, 2], dtype="float32")
    with pytest.raises(pd.BuildError, match=r"functor_list.*\['exp', 'elementwise_add'\].*"
                                            r"unary one of \['relu', 'tanh'"):
        block.append_op("fused_elemwise_activation", {"X": ["x"], "Y": ["y"]},
                        {"Out": ["o"]}, {"functor_list": ["exp", "elementwise_add"]})
