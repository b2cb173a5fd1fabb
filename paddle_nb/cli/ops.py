"""``python -m paddle_nb ops [NAME]``: every registered op with its one-line doc, or one op's
whole doc (and, for a name that is also a layer's, what the layer has to do with the op)."""
from __future__ import annotations

import difflib
import sys

import paddle_nb as pd     # the package's API: the command shows what pd.op and pd.layer are

from .. import passes
from ..core import registry, unique_name


def main(name: str | None) -> int:
    """Every op with its one-line doc, or one op's whole doc. A layer's name (``fc``)
    points to the layer; an unknown name is a message and exit code 2, not a traceback."""
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
            print(f"\n{name} is also a layer: {layer_and_op(name)}\n\n"
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


# How to call each layer that has an op's name, on small inputs: ``layer_and_op`` builds
# it into a scratch program to say which ops it makes (tests/test_first_hour.py checks
# that every such layer has a row here).
def _images():
    return pd.data("image", [-1, 3, 8, 8])


def _rows(name="x"):
    return pd.data(name, [-1, 4])


def _labels():
    return pd.data("label", [-1, 1], "int64")


LAYER_CALLS = {
    "assign": lambda: pd.layer.assign(_rows()),
    "batch_norm": lambda: pd.layer.batch_norm(_images()),
    "conv2d": lambda: pd.layer.conv2d(_images(), 2, 3),
    "cross_entropy": lambda: pd.layer.cross_entropy(_rows(), _labels()),
    "dropout": lambda: pd.layer.dropout(_rows(), 0.5),
    "fc": lambda: pd.layer.fc(_rows(), 3),
    "layer_norm": lambda: pd.layer.layer_norm(_rows()),
    "less_than": lambda: pd.layer.less_than(_rows(), _rows("y")),
    "pool2d": lambda: pd.layer.pool2d(_images(), 2),
    "reduce_mean": lambda: pd.layer.reduce_mean(_rows()),
    "reduce_sum": lambda: pd.layer.reduce_sum(_rows()),
    "softmax_with_cross_entropy":
        lambda: pd.layer.softmax_with_cross_entropy(_rows(), _labels()),
    "split": lambda: pd.layer.split(_rows(), 2, dim=1),
}


def layer_and_op(name: str) -> str:
    """What ``pd.layer.<name>`` has to do with the ``<name>`` op, found out, not assumed:
    the layer is built into a scratch program (its own name counters, nothing global
    touched) and the passes are applied one by one to that program. Either the layer
    emits the op, or a pass makes the op of what it emits (``fc``: ``mul`` +
    ``elementwise_add``, fused by ``fc_fuse``), or neither."""
    call = LAYER_CALLS.get(name)
    if call is None:
        return f"pd.layer.{name} (which ops it builds is not checked here)."
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup), unique_name.guard():
        call()
    built = list(dict.fromkeys(op.type for b in main.blocks for op in b.ops))
    listed = ", ".join(built)
    if name in built:
        return f"pd.layer.{name} builds this op (a program as built holds {listed})."
    program = main
    for pass_name in passes.PASSES:
        program = passes.apply(program, [pass_name])
        if any(op.type == name for b in program.blocks for op in b.ops):
            where = "pd.passes.apply" + (", and Executor.run's fast path" if pass_name in
                                         passes.FAST_PATH else "")
            return (f"pd.layer.{name} builds {listed} (what a program holds as built), not "
                    f"this op; the {name} op is what the {pass_name} pass makes of them "
                    f"({where}).")
    return f"pd.layer.{name} builds {listed}, not this op; no pass makes it of them."
