"""The fused ``rnn`` op and its gradient in a compiled block (ops/rnn.py's lowered forms):
programs as users write them with paddle.nn-style layers (pd.layer.simple_rnn / lstm /
gru), trained by SGD, run plainly and through pd.CompiledProgram from one start. The
compiled form runs the interpreter's own loops and products (kernels/cpu/rnn.py), so the
numbers are compared bit for bit. Paddle 2.6.2's own saved nn.SimpleRNN program
(benchmarks/paddle26) runs compiled too."""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from benchmarks_path import drained  # noqa: F401  (puts benchmarks/ on the path)
from benchmarks import vs_paddle  # noqa: E402
from test_lowered_forms import (build_program, assert_compiled, data, floats, interpreted_because,
                                run_programs)

T, D, H = 5, 4, 6
RNN_OPS = ("rnn", "rnn_grad")


def _trained(build, make_feed, batches=(3, 3, 5, 5)):
    """(main, the CompiledProgram) after one run per batch size of ``batches``, compared
    with the interpreter's runs: a new batch size is learned again and runs the same
    compiled source."""
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [make_feed(b) for b in batches])
    return main, compiled


def test_a_simple_rnn_without_an_initial_state_trains_the_same():
    """nn.SimpleRNN(D, H)(x) with zero initial states made by the layer, mean of its
    outputs as the loss."""
    def build():
        x = data("x", [None, T, D])
        out, _ = pd.layer.simple_rnn(x, H)
        loss = pd.layer.mean(out)
        pd.optimizer.SGD(0.5).minimize(loss)
        return [loss, out]
    main, compiled = _trained(build, lambda b: {"x": floats(b, T, D)})
    assert_compiled(main, compiled, *RNN_OPS)


def test_an_lstm_classifier_over_a_sequence_trains_the_same():
    """Embedded tokens through a two-layer LSTM, its last output through fc to 3 classes,
    cross-entropy, SGD: the final states go unused (their gradients are zeros)."""
    def build():
        tokens = pd.data("tokens", [None, T], "int64")
        label = pd.data("label", [None, 1], "int64")
        h = pd.layer.embedding(tokens, [20, D])
        out, _ = pd.layer.lstm(h, H, num_layers=2)
        logits = pd.layer.fc(pd.layer.reduce_mean(out, dim=1), 3)
        loss = pd.layer.mean(pd.layer.softmax_with_cross_entropy(logits, label))
        pd.optimizer.SGD(0.5).minimize(loss)
        return [loss, logits]
    rng = np.random.default_rng(3)
    main, compiled = _trained(build, lambda b: {
        "tokens": rng.integers(0, 20, (b, T)), "label": rng.integers(0, 3, (b, 1))})
    assert_compiled(main, compiled, *RNN_OPS)


def test_a_bidirectional_gru_with_its_final_state_in_the_loss_trains_the_same():
    """A bidirectional GRU from a given initial state, float64; the loss reads both its
    outputs and its final state, so State@GRAD is a real gradient."""
    def build():
        x = data("x", [None, T, D], "float64")
        h0 = data("h0", [2, None, H], "float64")
        out, h_n = pd.layer.gru(x, H, direction="bidirect", initial_states=h0)
        loss = pd.layer.mean(out) + pd.layer.mean(h_n * h_n)
        pd.optimizer.SGD(0.5).minimize(loss)
        return [loss, out, h_n]
    main, compiled = _trained(build, lambda b: {"x": floats(b, T, D, dtype=np.float64),
                                                "h0": floats(2, b, H, dtype=np.float64)})
    assert_compiled(main, compiled, *RNN_OPS)


def _masked_lstm():
    x = data("x", [None, T, D])
    lengths = pd.data("lengths", [None], "int64")
    out, _ = pd.layer.lstm(x, H, direction="bidirect", sequence_length=lengths)
    loss = pd.layer.mean(out * out)
    pd.optimizer.SGD(0.5).minimize(loss)
    return [loss, out]


def test_sequences_of_their_own_lengths_train_the_same():
    """SequenceLength: padded steps output 0 and keep the state, both directions."""
    rng = np.random.default_rng(5)
    main, compiled = _trained(_masked_lstm, lambda b: {
        "x": floats(b, T, D), "lengths": rng.integers(0, T + 1, b)})
    assert_compiled(main, compiled, *RNN_OPS)


