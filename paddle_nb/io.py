"""Saving and loading parameters and inference models, in PaddlePaddle's own file formats.

Fluid's API, with Fluid's names and argument order: ``save_params`` / ``load_params``
(the parameters), ``save_persistables`` / ``load_persistables`` (every persistable tensor:
parameters, learning rates, optimizer accumulators), ``save_vars`` / ``load_vars`` (any
choice of variables) and ``save_inference_model`` / ``load_inference_model``. Values are
read from and written to a scope (``pd.scope.current()`` unless ``scope=`` is given). The
``executor`` argument is accepted for Fluid compatibility; no save/load ops are run, the
files are written and read here directly.

The tensor format
-----------------
One tensor, as Paddle's ``LoDTensor`` serialization writes it (all numbers little-endian):

    uint32   version              always 0
    uint64   lod_levels           0 for parameters; per level: uint64 nbytes, then nbytes
                                  of uint64 offsets (read and checked, then dropped: a scope
                                  holds plain arrays)
    uint32   tensor version       always 0
    int32    desc_size            the size of the next message
    bytes    VarType.TensorDesc   protobuf: data_type (a VarType code), dims
    bytes    data                 prod(dims) * itemsize bytes, C order

A variable saved on its own is one tensor in a file named after it. A name with '/' (made
by ``pd.namespace``, e.g. ``model_a/W``) is saved as ``model_a/W`` under the directory, in a
subdirectory, as Paddle does. A *combined* file (Paddle's ``save_combine``, the
``.pdiparams`` of an inference model) is several tensors back to back in sorted-name
order. The names are not stored, so a combined file is only meaningful together with the
program that lists the variables; the dtype and shape checks below catch most mix-ups.

An inference model is two files: the ProgramDesc bytes (``model.pdmodel``), pruned to the
targets with ``feed`` ops first and ``fetch`` ops last, and the combined file of the
persistable tensors it uses (``model.pdiparams``). PaddlePaddle's files load as they are.

Two guarantees
--------------
* A save never leaves a half-written file. Each file is written to a temporary file in the
  same directory and moved over the old one with ``os.replace`` (atomic), and only after
  every temporary file of the save is complete; on any error the temporaries are removed.
* A load changes nothing unless everything loads. Every file is read and every tensor
  checked (header, data size, dtype, and shape against the program's VarDesc where the
  declared dims are known) before the first value goes into the scope. A missing, truncated
  or corrupt file raises :class:`IOFormatError` naming the file, the variable and the fault.
"""
from __future__ import annotations

import contextlib
import math
import os
import struct
import uuid

import numpy as np
from google.protobuf.message import DecodeError

from .core import dtypes
from .core.errors import BuildError, PaddleNBError, ProgramFormatError
from .core.framework_pb2 import VarType
from .core.program import Program, default_main_program
from .core.prune import prune
from .core.scope import Scope, current
from .core.symbol_table import var_dtype, var_shape
from .core.variable import Variable

MODEL_FILENAME = "model.pdmodel"
PARAMS_FILENAME = "model.pdiparams"

__all__ = ["IOFormatError", "SaveError", "save_vars", "save_params", "save_persistables",
           "load_vars", "load_params", "load_persistables", "save_inference_model",
           "load_inference_model", "serialize_tensor", "parse_tensors", "is_parameter",
           "is_persistable"]


class IOFormatError(PaddleNBError, ValueError):
    """A file that cannot be loaded: missing, truncated, corrupt, or not matching the program."""


class SaveError(PaddleNBError):
    """A variable that cannot be saved: no value in the scope, or not the declared tensor."""


# --- the tensor format ----------------------------------------------------------------------
_U32, _U64, _I32 = struct.Struct("<I"), struct.Struct("<Q"), struct.Struct("<i")


def serialize_tensor(array) -> bytes:
    """One array in Paddle's tensor format (see the module docstring)."""
    array = np.asarray(array)
    desc = VarType.TensorDesc(data_type=dtypes.to_code(array.dtype), dims=array.shape)
    meta = desc.SerializeToString()
    data = np.ascontiguousarray(array, dtype=array.dtype.newbyteorder("<")).tobytes()
    return b"".join([_U32.pack(0), _U64.pack(0),          # version, no LoD
                     _U32.pack(0), _I32.pack(len(meta)), meta, data])


class _Bad(Exception):
    """A fault found while parsing; the caller adds which file and which variable."""


class _Reader:
    """The bytes of one file, read front to back; a short read says what was cut off."""

    def __init__(self, data: bytes, path: str):
        self.data = memoryview(data)
        self.path = path
        self.pos = 0

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def take(self, n: int, what: str) -> memoryview:
        if n > self.remaining():
            raise _Bad(f"the file ends {self.remaining()} bytes into the {n} bytes of {what} "
                       f"(it is truncated, or the bytes before were not what they claim)")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def number(self, fmt: struct.Struct, what: str) -> int:
        return fmt.unpack(self.take(fmt.size, what))[0]


