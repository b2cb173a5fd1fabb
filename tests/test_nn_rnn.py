"""``paddle.nn.RNN`` training programs saved by real PaddlePaddle 2.6.2 train here to
Paddle's numbers (tests/fixtures/paddle/make_nn_rnn_fixture.py: a SimpleRNNCell or a
GRUCell called without an initial state, a linear head, a mean-squared loss, two SGD
steps), and their gradients agree with central differences.

In static mode nn.RNN is a ``while`` writing two tensor arrays, the step outputs and the
states. When the loss uses only one of them (the outputs, as in nn_rnn_simple and
nn_rnn_gru) no gradient reaches the other: its gradient array stays empty, and the
gradient block's read_from_array (write_to_array's gradient) reads past its end. Fluid's
read_from_array then gives zeros shaped like its X_W input (the tensor the forward op
wrote); before paddle_nb read X_W the backward failed with "position 4 is out of range".
"""
import os

import numpy as np
import pytest

import paddle_nb as pd
from gradcheck import check_gradients

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")
EPS = 1e-6

# name -> what the loss reads (make_nn_rnn_fixture.py)
FIXTURE_NAMES = {
    "simple": "SimpleRNNCell, the outputs' mean over time (no gradient to the states)",
    "simple_state": "SimpleRNNCell, the final state (no gradient to the outputs)",
    "gru": "GRUCell, the last step's output (no gradient to the states)",
    "simple_seqlen": "SimpleRNNCell with sequence_length, the outputs' mean",
}
# (nn.RNN with sequence_length builds its step mask with sequence_mask, its maxlen given
# as a tensor: MaxLenTensor, ops/sequence_mask.py)


def _fixture(name):
    def program(stem):
        return pd.Program.from_bytes(open(os.path.join(FIXTURES, stem), "rb").read())
    return (program(f"nn_rnn_{name}.pdesc"), program(f"nn_rnn_{name}_startup.pdesc"),
            dict(np.load(os.path.join(FIXTURES, f"nn_rnn_{name}.npz"))))


def _feed(saved, k):
    return {str(n): saved[f"feed_{k}__{n}"] for n in saved["feeds"]}


def _scope(startup, saved):
    """The startup program run (it sets the learning rate), then Paddle's initial values
    (Paddle's startup drew them at random)."""
    scope = pd.Scope()
    pd.Executor().run(startup, scope=scope)
    for p in saved["params"]:
        scope.find_var(str(p)).set(np.array(saved[f"init__{p}"], copy=True))
    return scope


@pytest.mark.parametrize("name", list(FIXTURE_NAMES))
def test_nn_rnn_trains_two_sgd_steps_like_paddle(exe, name):
    """From Paddle's initial parameters: each step's loss, every parameter's gradient and
    every parameter after it, and the parameters at the end, within 1e-5."""
    _trains_like_paddle(exe, name)


def test_nn_rnn_without_a_gradient_for_its_states_trains_like_paddle_on_cuda():
    """The same on CUDA (numba's simulator here): the zeros read_from_array makes for
    the states' missing gradient live on the device."""
    _trains_like_paddle(pd.Executor(pd.CUDAPlace(0)), "simple")


def _trains_like_paddle(exe, name):
    program, startup, saved = _fixture(name)
    scope = _scope(startup, saved)
    params = [str(p) for p in saved["params"]]
    for k in range(2):
        out = exe.run(program, feed=_feed(saved, k), scope=scope,
                      fetch_list=[str(saved["loss_name"])] + [p + "@GRAD" for p in params]
                      + params)
        np.testing.assert_allclose(out[0], saved[f"loss_{k}"], rtol=1e-5, atol=1e-5)
        for p, grad, after in zip(params, out[1:1 + len(params)], out[1 + len(params):]):
            np.testing.assert_allclose(grad, saved[f"grad_{k}__{p}"], rtol=1e-5, atol=1e-5,
                                       err_msg=f"{name}: {p}@GRAD at step {k}")
            np.testing.assert_allclose(after, saved[f"after_{k}__{p}"], rtol=1e-5, atol=1e-5,
                                       err_msg=f"{name}: {p} after step {k}")
    for p in params:
        np.testing.assert_allclose(scope.find_var(p).get(), saved[f"final__{p}"], rtol=1e-5,
                                   atol=1e-5, err_msg=f"{name}: final {p}")
    assert scope.kids == []


@pytest.mark.parametrize("name", list(FIXTURE_NAMES))
def test_paddles_and_our_nn_rnn_gradients_are_central_differences(exe, name):
    """Step 0's gradient of every parameter, Paddle's and ours, against central
    differences of the saved program's forward part (pruned to the loss), in float64."""
    program, startup, saved = _fixture(name)
    loss = str(saved["loss_name"])
    params = [str(p) for p in saved["params"]]
    forward = pd.prune(program, [loss])
    assert "while" in [op.type for op in forward.global_block().ops]
    assert not any(op.type.endswith("_grad") or op.type == "sgd"
                   for op in forward.global_block().ops)
    feed = _feed(saved, 0)
    scope = _scope(startup, saved)
    ours = exe.run(program.clone(), feed=feed, fetch_list=[p + "@GRAD" for p in params],
                   scope=_scope(startup, saved))
    for p, got in zip(params, ours):
        base = saved[f"init__{p}"]
        numeric = np.zeros_like(base)
        for idx in np.ndindex(base.shape):
            for sign in (1, -1):
                value = base.copy()
                value[idx] += sign * EPS
                scope.find_var(p).set(value)
                numeric[idx] += sign * float(exe.run(forward, feed=feed, fetch_list=[loss],
                                                     scope=scope)[0])
            scope.find_var(p).set(base.copy())
        numeric /= 2 * EPS
        assert np.abs(numeric).max() > 1e-3, p          # a gradient that is not all zeros
        np.testing.assert_allclose(saved[f"grad_0__{p}"], numeric, rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name}: Paddle's {p}@GRAD")
        np.testing.assert_allclose(got, numeric, rtol=1e-6, atol=1e-8,
                                   err_msg=f"{name}: our {p}@GRAD")


