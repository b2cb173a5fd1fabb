"""While loops, while_loop, the Block design's while_op, and tensor arrays."""
import json
import os

import numpy as np
import pytest

import paddle_nb as pd
from gradcheck import check_gradients
from models import while_powers, while_running_sum


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
    x, i, outputs, stacked = while_running_sum(4)
    length = pd.array_length(outputs)
    xs = np.arange(12, dtype=np.float32).reshape(4, 3)
    got, got_len, got_i = pd.Executor().run(feed={"x": xs}, fetch_list=[stacked, length, i])
    np.testing.assert_allclose(got, np.cumsum(xs * 2, axis=0))
    assert got_len.tolist() == [4] and got_i.tolist() == [4]


def test_the_block_design_while_op_runs_its_stepnet():
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
    with pytest.raises(pd.ExecutionError,
                       match="position 2 at I.*past the end of an array of length 0"):
        pd.Executor().run(fetch_list=[bad])


# --- counters updated in place (pd.increment) in a loop that is differentiated -----------------
def test_gradient_through_a_while_whose_counter_is_incremented_in_place():
    """The step scopes keep no copy of a counter updated in place; the gradient block walks
    it back with increment(step=-1) (Fluid's IncrementGradOpMaker), so read_from_array's
    gradient reads each step's position, not 3 every time."""
    x, i, total = while_powers()
    main = pd.default_main_program()
    forward = main.clone()
    gx, = pd.gradients([total], [x])
    grad_block = main.block(main.global_block().ops[-1].attr("sub_block"))
    undo = [op for op in grad_block.ops if op.type == "increment"]
    assert len(undo) == 1 and undo[0].attr("step") == -1.0
    assert undo[0].input("X") == undo[0].output("Out") == [i.name]
    assert not grad_block.table.find_var(i.name, recursive=False)   # the outer counter
    xs = np.float64([1.5])
    got_gx, got_total, got_i = pd.Executor().run(feed={"x": xs}, fetch_list=[gx, total, i])
    np.testing.assert_allclose(got_total, 1.5 + 1.5 ** 2 + 1.5 ** 3, rtol=1e-14)
    np.testing.assert_allclose(got_gx, [1 + 2 * 1.5 + 3 * 1.5 ** 2], rtol=1e-14)   # 10.75
    assert got_i.tolist() == [0]      # walked back by the backward, as in Paddle's programs
    exe = pd.Executor()

    def f(v):
        return float(exe.run(forward, feed={"x": np.float64([v])}, fetch_list=[total.name])[0])
    numeric = (f(1.5 + 1e-6) - f(1.5 - 1e-6)) / 2e-6
    np.testing.assert_allclose(got_gx, [numeric], rtol=1e-7)


def test_gradient_through_a_while_with_an_in_place_counter_by_central_differences():
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x, _, total = while_powers()
        loss = pd.mean(total * total)
    check_gradients(main, startup, loss, {"x": np.float64([0.7])}, ["x"])


def _tanh_loop(x, W, steps: int, dtype: str):
    """arr[0] = x; while i < steps: arr[i + 1] = tanh(arr[i] @ W), the counter i updated
    in place by increment (as Paddle's while_array fixture builds it). Returns (arr, i, n)."""
    i = pd.layers.fill_constant([1], "int64", 0)
    arr = pd.create_array(dtype)
    pd.array_write(x, i, arr)
    n = pd.layers.fill_constant([1], "int64", steps)
    cond = pd.layers.less_than(i, n)
    with pd.While(cond).block():
        nxt = pd.tanh(pd.matmul(pd.array_read(arr, i), W))
        pd.increment(i)
        pd.array_write(nxt, i, arr)
        pd.layers.less_than(i, n, cond=cond)
    return arr, i, n


