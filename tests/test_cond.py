"""cond, case, switch_case and Switch (scalar conditions, as Paddle lowers them)."""
import numpy as np
import pytest

import paddle_nb as pd
from gradcheck import check_gradients


def _cond_program():
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 2], "float64")
        x.stop_gradient = False
        w = pd.create_parameter([2, 2], "float64", name="w",
                                initializer=pd.Uniform(-1, 1, seed=2))
        pred = pd.mean(x) > 0.0
        out = pd.cond(pred, lambda: pd.matmul(x, w) * 2.0, lambda: pd.tanh(pd.matmul(x, w)) - 1.0)
        loss = pd.mean(out * out)
    return main, startup, out, loss


@pytest.mark.parametrize("xs", [np.array([[0.5, 0.2], [0.1, -0.3]]),
                                np.array([[-0.5, 0.2], [0.1, -0.3]])], ids=["true", "false"])
def test_cond_forward_and_gradients(xs):
    main, startup, out, loss = _cond_program()
    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    got, = exe.run(main, feed={"x": xs}, fetch_list=[out], scope=scope)
    w = scope.find_var("w").get()
    want = xs @ w * 2 if xs.mean() > 0 else np.tanh(xs @ w) - 1
    np.testing.assert_allclose(got, want, rtol=1e-12)
    types = [op.type for op in main.global_block().ops]
    assert types.count("conditional_block") == 2 and "select_input" in types
    assert "logical_not" in types
    check_gradients(main, startup, loss, {"x": xs}, ["x", "w"])


def test_cond_branches_must_agree():
    p = pd.data("p", [1], "bool")
    x = pd.data("x", [None, 2])
    with pytest.raises(pd.BuildError, match="same number of outputs; true_fn returned 2 "
                                            "Variables, false_fn 1"):
        pd.cond(p, lambda: (x, x), lambda: x)
    with pytest.raises(pd.BuildError, match="one value"):
        pd.cond(pd.data("q", [None, 1], "bool"), lambda: x, lambda: x)


def test_case_first_true_predicate_wins():
    x = pd.data("x", [1])
    out = pd.case([(x < 0.0, lambda: x * 0.0 - 1.0),
                   (x < 10.0, lambda: x * 2.0),
                   (x < 100.0, lambda: x * 3.0)], default=lambda: x * 0.0)
    exe = pd.Executor()
    for v, want in ((-5, -1), (5, 10), (50, 150), (500, 0)):
        got, = exe.run(feed={"x": np.float32([v])}, fetch_list=[out])
        assert got[0] == want, v


def test_switch_case_by_index():
    index = pd.data("index", [1], "int64")
    x = pd.data("x", [1])
    out = pd.switch_case(index, {1: lambda: x + 1.0, 2: lambda: x + 2.0, 5: lambda: x + 5.0},
                         default=lambda: x * 0.0)
    exe = pd.Executor()
    for i, want in ((1, 11), (2, 12), (5, 15), (3, 0)):
        got, = exe.run(feed={"index": np.int64([i]), "x": np.float32([10])}, fetch_list=[out])
        assert got[0] == want, i
    # a list of functions is indexed by position; without default the last one is it
    pd.reset()
    index, x = pd.data("index", [1], "int64"), pd.data("x", [1])
    out = pd.switch_case(index, [lambda: x * 10.0, lambda: x * 20.0, lambda: x * 30.0])
    for i, want in ((0, 10), (1, 20), (2, 30), (7, 30)):
        got, = pd.Executor().run(feed={"index": np.int64([i]), "x": np.float32([1])},
                                 fetch_list=[out])
        assert got[0] == want, i


def test_switch_of_the_design_doc_first_true_case_wins():
    step = pd.data("step", [1])
    lr = pd.var(np.float32([0.0]), name="lr")
    with pd.switch() as s:
        with s.case(step < 10.0):
            pd.layers.assign(pd.var(np.float32([1.0])), output=lr)
        with s.case(step < 20.0):                 # also true for step < 10: must not run then
            pd.layers.assign(pd.var(np.float32([0.5])), output=lr)
        with s.default():
            pd.layers.assign(pd.var(np.float32([0.1])), output=lr)
    exe = pd.Executor()
    for v, want in ((5, 1.0), (15, 0.5), (25, 0.1)):
        got, = exe.run(feed={"step": np.float32([v])}, fetch_list=[lr])
        np.testing.assert_allclose(got, [want])
    with pytest.raises(pd.BuildError, match="inside 'with pd.switch"):
        with pd.Switch().case(step < 1.0):
            pass
