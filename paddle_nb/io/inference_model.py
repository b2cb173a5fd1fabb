"""save_inference_model / load_inference_model: a pruned program with feed and fetch
ops, and the combined file of the parameters it uses."""
from __future__ import annotations

import os


from ..core.errors import BuildError, IOFormatError, ProgramFormatError
from ..core.framework_pb2 import VarType
from ..core.program import Program
from ..core.prune import prune
from ..core.scope import Scope, current
from ..core.variable import var_names
from .files import read_file, write_files
from .pir import PirFormatError, pir_parameters, program_from_pir, program_to_pir
from .tensor_format import serialize_tensor
from .variables import (chosen_vars, is_persistable, load_persistables, program_or_default,
                        value_to_save)

MODEL_FILENAME = "model.pdmodel"
PARAMS_FILENAME = "model.pdiparams"
PIR_MODEL_FILENAME = "model.json"
# save_inference_model's formats and the program file each writes by default
SAVE_FORMATS = {"legacy": MODEL_FILENAME, "pir": PIR_MODEL_FILENAME}
_PIR_SUFFIX = ".json"      # Paddle 3's program file: PIR as JSON (model.json)


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
                         scope: Scope | None = None, format: str = "legacy") -> list[str]:
    """Save what is needed to compute ``target_vars`` from ``feeded_var_names``: the pruned
    program (for test, with feed and fetch ops) in ``dirname/model_filename`` and its
    persistable tensors in the combined file ``dirname/params_filename``. Both files are
    replaced together or not at all. Returns the fetch variables' names.

    ``format="legacy"`` (the default) writes Paddle 2's ProgramDesc (``model.pdmodel``);
    ``format="pir"`` writes Paddle 3's PIR (``model.json``, which paddlepaddle 3.3.1 loads:
    :func:`paddle_nb.io.pir.program_to_pir`), and a program with an op PIR has no
    counterpart for here is a ``PirWriteError`` before any file is written."""
    if format not in SAVE_FORMATS:
        raise BuildError(f"format must be one of {list(SAVE_FORMATS)} (Paddle 2's "
                         f"ProgramDesc or Paddle 3's PIR), got {format!r}")
    program = program_or_default(main_program)
    scope = scope if scope is not None else current()
    feed_names = var_names(feeded_var_names, "feeded_var_names")
    fetch_names = var_names(target_vars, "target_vars")
    if not fetch_names:
        raise BuildError("save_inference_model needs at least one target variable")
    model_path = os.path.join(dirname, model_filename or SAVE_FORMATS[format])
    params_path = os.path.join(dirname, params_filename or PARAMS_FILENAME)
    if os.path.normpath(model_path) == os.path.normpath(params_path):
        raise BuildError(f"model_filename and params_filename are both {model_path}")
    inference = _inference_program(program, feed_names, fetch_names)
    _add_feed_and_fetch_ops(inference, feed_names, fetch_names)
    if format == "pir":
        save_pir_files(inference, model_path, params_path, scope)
        return fetch_names
    params = chosen_vars(inference, None, is_persistable)
    arrays = [value_to_save(scope, v) for v in params]
    write_files({model_path: inference.to_bytes(),
                  params_path: b"".join(serialize_tensor(a) for a in arrays)})
    return fetch_names


def save_pir_files(program: Program, model_path: str, params_path: str,
                   scope: Scope | None = None) -> list[str]:
    """Write an inference program (feed and fetch ops) as Paddle 3 saves one: PIR JSON in
    ``model_path`` and, in ``params_path``, the tensors of its persistable variables sorted
    by name, their values taken from ``scope``. The program is translated first, so one
    that cannot be written as PIR leaves no file; both files land together or not at all.
    A program without persistable tensors has no parameter file, as Paddle 3 saves one
    (Paddle refuses an empty one): an old file at ``params_path`` is removed. Returns the
    names of the saved tensors, in file order."""
    scope = scope if scope is not None else current()
    text = program_to_pir(program)
    gb = program.global_block()
    names = pir_parameters(program)
    arrays = [value_to_save(scope, gb.var(n)) for n in names]
    files = {model_path: text.encode("utf-8")}
    if names:
        files[params_path] = b"".join(serialize_tensor(a) for a in arrays)
    write_files(files)
    if not names and os.path.isfile(params_path):
        os.remove(params_path)
    return names