@pytest.mark.parametrize("place", ["cpu", "cuda"])
def test_training_through_a_while_over_arrays_with_an_in_place_counter(place):
    """arr[0] = x; arr[k+1] = tanh(arr[k] @ W) for k < 3 (i incremented in place);
    loss = mean((arr[3] - y)^2). SGD lowers the loss, and the first step's W@GRAD is
    numpy's; the same on CUDA (numba's simulator)."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [3, 2], "float64")
        y = pd.data("y", [3, 2], "float64")
        W = pd.create_parameter([2, 2], "float64", name="W",
                                initializer=pd.Normal(0, 0.7, 5))
        arr, _, n = _tanh_loop(x, W, 3, "float64")
        last = pd.array_read(arr, n)
        diff = last - y
        loss = pd.mean(diff * diff)
        pd.optimizer.SGD(0.5).minimize(loss)
    rng = np.random.default_rng(3)
    xs, ys = rng.uniform(-1, 1, (3, 2)), rng.uniform(-0.5, 0.5, (3, 2))
    exe = pd.Executor(pd.CPUPlace() if place == "cpu" else pd.CUDAPlace(0))
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    W0 = np.array(scope.find_var("W").get(), copy=True)
    # numpy: forward and backward of the same loop
    hs = [xs]
    for _ in range(3):
        hs.append(np.tanh(hs[-1] @ W0))
    dh = 2 * (hs[-1] - ys) / ys.size
    dW = np.zeros_like(W0)
    for k in range(3, 0, -1):
        dz = dh * (1 - hs[k] ** 2)
        dW += hs[k - 1].T @ dz
        dh = dz @ W0.T
    losses = []
    for step in range(30):
        got_loss, got_dw = exe.run(main, feed={"x": xs, "y": ys},
                                   fetch_list=[loss, "W@GRAD"], scope=scope)
        if step == 0:
            np.testing.assert_allclose(got_dw, dW, rtol=1e-10, atol=1e-14)
            np.testing.assert_allclose(np.asarray(scope.find_var("W").get()) if place == "cpu"
                                       else scope.find_var("W").get().copy_to_host(),
                                       W0 - 0.5 * dW, rtol=1e-12)
        losses.append(float(got_loss))
    assert losses[-1] < 0.5 * losses[0], losses
    assert scope.kids == []


def test_paddle_while_program_with_increment_matches_ours():
    """Paddle 3.3.1's While over arrays (tests/fixtures/paddle_control_flow/while_array):
    its while_grad block walks the counter back with increment(step=-1); the same program
    built here gets the same gradient block (op for op, the gradient plumbing aside) and
    the same values as Paddle fetched."""
    here = os.path.join(os.path.dirname(__file__), "fixtures", "paddle_control_flow")
    case = json.load(open(os.path.join(here, "cases.json")))["cases"]["while_array"]
    data = np.load(os.path.join(here, case["npz"]))
    paddle = pd.Program.from_bytes(open(os.path.join(here, case["pdesc"]), "rb").read())
    paddle_grad_block = paddle.block(2)
    steps = [op.attr("step") for op in paddle_grad_block.ops if op.type == "increment"]
    assert steps == [-1.0]
    # Paddle's own program still runs and matches what Paddle fetched
    scope = pd.Scope()
    scope.var("W").set(data["param__W"])
    got = pd.Executor().run(paddle, feed={"x": data["feed__x"]},
                            fetch_list=["x@GRAD", "W@GRAD", "fill_constant_1.tmp_0"],
                            scope=scope)
    for g, key in zip(got, ["x@GRAD", "W@GRAD", "fill_constant_1.tmp_0"]):
        np.testing.assert_allclose(g, data[f"fetch__{key}"], rtol=1e-5, atol=1e-6)

    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [3, 4], "float32")
        x.stop_gradient = False
        W = pd.create_parameter([4, 4], "float32", name="W")
        arr, i, n = _tanh_loop(x, W, 3, "float32")
        loss = pd.layers.reduce_mean(pd.array_read(arr, n))
        gx, gw = pd.gradients([loss], [x, W])
    plumbing = {"sum", "fill_zeros_like", "assign"}
    ours = main.block(next(op.attr("sub_block") for op in main.global_block().ops
                           if op.type == "while_grad"))
    assert [op.type for op in ours.ops if op.type not in plumbing] == \
        [op.type for op in paddle_grad_block.ops if op.type not in plumbing]
    scope = pd.Scope()
    scope.var("W").set(data["param__W"])
    got_gx, got_gw, got_i = pd.Executor().run(main, feed={"x": data["feed__x"]},
                                              fetch_list=[gx, gw, i], scope=scope)
    np.testing.assert_allclose(got_gx, data["fetch__x@GRAD"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got_gw, data["fetch__W@GRAD"], rtol=1e-5, atol=1e-6)
    assert got_i.tolist() == data["fetch__fill_constant_1.tmp_0"].tolist() == [0]


def test_reading_an_array_past_its_end_says_so_once():
    arr = pd.create_array("float32")
    pd.array_write(pd.layers.fill_constant([2], "float32", 1.0),
                   pd.layers.fill_constant([1], "int64", 1), arr)
    past = pd.array_read(arr, pd.layers.fill_constant([1], "int64", 2))
    with pytest.raises(pd.ExecutionError) as err:
        pd.Executor().run(fetch_list=[past])
    msg = str(err.value)
    assert "position 2 at I[0] is out of range" in msg
    assert "past the end of an array of length 2" in msg
    assert isinstance(err.value, pd.IndexRangeError) and err.value.value == 2
    assert msg.count("read_from_array") == 1 and "never written" not in msg
    pd.reset()
    arr = pd.create_array("float32")
    pd.array_write(pd.layers.fill_constant([2], "float32", 1.0),
                   pd.layers.fill_constant([1], "int64", 1), arr)
    hole = pd.array_read(arr, pd.layers.fill_constant([1], "int64", 0))
    with pytest.raises(pd.ExecutionError, match="position 0 of an array of length 2 was "
                                                "never written"):
        pd.Executor().run(fetch_list=[hole])
