"""Row-wise IfElse (the Block and Scope design) and its other spellings: results,
gradients, edge cases."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.examples import block_and_scope

from gradcheck import check_gradients


def test_block_and_scope_doc_ifelse_example_runs_as_written():
    built = block_and_scope.build(block_and_scope.IFELSE)
    o1, o2 = built["o1"], built["o2"]

    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    got1, got2 = exe.run(fetch_list=[o1, o2], scope=scope)
    w = scope.find_var("fc_0.w_0").get()[0, 0]
    # rows 1, 2 (20, 30 > 15) take x + y and softmax over one column (= 1); row 0 takes fc(z)
    np.testing.assert_allclose(got1, [[10 * w], [21], [31]], rtol=1e-6)
    np.testing.assert_allclose(got2, [[10 * w + 1], [1], [1]], rtol=1e-6)
    types = [op.type for op in pd.default_main_program().global_block().ops]
    assert types.count("conditional_block") == 2 and types.count("merge_lod_tensor") == 2
    assert "split_lod_tensor" in types


def _row_program(dtype="float64"):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 5
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 3], dtype)
        x.stop_gradient = False
        cond = pd.layers.reduce_sum(x, dim=1, keep_dim=True) > 0.0
        ie = pd.ifelse()
        with ie.true_block():
            ie.output(pd.tanh(pd.layer.fc(x, 2, param_attr="w_true", bias_attr=False)))
        with ie.false_block():
            w = pd.create_parameter([3, 2], dtype, name="w_false",
                                    initializer=pd.Uniform(-1, 1, seed=3))
            ie.output(pd.matmul(x, w) * 2.0)
        out, = ie(cond)
        loss = pd.mean(out * out)
    return main, startup, x, out, loss


def _numpy_rows(scope, xs):
    wt, wf = scope.find_var("w_true").get(), scope.find_var("w_false").get()
    rows = xs.sum(axis=1) > 0
    return np.where(rows[:, None], np.tanh(xs @ wt), xs @ wf * 2)


@pytest.mark.parametrize("xs", [
    np.array([[1.0, 0.2, -0.3], [-1.0, -0.5, 0.1], [0.3, 0.3, 0.3], [-0.2, 0.1, -0.4]]),
    np.array([[1.0, 0.2, 0.3], [0.5, 0.5, 0.1]]),          # every row true: false gets none
    np.array([[-1.0, -0.2, 0.3]]),                         # every row false
], ids=["mixed", "all_true", "all_false"])
def test_rows_go_through_their_branch_and_merge_in_order(xs):
    main, startup, x, out, loss = _row_program()
    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    got, = exe.run(main, feed={"x": xs}, fetch_list=[out], scope=scope)
    np.testing.assert_allclose(got, _numpy_rows(scope, xs), rtol=1e-12)


@pytest.mark.parametrize("xs", [
    np.array([[1.0, 0.2, -0.3], [-1.0, -0.5, 0.1], [0.3, 0.3, 0.3]]),
    np.array([[1.0, 0.2, 0.3], [0.5, 0.5, 0.1]]),
], ids=["mixed", "all_true"])
def test_row_ifelse_gradients_match_central_differences(xs):
    main, startup, x, out, loss = _row_program()
    check_gradients(main, startup, loss, {"x": xs}, ["x", "w_true", "w_false"])


def test_scalar_condition_sends_the_whole_batch_one_way():
    x = pd.data("x", [None, 2])
    flag = pd.data("flag", [1], "bool")
    ie = pd.ifelse()
    with ie.true_block():
        ie.output(x * 2.0)
    with ie.false_block():
        ie.output(x - 1.0)
    out, = ie(flag)
    xs = np.float32([[1, 2], [3, 4]])
    exe = pd.Executor()
    for f, want in ((True, xs * 2), (False, xs - 1)):
        got, = exe.run(feed={"x": xs, "flag": np.array([f])}, fetch_list=[out])
        np.testing.assert_allclose(got, want)
    assert "select_input" in [op.type for op in pd.default_main_program().global_block().ops]


def test_fluid_spelling_with_explicit_inputs():
    x = pd.data("x", [None, 2])
    cond = pd.data("c", [None, 1], "bool")
    ie = pd.IfElse(cond)
    with ie.true_block():
        ie.output(ie.input(x) + 100.0)
    with ie.false_block():
        ie.output(ie.input(x) * -1.0)
    out = ie()
    xs = np.float32([[1, 2], [3, 4], [5, 6]])
    cs = np.array([[True], [False], [True]])
    got, = pd.Executor().run(feed={"x": xs, "c": cs}, fetch_list=out)
    np.testing.assert_allclose(got, [[101, 102], [-3, -4], [105, 106]])


def test_the_block_design_ifelseop_with_add_input_and_add_output():
    x = pd.data("x", [None, 2])
    cond = pd.data("c", [None, 1], "bool")
    op = pd.ifelseop(cond)
    with op.true_block():
        a = op.add_input(x)
        b = pd.fc(a, params=["fc.w", "fc.b"])
        op.add_output(b)
    with op.false_block():
        a = op.add_input(x)
        b = pd.fc(a, params=["fc.w", "fc.b"])      # the same parameters
        op.add_output(b * 0.0)
    out, = op()
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(pd.default_startup_program(), scope=scope)
    xs = np.float32([[1, 2], [3, 4]])
    got, = exe.run(feed={"x": xs, "c": np.array([[True], [False]])}, fetch_list=[out],
                   scope=scope)
    w, b = scope.find_var("fc.w").get(), scope.find_var("fc.b").get()
    np.testing.assert_allclose(got, [xs[0] @ w + b, [0, 0]], rtol=1e-6)


def test_misuse_is_caught_at_build_time_with_the_users_line():
    x = pd.data("x", [None, 2])
    ie = pd.ifelse()
    with pytest.raises(pd.BuildError, match=r"output\(\) must be called inside true_block.*"
                                            r"\n  at .*test_ifelse.py.*ie.output\(x\)"):
        ie.output(x)
    with ie.true_block():
        ie.output(x, x)
    with ie.false_block():
        ie.output(x)
    with pytest.raises(pd.BuildError, match="different output counts: true_block gave 2, "
                                            "false_block 1"):
        ie(pd.data("c", [None, 1], "bool"))
    with pytest.raises(pd.BuildError, match="must be a bool"):
        pd.ifelse()(x)
