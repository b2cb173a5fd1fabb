"""Softmax over the rows of a 1000 x 1000 float32 matrix: a one-op program through
``Executor.run``, and the row kernel alone (the op moves the axis last and calls it)."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd
from paddle_nb.kernels.cpu import reduce as K

from .common import rng, row, runner, torch
from .timing import measure

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
    numpy_s = measure(lambda: numpy_softmax(x), quick)
    torch_s = None
    if t:
        tx = t.from_numpy(x)
        torch_s = measure(lambda: t.softmax(tx, dim=1), quick)
    return [row("softmax 1000x1000: Executor.run (feed+fetch)", measure(runner(main, None, feed,
                [out]), quick), numpy_s, torch_s, vs_numpy=TARGET),
            row("softmax 1000x1000: kernel alone", measure(lambda: K.row_softmax(x), quick),
                numpy_s, torch_s, vs_numpy=TARGET, note="kernels.cpu.reduce.row_softmax")]
