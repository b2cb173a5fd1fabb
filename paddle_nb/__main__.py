"""Command line: ``python -m paddle_nb tour`` (the main job), ``python -m paddle_nb ops``,
``python -m paddle_nb distributed``, ``python -m paddle_nb coverage`` and ``python -m
paddle_nb upgrade`` (a Paddle 2 model file rewritten as Paddle 3's PIR)."""
from __future__ import annotations

import argparse
import difflib
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
    if args.command == "tour":
        from .tour import main as tour   # noqa: PLC0415
        tour()
    elif args.command == "ops":
        return _ops(args.op_type)
    elif args.command == "distributed":
        return _distributed(args.steps, args.trainers, args.pservers)
    elif args.command == "coverage":
        from .coverage.cli import main as coverage   # noqa: PLC0415
        return coverage(args.module, args.api, args.json)
    elif args.command == "upgrade":
        return _upgrade(args.model, args.params, args.out)
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


def _upgrade(model: str, params: str | None, out: str | None) -> int:
    """Load a Paddle 2 inference model as ``load_inference_model`` does and write it as
    Paddle 3 saves one: ``out/model.json`` (PIR) and ``out/model.pdiparams`` (the persistable
    tensors sorted by name). Any fault is one line and exit code 1; nothing is written (the
    program is translated before the folder is made)."""
    import os                                           # noqa: PLC0415
    import paddle_nb as pd                              # noqa: PLC0415
    from paddle_nb.io.inference_model import (   # noqa: PLC0415
        PARAMS_FILENAME, PIR_MODEL_FILENAME, save_pir_files)
    from paddle_nb.io.pir.format import SUPPORTED_VERSIONS, WRITTEN_VERSION  # noqa: PLC0415
    stem = os.path.splitext(os.path.basename(model))[0]
    folder = os.path.dirname(os.path.abspath(model))
    params = os.path.abspath(params) if params else os.path.join(folder, stem + ".pdiparams")
    out = out or os.path.join(folder, stem + "_pir")
    try:
        if not os.path.isfile(model):
            raise FileNotFoundError(f"there is no model file {model}")
        scope = pd.Scope()
        program, _, _ = pd.io.load_inference_model(folder, pd.Executor(),
                                                   os.path.basename(model), params, scope)
        model_path = os.path.join(out, PIR_MODEL_FILENAME)
        params_path = os.path.join(out, PARAMS_FILENAME)
        names = save_pir_files(program, model_path, params_path, scope)
    except (pd.PaddleNBError, OSError) as e:
        message = " ".join(str(e).split())
        print(f"python -m paddle_nb upgrade: {message}", file=sys.stderr)
        return 1
    ops = sum(len(b.ops) for b in program.blocks)
    print(f"wrote {model_path} (PIR version {WRITTEN_VERSION}, which "
          f"{SUPPORTED_VERSIONS[WRITTEN_VERSION]} loads; from the {ops} ops of {model})")
    if names:
        print(f"wrote {params_path} ({len(names)} tensors sorted by name, "
              f"{os.path.getsize(params_path):,} bytes)")
    else:
        print("the program has no parameters: no .pdiparams file (as Paddle 3 saves it)")
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
            print(f"\n{name} is also a layer: {_layer_and_op(name)}\n\n"
                  f"pd.layer.{name}: {layer.__doc__.strip()}")
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


# How to call each layer that has an op's name, on small inputs: ``_layer_and_op`` builds
# it into a scratch program to say which ops it makes (tests/test_first_hour.py checks
# that every such layer has a row here).
def _images(pd):
    return pd.data("image", [-1, 3, 8, 8])


def _rows(pd, name="x"):
    return pd.data(name, [-1, 4])


def _labels(pd):
    return pd.data("label", [-1, 1], "int64")


LAYER_CALLS = {
    "assign": lambda pd: pd.layer.assign(_rows(pd)),
    "batch_norm": lambda pd: pd.layer.batch_norm(_images(pd)),
    "conv2d": lambda pd: pd.layer.conv2d(_images(pd), 2, 3),
    "cross_entropy": lambda pd: pd.layer.cross_entropy(_rows(pd), _labels(pd)),
    "dropout": lambda pd: pd.layer.dropout(_rows(pd), 0.5),
    "fc": lambda pd: pd.layer.fc(_rows(pd), 3),
    "layer_norm": lambda pd: pd.layer.layer_norm(_rows(pd)),
    "less_than": lambda pd: pd.layer.less_than(_rows(pd), _rows(pd, "y")),
    "pool2d": lambda pd: pd.layer.pool2d(_images(pd), 2),
    "reduce_mean": lambda pd: pd.layer.reduce_mean(_rows(pd)),
    "reduce_sum": lambda pd: pd.layer.reduce_sum(_rows(pd)),
    "softmax_with_cross_entropy":
        lambda pd: pd.layer.softmax_with_cross_entropy(_rows(pd), _labels(pd)),
    "split": lambda pd: pd.layer.split(_rows(pd), 2, dim=1),
}


def _layer_and_op(name: str) -> str:
    """What ``pd.layer.<name>`` has to do with the ``<name>`` op, found out, not assumed:
    the layer is built into a scratch program (its own name counters, nothing global
    touched) and the passes are applied one by one to that program. Either the layer
    emits the op, or a pass makes the op of what it emits (``fc``: ``mul`` +
    ``elementwise_add``, fused by ``fc_fuse``), or neither."""
    import paddle_nb as pd                              # noqa: PLC0415
    from paddle_nb import passes                        # noqa: PLC0415
    from paddle_nb.core import unique_name              # noqa: PLC0415
    call = LAYER_CALLS.get(name)
    if call is None:
        return f"pd.layer.{name} (which ops it builds is not checked here)."
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), unique_name.guard():
        call(pd)
    built = list(dict.fromkeys(op.type for b in main.blocks for op in b.ops))
    listed = ", ".join(built)
    if name in built:
        return f"pd.layer.{name} builds this op (a program as built holds {listed})."
    program = main
    for pass_name in passes.PASSES:
        program = passes.apply(program, [pass_name])
        if any(op.type == name for b in program.blocks for op in b.ops):
            where = "pd.passes.apply" + (", and Executor.run's compiled path" if pass_name in
                                         passes.FAST_PATH else "")
            return (f"pd.layer.{name} builds {listed} (what a program holds as built), not "
                    f"this op; the {name} op is what the {pass_name} pass makes of them "
                    f"({where}).")
    return f"pd.layer.{name} builds {listed}, not this op; no pass makes it of them."


if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:          # `python -m paddle_nb ops | head`: the reader left
        sys.stderr.close()
        sys.exit(0)
