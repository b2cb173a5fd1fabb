"""append_backward and gradients: the program transformation itself."""
import numpy as np
import pytest

import paddle_nb as pd


def _types(program=None):
    program = program or pd.default_main_program()
    return [op.type for op in program.global_block().ops]


def test_fluid_op_list_for_mul_add_mean():
    x = pd.data("x", [None, 4])
    loss = pd.mean(pd.layer.fc(x, 3))
    params_grads = pd.append_backward(loss)
    assert _types() == ["mul", "elementwise_add", "mean", "fill_constant", "mean_grad",
                        "elementwise_add_grad", "mul_grad"]
    assert [(p.name, g.name) for p, g in params_grads] == [
        ("fc_0.w_0", "fc_0.w_0@GRAD"), ("fc_0.b_0", "fc_0.b_0@GRAD")]
    gb = pd.default_main_program().global_block()
    assert gb.var("fc_0.w_0@GRAD").shape == (4, 3)
    mul_grad = gb.ops[-1]
    assert mul_grad.input("Out@GRAD") == ["fc_0.tmp_0@GRAD"]
    assert mul_grad.output("X@GRAD") == []            # x is data: stop_gradient
    assert mul_grad.attr("x_num_col_dims") == 1        # attributes are copied
    code = pd.default_main_program().to_code()
    assert "mean_0.tmp_0@GRAD = fill_constant() {dtype=float32, shape=[], value=1}" in code
    assert "= mul_grad(X=[x], Y=[fc_0.w_0], Out@GRAD=[fc_0.tmp_0@GRAD])" in code


def _run_grads(feed, fetch):
    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    return exe.run(feed=feed, fetch_list=fetch, scope=scope), scope


def test_a_gradient_written_twice_is_renamed_and_summed():
    x = pd.data("x", [None, 3])
    w = pd.create_parameter([3, 3], name="w", initializer=pd.Constant(0.5))
    h = pd.matmul(x, w)
    loss = pd.mean(pd.add(pd.relu(h), pd.sigmoid(h)))     # h is used twice
    pd.append_backward(loss)
    gb = pd.default_main_program().global_block()
    names = [n for op in gb.ops for n in op.output_arg_names]
    assert f"{h.name}@GRAD@RENAME@0" in names and f"{h.name}@GRAD@RENAME@1" in names
    sum_op = next(op for op in gb.ops if op.type == "sum")
    assert sum_op.input("X") == [f"{h.name}@GRAD@RENAME@0", f"{h.name}@GRAD@RENAME@1"]
    assert sum_op.output("Out") == [f"{h.name}@GRAD"]
    # the sum comes before the first op that reads h@GRAD
    order = [op.type for op in gb.ops]
    assert order.index("sum") < order.index("matmul_v2_grad")
    xs = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32)
    (gw,), _ = _run_grads({"x": xs}, ["w@GRAD"])
    hv = xs @ np.full((3, 3), 0.5, np.float32)
    s = 1 / (1 + np.exp(-hv))
    dh = ((hv > 0) + s * (1 - s)) / hv.size
    np.testing.assert_allclose(gw, xs.T @ dh, rtol=1e-5, atol=1e-6)


def test_a_pruned_gradient_becomes_fill_zeros_like():
    x = pd.data("x", [None, 4])
    w = pd.create_parameter([4, 4], name="w", initializer=pd.Constant(1.0))
    a, b = pd.layers.split(pd.matmul(x, w), 2, dim=1)      # only a reaches the loss
    loss = pd.mean(a)
    pd.append_backward(loss)
    gb = pd.default_main_program().global_block()
    fill = next(op for op in gb.ops if op.type == "fill_zeros_like")
    assert fill.input("X") == [b.name] and fill.output("Out") == [f"{b.name}@GRAD"]
    concat = next(op for op in gb.ops if op.type == "concat" and "@GRAD" in op.output("Out")[0])
    assert concat.input("X") == [f"{a.name}@GRAD", f"{b.name}@GRAD"]
    xs = np.ones((2, 4), np.float32)
    (gw,), _ = _run_grads({"x": xs}, ["w@GRAD"])
    expected = np.zeros((4, 4), np.float32)
    expected[:, :2] = 2 / 4                     # d mean(a) / d w = x^T @ (1/size) on a's half
    np.testing.assert_allclose(gw, expected)


def test_stop_gradient_and_no_grad_set():
    x = pd.data("x", [None, 2])
    h = pd.layer.fc(x, 2)
    h2 = pd.layer.fc(h, 2)
    loss = pd.mean(h2)
    frozen = pd.default_main_program().global_block().var("fc_0.w_0")
    frozen.stop_gradient = True
    pg = pd.append_backward(loss, no_grad_set={"fc_1.b_0"})
    names = [p.name for p, _ in pg]
    assert names == ["fc_0.b_0", "fc_1.w_0"]
    assert not pd.default_main_program().global_block().has_var("fc_0.w_0@GRAD")
    assert not pd.default_main_program().global_block().has_var("fc_1.b_0@GRAD")


