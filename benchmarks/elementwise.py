"""Elementwise add, sigmoid and tanh at 1e3, 1e4 and 1e6 float32 elements.

Two paddle_nb rows per size: a one-op program through ``Executor.run`` (feed, run, fetch)
and the op's numba kernel called directly, so the gap between them is the executor's cost
(per-run setup, scope variables, the fetch's copy) and not the kernel's."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd
from paddle_nb.ops import activation as KA
from paddle_nb.ops import elementwise as KE

from .common import rng, row, runner, torch
from .timing import compare

SIZES = (1_000, 10_000, 1_000_000)
TARGET_SIZE = 1_000_000        # the targets are for large tensors


def numpy_sigmoid(x):
    return 1 / (1 + np.exp(-x))        # float32 stays float32 (python scalars do not upcast)


# name, paddle_nb builder, the op's kernel as the op calls it, numpy, torch, ratio target
OPS = {
    "add": (lambda x, y: pd.add(x, y),
            lambda x, y: KE.add.cpu(x, y, out=np.empty_like(x)),
            lambda x, y: x + y, lambda t, x, y: t.add(x, y), 1.0),
    "sigmoid": (lambda x, y: pd.sigmoid(x),
                lambda x, y: KA.sigmoid.cpu(x, out=np.empty_like(x)),
                lambda x, y: numpy_sigmoid(x), lambda t, x, y: t.sigmoid(x), 0.3),
    "tanh": (lambda x, y: pd.tanh(x),
             lambda x, y: KA.tanh.cpu(x, out=np.empty_like(x)),
             lambda x, y: np.tanh(x), lambda t, x, y: t.tanh(x), 0.3),
}


def build(op: str, n: int):
    """(main, feed, out): the one-op program on two float32 inputs of ``n`` elements."""
    r = rng()
    feed = {"x": r.standard_normal(n, np.float32), "y": r.standard_normal(n, np.float32)}
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        x, y = pd.data("x", [n]), pd.data("y", [n])
        out = OPS[op][0](x, y)
    return main, feed, out


def run(quick: bool = False) -> list[dict]:
    t = torch()
    rows = []
    for op, (_, kernel, ref, ref_torch, target) in OPS.items():
        for n in SIZES:
            main, feed, out = build(op, n)
            x, y = feed["x"], feed["y"]
            go = runner(main, None, feed, [out])
            tx, ty = (t.from_numpy(x), t.from_numpy(y)) if t else (None, None)
            s = compare({"run": go, "kernel": lambda: kernel(x, y), "numpy": lambda: ref(x, y),
                         "torch": (lambda: ref_torch(t, tx, ty)) if t else None}, quick)
            goal = target if n == TARGET_SIZE else None
            rows.append(row(f"{op} {size(n)}: Executor.run (feed+fetch)", s["run"],
                            s["numpy"], s["torch"], vs_numpy=goal))
            rows.append(row(f"{op} {size(n)}: kernel alone", s["kernel"], s["numpy"],
                            s["torch"], vs_numpy=goal, note=kernel_name(op)))
    return rows


def size(n: int) -> str:
    return f"1e{len(str(n)) - 1}"


def kernel_name(op: str) -> str:
    return f"ops.{'elementwise' if op == 'add' else 'activation'}.{op}.cpu"
