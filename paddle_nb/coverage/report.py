"""The coverage report: outcomes summed up per module, the skips with their reasons, one
line per failing API, and the missing op types ranked by how many APIs need them (the
order in which adding ops raises coverage most)."""
from __future__ import annotations

from collections import Counter

from .run import FAILURES, Outcome

OUT_OF_SCOPE = ("skipped", "host")


def summarize(outcomes: list[Outcome], paddle_version: str = "2.6.2") -> dict:
    """Plain data (what ``--json`` prints): counts, shares, per-module, failures, ranking."""
    in_scope = [o for o in outcomes if o.status not in OUT_OF_SCOPE]
    covered = [o for o in in_scope if o.status == "covered"]
    skipped = [o for o in outcomes if o.status == "skipped"]
    modules = {}
    for o in outcomes:
        m = modules.setdefault(o.module, {"apis": 0, "in_scope": 0, "covered": 0})
        m["apis"] += 1
        m["in_scope"] += o.status not in OUT_OF_SCOPE
        m["covered"] += o.status == "covered"
    for m in modules.values():
        m["share"] = m["covered"] / m["in_scope"] if m["in_scope"] else 0.0
    ranking = Counter(t for o in outcomes for t in o.missing)
    return {
        "paddle": paddle_version,
        "apis": len(outcomes),
        "in_scope": len(in_scope),
        "covered": len(covered),
        "share": len(covered) / len(in_scope) if in_scope else 0.0,
        "skipped": len(skipped),
        "skip_share": len(skipped) / len(outcomes) if outcomes else 0.0,
        "skips": [o.as_dict() for o in skipped],
        "host": [o.as_dict() for o in outcomes if o.status == "host"],
        "by_status": dict(Counter(o.status for o in outcomes)),
        "modules": modules,
        "failures": [o.as_dict() for o in outcomes if o.status in FAILURES],
        "missing_op_types": [{"op_type": t, "apis": n} for t, n in
                             sorted(ranking.items(), key=lambda kv: (-kv[1], kv[0]))],
    }


def format_report(summary: dict, top: int = 30) -> str:
    s = summary
    lines = [f"Coverage of PaddlePaddle {s['paddle']}'s public API: {s['covered']} of "
             f"{s['in_scope']} in-scope APIs run here and match Paddle "
             f"({100 * s['share']:.1f}%)",
             f"  {s['apis']} APIs listed; {s['skipped']} skipped as out of scope "
             f"({100 * s['skip_share']:.1f}%); {len(s['host'])} build no program",
             "  by outcome: " + ", ".join(f"{k} {v}" for k, v in
                                           sorted(s["by_status"].items())),
             "", "Per module (covered / in scope):"]
    for module, m in s["modules"].items():
        lines.append(f"  {module:28} {m['covered']:4} / {m['in_scope']:<4} "
                     f"{100 * m['share']:5.1f}%")
    if s["missing_op_types"]:
        lines += ["", f"Missing op types, by how many APIs need them (top {top}):"]
        lines += [f"  {row['apis']:4}  {row['op_type']}"
                  for row in s["missing_op_types"][:top]]
        if len(s["missing_op_types"]) > top:
            lines.append(f"  ... and {len(s['missing_op_types']) - top} more")
    if s["skips"]:
        lines += ["", f"Skipped ({s['skipped']}):"]
        lines += [f"  {o['api']:36} {o['detail']}" for o in s["skips"]]
    if s["host"]:
        lines += ["", f"Build no program ({len(s['host'])}):"]
        lines += [f"  {o['api']:36} {o['detail']}" for o in s["host"]]
    if s["failures"]:
        lines += ["", f"Not covered ({len(s['failures'])}):"]
        lines += [f"  {o['api']:36} {o['status']:11} {o['detail']}" for o in s["failures"]]
    return "\n".join(lines)
