"""Command line: ``python -m paddle_nb tour`` (the main job), ``python -m paddle_nb ops`` and
``python -m paddle_nb distributed``."""
from __future__ import annotations

import argparse
import difflib
import sys


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m paddle_nb",
                                     description="PaddlePaddle's Block and Scope design in "
                                                 "Python.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("tour", help="build and run the seed design docs' examples")
    ops = sub.add_parser("ops", help="list the registered ops, or document one")
    ops.add_argument("op_type", nargs="?")
    dist = sub.add_parser("distributed", help="train the digits MLP in one process and on a "
                                              "local Ray cluster (trainers and pservers), "
                                              "and compare (needs the [distributed] extra)")
    dist.add_argument("--steps", type=_positive, default=40)
    dist.add_argument("--trainers", type=_positive, default=2)
    dist.add_argument("--pservers", type=_positive, default=2)
    args = parser.parse_args(argv)
    if args.command == "tour":
        from .tour import main as tour   # noqa: PLC0415
        tour()
    elif args.command == "ops":
        return _ops(args.op_type)
    elif args.command == "distributed":
        return _distributed(args.steps, args.trainers, args.pservers)
    return 0


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, got {value}")
    return value


def _distributed(steps: int, trainers: int, pservers: int) -> int:
    """paddle_nb.examples.distributed_digits: its report, or (no ray, an actor that died)
    one line saying why, and exit code 2."""
    try:
        import ray  # noqa: F401, PLC0415 (the [distributed] extra)
    except ImportError:
        print("python -m paddle_nb distributed: the Ray runtime needs ray, which is not "
              "installed: pip install 'paddle_nb[distributed]'", file=sys.stderr)
        return 2
    from .distributed import DistributedError           # noqa: PLC0415
    from .examples.distributed_digits import main as run   # noqa: PLC0415
    try:
        run(steps=steps, trainers=trainers, pservers=pservers)
    except DistributedError as e:
        print(f"python -m paddle_nb distributed: {e}", file=sys.stderr)
        return 2
    return 0


def _ops(name: str | None) -> int:
    """Every op with its one-line doc, or one op's whole doc. A layer's name (``fc``)
    points to the layer; an unknown name is a message and exit code 2, not a traceback."""
    import paddle_nb as pd                              # noqa: PLC0415
    from paddle_nb.core import registry                 # noqa: PLC0415
    if name is None:
        types = pd.registered_ops()
        width = max(map(len, types))
        for t in types:
            print(f"{t:<{width}}  {registry.lookup(t).comment.splitlines()[0]}")
        return 0
    layer = getattr(pd.layers, name, None)
    if registry.is_registered(name):
        print(getattr(pd.op, name).__doc__)
        if callable(layer) and getattr(layer, "__doc__", None):   # fc: an op and a layer
            print(f"\n{name} is also a layer: pd.layer.{name} builds other ops (what a "
                  f"program contains as built); the {name} op is what a pass makes of them "
                  f"(pd.passes.apply).\n\npd.layer.{name}: {layer.__doc__.strip()}")
        return 0
    if callable(layer) and getattr(layer, "__doc__", None):
        print(f"{name} is a layer, not an op: pd.layer.{name} builds ops.\n")
        print(f"pd.layer.{name}: {layer.__doc__.strip()}")
        return 0
    try:
        registry.lookup(name)
    except pd.UnknownOpError as e:
        layers = [n for n in difflib.get_close_matches(name, dir(pd.layers), n=3)
                  if callable(getattr(pd.layers, n)) and not n.startswith("_")]
        hint = f" (layers: {', '.join(f'pd.layer.{n}' for n in layers)})" if layers else ""
        print(f"python -m paddle_nb ops: {e}{hint}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:          # `python -m paddle_nb ops | head`: the reader left
        sys.stderr.close()
        sys.exit(0)
