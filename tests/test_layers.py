"""The design documents' builder forms, run end to end."""
import numpy as np
import pytest

import paddle_nb as pd


def _run(*fetch):
    exe = pd.Executor()
    exe.run(pd.default_startup_program())
    return exe.run(fetch_list=list(fetch))


def test_block_and_scope_doc_first_part_of_the_ifelse_example():
    x = pd.minibatch([10, 20, 30])          # shape=[None, 1]
    y = pd.var(1)                           # shape=[1], value=1
    cond = pd.larger_than(x, 15)            # [false, true, true]
    d = pd.layer.add_scalar(x, y)
    s = pd.layer.softmax(d, axis=0)
    got_cond, got_d, got_s = _run(cond, d, s)
    assert got_cond.dtype == np.bool_ and got_cond.ravel().tolist() == [False, True, True]
    np.testing.assert_allclose(got_d, [[11], [21], [31]])
    e = np.exp(np.float64([11, 21, 31]) - 31)
    np.testing.assert_allclose(got_s.ravel(), e / e.sum(), rtol=1e-5)


def test_block_and_scope_doc_fc_with_an_existing_weight():
    x = pd.sequence([10, 20, 30])
    W = pd.var(0.314, param=True)
    U = pd.var(0.375, param=True)
    a = pd.layer.fc(W, x)                    # W * x
    b = pd.layer.fc(U, a)
    s = pd.sigmoid(pd.add(a, b))
    got_a, got_s = _run(a, s)
    np.testing.assert_allclose(got_a.ravel(), [3.14, 6.28, 9.42], rtol=1e-6)
    ref = 1 / (1 + np.exp(-(got_a.ravel() * 1.375)))
    np.testing.assert_allclose(got_s.ravel(), ref, rtol=1e-5)
    assert x.lod_level == 1


def test_block_and_scope_doc_named_params_are_shared():
    a = pd.data("a", [None, 20])
    b = pd.fc(a, params=["fc.w", "fc.b"])
    c = pd.fc(b, params=["fc.w", "fc.b"])    # same names: the same parameters
    assert [p.name for p in pd.default_main_program().all_parameters()] == ["fc.w", "fc.b"]
    assert b.shape == (-1, 20) and c.shape == (-1, 20)
    w = pd.default_main_program().global_block().var("fc.w")
    assert w.shape == (20, 20)


def test_fc_flattens_by_num_flatten_dims_and_applies_act():
    x = pd.data("x", [None, 2, 3])
    y = pd.layer.fc(x, 4, num_flatten_dims=2, act="tanh", bias_attr=False)
    assert y.shape == (-1, 2, 4)
    ops = [op.type for op in pd.default_main_program().global_block().ops]
    assert ops == ["mul", "tanh"]
    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    xs = np.random.default_rng(1).standard_normal((5, 2, 3)).astype(np.float32)
    got, = exe.run(feed={"x": xs}, fetch_list=[y], scope=scope)
    w = scope.find_var("fc_0.w_0").get()
    np.testing.assert_allclose(got, np.tanh(xs @ w), atol=1e-5)


def test_param_attr_initializer_and_trainable():
    x = pd.data("x", [None, 3])
    pd.layer.fc(x, 2, param_attr=pd.ParamAttr(name="w", initializer=pd.Constant(0.5),
                                               trainable=False))
    w = pd.default_main_program().global_block().var("w")
    assert w.stop_gradient and not w.trainable
    scope = pd.Scope()
    pd.Executor().run(pd.default_startup_program(), scope=scope)
    np.testing.assert_allclose(scope.find_var("w").get(), np.full((3, 2), 0.5))


def test_program_prune_method():
    x = pd.data("x", [None, 3])
    a = pd.relu(x)
    pd.tanh(a)
    pruned = pd.default_main_program().prune([a])
    assert [op.type for op in pruned.global_block().ops] == ["relu"]


def test_loss_layers():
    x = pd.data("x", [None, 3])
    y = pd.data("y", [None, 3])
    label = pd.data("label", [None, 1], "int64")
    sq = pd.layers.square_error_cost(x, y)
    ce = pd.layers.cross_entropy(pd.softmax(x), label, use_softmax=False, reduction="none")
    swce = pd.layers.softmax_with_cross_entropy(x, label)
    xs = np.float32([[1, 2, 3], [0, 0, 1]])
    ys = np.float32([[0, 2, 5], [1, 1, 1]])
    ls = np.int64([[2], [0]])
    got_sq, got_ce, got_swce = pd.Executor().run(feed={"x": xs, "y": ys, "label": ls},
                                                 fetch_list=[sq, ce, swce])
    np.testing.assert_allclose(got_sq, (xs - ys) ** 2)
    p = np.exp(xs) / np.exp(xs).sum(1, keepdims=True)
    want = -np.log(p[[0, 1], [2, 0]]).reshape(2, 1)
    np.testing.assert_allclose(got_ce, want, rtol=1e-5)
    np.testing.assert_allclose(got_swce, want, rtol=1e-5)


