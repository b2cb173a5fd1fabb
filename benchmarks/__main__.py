"""``python -m benchmarks [--quick] [--json FILE]``: run every case, print a table."""
from __future__ import annotations

import argparse
import json
import platform

from . import timing  # noqa: F401  (fixes thread counts first)
from . import debugger_step

CASES = [debugger_step]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks")
    parser.add_argument("--quick", action="store_true", help="fewer, smaller runs")
    parser.add_argument("--json", metavar="FILE", help="also write the rows as JSON")
    args = parser.parse_args(argv)
    rows = []
    for case in CASES:
        rows.extend(case.run(quick=args.quick))
    print(f"{'case':62s} {'paddle_nb':>11s} {'reference':>11s} {'ratio':>7s}  reference is")
    for r in rows:
        ref = timing.fmt(r["reference_s"]) if r.get("reference_s") else " " * 11
        ratio = f"{r['paddle_nb_s'] / r['reference_s']:7.2f}" if r.get("reference_s") else ""
        print(f"{r['case']:62s} {timing.fmt(r['paddle_nb_s'])} {ref} {ratio:>7s}  "
              f"{r.get('reference', '')}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": platform.platform(), "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
