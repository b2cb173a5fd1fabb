"""Command line: ``python -m paddle_nb tour`` (the main job), ``python -m paddle_nb ops``,
``python -m paddle_nb distributed``, ``python -m paddle_nb coverage`` and ``python -m
paddle_nb upgrade`` (a Paddle 2 model file rewritten as Paddle 3's PIR).

This module only parses the arguments; ``paddle_nb/cli/`` runs the commands."""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paddle_nb",
                                     description="PaddlePaddle's Block and Scope design in "
                                                 "Python.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("tour", help="build and run PaddlePaddle's design docs' examples")
    ops = sub.add_parser("ops", help="list the registered ops, or document one")
    ops.add_argument("op_type", nargs="?")
    dist = sub.add_parser("distributed", help="train the digits MLP in one process and on a "
                                              "local Ray cluster (trainers and pservers), "
                                              "and compare (needs the [distributed] extra)")
    dist.add_argument("--steps", type=_positive, default=40)
    dist.add_argument("--trainers", type=_positive, default=2)
    dist.add_argument("--pservers", type=_positive, default=2)
    cov = sub.add_parser("coverage", help="run PaddlePaddle 2.6.2's public APIs (programs "
                                          "saved by Paddle) here and compare")
    cov.add_argument("--module", help="one module: paddle.nn, paddle.nn.functional, "
                                      "paddle.tensor.math, ... (or nn, F, tensor.math)")
    cov.add_argument("--api", help="run one API (F.relu, or a bare name) and show the "
                                   "whole error")
    cov.add_argument("--json", action="store_true", help="print the summary as JSON")
    up = sub.add_parser("upgrade", help="rewrite a Paddle 2 inference model (.pdmodel) as "
                                        "Paddle 3's PIR: model.json + model.pdiparams")
    up.add_argument("model", help="the program file: X.pdmodel (or a __model__)")
    up.add_argument("--params", help="its parameters (default: X.pdiparams beside it)")
    up.add_argument("--out", help="the folder to write into (default: X_pir beside it)")
    args = parser.parse_args(argv)
    # The commands load the package (numpy, numba, every op: a second or more), so they
    # are imported only now: --help and a mistyped argument answer without them.
    from .cli.commands import run   # noqa: PLC0415 (a second of imports, after parsing)
    return run(args)


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:          # `python -m paddle_nb ops | head`: the reader left
        sys.stderr.close()
        sys.exit(0)
