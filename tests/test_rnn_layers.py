"""The fused rnn op from the learner's side: pd.layer.lstm / gru / simple_rnn build what
paddle.nn's layers build and train to Paddle's numbers; the same LSTM as a StaticRNN step
block gives the same numbers; the debugger steps into the op one cell at a time; bad
input is refused with the op, the slot and what was expected."""
import os

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.backward import is_forward

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")


def _sigmoid(v):
    return 1 / (1 + np.exp(-v))


def _lstm_recipe_ours():
    """make_lstm_recipe_fixture.py's model with our builders (the masked mean written
    with a reshape where Paddle's script used unsqueeze)."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [4, 6], "int64")
        y = pd.data("y", [4, 1], "int64")
        zero = pd.layer.fill_constant([1], "int64", 0)
        real = pd.layer.cast(pd.layer.not_equal(x, zero), "float32")
        lengths = pd.layer.cast(pd.layer.reduce_sum(real, dim=1), "int64")
        h = pd.layer.embedding(x, [20, 8], padding_idx=0)
        out, _ = pd.layer.lstm(h, 16, sequence_length=lengths)
        pooled = pd.layer.reduce_sum(out * pd.layer.reshape(real, [4, 6, 1]), dim=1) / \
            pd.layer.reduce_sum(real, dim=1, keep_dim=True)
        loss = pd.layer.cross_entropy(pd.layer.linear(pooled, 3), y)
        pd.optimizer.SGD(0.5).minimize(loss)
    return main, startup, loss


def _forward_types(program):
    return [op.type for op in program.global_block().ops if is_forward(op)]


def test_lstm_builder_appends_the_ops_and_attributes_paddle_appends():
    paddle = pd.Program.from_bytes(
        open(os.path.join(FIXTURES, "recipe_lstm_sgd.pdesc"), "rb").read())
    ours, _, _ = _lstm_recipe_ours()

    def around_rnn(types):
        i = types.index("rnn")
        return types[i - 3:i + 2]
    assert around_rnn(_forward_types(ours)) == around_rnn(_forward_types(paddle)) == \
        ["fill_constant", "fill_constant", "transpose2", "rnn", "transpose2"]
    theirs, mine = ([op for op in p.global_block().ops if op.type == "rnn"][0]
                    for p in (paddle, ours))
    for name in ("mode", "hidden_size", "input_size", "num_layers", "is_bidirec",
                 "dropout_prob", "is_test"):
        assert mine.attr(name) == theirs.attr(name), name
    assert mine.input("WeightList") == theirs.input("WeightList")   # names and order
    for slot in ("PreState", "SequenceLength"):
        assert len(mine.input(slot)) == len(theirs.input(slot))


def test_lstm_builder_trains_three_sgd_steps_to_paddles_numbers(exe):
    saved = dict(np.load(os.path.join(FIXTURES, "recipe_lstm_sgd.npz")))
    main, startup, loss = _lstm_recipe_ours()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    params = sorted(p.name for p in main.all_parameters())
    for p in params:
        scope.find_var(p).set(saved[f"init__{p}"])
    for k in range(3):
        out = exe.run(main, feed={"x": saved[f"x_{k}"], "y": saved[f"y_{k}"]},
                      fetch_list=[loss] + params, scope=scope)
        np.testing.assert_allclose(out[0], saved[f"loss_{k}"], rtol=1e-5)
        for p, value in zip(params, out[1:]):
            np.testing.assert_allclose(value, saved[f"after_{k}__{p}"], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{p} after step {k}")


def _lstm_both_ways(T=4, B=2, size=3, H=2, seed=0):
    """One LSTM built twice over the same parameters: the fused op (pd.layer.lstm,
    time-major) and a StaticRNN step block with the cell written as ops."""
    rng = np.random.default_rng(seed)
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [T, B, size], "float64")
        fused, (h_fused, c_fused) = pd.layer.lstm(x, H, time_major=True)
        w_ih, w_hh, b_ih, b_hh = [main.global_block().var(f"lstm_cell_0.{n}")
                                  for n in ("w_0", "w_1", "b_0", "b_1")]
        h0 = pd.layer.fill_constant([B, H], "float64", 0.0)
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_prev, c_prev = rnn.memory(init=h0), rnn.memory(init=h0)
            gates = pd.matmul(x_t, w_ih, transpose_y=True) + b_ih + \
                pd.matmul(h_prev, w_hh, transpose_y=True) + b_hh
            i, f, cand, o = pd.layer.split(gates, 4, dim=1)
            c = pd.sigmoid(f) * c_prev + pd.sigmoid(i) * pd.tanh(cand)
            h = pd.sigmoid(o) * pd.tanh(c)
            rnn.update_memory(h_prev, h)
            rnn.update_memory(c_prev, c)
            rnn.output(h)
        step_block = rnn()
    return main, startup, rng.standard_normal((T, B, size)), fused, step_block, h_fused


def test_the_fused_op_and_the_step_block_compute_the_same_lstm(exe):
    main, startup, x, fused, step_block, h_fused = _lstm_both_ways()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    a, b, h = exe.run(main, feed={"x": x}, fetch_list=[fused, step_block, h_fused],
                      scope=scope)
    np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(h[0], a[-1], rtol=1e-12)


def test_stepping_into_the_fused_op_shows_one_cell_at_a_time():
    """Each time step of each direction is a step one frame deeper than the op, in a kid
    scope holding what the cell read and made; the op's own step comes after them."""
    T, B, size, H = 3, 2, 2, 2
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [T, B, size])
        lengths = pd.data("lengths", [B], "int64")
        out, (h, c) = pd.layer.lstm(x, H, direction="bidirect", time_major=True,
                                    sequence_length=lengths)
    feed = {"x": np.random.default_rng(1).uniform(-1, 1, (T, B, size)).astype("float32"),
            "lengths": np.array([3, 2])}
    scope = _started(startup)
    want, = pd.Executor().run(main, feed=feed, fetch_list=[out], scope=scope)
    dbg = pd.Debugger(main, feed, [out], scope)
    rnn_index = [op.type for op in main.global_block().ops].index("rnn")
    dbg.run_to(0, rnn_index - 1)
    cells = []
    while True:
        step = dbg.step()
        if step.depth == 1:
            break
        cells.append(step)
        assert step.op.type == "rnn" and step.depth == 2
        assert dbg.changed == ["x_t", "h_prev", "c_prev", "input_gate", "forget_gate",
                               "candidate", "output_gate", "c", "h", "live"]
        values = {n: step.scope.find_var(n).get() for n in dbg.changed}
        i_gate, h_t = values["input_gate"], values["h"]
        assert np.all((i_gate >= 0) & (i_gate <= 1))
        t = int(step.block_path.rsplit("step ", 1)[1])
        d = 1 if "backward" in step.block_path else 0
        np.testing.assert_allclose(h_t, want[t, :, d * H:(d + 1) * H], rtol=1e-6)
        np.testing.assert_array_equal(values["live"], [True, t < 2])
        assert "rnn@" in step.block_path and step.scope.name.endswith(step.block_path[
            step.block_path.index("layer"):])
    assert [c.block_path.split("rnn@")[1].split(" ", 1)[1] for c in cells] == \
        [f"layer 0 {d}/step {t}" for d, ts in (("forward", (0, 1, 2)),
                                               ("backward", (2, 1, 0))) for t in ts]
    assert step.op.type == "rnn" and dbg.changed[:1] == [out.name]
    np.testing.assert_allclose(dbg.run_to_end()[0], want)


