"""``--doc FILE``: put a run's table, and a summary of the targets, into a Markdown file
between two marker lines, so docs/performance.md is refreshed by running the benchmarks
(the prose around the markers, on where the time goes, is the part to reread)."""
from __future__ import annotations

from pathlib import Path

from .timing import fmt

BEGIN = "<!-- benchmarks:begin (python -m benchmarks --doc writes from here) -->"
END = "<!-- benchmarks:end -->"


def targets_table(rows: list[dict]) -> list[str]:
    """Markdown: each row that has a target, its result and whether it is met."""
    out = ["| case | result | target | met |", "|---|---|---|---|"]
    for r in rows:
        if not r.get("target"):
            continue
        parts = [f"{r[k]:.2f}x {name}" for k, name in (("vs_numpy", "numpy"),
                                                        ("vs_torch", "torch"))
                 if r.get(k) is not None and r.get(f"target_{k}") is not None]
        if r.get("target_s") is not None and r.get("paddle_nb_s") is not None:
            parts.append(fmt(r["paddle_nb_s"]).strip())
        met = {True: "yes", False: "**no**", None: "-"}[r.get("target_met")]
        out.append(f"| {r['case']} | {', '.join(parts) or '-'} | {r['target']} | {met} |")
    return out


def update(path: str, lines: list[str], rows: list[dict]) -> None:
    """Replace what is between BEGIN and END in ``path`` (both must be there)."""
    text = Path(path).read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path}: put the lines\n{BEGIN}\n{END}\nwhere the table goes")
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    block = ["", "```text", *lines, "```", "", "Targets:", "", *targets_table(rows), ""]
    Path(path).write_text(head + BEGIN + "\n".join(block) + "\n" + END + tail)
