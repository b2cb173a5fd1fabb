"""One SGD training step of a tanh RNN, T=32 steps, batch 16, 64 inputs, 64 hidden:

    h_t = tanh(x_t @ wx + h_{t-1} @ wh + bh),  h_0 = 0,  loss = mean(h_1..h_T)

paddle_nb: a StaticRNN (the ``recurrent`` op runs its step block once per step, each step
in its own scope; ``recurrent_grad`` runs the gradient block backwards through them).
numpy: backpropagation through time by hand. torch: the same loop in eager autograd."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd

from .common import rng, row, torch_sgd, training_step_times

T, B, D, H = 32, 16, 64, 64
LR = 0.1
PARAMS = ("wx", "wh", "bh")
TARGET_NUMPY, TARGET_TORCH = 1.2, 0.5      # compiled: paddle_nb / numpy, / torch


def build(t=T, b=B, d=D, h=H, lr=LR, seed=1):
    """(main, startup, loss): tests/models.py's tanh RNN with named parameters and SGD."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = seed
    with pd.program_guard(main, startup):
        x = pd.data("x", [t, b, d])
        h0 = pd.layers.fill_constant([b, h], "float32", 0.0)
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_pre = rnn.memory(init=h0)
            h_t = pd.tanh(pd.layer.fc(x_t, h, param_attr="wx", bias_attr=False)
                          + pd.layer.fc(h_pre, h, param_attr="wh", bias_attr="bh"))
            rnn.update_memory(h_pre, h_t)
            rnn.output(h_t)
        loss = pd.mean(rnn())
        pd.optimizer.SGD(lr).minimize(loss)
    return main, startup, loss


def sequence(t=T, b=B, d=D):
    return {"x": rng().standard_normal((t, b, d), np.float32)}


def numpy_step(p: dict, x, lr=LR):
    """Forward, BPTT and SGD by hand; updates ``p`` in place, returns the loss. Only the
    recurrence is a Python loop: the input projection and the weight gradients are one
    matmul over all steps, as one would write it in numpy."""
    wx, wh, bh = (p[k] for k in PARAMS)
    t_len, b, _ = x.shape
    xw = (x.reshape(t_len * b, -1) @ wx).reshape(t_len, b, -1)
    hs = np.empty_like(xw)
    h = np.zeros_like(xw[0])
    for t in range(t_len):
        h = np.tanh(xw[t] + h @ wh + bh)
        hs[t] = h
    loss = hs.mean()
    dh_out = np.float32(1 / hs.size)                   # d mean / d every h_t
    da = np.empty_like(hs)                             # d loss / d (pre-tanh) at each step
    dh_next = np.zeros_like(h)
    for t in reversed(range(t_len)):
        da[t] = (dh_out + dh_next) * (1 - hs[t] * hs[t])
        dh_next = da[t] @ wh.T
    h_prev = np.concatenate([np.zeros_like(h)[None], hs[:-1]]).reshape(t_len * b, -1)
    da2 = da.reshape(t_len * b, -1)
    grads = (x.reshape(t_len * b, -1).T @ da2, h_prev.T @ da2, da2.sum(axis=0))
    lr = np.float32(lr)
    for w, g in zip((wx, wh, bh), grads):
        w -= lr * g
    return loss


def torch_step(t, p: dict, x, lr=LR):
    """The same step in PyTorch eager: the loop as written, autograd for the backward."""
    h = t.zeros(x.shape[1], p["wh"].shape[0])
    hs = []
    for x_t in x:
        h = t.tanh(x_t @ p["wx"] + h @ p["wh"] + p["bh"])
        hs.append(h)
    loss = t.stack(hs).mean()
    return torch_sgd(t, p, loss, lr)


def run(quick: bool = False) -> list[dict]:
    main, startup, loss = build()
    feed = sequence()
    times = training_step_times(
        main, startup, loss, feed, PARAMS, lambda p: numpy_step(p, feed["x"]),
        torch_step, lambda t: (t.from_numpy(feed["x"]),), quick)
    case = f"tanh RNN T={T} B={B} H={H}: SGD training step"
    return [row(case, times.interpreted, times.numpy, times.torch),
            row(f"{case}, compiled", times.compiled, times.numpy, times.torch,
                vs_numpy=TARGET_NUMPY, vs_torch=TARGET_TORCH, note="pd.CompiledProgram")]