def test_parameter_list_limits_the_result():
    x = pd.data("x", [None, 2])
    loss = pd.mean(pd.layer.fc(x, 2))
    pg = pd.append_backward(loss, parameter_list=["fc_0.b_0"])
    assert [p.name for p, _ in pg] == ["fc_0.b_0"]


def test_only_ops_on_the_path_get_gradients():
    x = pd.data("x", [None, 2])
    h = pd.layer.fc(x, 2)
    pd.layer.fc(x, 3)                            # a head that does not feed the loss
    pd.layers.greater_than(h, pd.var(0.0))       # no gradient, off the path too
    pd.append_backward(pd.mean(h))
    grads = [t for t in _types() if t.endswith("_grad")]
    assert grads == ["mean_grad", "elementwise_add_grad", "mul_grad"]


def test_gradients_of_arbitrary_targets():
    x = pd.data("x", [None, 3])
    y = pd.layers.square(x) * 3.0
    z = pd.layers.reduce_sum(y)
    gx, = pd.gradients([z], [x])                  # x is data (stop_gradient): asked for, so given
    xs = np.float32([[1, 2, 3]])
    got, = pd.Executor().run(feed={"x": xs}, fetch_list=[gx])
    np.testing.assert_allclose(got, 6 * xs)
    unrelated = pd.data("u", [None, 3])
    assert pd.gradients(z, [unrelated]) == [None]


def test_backward_errors():
    x = pd.data("x", [None, 3])
    with pytest.raises(pd.BuildError, match="does not depend on anything that needs a grad"):
        pd.append_backward(pd.mean(x))            # x is data: nothing to differentiate
    assert [op.type for op in pd.default_main_program().global_block().ops] == ["mean"]
    frozen = pd.mean(pd.layer.fc(x, 2))
    frozen.stop_gradient = True
    with pytest.raises(pd.BuildError, match="stop_gradient set"):
        pd.append_backward(frozen)
    with pytest.raises(pd.BuildError, match="must be a Variable"):
        pd.append_backward("loss")


def test_clone_for_test_drops_backward_and_optimizer_ops_whenever_called():
    x = pd.data("x", [None, 4])
    label = pd.data("label", [None, 1], "int64")
    logits = pd.layer.fc(x, 3)
    loss = pd.mean(pd.layers.softmax_with_cross_entropy(logits, label))
    before = pd.default_main_program().clone(for_test=True)
    pd.optimizer.SGD(0.1).minimize(loss)
    after = pd.default_main_program().clone(for_test=True)      # after minimize, too
    assert _types(after) == _types(before) == [
        "mul", "elementwise_add", "softmax_with_cross_entropy", "mean"]
    assert not any("@GRAD" in n for n in after.global_block().vars)
    assert "sgd" in _types()                     # the original keeps its training ops


@pytest.mark.parametrize("make", [lambda: pd.optimizer.SGD(0.5),
                                  lambda: pd.optimizer.Momentum(0.2, momentum=0.9),
                                  lambda: pd.optimizer.Adam(0.05)])
def test_optimizers_reduce_a_quadratic(make):
    """minimize((w - 3)^2): each optimizer walks w toward 3."""
    w = pd.create_parameter([1], name="w", initializer=pd.Constant(0.0))
    loss = pd.mean(pd.layers.square(w - 3.0))
    make().minimize(loss)
    startup = pd.default_startup_program()
    assert any(v.startswith("learning_rate") for v in startup.global_block().vars)
    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    losses = [float(exe.run(fetch_list=[loss], scope=scope)[0]) for _ in range(60)]
    assert losses[-1] < 0.05 * losses[0]
    lr_vars = [n for n in scope.local_var_names() if n.startswith("learning_rate")]
    assert lr_vars and scope.find_var(lr_vars[0]).get().shape == ()


def test_initializers_go_to_the_startup_program():
    for init, check in ((pd.Constant(2.0), lambda a: np.all(a == 2)),
                        (pd.Uniform(-0.1, 0.1, seed=3), lambda a: np.all(np.abs(a) <= 0.1)),
                        (pd.Normal(0.0, 0.01, seed=3), lambda a: abs(a.std() - 0.01) < 0.003),
                        (pd.XavierUniform(seed=3), lambda a: np.all(np.abs(a) <= (6 / 150)
                                                                   ** 0.5))):
        pd.reset()
        p = pd.create_parameter([50, 100], name="p", initializer=init)
        assert not pd.default_main_program().global_block().ops
        scope = pd.Scope()
        pd.Executor().run(pd.default_startup_program(), scope=scope)
        value = scope.find_var(p.name).get()
        assert value.shape == (50, 100) and check(value), type(init).__name__