def _started(startup):
    scope = pd.Scope()
    pd.Executor().run(startup, scope=scope)
    return scope


def test_step_over_runs_the_fused_op_whole():
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [2, 3, 2])
        out, h = pd.layer.gru(x, 3)
    dbg = pd.Debugger(main, {"x": np.ones((2, 3, 2), np.float32)}, [out], _started(startup))
    types = []
    while (step := dbg.step_over()) is not None:
        types.append(step.op.type)
        assert step.depth == 1
    assert types == [op.type for op in main.global_block().ops]


def test_gru_and_simple_rnn_builders_give_outputs_and_final_states(exe):
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [None, 5, 3])              # batch unknown: the states follow it
        g, gh = pd.layer.gru(x, 4, num_layers=2)
        s, sh = pd.layer.simple_rnn(x, 2, direction="bidirect", activation="relu")
    assert "fill_constant_batch_size_like" in _forward_types(main)
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    for batch in (3, 1):
        xs = np.random.default_rng(batch).uniform(-1, 1, (batch, 5, 3)).astype("float32")
        go, gho, so, sho = exe.run(main, feed={"x": xs}, fetch_list=[g, gh, s, sh],
                                   scope=scope)
        assert go.shape == (batch, 5, 4) and gho.shape == (2, batch, 4)
        np.testing.assert_array_equal(gho[1], go[:, -1])           # top layer, last step
        assert so.shape == (batch, 5, 4) and sho.shape == (2, batch, 2)
        np.testing.assert_array_equal(sho[0], so[:, -1, :2])       # forward: its last step
        np.testing.assert_array_equal(sho[1], so[:, 0, 2:])        # backward: its last, t=0
        assert so.min() >= 0                                       # relu


