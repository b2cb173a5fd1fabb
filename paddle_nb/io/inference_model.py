"""save_inference_model / load_inference_model: a pruned program with feed and fetch
ops, and the combined file of the parameters it uses."""
from __future__ import annotations

import os


from ..core.errors import BuildError, ProgramFormatError
from ..core.framework_pb2 import VarType
from ..core.program import Program
from ..core.prune import prune
from ..core.scope import Scope, current
from ..core.variable import var_names
from .files import read_file, write_files
from .tensor_format import serialize_tensor
from .variables import (chosen_vars, is_persistable, load_persistables, program_or_default,
                        value_to_save)

MODEL_FILENAME = "model.pdmodel"
PARAMS_FILENAME = "model.pdiparams"


# --- inference models ------------------------------------------------------------------------
def _inference_program(program: Program, feed_names: list[str],
                       target_names: list[str]) -> Program:
    """``program`` pruned to what computes the targets from the feeds (a copy)."""
    pruned = prune(program, target_names)
    gb = pruned.global_block()
    # A fed variable's value comes from the feed, so the ops that compute it go (Fluid's
    # _prune_with_input); pruning again drops whatever only those ops needed.
    fed = set(feed_names)
    for i in range(len(gb.ops) - 1, -1, -1):
        outs = set(gb.ops[i].output_arg_names)
        if outs and outs <= fed:
            gb._remove_op(i)
    pruned = prune(pruned, target_names)
    gb = pruned.global_block()
    for i, name in enumerate(feed_names):
        if not gb.has_var(name):
            raise BuildError(f"feeded_var_names[{i}] {name!r} is not in the pruned inference "
                             f"program: the targets {target_names} do not depend on it. Remove "
                             f"it from feeded_var_names, or check the name")
    # prune keeps every persistable variable; an inference model keeps the ones it uses.
    used = set(target_names) | {n for b in pruned.blocks for op in b.ops
                                for n in op.input_arg_names + op.output_arg_names}
    for name, desc in list(gb.table.vars.items()):
        if desc.persistable and name not in used:
            gb._remove_var(name)
    return pruned.clone(for_test=True)


def _add_feed_and_fetch_ops(program: Program, feed_names: list[str],
                            fetch_names: list[str]) -> None:
    """Paddle's layout: a persistable ``feed`` list and one ``feed`` op per input (attr col)
    at the start of block 0; a ``fetch`` list and one ``fetch`` op per target at the end."""
    gb = program.global_block()
    feed = gb.create_var("feed", type=VarType.FEED_MINIBATCH, persistable=True)
    for col, name in enumerate(feed_names):
        gb._insert_op(col, "feed", inputs={"X": [feed]}, outputs={"Out": [name]},
                      attrs={"col": col})
    fetch = gb.create_var("fetch", type=VarType.FETCH_LIST, persistable=True)
    for col, name in enumerate(fetch_names):
        gb.append_op("fetch", inputs={"X": [name]}, outputs={"Out": [fetch]},
                     attrs={"col": col})


def save_inference_model(dirname: str, feeded_var_names, target_vars, executor,
                         main_program=None, model_filename: str | None = None,
                         params_filename: str | None = None,
                         scope: Scope | None = None) -> list[str]:
    """Save what is needed to compute ``target_vars`` from ``feeded_var_names``: the pruned
    program (for test, with feed and fetch ops) in ``dirname/model_filename`` and its
    persistable tensors in the combined file ``dirname/params_filename``. Both files are
    replaced together or not at all. Returns the fetch variables' names."""
    program = program_or_default(main_program)
    scope = scope if scope is not None else current()
    feed_names = var_names(feeded_var_names, "feeded_var_names")
    fetch_names = var_names(target_vars, "target_vars")
    if not fetch_names:
        raise BuildError("save_inference_model needs at least one target variable")
    model_path = os.path.join(dirname, model_filename or MODEL_FILENAME)
    params_path = os.path.join(dirname, params_filename or PARAMS_FILENAME)
    if os.path.normpath(model_path) == os.path.normpath(params_path):
        raise BuildError(f"model_filename and params_filename are both {model_path}")
    inference = _inference_program(program, feed_names, fetch_names)
    _add_feed_and_fetch_ops(inference, feed_names, fetch_names)
    params = chosen_vars(inference, None, is_persistable)
    arrays = [value_to_save(scope, v) for v in params]
    write_files({model_path: inference.to_bytes(),
                  params_path: b"".join(serialize_tensor(a) for a in arrays)})
    return fetch_names


def load_inference_model(dirname: str, executor, model_filename: str | None = None,
                         params_filename: str | None = None, scope: Scope | None = None):
    """Load a model saved by :func:`save_inference_model` or by PaddlePaddle. Returns
    ``[program, feed_target_names, fetch_targets]``: the input names in feed-op column order
    and the Variables the fetch ops fetch, in column order. Run it with
    ``exe.run(program, feed={name: array}, fetch_list=fetch_targets, scope=scope)``.
    ``dirname`` may also be Paddle 2's path prefix (``paddle.static.load_inference_model(
    "model/lstm", exe)`` reads model/lstm.pdmodel and model/lstm.pdiparams)."""
    if model_filename is None and not os.path.isdir(dirname) and \
            os.path.isfile(dirname + ".pdmodel"):
        dirname, prefix = os.path.split(dirname)
        model_filename = prefix + ".pdmodel"
        params_filename = params_filename or prefix + ".pdiparams"
    model_path = os.path.join(dirname, model_filename or MODEL_FILENAME)
    try:
        program = Program.from_bytes(read_file(model_path, "the inference program",
                                                   "MAX_PROGRAM_BYTES"))
    except ProgramFormatError as e:
        raise ProgramFormatError(f"{model_path}: {e}") from None
    gb = program.global_block()
    feeds, fetches = [], []
    for op in gb.ops:
        if op.type not in ("feed", "fetch"):
            continue
        names = op.output("Out") if op.type == "feed" else op.input("X")
        if len(names) != 1 or not gb.has_var(names[0]):
            raise ProgramFormatError(f"{model_path}: op {op.idx} {op.type} should name one "
                                     f"variable of block 0, names {names}")
        col = op.attr("col", 0)
        if not isinstance(col, int) or isinstance(col, bool):
            raise ProgramFormatError(f"{model_path}: the {op.type} op of {names[0]!r} has col="
                                     f"{col!r}; a column is an integer")
        (feeds if op.type == "feed" else fetches).append((col, names[0]))
    load_persistables(executor, dirname, program, params_filename or PARAMS_FILENAME, scope)
    return [program, [n for _, n in sorted(feeds)], [gb.var(n) for _, n in sorted(fetches)]]