# --- matmul and mul: shapes that cannot fit are refused (issue 20, item 8) ------------------
def test_matmul_names_the_contracted_dims_that_disagree_after_transposes():
    x, w = pd.data("x", [None, 3]), pd.data("w", [4, 5])
    for kwargs, given in (({}, r"X\[-1\] = 3 but Y\[-2\] = 4"),
                          ({"transpose_y": True}, r"X\[-1\] = 3 but Y\[-1\] = 5")):
        with pytest.raises(pd.ShapeError, match=r"op 0 matmul_v2: slot Y: X's last dim must "
                           rf"equal.*\n.*\n  given: +{given}: X x float32\[-1, 3\], Y w "
                           rf"float32\[4, 5\], trans_x=False, trans_y="):
            pd.matmul(x, w, **kwargs)
    assert pd.matmul(x, pd.data("v", [5, 3]), transpose_y=True).shape == (-1, 5)
    assert pd.default_main_program().global_block().ops[0].type == "matmul_v2"


def test_matmul_names_the_batch_dims_that_do_not_broadcast():
    a, b = pd.data("a", [2, 4, 3]), pd.data("b", [5, 3, 4])
    with pytest.raises(pd.ShapeError, match=r"batch dims of X and Y cannot be broadcast\n"
                                            r"  expected: batch dim -3 equal in X and Y, or 1 "
                                            r"in one of them\n  given: +X\[-3\] = 2 but "
                                            r"Y\[-3\] = 5"):
        pd.matmul(a, b)
    assert pd.matmul(a, pd.data("c", [1, 3, 4])).shape == (2, 4, 4)       # 1 broadcasts
    assert pd.matmul(a, pd.data("d", [-1, 3, 4])).shape == (2, 4, 4)      # -1 may be 2


def test_mul_knows_a_flattened_dim_with_an_unknown_part_is_a_multiple_of_the_rest():
    """X [2, -1, 3] flattened at 1 has 3k columns: never the 4 rows of Y."""
    x = pd.data("x", [2, None, 3])
    with pytest.raises(pd.ShapeError, match=r"X's columns must equal Y's rows\n  expected: Y "
                                            r"with a multiple of 3 rows .*\n  given: +Y y "
                                            r"float32\[4, 5\] with 4 rows"):
        pd.layers.append("mul", {"X": [x], "Y": [pd.data("y", [4, 5])]})
    assert pd.layers.append("mul", {"X": [x], "Y": [pd.data("z", [6, 5])]}).shape == (2, 5)


def test_a_matmul_over_the_batch_dim_builds_and_the_run_time_guard_checks_the_rows():
    """[-1, 3] @ [-1, 3] fits when the batch has 3 rows, so it builds (Paddle's rule: -1 is
    any size); a batch of 2 is refused by the guard before the kernel, in the same words."""
    h = pd.data("h", [None, 3])
    out = pd.matmul(h, h)
    exe = pd.Executor()
    got, = exe.run(feed={"h": np.ones((3, 3), np.float32)}, fetch_list=[out])
    np.testing.assert_allclose(got, np.full((3, 3), 3.0))
    with pytest.raises(pd.ExecutionError, match=r"matmul_v2: at run time, slot Y: X's last dim "
                                                r"must equal.*\n.*\n  given: +X\[-1\] = 3 but "
                                                r"Y\[-2\] = 2: X h float32\[2, 3\]"):
        exe.run(feed={"h": np.ones((2, 3), np.float32)}, fetch_list=[out])


def test_fc_of_a_list_of_inputs_is_a_mul_per_input_then_sum():
    """Fluid's fc([a, b], size): a weight per input, the products summed, one bias."""
    a, b = pd.data("a", [None, 3]), pd.data("b", [None, 2, 5])
    y = pd.layer.fc([a, b], 6, act="relu")
    block = y.block
    assert [op.type for op in block.ops] == ["mul", "mul", "sum", "elementwise_add", "relu"]
    shapes = {p.name: list(p.shape) for p in block.program.global_block().all_parameters()}
    assert shapes == {"fc_0.w_0": [3, 6], "fc_0.w_1": [10, 6], "fc_0.b_0": [6]}
    exe = pd.Executor()
    exe.run(pd.default_startup_program())
    av = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    bv = np.linspace(1, -1, 40, dtype=np.float32).reshape(4, 2, 5)
    got, = exe.run(feed={"a": av, "b": bv}, fetch_list=[y])
    w0, w1, bias = (pd.global_scope().find_var(n).get() for n in shapes)
    np.testing.assert_allclose(got, np.maximum(av @ w0 + bv.reshape(4, 10) @ w1 + bias, 0),
                               rtol=1e-5, atol=1e-6)
