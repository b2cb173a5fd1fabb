"""An LSTM classifier saved by real PaddlePaddle 2.6.2 with save_inference_model
(notebooks/data/paddle_lstm/, made by tests/fixtures/paddle/make_lstm_infer_fixture.py)
loads with pd.io.load_inference_model, runs to Paddle's numbers, and steps into its
fused rnn op one cell per time step."""
import os

import numpy as np

import paddle_nb as pd

DATA = os.path.join(os.path.dirname(__file__), "..", "notebooks", "data", "paddle_lstm")


def _load(exe):
    scope = pd.Scope()
    program, feeds, fetches = pd.io.load_inference_model(
        DATA, exe, model_filename="lstm_infer.pdmodel",
        params_filename="lstm_infer.pdiparams", scope=scope)
    return program, feeds, fetches, scope


def test_paddle_lstm_loads_and_predicts_like_paddle(exe):
    program, feeds, fetches, scope = _load(exe)
    types = [op.type for op in program.global_block().ops]
    assert types.count("rnn") == 1 and types[0] == "feed" and types[-1] == "fetch"
    prob, = exe.run(program, feed={feeds[0]: np.load(os.path.join(DATA, "ids.npy"))},
                    fetch_list=fetches, scope=scope)
    np.testing.assert_allclose(prob, np.load(os.path.join(DATA, "prob.npy")), rtol=1e-5,
                               atol=1e-6)


def test_stepping_the_paddle_lstm_shows_each_time_step_and_which_rows_are_live(exe):
    program, feeds, fetches, scope = _load(exe)
    ids = np.load(os.path.join(DATA, "ids.npy"))
    dbg = pd.Debugger(program, {feeds[0]: ids}, fetches, scope)
    live = []
    while (step := dbg.step()) is not None:
        if step.depth == 2:
            live.append(step.scope.find_var("live").get().tolist())
    lengths = (ids != 0).sum(axis=1)
    assert live == [[bool(t < n) for n in lengths] for t in range(ids.shape[1])]