def _model_files(dirname: str, model_filename: str | None,
                 params_filename: str | None) -> tuple[str, str, str]:
    """The directory, program file and parameter file ``load_inference_model`` reads.

    Given no ``model_filename``, the program is whichever of Paddle 3's ``model.json`` (PIR)
    and Paddle 2's ``model.pdmodel`` (a ProgramDesc) is in ``dirname``; given a path prefix
    (``"m/lstm"``, no such directory), ``m/lstm.json`` or ``m/lstm.pdmodel``. When both are
    there it is an error: which one was meant is not for the loader to guess. A program
    ``X.json`` or ``X.pdmodel`` found this way, or a ``model_filename`` ``X.json``, keeps its
    parameters in ``X.pdiparams``, as Paddle writes them."""
    if model_filename is not None:
        if params_filename is None:
            params_filename = PARAMS_FILENAME
            if model_filename.endswith(_PIR_SUFFIX):
                params_filename = model_filename[:-len(_PIR_SUFFIX)] + ".pdiparams"
        return dirname, model_filename, params_filename
    if os.path.isdir(dirname):
        folder, stem, note = dirname, "model", ""
    else:
        folder, stem = os.path.split(dirname)
        note = f" (and there is no directory {dirname})"
    pir, legacy = (os.path.join(folder, stem + ext) for ext in (_PIR_SUFFIX, ".pdmodel"))
    has_pir, has_legacy = os.path.lexists(pir), os.path.lexists(legacy)
    if has_pir and has_legacy:
        raise IOFormatError(f"cannot load the inference program: both {pir} (Paddle 3's PIR) "
                            f"and {legacy} (Paddle 2's ProgramDesc) are there; say which to "
                            f"load with model_filename=")
    if not (has_pir or has_legacy):
        raise IOFormatError(f"cannot load the inference program: there is neither {pir} "
                            f"(Paddle 3's PIR) nor {legacy} (Paddle 2's ProgramDesc){note}")
    model_filename = os.path.basename(pir if has_pir else legacy)
    return folder, model_filename, params_filename or stem + ".pdiparams"


def _read_program(model_path: str) -> Program:
    """The program in ``model_path``: PIR JSON (``.json``, translated into blocks and
    scopes) or a ProgramDesc. A fault in it is an error that names the file."""
    if model_path.endswith(_PIR_SUFFIX):
        data = read_file(model_path, "the inference program", "MAX_PIR_BYTES")
        try:
            return program_from_pir(data)
        except PirFormatError as e:
            raise PirFormatError(f"{model_path}: {e}") from None
    data = read_file(model_path, "the inference program", "MAX_PROGRAM_BYTES")
    try:
        return Program.from_bytes(data)
    except ProgramFormatError as e:
        raise ProgramFormatError(f"{model_path}: {e}") from None


def load_inference_model(dirname: str, executor, model_filename: str | None = None,
                         params_filename: str | None = None, scope: Scope | None = None):
    """Load a model saved by :func:`save_inference_model` or by PaddlePaddle. Returns
    ``[program, feed_target_names, fetch_targets]``: the input names in feed-op column order
    and the Variables the fetch ops fetch, in column order. Run it with
    ``exe.run(program, feed={name: array}, fetch_list=fetch_targets, scope=scope)``.
    The program is Paddle 3's PIR (``model.json``, translated by
    :func:`paddle_nb.io.pir.program_from_pir`) or Paddle 2's ProgramDesc (``model.pdmodel``),
    whichever ``dirname`` holds (see :func:`_model_files`). ``dirname`` may also be a path
    prefix, as in Paddle (``load_inference_model("model/lstm", exe)`` reads
    model/lstm.json or model/lstm.pdmodel, and model/lstm.pdiparams)."""
    dirname, model_filename, params_filename = _model_files(dirname, model_filename,
                                                            params_filename)
    model_path = os.path.join(dirname, model_filename)
    program = _read_program(model_path)
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
    # Paddle 3 writes no parameter file for a program without persistable tensors (and
    # refuses an empty one); Paddle 2 writes an empty one, read as it is.
    if chosen_vars(program, None, is_persistable) or \
            os.path.lexists(os.path.join(dirname, params_filename)):
        load_persistables(executor, dirname, program, params_filename, scope)
    return [program, [n for _, n in sorted(feeds)], [gb.var(n) for _, n in sorted(fetches)]]
