"""A tiny transformer encoder that learns to reverse short digit sequences.

    data: rows of LENGTH digits 0-9, drawn uniformly; the target of a row is the row
          reversed (position i must output the digit at position LENGTH - 1 - i)
    program: ids [N, LENGTH] int64
        -> embedding [10, D] + a learned position table [LENGTH, D] (a parameter added to
           every row: position i gets row i)
        -> transformer_encoder_layer (post-norm, dropout 0) x layers     [N, LENGTH, D]
        -> linear D -> 10: one set of logits per position
        -> cross_entropy per position, the mean over every position of the batch
    training: Adam, minibatches drawn afresh each step (none of them a held-out row);
    evaluation on held-out rows with the forward program alone (``test``).

Reversal needs no arithmetic on the digits: each position must *look at* one other
position, which is what attention does; the position table tells it which. ``train()``
returns the held-out sequence accuracy (a row counts only if all its digits are right),
the losses, the model and its scope, as digits_cnn.train does. The course's sequence
chapter (notebooks/09_sequences_and_attention.ipynb) trains it and draws its attention;
the tests check it reaches 95% of whole sequences in well under a minute on 2 cores.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

import paddle_nb as pd

LENGTH = 6          # digits per sequence
DIGITS = 10         # the vocabulary: 0..9


@dataclass
class Reverser:
    main: pd.Program
    startup: pd.Program
    test: pd.Program
    loss: pd.Variable
    prob: pd.Variable


def sequences(rng: np.random.Generator, n: int, length: int = LENGTH) -> np.ndarray:
    """``n`` rows of ``length`` random digits, int64 [n, length]."""
    return rng.integers(0, DIGITS, (n, length)).astype(np.int64)


def targets(ids: np.ndarray) -> np.ndarray:
    """What the model must output for ``ids``: each row reversed."""
    return ids[:, ::-1].copy()


def _codes(ids: np.ndarray) -> np.ndarray:
    """Each row as one int (its digits read as a number): for checking membership."""
    return ids @ (DIGITS ** np.arange(ids.shape[1] - 1, -1, -1))


def held_out_split(seed: int, n_test: int, length: int = LENGTH):
    """(held-out rows, a function drawing training batches that never contain one)."""
    test = sequences(np.random.default_rng(seed + 1000), n_test, length)
    test_codes = _codes(test)
    rng = np.random.default_rng(seed)

    def batch(n: int) -> np.ndarray:
        ids = sequences(rng, n, length)
        seen = np.isin(_codes(ids), test_codes)
        while seen.any():                       # redraw the (rare) held-out rows
            ids[seen] = sequences(rng, int(seen.sum()), length)
            seen = np.isin(_codes(ids), test_codes)
        return ids
    return test, batch


def build(d_model: int = 32, heads: int = 2, feedforward: int = 64, layers: int = 1,
          learning_rate: float = 0.01, length: int = LENGTH, seed: int = 1) -> Reverser:
    """The program (see the module doc), with Adam."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = seed
    with pd.program_guard(main, startup), pd.unique_name.guard():
        ids = pd.data("ids", [None, length], "int64")
        label = pd.data("label", [None, length], "int64")
        tokens = pd.layer.embedding(ids, [DIGITS, d_model])                # [N, T, D]
        positions = pd.layer.create_parameter([length, d_model], name="position.w_0",
                                              initializer=pd.Normal(0.0, 0.5))
        h = tokens + positions                                             # [T, D] to every row
        for _ in range(layers):
            h = pd.layer.transformer_encoder_layer(h, heads, feedforward, dropout=0.0)
        logits = pd.layer.linear(h, DIGITS)                                # [N, T, 10]
        prob = pd.softmax(logits)
        loss = pd.layer.cross_entropy(logits, pd.layer.reshape(label, [-1, length, 1]))
        pd.optimizer.Adam(learning_rate).minimize(loss)
    test = pd.prune(main.clone(for_test=True), [prob])
    return Reverser(main, startup, test, loss, prob)


def predict(exe, model: Reverser, scope, ids: np.ndarray) -> np.ndarray:
    """The digits the model outputs for ``ids``: int64 [N, LENGTH]."""
    prob, = exe.run(model.test, feed={"ids": ids}, fetch_list=[model.prob], scope=scope)
    return prob.argmax(axis=-1)


def sequence_accuracy(predicted: np.ndarray, ids: np.ndarray) -> float:
    """The fraction of rows whose every digit is the reversed row's."""
    return float((predicted == targets(ids)).all(axis=1).mean())


def train(steps: int = 250, batch_size: int = 64, seed: int = 0, n_test: int = 1000,
          scope=None, **sizes):
    """Train from scratch; returns (held-out sequence accuracy, per-step losses, model,
    scope). ``sizes`` go to :func:`build` (d_model, heads, feedforward, layers,
    learning_rate)."""
    test_ids, batch = held_out_split(seed, n_test)
    model = build(**sizes)
    scope = scope if scope is not None else pd.Scope()
    exe = pd.Executor(pd.CPUPlace())
    exe.run(model.startup, scope=scope)
    losses = []
    for _ in range(steps):
        ids = batch(batch_size)
        loss, = exe.run(model.main, feed={"ids": ids, "label": targets(ids)},
                        fetch_list=[model.loss], scope=scope)
        losses.append(float(loss))
    accuracy = sequence_accuracy(predict(exe, model, scope, test_ids), test_ids)
    return accuracy, losses, model, scope