# --- bad input --------------------------------------------------------------------------------
def test_builder_refusals_name_the_argument():
    with pd.program_guard(pd.Program(), pd.Program()):
        x = pd.data("x", [2, 5, 3])
        with pytest.raises(pd.BuildError, match="direction"):
            pd.layer.lstm(x, 4, direction="both")
        with pytest.raises(pd.BuildError, match=r"initial_states.*2 states \(h, c\)"):
            pd.layer.lstm(x, 4, initial_states=pd.data("h0", [1, 2, 4]))
        with pytest.raises(pd.BuildError, match="hidden_size"):
            pd.layer.gru(x, 0)
        with pytest.raises(pd.BuildError, match="input"):
            pd.layer.gru(pd.data("flat", [2, 3]), 4)


def _one_rnn(T=3, B=2, size=2, H=2, **kw):
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [B, T, size])
        lengths = pd.data("lengths", [B], "int64")
        out, _ = pd.layer.lstm(x, H, sequence_length=lengths, **kw)
    return main, startup, out


def test_a_sequence_longer_than_the_input_is_a_range_error(exe):
    main, startup, out = _one_rnn()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    x = np.zeros((2, 3, 2), np.float32)
    with pytest.raises(pd.IndexRangeError, match=r"rnn.*SequenceLength.*4.*0\.\.3"):
        exe.run(main, feed={"x": x, "lengths": np.array([1, 4])}, fetch_list=[out],
                scope=scope)
    with pytest.raises(pd.IndexRangeError, match="SequenceLength.*-1"):
        exe.run(main, feed={"x": x, "lengths": np.array([-1, 2])}, fetch_list=[out],
                scope=scope)
    got, = exe.run(main, feed={"x": x, "lengths": np.array([0, 3])}, fetch_list=[out],
                   scope=scope)                        # 0 and T are lengths
    assert not got[0].any()


def test_training_dropout_between_layers_is_refused_not_skipped(exe):
    main, startup, out = _one_rnn(num_layers=2, dropout=0.3)
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    feed = {"x": np.zeros((2, 3, 2), np.float32), "lengths": np.array([3, 3])}
    with pytest.raises(pd.ExecutionError, match="dropout_prob=0.3.*not implemented for "
                                                "training.*is_test"):
        exe.run(main, feed=feed, fetch_list=[out], scope=scope)
    test_program = main.clone(for_test=True)
    assert [op for op in test_program.global_block().ops if op.type == "rnn"][0].attr(
        "is_test")
    exe.run(test_program, feed=feed, fetch_list=[out], scope=scope)


def _append_rnn(weights=None, states=None, **attrs):
    """A bare rnn op over x [3, 2, 2], LSTM H=2 by default, for the shape checks."""
    prog = pd.Program()
    blk = prog.global_block()
    x = blk.create_var("x", shape=[3, 2, 2], dtype="float32")
    if weights is None:
        weights = [[8, 2], [8, 2], [8], [8]]
    ws = [blk.create_var(f"w{i}", shape=s, dtype="float32") for i, s in enumerate(weights)]
    ss = [blk.create_var(f"s{i}", shape=[1, 2, 2], dtype="float32")
          for i in range(2 if states is None else states)]
    outs = {"Out": [blk.create_var("out")], "State": [blk.create_var("h"),
                                                      blk.create_var("c")],
            "Reserve": [blk.create_var("reserve")]}
    base = {"mode": "LSTM", "hidden_size": 2, "input_size": 2, "num_layers": 1}
    blk.append_op("rnn", {"Input": [x], "PreState": ss, "WeightList": ws}, outs,
                  {**base, **attrs})


@pytest.mark.parametrize("kw, match", [
    ({"weights": [[8, 2], [8, 2], [8]]}, r"WeightList.*expected: 4 tensors.*given: +3"),
    ({"weights": [[8, 3], [8, 2], [8], [8]]},
     r"WeightList\[0\] is layer 0 forward's W_ih.*expected: \[8, 2\].*\[8, 3\]"),
    ({"weights": [[6, 2], [6, 2], [6], [6]], "mode": "GRU"},
     r"PreState.*initial h of the GRU cell.*expected: 1 tensors"),
    ({"states": 1}, r"PreState.*initial h and c of the LSTM cell.*expected: 2 tensors"),
    ({"mode": "lstm"}, r"mode"),
    ({"hidden_size": 3}, r"WeightList\[0\].*expected: \[12, 2\]"),
    ({"input_size": 5}, r"input_size.*expected: input_size=2"),
])
def test_bad_rnn_ops_are_refused_when_appended(kw, match):
    with pytest.raises(pd.BuildError, match="(?s)" + match) as e:
        _append_rnn(**kw)
    assert "rnn" in str(e.value)
