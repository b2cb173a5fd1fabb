"""Where a case's paddle_nb time goes, op type by op type:
``python -m benchmarks.op_profile [mlp|rnn|ifelse|softmax ...]``.

Runs the case's program with ``Executor.steps`` (one Step after each op, sub-block ops
included) and charges the time between two Steps to the op of the second, so an op that
owns a block (recurrent, conditional_block) is charged only its own work around the
block. What no op is charged (scope set-up, the feed check, the fetch copy, deleting the
run scope) is the row "(run set-up and teardown)"."""
from __future__ import annotations

import argparse
import time
from collections import defaultdict

from . import timing  # noqa: F401  (threads fixed first)
from . import ifelse, matmul, mlp, rnn, softmax
from .common import runner


def _programs():
    def training(module, make_feed):
        main, startup, loss = module.build()
        return main, startup, make_feed(), [loss]

    def one_op(module, *args):
        main, feed, out = module.build(*args)
        return main, None, feed, [out]
    return {"mlp": lambda: training(mlp, mlp.batch),
            "rnn": lambda: training(rnn, rnn.sequence),
            "ifelse": lambda: training(ifelse, ifelse.batch),
            "softmax": lambda: one_op(softmax),
            "matmul": lambda: one_op(matmul, 256)}


def op_times(main, startup, feed, fetch_list, runs: int = 20):
    """({op type: (calls per run, seconds per run)}, seconds per whole run)."""
    go = runner(main, startup, feed, fetch_list)
    exe, scope = go.exe, go.scope
    time.sleep(timing.SETTLE_S)       # other cases' thread pools idle first (timing.py)
    for _ in range(3):
        go()
    spent, calls = defaultdict(float), defaultdict(int)
    t_start = time.perf_counter()
    for _ in range(runs):
        gen = exe.steps(main, feed=feed, fetch_list=fetch_list, scope=scope)
        t0 = time.perf_counter()
        while True:
            try:
                step = next(gen)
            except StopIteration:
                break
            t1 = time.perf_counter()
            spent[step.op.type] += t1 - t0
            calls[step.op.type] += 1
            t0 = t1
    total = (time.perf_counter() - t_start) / runs
    table = {k: (calls[k] / runs, v / runs) for k, v in spent.items()}
    table["(run set-up and teardown)"] = (1, total - sum(v for _, v in table.values()))
    return table, total


def report(name: str, runs: int = 20) -> str:
    table, total = op_times(*_programs()[name](), runs=runs)
    lines = [f"{name}: {total * 1e3:.3f} ms per run through Executor.steps",
             f"  {'op type':32s} {'calls':>6s} {'ms/run':>8s} {'share':>6s} {'us/call':>8s}"]
    for op, (n, s) in sorted(table.items(), key=lambda kv: -kv[1][1]):
        lines.append(f"  {op:32s} {n:6.0f} {s * 1e3:8.3f} {s / total:6.1%} {s / n * 1e6:8.1f}")
    return "\n".join(lines)


def main(argv=None) -> int:
    names = list(_programs())
    parser = argparse.ArgumentParser(prog="python -m benchmarks.op_profile")
    parser.add_argument("cases", nargs="*", metavar="CASE",
                        help=f"one or more of {', '.join(names)} (default: all)")
    parser.add_argument("--runs", type=int, default=20)
    args = parser.parse_args(argv)
    timing.steady_allocator()
    unknown = set(args.cases) - set(names)
    if unknown:
        parser.error(f"unknown case(s) {', '.join(sorted(unknown))}; choose from {names}")
    for name in args.cases or names:
        print(report(name, args.runs))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
