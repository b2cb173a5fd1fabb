"""Square float32 matmul (256, 512, 1024): a one-op ``matmul_v2`` program through
``Executor.run``, and the kernel alone (``np.dot`` inside njit: numba calls BLAS)."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd
from paddle_nb.kernels.cpu import matmul as K

from .common import rng, row, runner, torch
from .timing import compare

SIZES = (256, 512, 1024)
TARGET = 1.05     # paddle_nb / numpy: both end in a BLAS sgemm, so only overhead differs


def build(n: int):
    """(main, feed, out): a @ b for fed [n, n] float32 matrices."""
    r = rng()
    feed = {"a": r.standard_normal((n, n), np.float32), "b": r.standard_normal((n, n), np.float32)}
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        out = pd.matmul(pd.data("a", [n, n]), pd.data("b", [n, n]))
    return main, feed, out


def run(quick: bool = False) -> list[dict]:
    t = torch()
    rows = []
    for n in SIZES:
        main, feed, out = build(n)
        a, b = feed["a"], feed["b"]
        ta, tb = (t.from_numpy(a), t.from_numpy(b)) if t else (None, None)
        s = compare({"run": runner(main, None, feed, [out]),
                     "kernel": lambda: K.matmul2d(a, b), "numpy": lambda: a @ b,
                     "torch": (lambda: ta @ tb) if t else None}, quick)
        rows.append(row(f"matmul {n}: Executor.run (feed+fetch)", s["run"], s["numpy"],
                        s["torch"], vs_numpy=TARGET))
        rows.append(row(f"matmul {n}: kernel alone", s["kernel"], s["numpy"], s["torch"],
                        vs_numpy=TARGET, note="kernels.cpu.matmul.matmul2d"))
    return rows
