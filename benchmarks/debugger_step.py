"""Debugger step latency: the time from a Step click (a message reaching the view) to the
views' models being updated, against the 100 ms target for a small program (20 ms for the
MLP: the fast path must leave stepping as fast as it was)."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd

TARGET_S = 0.100
TARGET_MLP_S = 0.020


def _mlp():
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 1
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 64])
        h = pd.layer.fc(x, 64, act="relu")
        y = pd.layer.fc(h, 10, act="softmax")
    return main, startup, {"x": np.random.default_rng(0).random((32, 64), np.float32)}, y


def _rnn():
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 1
    with pd.program_guard(main, startup):
        x = pd.data("x", [8, 16, 32])
        h0 = pd.layers.fill_constant([16, 32], "float32", 0.0)
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_pre = rnn.memory(init=h0)
            h = pd.tanh(pd.layer.fc(x_t, 32) + pd.layer.fc(h_pre, 32, bias_attr=False))
            rnn.update_memory(h_pre, h)
            rnn.output(h)
        y = rnn()
    return main, startup, {"x": np.random.default_rng(0).random((8, 16, 32), np.float32)}, y


def _stepper(view):
    def one():
        if view.debugger.finished:
            view.handle_message({"cmd": "restart"})
        view.handle_message({"cmd": "step"})
    return one


def run(quick: bool = False) -> list[dict]:
    from . import timing
    from .common import row
    from paddle_nb.notebook.widgets import DebuggerView
    rows = []
    for name, build in (("MLP 64-64-10", _mlp), ("RNN T=8, in the step block", _rnn)):
        main, startup, feed, y = build()
        dbg = pd.Debugger(main, feed=feed, fetch_list=[y], startup=startup)
        raw = timing.median_time(lambda: dbg.step() if not dbg.finished else dbg.restart(),
                                 inner=50)
        view = DebuggerView(pd.Debugger(main, feed=feed, fetch_list=[y], startup=startup))
        clicked = timing.median_time(_stepper(view), repeats=7 if quick else 15, inner=5)
        rows.append(row(f"Debugger.step(), {name}", raw))
        rows.append(row(f"Step click -> views updated, {name}", clicked,
                        max_s=TARGET_MLP_S if name.startswith("MLP") else TARGET_S))
    return rows
