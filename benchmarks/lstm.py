"""One SGD training step of an LSTM through the fused ``rnn`` op: T=32 steps, batch 16, 64
inputs, 64 hidden, time-major, the loss the mean of every output:

    x [32, 16, 64] -> pd.layer.lstm(x, 64, time_major=True) -> mean(out) -> SGD

paddle_nb runs the program (fill_constant states, rnn, mean, their gradients, 4 sgd ops)
through ``Executor.run``; torch is eager autograd on ``nn.LSTM(64, 64)`` holding the same
parameters (the same layout and gate order: W_ih, W_hh, b_ih, b_hh). No numpy contender:
the recurrent op's benchmark (rnn.py) has the hand-written BPTT."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd

from .common import rng, row, torch_sgd, training_step_times

T, B, D, H, LR = 32, 16, 64, 64, 0.1
TARGET_TORCH = 1.0      # paddle_nb / torch (the target)
TORCH_NAMES = ("weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0")


def build(t=T, b=B, d=D, h=H, lr=LR, seed=1):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = seed
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [t, b, d])
        out, _ = pd.layer.lstm(x, h, time_major=True)
        loss = pd.mean(out)
        pd.optimizer.SGD(lr).minimize(loss)
    return main, startup, loss


PARAMS = tuple(f"lstm_cell_0.{n}" for n in ("w_0", "w_1", "b_0", "b_1"))


def sequence(t=T, b=B, d=D):
    return {"x": rng().standard_normal((t, b, d)).astype(np.float32)}


def torch_lstm(t, values: dict):
    """``nn.LSTM`` holding our parameters (name -> array)."""
    d, h = values[PARAMS[0]].shape[1], values[PARAMS[1]].shape[1]
    lstm = t.nn.LSTM(d, h)
    with t.no_grad():
        for ours, theirs in zip(PARAMS, TORCH_NAMES):
            getattr(lstm, theirs).copy_(t.from_numpy(np.ascontiguousarray(values[ours])))
    return lstm


def torch_step(t, lstm, x, lr=LR):
    out, _ = lstm(x)
    return torch_sgd(t, dict(lstm.named_parameters()), out.mean(), lr)


def run(quick: bool = False) -> list[dict]:
    main, startup, loss = build()
    feed = sequence()
    holder = {}

    def inputs(t):
        holder["lstm"] = None
        return (t.from_numpy(feed["x"]),)

    def step(t, tp, x):
        if holder.get("lstm") is None:        # our start parameters, once
            holder["lstm"] = torch_lstm(t, {k: v.detach().numpy() for k, v in tp.items()})
        return torch_step(t, holder["lstm"], x)

    times = training_step_times(main, startup, loss, feed, PARAMS, None, step, inputs, quick)
    case = f"LSTM T{T} B{B} {D}->{H} (rnn op): SGD training step"
    return [row(case, times.interpreted, None, times.torch, vs_torch=TARGET_TORCH,
                note="pd.layer.lstm vs nn.LSTM"),
            row(f"{case}, compiled", times.compiled, None, times.torch,
                note="pd.CompiledProgram")]