def test_a_sequence_longer_than_the_input_is_the_interpreters_error():
    """A length past T: the compiled loop checks and stops, the interpreter reruns the
    block and names the op; no parameter moved."""
    main, startup, fetch = build_program(_masked_lstm)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main)
    feed = {"x": floats(3, T, D), "lengths": np.array([T, 2, 1])}
    exe.run(compiled, feed=feed, fetch_list=fetch, scope=scope)
    exe.run(compiled, feed=feed, fetch_list=fetch, scope=scope)
    assert_compiled(main, compiled, *RNN_OPS)
    params = {p.name: scope.find_var(p.name).get().copy()
              for p in main.global_block().all_parameters()}
    with pytest.raises(Exception, match="rnn"):
        exe.run(compiled, feed={**feed, "lengths": np.array([T + 1, 2, 1])},
                fetch_list=fetch, scope=scope)
    for name, before in params.items():
        assert np.array_equal(scope.find_var(name).get(), before), name


def test_one_compiled_source_serves_every_batch_size():
    def build():
        out, _ = pd.layer.simple_rnn(pd.data("x", [None, T, D]), H)
        return [out]
    main, _, (out,) = build_program(build)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(build_program(build)[1], scope=scope)
    compiled = pd.CompiledProgram(main)
    sources = []
    for batch in (2, 5):
        for _ in range(2):
            got, = exe.run(compiled, feed={"x": floats(batch, T, D)}, fetch_list=[out],
                           scope=scope)
        assert got.shape == (batch, T, H)
        sources.append(compiled.source())
    assert sources[0] == sources[1]
    assert_compiled(main, compiled, "rnn")


def test_paddles_saved_simple_rnn_program_runs_its_rnn_compiled():
    """Paddle 2.6.2's nn.SimpleRNN training step (benchmarks/paddle26): rnn and rnn_grad
    compiled, the losses the interpreter's, bit for bit."""
    case = vs_paddle.recorded()["cases"]["simple_rnn"]
    main, feed, loss, params = vs_paddle.load(case)
    exe = pd.Executor(pd.CPUPlace())
    losses = {}
    for program in (main, pd.CompiledProgram(main)):
        scope = pd.Scope()
        for name, value in params.items():
            scope.var(name).set(value.copy())
        losses[program is main] = [exe.run(program, feed=feed, fetch_list=[loss],
                                           scope=scope)[0] for _ in range(3)]
    assert all(np.array_equal(a, b) for a, b in zip(losses[True], losses[False]))
    assert_compiled(main, program, *RNN_OPS)


# --- prelu (ops/relu_variants.py): fused loops; a trained Alpha's gradient is numpy's sum ----
@pytest.mark.parametrize("mode, layout, alpha_shape", [
    ("all", "NCHW", [1]), ("channel", "NCHW", [3]), ("channel", "NHWC", [2]),
    ("element", "NCHW", [3, 2, 2]), ("element", "NCHW", [1, 3, 2, 2])])
def test_a_learned_slope_trains_the_same(mode, layout, alpha_shape):
    """fc, reshaped to [B, 3, 2, 2], through prelu with a trained Alpha, SGD."""
    def build():
        x = data("x", [None, 4])
        h = pd.layer.reshape(pd.layer.fc(x, 12), [-1, 3, 2, 2])
        alpha = pd.layers.create_parameter(alpha_shape, "float32", name="alpha")
        out = pd.op.prelu(X=h, Alpha=alpha, mode=mode, data_format=layout)
        loss = pd.layer.mean(out * out)
        pd.optimizer.SGD(0.5).minimize(loss)
        return [loss, out, alpha]
    main, compiled = _trained(build, lambda b: {"x": floats(b, 4)})
    assert_compiled(main, compiled, "prelu")
    assert interpreted_because(compiled, "prelu_grad").startswith("Alpha's gradient")


def test_a_fixed_slope_passes_its_gradient_compiled():
    """An Alpha fed as data (not trained): dX alone, a fused loop."""
    def build():
        x = data("x", [None, 4])
        h = pd.layer.reshape(pd.layer.fc(x, 6), [-1, 3, 2])
        out = pd.op.prelu(X=h, Alpha=pd.data("alpha", [3]), mode="channel")
        loss = pd.layer.mean(out * out)
        pd.optimizer.SGD(0.5).minimize(loss)
        return [loss, out]
    main, compiled = _trained(build, lambda b: {"x": floats(b, 4),
                                                "alpha": np.float32([0.1, 0.2, 0.3])})
    assert_compiled(main, compiled, "prelu", "prelu_grad")
