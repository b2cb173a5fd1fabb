"""One SGD training step of an MLP 784-256-10 on a float32 batch of 64:

    fc 256 relu -> fc 10 -> softmax_with_cross_entropy -> mean -> SGD

paddle_nb runs the program ``minimize`` built (17 forward, backward and sgd ops) through
``Executor.run``; the numpy reference is the same math written out by hand, forward,
backward and update; torch is eager autograd on the same tensors."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd

from .common import rng, row, torch_sgd, training_step_times

IN, HIDDEN, CLASSES, BATCH = 784, 256, 10, 64
LR = 0.1
PARAMS = ("w1", "b1", "w2", "b2")
TARGET, TARGET_TORCH = 1.0, 0.9      # compiled: paddle_nb / numpy, / torch


def build(in_dim=IN, hidden=HIDDEN, classes=CLASSES, lr=LR, seed=1):
    """(main, startup, loss), parameters named w1, b1, w2, b2."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = seed
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, in_dim])
        label = pd.data("label", [None, 1], "int64")
        h = pd.layer.fc(x, hidden, act="relu", param_attr="w1", bias_attr="b1")
        logits = pd.layer.fc(h, classes, param_attr="w2", bias_attr="b2")
        loss = pd.mean(pd.layers.softmax_with_cross_entropy(logits, label))
        pd.optimizer.SGD(lr).minimize(loss)
    return main, startup, loss


def batch(batch=BATCH, in_dim=IN, classes=CLASSES):
    r = rng()
    return {"x": r.random((batch, in_dim), np.float32),
            "label": r.integers(0, classes, (batch, 1), dtype=np.int64)}


def numpy_step(p: dict, x, label, lr=LR):
    """Forward, backward and SGD by hand; updates ``p`` in place, returns the loss."""
    w1, b1, w2, b2 = (p[k] for k in PARAMS)
    n, rows, lab = len(x), np.arange(len(x)), label.ravel()
    h = x @ w1
    h += b1
    np.maximum(h, 0, out=h)                            # relu
    logits = h @ w2
    logits += b2
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob = e / e.sum(axis=1, keepdims=True)
    loss = -np.log(prob[rows, lab]).mean()
    d = prob                                           # d loss / d logits = (p - onehot) / n
    d[rows, lab] -= 1
    d *= np.float32(1 / n)
    gw2, gb2 = h.T @ d, d.sum(axis=0)
    dh = d @ w2.T
    dh *= h > 0                                        # relu's gradient
    gw1, gb1 = x.T @ dh, dh.sum(axis=0)
    lr = np.float32(lr)
    for w, g in ((w1, gw1), (b1, gb1), (w2, gw2), (b2, gb2)):
        w -= lr * g
    return loss


def torch_step(t, p: dict, x, label, lr=LR):
    """The same step in PyTorch eager (autograd); ``p`` holds leaf tensors."""
    h = t.relu(x @ p["w1"] + p["b1"])
    loss = t.nn.functional.cross_entropy(h @ p["w2"] + p["b2"], label)
    return torch_sgd(t, p, loss, lr)


def run(quick: bool = False) -> list[dict]:
    main, startup, loss = build()
    feed = batch()
    times = training_step_times(
        main, startup, loss, feed, PARAMS, lambda p: numpy_step(p, feed["x"], feed["label"]),
        torch_step, lambda t: (t.from_numpy(feed["x"]), t.from_numpy(feed["label"].ravel())),
        quick)
    case = f"MLP {IN}-{HIDDEN}-{CLASSES} b{BATCH}: SGD training step"
    return [row(case, times.interpreted, times.numpy, times.torch),
            row(f"{case}, compiled", times.compiled, times.numpy, times.torch,
                vs_numpy=TARGET, vs_torch=TARGET_TORCH, note="pd.CompiledProgram")]
