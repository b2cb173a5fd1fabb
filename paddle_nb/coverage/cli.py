"""``python -m paddle_nb coverage [--module M] [--api NAME] [--json]``: the whole report,
one module's, or one API run with its whole error shown."""
from __future__ import annotations

import json
import sys

from .report import format_report, summarize
from .run import run_all, run_api
from .table import load_table


def main(module: str | None = None, api: str | None = None, as_json: bool = False) -> int:
    table = load_table()
    if api is not None:
        return _one(table, api, as_json)
    keys = table.keys(module)
    if not keys:
        modules = sorted({row["module"] for row in table.rows.values()})
        print(f"python -m paddle_nb coverage: no module {module!r}; the modules: "
              f"{', '.join(modules)}", file=sys.stderr)
        return 2
    summary = summarize(run_all(keys, table), table.paddle_version)
    print(json.dumps(summary, indent=1) if as_json else format_report(summary))
    return 0


def _one(table, name: str, as_json: bool) -> int:
    keys = table.find(name)
    if not keys:
        print(f"python -m paddle_nb coverage: no API {name!r} in Paddle "
              f"{table.paddle_version}'s list", file=sys.stderr)
        return 2
    for key in keys:
        outcome = run_api(key, table)
        row = table.rows[key]
        if as_json:
            print(json.dumps({**outcome.as_dict(), "forward_ops": row.get("forward_ops", []),
                              "backward_ops": row.get("backward_ops", [])}, indent=1))
            continue
        print(f"{key} ({row['module']}.{row['name']}): {outcome.status}"
              + (f": {outcome.detail}" if outcome.detail else ""))
        if row.get("forward_ops"):
            print(f"  forward ops:  {', '.join(row['forward_ops'])}")
            print(f"  backward ops: {', '.join(row['backward_ops']) or '(none)'}")
        if outcome.full:
            print(outcome.full.rstrip())
    return 0