def _read_tensor(r: _Reader) -> np.ndarray:
    """Parse one tensor at the reader's position; raises _Bad with the fault."""
    version = r.number(_U32, "the version")
    if version != 0:
        raise _Bad(f"it starts with version {version}, but a Paddle tensor starts with 0 "
                   f"(this is not a tensor file, or it is corrupt)")
    levels = r.number(_U64, "the LoD level count")
    if levels > r.remaining() // 8:        # each level needs at least its 8-byte size
        raise _Bad(f"it claims {levels} LoD levels, more than the rest of the file could "
                   f"hold (corrupt)")
    for level in range(levels):
        nbytes = r.number(_U64, f"the size of LoD level {level}")
        if nbytes % 8:
            raise _Bad(f"LoD level {level} has {nbytes} bytes, not a whole number of "
                       f"uint64 offsets (corrupt)")
        r.take(nbytes, f"LoD level {level}")
    tensor_version = r.number(_U32, "the tensor version")
    if tensor_version != 0:
        raise _Bad(f"tensor version {tensor_version}, expected 0 (corrupt)")
    size = r.number(_I32, "the TensorDesc size")
    if size < 0:
        raise _Bad(f"the TensorDesc size is {size} (corrupt)")
    desc = VarType.TensorDesc()
    try:
        desc.ParseFromString(bytes(r.take(size, "the TensorDesc")))
    except (DecodeError, RuntimeError, ValueError) as e:
        raise _Bad(f"the TensorDesc does not parse ({e}); the file is corrupt") from None
    if not desc.HasField("data_type"):       # proto2 'required', but parsing does not check
        raise _Bad("the TensorDesc has no data_type (corrupt)")
    dims = list(desc.dims)
    if any(d < 0 for d in dims):
        raise _Bad(f"the TensorDesc has dims {dims}; a stored tensor has no -1 (corrupt)")
    try:
        dtype = dtypes.to_numpy(desc.data_type)
    except TypeError as e:
        raise _Bad(str(e)) from None
    nbytes = math.prod(dims) * dtype.itemsize
    raw = r.take(nbytes, f"the data of a {dtypes.name(desc.data_type)}{dims} tensor")
    # astype copies: the array owns its memory, native byte order, writable.
    return np.frombuffer(raw, dtype.newbyteorder("<")).astype(dtype).reshape(dims)


def parse_tensors(data: bytes, path: str = "<bytes>") -> list[np.ndarray]:
    """Every tensor in ``data`` (one tensor file, or a combined one), in file order."""
    r, out = _Reader(data, path), []
    while r.remaining():
        start = r.pos
        try:
            out.append(_read_tensor(r))
        except _Bad as e:
            raise IOFormatError(f"{path}: tensor {len(out) + 1} (at byte {start}): {e}") from None
    return out


# --- which variables -------------------------------------------------------------------------
def is_parameter(var: Variable) -> bool:
    return var.desc.is_parameter


def is_persistable(var: Variable) -> bool:
    """Persistable and a tensor. Fluid also counts other kinds except feed/fetch/reader;
    only LoD tensors can be written in this format, and only they exist here."""
    return var.desc.persistable and var.desc.type.type == VarType.LOD_TENSOR


def _chosen(program: Program, vars, predicate) -> list[Variable]:
    """The variables to save or load, in sorted-name order (the combined file's order)."""
    gb = program.global_block()
    if vars is None:
        chosen = [v for v in gb.vars.values() if predicate(v)]
    else:
        chosen = [v if isinstance(v, Variable) else gb.var(v) for v in vars]
    return sorted(chosen, key=lambda v: v.name)


def _program(main_program) -> Program:
    program = main_program if main_program is not None else default_main_program()
    if not isinstance(program, Program):
        raise BuildError(f"main_program must be a Program, got {type(program).__name__}")
    return program


def _mismatch(var: Variable, array: np.ndarray) -> str | None:
    """How ``array`` differs from the variable's declaration, or None when it fits. Declared
    dims of -1 match any size; no declared dims at all means the shape is unknown."""
    want_code, want_shape = var_dtype(var.desc), var_shape(var.desc)
    got = f"{dtypes.name(dtypes.to_code(array.dtype))}{list(array.shape)}"
    declared = f"{dtypes.name(want_code)}{want_shape}"
    if want_code is not None and dtypes.to_code(array.dtype) != want_code:
        return f"the tensor is {got} but the program declares {declared} (dtype differs)"
    if want_shape and (len(want_shape) != array.ndim or
                       any(w >= 0 and w != g for w, g in zip(want_shape, array.shape))):
        return f"the tensor is {got} but the program declares {declared} (shape differs)"
    return None


