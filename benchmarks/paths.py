"""The fast path against a stepped run, in one process:
``python -m benchmarks.paths [--quick]``.

``Executor.run`` takes the fast path (the block loop with no hooks: reused output buffers,
the fast path's passes); ``Executor.steps``, drained, is the same loop yielding a Step per
op, as the debugger steps through it. Both run the same program in the same scope,
timed in turns with the main table's harness, so the ratio says what the fast path
gains whatever the machine's speed at the moment."""
from __future__ import annotations

import argparse

from . import timing  # noqa: F401  (threads fixed first)
from . import executor_overhead, ifelse, mlp, rnn
from .common import runner


def drained(exe, program, **kwargs):
    """What ``exe.run`` returns, computed by ``exe.steps`` one op at a time."""
    gen = exe.steps(program, **kwargs)
    while True:
        try:
            next(gen)
        except StopIteration as done:
            return done.value


def _cases():
    def training(module, make_feed):
        main, startup, loss = module.build()
        return main, startup, make_feed(), loss, 1

    def chain():
        main, feed, out = executor_overhead.build()
        return main, None, feed, out, executor_overhead.N_OPS
    return {"scale chain (per op)": chain,
            "MLP step": lambda: training(mlp, mlp.batch),
            "tanh RNN step": lambda: training(rnn, rnn.sequence),
            "IfElse step": lambda: training(ifelse, ifelse.batch)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.paths")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(argv)
    print(f"{'case':24s} {'Executor.run':>14s} {'Executor.steps':>15s}  run/steps (range)")
    for name, build in _cases().items():
        main_program, startup, feed, fetch, per = build()
        go = runner(main_program, startup, feed, [fetch])
        times = timing.compare(
            {"run": go,
             "steps": lambda: drained(go.exe, main_program, feed=feed, fetch_list=[fetch],
                                       scope=go.scope)}, args.quick)
        ratio = timing.ratios(times["run"], times["steps"])
        print(f"{name:24s} {_us(times['run'] / per):>14s} {_us(times['steps'] / per):>15s}"
              f"  {ratio[0]:.2f} ({ratio[1]:.2f}-{ratio[2]:.2f})")
    return 0


def _us(seconds: float) -> str:
    return f"{seconds * 1e6:.1f} us"


if __name__ == "__main__":
    raise SystemExit(main())
