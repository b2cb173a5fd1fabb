"""Command line: ``python -m paddle_nb tour`` (the main job) and ``python -m paddle_nb ops``."""
from __future__ import annotations

import argparse
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paddle_nb",
                                     description="PaddlePaddle's Block and Scope design in "
                                                 "Python.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("tour", help="build and run the seed design docs' examples")
    ops = sub.add_parser("ops", help="list the registered ops, or document one")
    ops.add_argument("op_type", nargs="?")
    args = parser.parse_args(argv)
    if args.command == "tour":
        from .tour import main as tour   # noqa: PLC0415
        tour()
    elif args.command == "ops":
        import paddle_nb as pd            # noqa: PLC0415
        if args.op_type:
            print(pd.op.__getattr__(args.op_type).__doc__)
        else:
            print("\n".join(pd.registered_ops()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
