"""Recurrent layers called without an initial state, as Paddle saves them when the batch is
unknown at build time (tests/fixtures/paddle/make_rnn_no_state_fixture.py): ``nn.LSTM``,
``nn.GRU`` and ``nn.SimpleRNN`` make their zero state with ``fill_constant(shape=[L, -1, H])``
and a ``ShapeTensorList`` whose middle entry is ``slice(shape(x), 0:1)``, read when the op
runs (core/attr_tensors.py). Each program trains two SGD steps here, on a batch of 4 rows
and then of 3, from Paddle's initial values: the losses, every gradient and every parameter
after each step within 1e-5 of Paddle's; the inference model Paddle saved from the first
gives Paddle's logits for a batch of 5."""
import os

import numpy as np
import pytest

import paddle_nb as pd
from test_paddle_recipes import FIXTURES, _recipe, _trains_like_paddle

RECIPES = ["rnn_nostate_lstm2", "rnn_nostate_lstm_masked_mean", "rnn_nostate_bigru",
           "rnn_nostate_lstm_simplernn"]


@pytest.mark.parametrize("name", RECIPES)
def test_a_recurrent_layer_without_an_initial_state_trains_like_paddle(exe, name):
    program, saved = _recipe(name)
    zero_states = [op for op in program.global_block().ops
                   if op.type == "fill_constant" and op.input("ShapeTensorList")]
    assert zero_states and all(-1 in op.attr("shape") for op in zero_states)
    assert {k for k in saved if k.startswith("grad_1__")}, "Paddle's gradients are saved"
    _trains_like_paddle(exe, name)


def test_the_zero_state_follows_the_batch_the_program_is_fed(exe):
    """The same prepared program fed 4 rows, then 3, then 4 again: the state's batch dim
    is the tensor's value each time (a cache keyed on shapes alone would keep the first)."""
    program, saved = _recipe("rnn_nostate_lstm2")
    state = next(op for op in program.global_block().ops
                 if op.type == "fill_constant" and op.input("ShapeTensorList"))
    out = state.output("Out")[0]
    scope = pd.Scope()
    for key, value in saved.items():
        if key.startswith("init__"):
            scope.var(key[len("init__"):]).set(value)
    test_program = program.clone(for_test=True)
    for rows in (4, 3, 4, 1):
        x = saved["x_0"][np.arange(rows) % 4]
        got, = exe.run(test_program, feed={"x": x, "y": saved["y_0"][np.arange(rows) % 4]},
                       fetch_list=[out], scope=scope)
        assert got.shape == (2, rows, 16) and not got.any()


def test_paddles_inference_model_of_an_lstm_without_a_state_gives_paddles_logits(exe):
    program, feeds, fetches = pd.io.load_inference_model(
        os.path.join(FIXTURES, "rnn_nostate_infer"), exe)        # a path prefix, as Paddle 2
    io = np.load(os.path.join(FIXTURES, "rnn_nostate_infer_io.npz"))
    got, = exe.run(program, feed={feeds[0]: io["x"]}, fetch_list=fetches)
    np.testing.assert_allclose(got, io["logits"], rtol=1e-5, atol=1e-6)