def _file_for(dirname: str, name: str, error=IOFormatError) -> str:
    """The file of one variable. A '/' in the name is a subdirectory, as in Paddle; parts that
    would lead out of ``dirname`` are refused."""
    parts = name.split("/")
    if any(p in ("", ".", "..") for p in parts) or "\\" in name or os.path.isabs(name):
        raise error(f"variable {name!r} cannot have a file of its own under {dirname} "
                    f"(its name is not a plain relative path); use filename= for one "
                    f"combined file")
    return os.path.join(dirname, *parts)


# --- writing files: all or nothing -------------------------------------------------------------
def _write_files(files: dict[str, bytes]) -> None:
    """Write every file or none. Each file goes to a temporary file next to it (same
    directory, so same file system, so ``os.replace`` is an atomic rename); only when every
    temporary is complete and synced are they moved into place. On any error, Ctrl-C
    included, the temporaries are removed and the old files are untouched."""
    staged: list[tuple[str, str]] = []
    try:
        for path, data in files.items():
            directory = os.path.dirname(path) or "."
            os.makedirs(directory, exist_ok=True)
            tmp = os.path.join(directory, f".{os.path.basename(path)}.{uuid.uuid4().hex[:8]}.tmp")
            staged.append((tmp, path))
            # os.open with 0o666 lets the umask decide the mode, as for an ordinary file.
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0),
                         0o666)
            with open(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())     # the bytes are on disk before the name points at them
        for tmp, path in staged:
            os.replace(tmp, path)
    except BaseException:
        for tmp, _ in staged:
            with contextlib.suppress(OSError):   # already moved into place, or never created
                os.remove(tmp)
        raise


def _read_file(path: str, what: str, hint: str = "") -> bytes:
    try:
        with open(path, "rb") as f:
            return f.read()
    except FileNotFoundError:
        raise IOFormatError(f"cannot load {what}: there is no file {path}{hint}") from None
    except OSError as e:
        raise IOFormatError(f"cannot load {what}: cannot read {path}: "
                            f"{e.strerror or e}") from None


# --- save ----------------------------------------------------------------------------------
def _value_to_save(scope: Scope, var: Variable) -> np.ndarray:
    held = scope.find_var(var.name)
    if held is None or not held.is_initialized():
        raise SaveError(f"cannot save {var.name!r}: it has no value in scope {scope.name!r}. "
                        f"Run the startup program first (exe.run(pd.default_startup_program())) "
                        f"or load it, in this scope")
    if held.kind != "tensor":
        raise SaveError(f"cannot save {var.name!r}: the scope holds a {held.kind}, not a tensor")
    value = held.get()
    if hasattr(value, "copy_to_host"):      # a device array
        value = value.copy_to_host()
    array = np.asarray(value)
    try:
        problem = _mismatch(var, array)
    except TypeError as e:                   # a dtype with no VarType code
        problem = str(e)
    if problem:
        raise SaveError(f"cannot save {var.name!r} from scope {scope.name!r}: {problem}")
    return array


def save_vars(executor, dirname: str, main_program=None, vars=None, predicate=None,
              filename: str | None = None, scope: Scope | None = None) -> None:
    """Save ``vars`` (Variables or names), or else the global-block variables for which
    ``predicate(var)`` is true: one file each, or all in ``dirname/filename``."""
    program = _program(main_program)
    scope = scope if scope is not None else current()
    chosen = _chosen(program, vars, predicate or is_persistable)
    arrays = {v.name: _value_to_save(scope, v) for v in chosen}     # every check first
    if filename is None:
        files = {_file_for(dirname, n, SaveError): serialize_tensor(a) for n, a in arrays.items()}
    else:
        files = {os.path.join(dirname, filename):
                 b"".join(serialize_tensor(arrays[v.name]) for v in chosen)}
    _write_files(files)


def save_params(executor, dirname: str, main_program=None, filename: str | None = None,
                scope: Scope | None = None) -> None:
    """Save every parameter of the program's global block (default program: the default
    main program; default scope: the current one)."""
    save_vars(executor, dirname, main_program, predicate=is_parameter, filename=filename,
              scope=scope)


def save_persistables(executor, dirname: str, main_program=None, filename: str | None = None,
                      scope: Scope | None = None) -> None:
    """Save every persistable tensor of the global block: parameters, learning rates,
    optimizer accumulators. What is needed to resume training."""
    save_vars(executor, dirname, main_program, predicate=is_persistable, filename=filename,
              scope=scope)


# --- load ------------------------------------------------------------------------------------
def _parse_checked(r: _Reader, var: Variable, where: str) -> np.ndarray:
    start = r.pos
    try:
        array = _read_tensor(r)
    except _Bad as e:
        raise IOFormatError(f"cannot load {var.name!r} from {r.path} ({where}at byte "
                            f"{start}): {e}") from None
    problem = _mismatch(var, array)
    if problem:
        raise IOFormatError(f"cannot load {var.name!r} from {r.path} ({where}at byte "
                            f"{start}): {problem}; the file was saved from another program")
    return array


