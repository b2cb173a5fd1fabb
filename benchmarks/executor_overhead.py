"""Executor overhead per op: a program of N chained ``scale`` ops on a 1-element float32
tensor, so the kernels do next to nothing and the time per op is the executor's (looking
up inputs in the scope, building the kernel's context, storing the output, the step
bookkeeping) plus the op's Python wrapper. Minus the kernel alone (the numba ufunc call
with its output allocation, as the wrapper makes it) it is the overhead per op."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd
from paddle_nb.kernels import scale as K

from .common import row, runner
from .timing import compare

N_OPS = 1000
TARGET_S = 3e-6           # the executor's own cost per op (the robustness issue's target)
TARGET_PER_OP_S = 2e-6    # per op in all, kernel included (the fast path's target)
TARGET_COMPILED_S = 0.3e-6   # per op, the program as a pd.CompiledProgram


def build(n_ops: int = N_OPS):
    """(main, feed, out): out = scale(scale(...scale(x)...)), ``n_ops`` ops."""
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        y = pd.data("x", [1])
        for _ in range(n_ops):
            y = pd.layers.scale(y, scale=1.0, bias=0.0)
    return main, {"x": np.ones(1, np.float32)}, y


def kernel_alone(x):
    return K.scale_then_bias.cpu(x, x.dtype.type(1.0), x.dtype.type(0.0),
                                 out=np.empty(x.shape, x.dtype))


def run(quick: bool = False) -> list[dict]:
    main, feed, out = build()
    s = compare({"run": runner(main, None, feed, [out]),
                 "compiled": runner(main, None, feed, [out], compiled=True),
                 "kernel": lambda: kernel_alone(feed["x"])}, quick)
    per_op, kernel = s["run"] / N_OPS, s["kernel"]
    return [row(f"{N_OPS} scale ops on [1]: Executor.run time per op", per_op,
                max_s=TARGET_PER_OP_S),
            row(f"{N_OPS} scale ops on [1], compiled: time per op", s["compiled"] / N_OPS,
                max_s=TARGET_COMPILED_S, note="pd.CompiledProgram: one fused loop"),
            row("scale on [1]: kernel alone", kernel, note="kernels.scale"
                ".scale_then_bias.cpu, with np.empty for out"),
            row("executor overhead per op (per op - kernel)", per_op - kernel,
                max_s=TARGET_S)]
