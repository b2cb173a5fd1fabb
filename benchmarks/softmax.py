"""Softmax over the rows of a 1000 x 1000 float32 matrix: a one-op program through
``Executor.run``, and the row kernel alone (the op moves the axis last and calls it)."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd
from paddle_nb.kernels.cpu import reduce as K

from .common import rng, row, runner, torch
from .timing import compare

TARGET = 0.5      # paddle_nb / numpy


def numpy_softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def build(rows: int = 1000, cols: int = 1000):
    """(main, feed, out): softmax along the last axis of a fed [rows, cols] matrix."""
    feed = {"x": rng().standard_normal((rows, cols), np.float32)}
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        out = pd.softmax(pd.data("x", [rows, cols]))
    return main, feed, out


def run(quick: bool = False) -> list[dict]:
    main, feed, out = build()
    x = feed["x"]
    t = torch()
    tx = t.from_numpy(x) if t else None
    s = compare({"run": runner(main, None, feed, [out]), "kernel": lambda: K.row_softmax(x),
                 "numpy": lambda: numpy_softmax(x),
                 "torch": (lambda: t.softmax(tx, dim=1)) if t else None}, quick)
    return [row("softmax 1000x1000: Executor.run (feed+fetch)", s["run"], s["numpy"],
                s["torch"], vs_numpy=TARGET),
            row("softmax 1000x1000: kernel alone", s["kernel"], s["numpy"], s["torch"],
                vs_numpy=TARGET, note="kernels.cpu.reduce.row_softmax")]