def load_vars(executor, dirname: str, main_program=None, vars=None, predicate=None,
              filename: str | None = None, scope: Scope | None = None) -> None:
    """Load what :func:`save_vars` saved. Everything is read and checked before the first
    value is written into the scope, so a failed load leaves the scope as it was."""
    program = _program(main_program)
    scope = scope if scope is not None else current()
    chosen = _chosen(program, vars, predicate or is_persistable)
    arrays: dict[str, np.ndarray] = {}
    if filename is None:
        for var in chosen:
            path = _file_for(dirname, var.name)
            hint = ("; if everything was saved in one combined file, pass its name as "
                    "filename=")
            r = _Reader(_read_file(path, f"variable {var.name!r}", hint), path)
            arrays[var.name] = _parse_checked(r, var, "")
            if r.remaining():
                raise IOFormatError(
                    f"cannot load {var.name!r} from {path}: {r.remaining()} bytes follow its "
                    f"tensor; a file of one variable holds one tensor (is it a combined "
                    f"file? then pass filename=)")
    else:
        path = os.path.join(dirname, filename)
        names = [v.name for v in chosen]
        r = _Reader(_read_file(path, f"the combined file of {len(names)} variables"), path)
        for i, var in enumerate(chosen):
            arrays[var.name] = _parse_checked(r, var, f"tensor {i + 1} of {len(chosen)}, ")
        if r.remaining():
            raise IOFormatError(
                f"cannot load {path}: {r.remaining()} bytes are left after the {len(names)} "
                f"tensors this program expects ({', '.join(names) or 'none'}); the file holds "
                f"more variables, so it was saved from another program")
    # Everything checked: only now touch the scope.
    for name, array in arrays.items():
        scope.var(name).set(array)


def load_params(executor, dirname: str, main_program=None, filename: str | None = None,
                scope: Scope | None = None) -> None:
    """Load every parameter of the program's global block (see :func:`save_params`)."""
    load_vars(executor, dirname, main_program, predicate=is_parameter, filename=filename,
              scope=scope)


def load_persistables(executor, dirname: str, main_program=None, filename: str | None = None,
                      scope: Scope | None = None) -> None:
    """Load every persistable tensor of the global block (see :func:`save_persistables`)."""
    load_vars(executor, dirname, main_program, predicate=is_persistable, filename=filename,
              scope=scope)


# --- inference models ------------------------------------------------------------------------
def _names(items, what: str) -> list[str]:
    items = [items] if isinstance(items, (str, Variable)) else list(items)
    names = []
    for item in items:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        if not isinstance(name, str):
            raise BuildError(f"{what} are Variables or names, got {item!r}")
        names.append(name)
    return names


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
    program = _program(main_program)
    scope = scope if scope is not None else current()
    feed_names = _names(feeded_var_names, "feeded_var_names")
    fetch_names = _names(target_vars, "target_vars")
    if not fetch_names:
        raise BuildError("save_inference_model needs at least one target variable")
    model_path = os.path.join(dirname, model_filename or MODEL_FILENAME)
    params_path = os.path.join(dirname, params_filename or PARAMS_FILENAME)
    if os.path.normpath(model_path) == os.path.normpath(params_path):
        raise BuildError(f"model_filename and params_filename are both {model_path}")
    inference = _inference_program(program, feed_names, fetch_names)
    _add_feed_and_fetch_ops(inference, feed_names, fetch_names)
    params = _chosen(inference, None, is_persistable)
    arrays = [_value_to_save(scope, v) for v in params]
    _write_files({model_path: inference.to_bytes(),
                  params_path: b"".join(serialize_tensor(a) for a in arrays)})
    return fetch_names


def load_inference_model(dirname: str, executor, model_filename: str | None = None,
                         params_filename: str | None = None, scope: Scope | None = None):
    """Load a model saved by :func:`save_inference_model` or by PaddlePaddle. Returns
    ``[program, feed_target_names, fetch_targets]``: the input names in feed-op column order
    and the Variables the fetch ops fetch, in column order. Run it with
    ``exe.run(program, feed={name: array}, fetch_list=fetch_targets, scope=scope)``."""
    model_path = os.path.join(dirname, model_filename or MODEL_FILENAME)
    try:
        program = Program.from_bytes(_read_file(model_path, "the inference program"))
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
        (feeds if op.type == "feed" else fetches).append((op.attr("col", 0), names[0]))
    load_persistables(executor, dirname, program, params_filename or PARAMS_FILENAME, scope)
    return [program, [n for _, n in sorted(feeds)], [gb.var(n) for _, n in sorted(fetches)]]
