"""While loops, while_loop, seed 003's while_op, and tensor arrays."""
import numpy as np
import pytest

import paddle_nb as pd
from gradcheck import check_gradients


def _while_loop_program(steps=3):
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 2], "float64")
        x.stop_gradient = False
        W = pd.create_parameter([2, 2], "float64", name="W", initializer=pd.Normal(0, 0.7, 4))
        i = pd.layers.fill_constant([1], "int64", 0)
        n = pd.layers.fill_constant([1], "int64", steps)
        h0 = pd.layers.scale(x, 1.0)
        i, h = pd.while_loop(lambda i, h: pd.layers.less_than(i, n),
                             lambda i, h: [pd.increment(i, in_place=False),
                                           pd.tanh(pd.matmul(h, W) + x)], [i, h0])
        loss = pd.mean(h * h)
    return main, startup, h, loss


def test_while_loop_forward_and_gradients():
    main, startup, h, loss = _while_loop_program()
    xs = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.25]])
    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    got, = exe.run(main, feed={"x": xs}, fetch_list=[h], scope=scope)
    W = scope.find_var("W").get()
    want = xs
    for _ in range(3):
        want = np.tanh(want @ W + xs)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    check_gradients(main, startup, loss, {"x": xs}, ["x", "W"])


def test_while_with_tensor_arrays_sums_a_sequence():
    """i = 0; while i < len: acc += x[i] * 2; out[i] = acc; i += 1"""
    x = pd.data("x", [4, 3])
    i = pd.layers.fill_constant([1], "int64", 0)
    n = pd.layers.fill_constant([1], "int64", 4)
    acc = pd.layers.fill_constant([3], "float32", 0.0)
    inputs = pd.create_array("float32")
    for k in range(4):             # fill the input array outside the loop
        row = pd.layers.reshape(pd.layers.split(x, 4, dim=0)[k], [3])
        pd.array_write(row, pd.layers.fill_constant([1], "int64", k), inputs)
    outputs = pd.create_array("float32")
    cond = pd.layers.less_than(i, n)
    w = pd.While(cond)
    with w.block():
        item = pd.array_read(inputs, i)
        pd.layers.assign(acc + item * 2.0, output=acc)
        pd.array_write(acc, i, outputs)
        pd.increment(i)
        pd.layers.less_than(i, n, cond=cond)
    stacked, _ = pd.tensor_array_to_tensor(outputs, axis=0, use_stack=True)
    length = pd.array_length(outputs)
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    got, got_len, got_i = pd.Executor().run(feed={"x": xs}, fetch_list=[stacked, length, i])
    np.testing.assert_allclose(got, np.cumsum(xs * 2, axis=0))
    assert got_len.tolist() == [4] and got_i.tolist() == [4]


def test_seed_003_while_op_runs_its_stepnet():
    a = pd.data("a", [None, 3])
    op = pd.while_op()
    with op.stepnet():
        # do not need to declare inputs or outputs
        c = pd.fc(a)
    del c
    scope = pd.Scope()
    exe = pd.Executor()
    exe.run(pd.default_startup_program(), scope=scope)
    steps = [s for s in exe.steps(feed={"a": np.ones((2, 3), np.float32)}, scope=scope)
             if s.block_idx == 1]
    assert [s.op.type for s in steps] == ["mul", "elementwise_add", "fill_constant", "assign"]
    # with a condition it loops: count to 5
    pd.reset()
    i = pd.layers.fill_constant([1], "int64", 0)
    cond = pd.layers.less_than(i, pd.layers.fill_constant([1], "int64", 5))
    loop = pd.while_op(cond)
    with loop.stepnet():
        pd.increment(i)
        pd.layers.less_than(i, pd.layers.fill_constant([1], "int64", 5), cond=cond)
    got, = pd.Executor().run(fetch_list=[i])
    assert got.tolist() == [5]


def test_while_errors():
    i = pd.layers.fill_constant([1], "int64", 0)
    cond = pd.layers.less_than(i, pd.layers.fill_constant([1], "int64", 5))
    w = pd.While(cond)
    with pytest.raises(pd.BuildError, match="never updates its condition"):
        with w.block():
            pd.increment(i)
    with pytest.raises(pd.BuildError, match="bool condition"):
        pd.While(i)
    arr = pd.create_array("float32")
    bad = pd.array_read(arr, pd.layers.fill_constant([1], "int64", 2))
    with pytest.raises(pd.ExecutionError, match="position 2 of an array of length 0"):
        pd.Executor().run(fetch_list=[bad])
