"""One SGD training step of LeNet-5 on a float32 batch of 64 28x28 images:

    conv 5x5 (6, pad 2) relu -> max pool 2 -> conv 5x5 (16) relu -> max pool 2
    -> fc 120 relu -> fc 84 relu -> fc 10 -> cross_entropy -> SGD

paddle_nb runs the program ``minimize`` built through ``Executor.run``; torch is eager
autograd on the same parameters (its conv weights are ours: [out, in, kh, kw] in both).
No numpy contender: a convolution's backward by hand is the kernel under test."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd

from .common import rng, row, torch_sgd, training_step_times

BATCH, LR = 64, 0.05
PARAMS = ("c1.w", "c1.b", "c2.w", "c2.b", "f1.w", "f1.b", "f2.w", "f2.b", "f3.w", "f3.b")
TARGET_TORCH = 1.5      # paddle_nb / torch (the target)


def build(lr=LR, seed=1):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = seed
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 1, 28, 28])
        label = pd.data("label", [None, 1], "int64")
        h = pd.layer.conv2d(x, 6, 5, padding=2, act="relu", param_attr="c1.w",
                            bias_attr="c1.b")
        h = pd.layer.pool2d(h, 2, "max", 2)
        h = pd.layer.conv2d(h, 16, 5, act="relu", param_attr="c2.w", bias_attr="c2.b")
        h = pd.layer.pool2d(h, 2, "max", 2)
        h = pd.layer.fc(h, 120, act="relu", param_attr="f1.w", bias_attr="f1.b")
        h = pd.layer.fc(h, 84, act="relu", param_attr="f2.w", bias_attr="f2.b")
        logits = pd.layer.fc(h, 10, param_attr="f3.w", bias_attr="f3.b")
        loss = pd.layer.cross_entropy(logits, label)
        pd.optimizer.SGD(lr).minimize(loss)
    return main, startup, loss


def batch(n=BATCH):
    r = rng()
    return {"x": r.random((n, 1, 28, 28), np.float32),
            "label": r.integers(0, 10, (n, 1), dtype=np.int64)}


def torch_step(t, p: dict, x, label, lr=LR):
    F = t.nn.functional
    h = F.max_pool2d(F.relu(F.conv2d(x, p["c1.w"], p["c1.b"], padding=2)), 2)
    h = F.max_pool2d(F.relu(F.conv2d(h, p["c2.w"], p["c2.b"])), 2)
    h = F.relu(h.flatten(1) @ p["f1.w"] + p["f1.b"])
    h = F.relu(h @ p["f2.w"] + p["f2.b"])
    loss = F.cross_entropy(h @ p["f3.w"] + p["f3.b"], label)
    return torch_sgd(t, p, loss, lr)


def run(quick: bool = False) -> list[dict]:
    main, startup, loss = build()
    feed = batch()
    times = training_step_times(
        main, startup, loss, feed, PARAMS, None, torch_step,
        lambda t: (t.from_numpy(feed["x"]), t.from_numpy(feed["label"].ravel())), quick)
    case = f"LeNet-5 b{BATCH} 28x28: SGD training step"
    return [row(case, times.interpreted, None, times.torch, vs_torch=TARGET_TORCH),
            row(f"{case}, compiled", times.compiled, None, times.torch,
                note="pd.CompiledProgram")]