def _gradient_reads(program):
    """The read_from_array ops of the while's gradient block."""
    grad_block = next(op.attr("sub_block") for op in program.global_block().ops
                      if op.type == "while_grad")
    return [op for op in program.block(grad_block).ops if op.type == "read_from_array"]


def test_without_x_w_the_unused_states_gradient_is_read_past_its_end(exe):
    """The failure this suite pins: in nn_rnn_simple the loss does not use the final
    states, so their gradient array is empty when the last step's gradient reads it at
    position 4. With X_W (as Paddle saved it) that read is zeros; without it, an error."""
    program, startup, saved = _fixture("simple")
    reads = _gradient_reads(program)
    assert all(op.input("X_W") for op in reads)
    states_grad = reads[0].input("X")[0]
    assert not any(states_grad in op.output_arg_names for op in program.global_block().ops
                   if op.type != "while_grad")          # nothing outside gives it a value
    del reads[0].desc.inputs[[v.parameter for v in reads[0].desc.inputs].index("X_W")]
    reads[0].block.table.touch()
    with pytest.raises(pd.IndexRangeError, match=r"read_from_array: slot I: position 4 is "
                                                 r"out of range.*array of length 0"):
        exe.run(program, feed=_feed(saved, 0), scope=_scope(startup, saved))


def _two_array_loop(x, W, steps):
    """nn.RNN's loop, built with our layers: states[0] = x; while i < steps:
    h = tanh(states[i] @ W); outputs[i] = h; i += 1 (in place); states[i] = h.
    Returns (the outputs stacked, the final state states[steps])."""
    i = pd.layers.fill_constant([1], "int64", 0)
    n = pd.layers.fill_constant([1], "int64", steps)
    states, outputs = pd.create_array("float64"), pd.create_array("float64")
    pd.array_write(x, i, states)
    cond = pd.layers.less_than(i, n)
    with pd.While(cond).block():
        h = pd.tanh(pd.matmul(pd.array_read(states, i), W))
        pd.array_write(h, i, outputs)
        pd.increment(i)
        pd.array_write(h, i, states)
        pd.layers.less_than(i, n, cond=cond)
    return (pd.tensor_array_to_tensor(outputs, axis=0, use_stack=True)[0],
            pd.array_read(states, n))


@pytest.mark.parametrize("uses", ["outputs", "final_state", "both"])
def test_our_while_writing_two_arrays_differentiates_when_the_loss_uses_one(uses):
    """Our backward of nn.RNN's loop: write_to_array's gradient passes X_W, and the
    gradient of an array the loss does not use is left empty (not filled with zeros, nor
    zeroed after a step: a write sets one entry), so its reads are zeros; the gradients
    are central differences."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [3, 2], "float64")
        x.stop_gradient = False
        W = pd.create_parameter([2, 2], "float64", name="W", initializer=pd.Normal(0, 0.7, 7))
        outputs, final_state = _two_array_loop(x, W, 4)
        loss = {"outputs": lambda: pd.mean(outputs * outputs),
                "final_state": lambda: pd.mean(final_state * final_state),
                "both": lambda: pd.mean(outputs) + pd.mean(final_state * final_state)}[uses]()
    xs = np.random.default_rng(5).uniform(-1, 1, (3, 2))
    check_gradients(main, startup, loss, {"x": xs}, ["x", "W"])
    reads = _gradient_reads(main)
    assert reads and all(op.input("X_W") for op in reads)
    assert "fill_zeros_like" not in [op.type for block in main.blocks for op in block.ops
                                     if op.input("X") and op.input("X")[0].startswith("array")]


def test_read_from_array_with_x_w_reads_zeros_where_no_gradient_arrived():
    """Past the end and at a position never written, X_W's zeros (its shape and dtype);
    a written entry as it is; a negative position is still an error."""
    arr = pd.create_array("float32")
    pd.array_write(pd.layers.fill_constant([2], "float32", 3.0),
                   pd.layers.fill_constant([1], "int64", 1), arr)
    written = pd.layers.fill_constant([2, 3], "float64", 7.0)
    block = pd.default_main_program().global_block()

    def read(position):
        out = block.create_var(name=f"read_{position}".replace("-", "m"), dtype="float32")
        block.append_op("read_from_array",
                        {"X": [arr.name], "X_W": [written.name],
                         "I": [pd.layers.fill_constant([1], "int64", position).name]},
                        {"Out": [out.name]})
        return out

    past, hole, entry = read(5), read(0), read(1)
    got_past, got_hole, got_entry = pd.Executor().run(fetch_list=[past, hole, entry])
    for got in (got_past, got_hole):
        assert got.shape == (2, 3) and got.dtype == np.float64 and not got.any()
    np.testing.assert_array_equal(got_entry, [3.0, 3.0])
    negative = read(-1)
    with pytest.raises(pd.IndexRangeError, match="position -1"):
        pd.Executor().run(fetch_list=[negative])
