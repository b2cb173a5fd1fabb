"""``python -m benchmarks [--quick] [--json FILE] [--doc FILE] [--only CASE ...]``: run the
cases in one process, print a table of medians, ratios and targets."""
from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
import traceback

try:      # PyTorch first, as its users have it: its own default threads, nothing of ours loaded
    import torch  # noqa: F401
except ImportError:
    pass

from . import timing  # noqa: E402  (fixes thread counts before numpy and numba load)
from . import (batch_norm, cold_start, conv, cuda, debugger_step, distributed,  # noqa: E402
               doc, elementwise, executor_overhead, ifelse, lenet, lstm, matmul, mlp, rnn,
               softmax, transformer, vs_paddle)
from .common import row  # noqa: E402

CASES = {"elementwise": elementwise, "softmax": softmax, "matmul": matmul, "mlp": mlp,
         "rnn": rnn, "conv": conv, "batch_norm": batch_norm, "lenet": lenet,
         "lstm": lstm, "transformer": transformer, "ifelse": ifelse,
         "overhead": executor_overhead, "cold_start": cold_start, "debugger": debugger_step,
         "distributed": distributed, "cuda": cuda, "vs_paddle": vs_paddle}

BUSY = 0.2     # cores other processes used during a case above which its rows are flagged

HEADER = (f"{'case':58s} {'paddle_nb':>11s} {'numpy':>11s} {'torch':>11s} "
          f"{'pnb/np':>7s} {'(range)':>11s} {'pnb/torch':>9s} {'(range)':>11s}  "
          f"{'target':22s} {'met':3s}  note")


def _ratio(value, width):
    return f"{value:{width}.2f}" if value is not None else " " * width


def _range(r: dict, key: str) -> str:
    """``0.61-0.70``: the lowest and highest ratio of one round (contenders in turns)."""
    low, high = r.get(f"{key}_low"), r.get(f"{key}_high")
    return f"{low:5.2f}-{high:<5.2f}" if low is not None else " " * 11


def format_row(r: dict) -> str:
    met = {True: "yes", False: "NO", None: ""}[r["target_met"]]
    return (f"{r['case']:58s} {timing.fmt(r['paddle_nb_s'])} {timing.fmt(r['numpy_s'])} "
            f"{timing.fmt(r['torch_s'])} {_ratio(r['vs_numpy'], 7)} {_range(r, 'vs_numpy')} "
            f"{_ratio(r['vs_torch'], 9)} {_range(r, 'vs_torch')}"
            f"  {r['target']:22s} {met:3s}  {r['note']}").rstrip()


def environment(steady_allocator: bool) -> dict:
    import numba   # noqa: PLC0415
    import numpy   # noqa: PLC0415
    from .common import torch   # noqa: PLC0415
    t = torch()
    return {"date": datetime.date.today().isoformat(), "machine": platform.platform(),
            "processor": platform.processor() or platform.machine(),
            "cpus": os.cpu_count(),
            "threads": {v: os.environ.get(v) for v in timing.THREAD_VARS},
            "steady_allocator": steady_allocator,
            "python": platform.python_version(), "numpy": numpy.__version__,
            "numba": numba.__version__, "torch": t.__version__ if t else None}


def _cores(n):
    return "?" if n is None else f"{n:.2f} cores"


def run_case(name: str, quick: bool) -> list[dict]:
    """The case's rows; a case that fails (the code it measures is changing under it) is
    one row saying why, and the other cases still run."""
    try:
        return CASES[name].run(quick=quick)
    except Exception as e:   # noqa: BLE001
        traceback.print_exc()
        return [row(f"{name}: case failed", None, note=f"{type(e).__name__}: {e}"[:160])]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--quick", action="store_true",
                        help="7 samples of about 2 ms each, the CUDA matmul at 512")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    parser.add_argument("--only", nargs="+", choices=list(CASES), metavar="CASE",
                        help=f"run only these cases ({', '.join(CASES)})")
    parser.add_argument("--wait-quiet", metavar="S", type=float, default=0.0,
                        help="before each case, wait up to S seconds for other processes "
                             "to leave the CPU (a shared machine)")
    parser.add_argument("--doc", metavar="FILE", help="also put the table into FILE "
                        f"between the lines {doc.BEGIN!r} and {doc.END!r}")
    args = parser.parse_args(argv)
    lines = []

    def say(line: str) -> None:
        print(line, flush=True)                # row by row: a long run shows progress
        lines.append(line)

    env = environment(timing.steady_allocator())
    threads = " ".join(f"{k}={v}" for k, v in env["threads"].items())
    say(f"paddle_nb benchmarks {env['date']}{' --quick' if args.quick else ''}: "
        f"{env['machine']}, {env['cpus']} CPUs; {threads}")
    say(f"python {env['python']}, numpy {env['numpy']}, numba {env['numba']}, "
        f"torch {env['torch'] or 'not installed'}; glibc heap for arrays <= 32 MB: "
        f"{'yes' if env['steady_allocator'] else 'no (not glibc)'}")
    say(HEADER)
    busy_before = timing.busy_cores()
    rows, t0 = [], time.perf_counter()
    for name in args.only or CASES:
        if args.wait_quiet:
            timing.wait_quiet(args.wait_quiet)
        watch = timing.OthersWatch()
        case_rows = run_case(name, args.quick)
        others = watch.cores()
        for r in case_rows:
            r["group"], r["others_busy_cores"] = name, others
            if others is not None and others > BUSY:
                r["note"] = f"[others used {others:.1f} cores] {r['note']}".rstrip()
            rows.append(r)
            say(format_row(r))
    busy_after = timing.busy_cores()
    env["busy_cores"] = {"before": busy_before, "after": busy_after}
    say(f"({time.perf_counter() - t0:.0f} s; contenders timed in turns, medians over rounds, "
        f"(range) the lowest and highest ratio of one round; pnb/np and pnb/torch are "
        f"paddle_nb's "
        f"time over the reference's, lower is better; other processes kept "
        f"{_cores(busy_before)} busy before the run, {_cores(busy_after)} after)")
    if any((r["others_busy_cores"] or 0) > BUSY for r in rows):
        say("WARNING: other processes used the CPU during the rows marked [others used ...]: "
            "those numbers are not reliable; run again on a quiet machine (--wait-quiet 120)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"environment": env, "quick": args.quick, "rows": rows}, f, indent=1)
    if args.doc:
        doc.update(args.doc, lines, rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
