"""An MLP on scikit-learn's bundled digits (8x8 images, 10 classes; no download).

    program: x [N, 64] -> fc 64 relu -> fc 10 -> softmax_with_cross_entropy -> mean
    training: Adam, minibatches of 32, a few epochs; test accuracy from the for_test clone.

``train()`` returns the test accuracy; ``python -m paddle_nb tour`` shows it with a tqdm
progress bar and a to_code() listing of the training program.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from tqdm.auto import tqdm

import paddle_nb as pd


@dataclass
class DigitsModel:
    main: pd.Program
    startup: pd.Program
    test: pd.Program
    loss: pd.Variable
    prob: pd.Variable


def load_data(seed: int = 0, test_fraction: float = 0.2):
    """Features scaled to [0, 1], int64 labels of shape [N, 1], a seeded split."""
    from sklearn.datasets import load_digits   # noqa: PLC0415 (scikit-learn is slow to import)
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64).reshape(-1, 1)
    order = np.random.default_rng(seed).permutation(len(x))
    n_test = int(len(x) * test_fraction)
    test, train = order[:n_test], order[n_test:]
    return x[train], y[train], x[test], y[test]


def build(hidden: int = 64, learning_rate: float = 0.01, seed: int = 1) -> DigitsModel:
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = seed
    with pd.program_guard(main, startup), pd.unique_name.guard():   # names from fc_0
        x = pd.data("x", [None, 64])
        label = pd.data("label", [None, 1], "int64")
        h = pd.layer.fc(x, hidden, act="relu")
        logits = pd.layer.fc(h, 10)
        prob = pd.softmax(logits)
        loss = pd.mean(pd.layers.softmax_with_cross_entropy(logits, label))
        pd.optimizer.Adam(learning_rate).minimize(loss)
    # for evaluation: no backward or Adam ops, and nothing that needs the label
    test = pd.prune(main.clone(for_test=True), [prob])
    return DigitsModel(main, startup, test, loss, prob)


def accuracy(exe, model: DigitsModel, scope, x, y) -> float:
    prob, = exe.run(model.test, feed={"x": x}, fetch_list=[model.prob], scope=scope)
    return float((prob.argmax(axis=1) == y.ravel()).mean())


def train(epochs: int = 15, batch_size: int = 32, seed: int = 0, progress: bool = False,
          scope=None):
    """Train from scratch; returns (test accuracy, per-epoch mean losses, model, scope)."""
    x_train, y_train, x_test, y_test = load_data(seed)
    model = build()
    scope = scope if scope is not None else pd.Scope()
    exe = pd.Executor(pd.CPUPlace())
    exe.run(model.startup, scope=scope)
    rng = np.random.default_rng(seed)
    steps = range(epochs)
    if progress:
        steps = tqdm(steps, desc="digits MLP", unit="epoch")
    history = []
    for _ in steps:
        order = rng.permutation(len(x_train))
        losses = []
        for start in range(0, len(order), batch_size):
            idx = order[start:start + batch_size]
            loss, = exe.run(model.main, feed={"x": x_train[idx], "label": y_train[idx]},
                            fetch_list=[model.loss], scope=scope)
            losses.append(float(loss))
        history.append(float(np.mean(losses)))
        if progress:
            steps.set_postfix(loss=f"{history[-1]:.4f}")
    return accuracy(exe, model, scope, x_test, y_test), history, model, scope
