"""One SGD training step through a row-wise IfElse (the Block and Scope design's): each
row of a batch of 64 goes through one of two fc layers (64 -> 10), chosen by the sign of
the row's sum; the merged logits feed softmax_with_cross_entropy -> mean.

paddle_nb splits the batch by the mask (``split_lod_tensor``), runs each branch as a
``conditional_block`` in a kid scope, merges the rows back (``merge_lod_tensor``), and the
gradient runs the branches' gradient blocks. numpy does the same with boolean indexing."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd

from .common import rng, row, torch_sgd, training_step_times

BATCH, IN, CLASSES = 64, 64, 10
LR = 0.1
PARAMS = ("wt", "bt", "wf", "bf")
TARGET = 2.0      # compiled: paddle_nb / numpy


def build(in_dim=IN, classes=CLASSES, lr=LR, seed=1):
    """(main, startup, loss), the true branch's fc named wt/bt, the false one's wf/bf."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = seed
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, in_dim])
        label = pd.data("label", [None, 1], "int64")
        cond = pd.layers.reduce_sum(x, dim=1, keep_dim=True) > 0.0
        ie = pd.ifelse()
        with ie.true_block():
            ie.output(pd.layer.fc(x, classes, param_attr="wt", bias_attr="bt"))
        with ie.false_block():
            ie.output(pd.layer.fc(x, classes, param_attr="wf", bias_attr="bf"))
        logits, = ie(cond)
        loss = pd.mean(pd.layers.softmax_with_cross_entropy(logits, label))
        pd.optimizer.SGD(lr).minimize(loss)
    return main, startup, loss


def batch(batch=BATCH, in_dim=IN, classes=CLASSES):
    r = rng()
    return {"x": r.standard_normal((batch, in_dim), np.float32),
            "label": r.integers(0, classes, (batch, 1), dtype=np.int64)}


def numpy_step(p: dict, x, label, lr=LR):
    """Route rows, softmax cross-entropy, gradients per branch, SGD; updates ``p`` in
    place, returns the loss."""
    n, rows, lab = len(x), np.arange(len(x)), label.ravel()
    mask = x.sum(axis=1) > 0
    branches = ((mask, p["wt"], p["bt"]), (~mask, p["wf"], p["bf"]))
    logits = np.empty((n, p["wt"].shape[1]), x.dtype)
    for m, w, b in branches:
        logits[m] = x[m] @ w + b
    e = np.exp(logits - logits.max(axis=1, keepdims=True))
    prob = e / e.sum(axis=1, keepdims=True)
    loss = -np.log(prob[rows, lab]).mean()
    d = prob
    d[rows, lab] -= 1
    d *= np.float32(1 / n)
    lr = np.float32(lr)
    for m, w, b in branches:                 # each branch's weights see only its rows
        dm = d[m]
        gw, gb = x[m].T @ dm, dm.sum(axis=0)
        w -= lr * gw
        b -= lr * gb
    return loss


def torch_step(t, p: dict, x, label, lr=LR):
    mask = x.sum(dim=1) > 0
    logits = t.where(mask[:, None], x @ p["wt"] + p["bt"], x @ p["wf"] + p["bf"])
    loss = t.nn.functional.cross_entropy(logits, label)
    return torch_sgd(t, p, loss, lr)


def run(quick: bool = False) -> list[dict]:
    main, startup, loss = build()
    feed = batch()
    times = training_step_times(
        main, startup, loss, feed, PARAMS, lambda p: numpy_step(p, feed["x"], feed["label"]),
        torch_step, lambda t: (t.from_numpy(feed["x"]), t.from_numpy(feed["label"].ravel())),
        quick)
    case = f"IfElse rows b{BATCH} {IN}->{CLASSES} x2 branches: SGD training step"
    note = "torch runs both branches on all rows + where"
    return [row(case, times.interpreted, times.numpy, times.torch, note=note),
            row(f"{case}, compiled", times.compiled, times.numpy, times.torch,
                vs_numpy=TARGET, note=f"pd.CompiledProgram; {note}")]
