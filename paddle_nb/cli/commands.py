"""Run the command ``python -m paddle_nb`` parsed (``paddle_nb/__main__.py``)."""
from __future__ import annotations

import argparse

from .. import tour
from ..coverage import cli as coverage
from . import distributed, ops, upgrade


def run(args: argparse.Namespace) -> int:
    """The command's exit code."""
    if args.command == "tour":
        tour.main()
        return 0
    if args.command == "ops":
        return ops.main(args.op_type)
    if args.command == "distributed":
        return distributed.main(args.steps, args.trainers, args.pservers)
    if args.command == "coverage":
        return coverage.main(args.module, args.api, args.json)
    if args.command == "upgrade":
        return upgrade.main(args.model, args.params, args.out)
    raise ValueError(f"python -m paddle_nb: no command {args.command!r} (the parser's "
                     f"commands are tour, ops, distributed, coverage and upgrade)")
