"""save_vars / load_vars and the params / persistables shorthands built on them."""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass

import numpy as np

from ..core import dtypes
from ..core.errors import BuildError, IOFormatError, SaveError
from ..core.framework_pb2 import VarType
from ..core.program import Program, default_main_program
from ..core.scope import Scope, current
from ..core.symbol_table import var_dtype, var_shape
from ..core.variable import Variable
from .files import file_for, open_checked, read_file, short_name, write_files
from .tensor_format import (BadTensor, FileReader, Reader, TensorHeader, read_header,
                            read_tensor, serialize_tensor)

# --- which variables -------------------------------------------------------------------------
def is_parameter(var: Variable) -> bool:
    return var.desc.is_parameter


def is_persistable(var: Variable) -> bool:
    """Persistable and a tensor. Fluid also counts other kinds except feed/fetch/reader;
    only LoD tensors can be written in this format, and only they exist here."""
    return var.desc.persistable and var.desc.type.type == VarType.LOD_TENSOR


def chosen_vars(program: Program, vars, predicate) -> list[Variable]:
    """The variables to save or load, in sorted-name order (the combined file's order)."""
    gb = program.global_block()
    if vars is None:
        chosen = [v for v in gb.vars.values() if predicate(v)]
    else:
        chosen = [v if isinstance(v, Variable) else gb.var(v) for v in vars]
    return sorted(chosen, key=lambda v: v.name)


def program_or_default(main_program) -> Program:
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



# --- save ----------------------------------------------------------------------------------
def value_to_save(scope: Scope, var: Variable) -> np.ndarray:
    held = scope.find_var(var.name)
    if held is None or not held.is_initialized():
        raise SaveError(f"cannot save {short_name(var.name)}: it has no value in scope "
                        f"{scope.name!r}. Run the startup program first "
                        f"(exe.run(pd.default_startup_program())) or load it, in this scope")
    if held.kind != "tensor":
        raise SaveError(f"cannot save {short_name(var.name)}: the scope holds a {held.kind}, "
                        f"not a tensor")
    value = held.get()
    if hasattr(value, "copy_to_host"):      # a device array
        value = value.copy_to_host()
    array = np.asarray(value)
    try:
        problem = _mismatch(var, array)
    except TypeError as e:                   # a dtype with no VarType code
        problem = str(e)
    if problem:
        raise SaveError(f"cannot save {short_name(var.name)} from scope {scope.name!r}: {problem}")
    return array


def save_vars(executor, dirname: str, main_program=None, vars=None, predicate=None,
              filename: str | None = None, scope: Scope | None = None) -> None:
    """Save ``vars`` (Variables or names), or else the global-block variables for which
    ``predicate(var)`` is true: one file each, or all in ``dirname/filename``."""
    program = program_or_default(main_program)
    scope = scope if scope is not None else current()
    chosen = chosen_vars(program, vars, predicate or is_persistable)
    if not chosen:
        raise SaveError(_nothing_to_save(program, predicate))
    arrays = {v.name: value_to_save(scope, v) for v in chosen}     # every check first
    if filename is None:
        files = {file_for(dirname, n, SaveError): serialize_tensor(a) for n, a in arrays.items()}
    else:
        files = {os.path.join(dirname, filename):
                 b"".join(serialize_tensor(arrays[v.name]) for v in chosen)}
    write_files(files)


def _nothing_to_save(program: Program, predicate) -> str:
    """Why an empty save is refused: a save of nothing is a mistake (a wrong program, or a
    program read from bytes), and a silent empty directory would hide it until the load."""
    gb = program.global_block()
    persistable = sorted(n for n, v in gb.vars.items() if is_persistable(v))
    if predicate is is_parameter and persistable:
        return (f"nothing to save: the program has no parameters, but {len(persistable)} "
                f"persistable variables ({', '.join(persistable[:4])}"
                f"{', ...' if len(persistable) > 4 else ''}). A program read from bytes "
                "(e.g. saved by PaddlePaddle) does not say which variables are parameters; "
                "use pd.io.save_persistables for it")
    return "nothing to save: the program's global block has no variables of that kind"


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
def _parse_checked(r: Reader, var: Variable, where: str, read=read_tensor):
    """``read(r)`` (the tensor, or its header) checked against the variable's declaration;
    a fault names the variable, the file and the byte."""
    start = r.pos
    try:
        value = read(r)
    except BadTensor as e:
        raise IOFormatError(f"cannot load {short_name(var.name)} from {r.path} ({where}at byte "
                            f"{start}): {e}") from None
    problem = _mismatch(var, value)
    if problem:
        raise IOFormatError(f"cannot load {short_name(var.name)} from {r.path} ({where}at byte "
                            f"{start}): {problem}; the file was saved from another program")
    return value


@contextlib.contextmanager
def _in_memory(path: str, what: str, hint: str = ""):
    yield Reader(read_file(path, what, "MAX_PARAMS_BYTES", hint), path)


@contextlib.contextmanager
def _on_disk(path: str, what: str, hint: str = ""):
    with open_checked(path, what, "MAX_PARAMS_BYTES", hint) as (f, size):
        yield FileReader(f, size, path)


def _walk(dirname: str, chosen: list[Variable], filename: str | None, reader, read):
    """(variable, ``read``'s value, its file, the byte after it) for each chosen variable,
    checked as a load checks it: one file each (``filename`` None) or one combined file,
    every byte of it accounted for. ``reader``: :func:`_in_memory` or :func:`_on_disk`."""
    if filename is None:
        for var in chosen:
            path = file_for(dirname, var.name)
            hint = ("; if everything was saved in one combined file, pass its name as "
                    "filename=")
            with reader(path, f"variable {short_name(var.name)}", hint) as r:
                yield var, _parse_checked(r, var, "", read), path, r.pos
                if r.remaining():
                    raise IOFormatError(
                        f"cannot load {short_name(var.name)} from {path}: {r.remaining()} "
                        f"bytes follow its tensor; a file of one variable holds one tensor "
                        f"(is it a combined file? then pass filename=)")
        return
    path = os.path.join(dirname, filename)
    names = [v.name for v in chosen]
    with reader(path, f"the combined file of {len(names)} "
                      f"variable{'s' if len(names) != 1 else ''}") as r:
        for i, var in enumerate(chosen):
            yield var, _parse_checked(r, var, f"tensor {i + 1} of {len(chosen)}, ", read), \
                path, r.pos
        if r.remaining():
            raise IOFormatError(
                f"cannot load {path}: {r.remaining()} bytes are left after the {len(names)} "
                f"tensors this program expects ({', '.join(names) or 'none'}); the file holds "
                f"more variables, so it was saved from another program")


def load_vars(executor, dirname: str, main_program=None, vars=None, predicate=None,
              filename: str | None = None, scope: Scope | None = None) -> None:
    """Load what :func:`save_vars` saved. Everything is read and checked before the first
    value is written into the scope, so a failed load leaves the scope as it was."""
    program = program_or_default(main_program)
    scope = scope if scope is not None else current()
    chosen = chosen_vars(program, vars, predicate or is_persistable)
    arrays = {var.name: array for var, array, _, _ in
              _walk(dirname, chosen, filename, _in_memory, read_tensor)}
    # Everything checked: only now touch the scope.
    for name, array in arrays.items():
        scope.var(name).set(array)


@dataclass(frozen=True)
class StoredTensor:
    """A variable's tensor in a file, as its header says: where its data lies."""
    name: str
    header: TensorHeader       # dtype, dims, nbytes
    path: str
    offset: int                # of its data in the file


def _header_only(r: Reader) -> TensorHeader:
    header = read_header(r)
    r.skip(header.nbytes, f"the data of a {header.kind}")
    return header


def stored_tensors(dirname: str, main_program=None, vars=None, predicate=None,
                   filename: str | None = None) -> list[StoredTensor]:
    """What :func:`load_vars` would load, with the same checks (every header, dtypes and
    shapes against the program, sizes, no byte left over), from the headers alone: the
    data is skipped, never read, so a parameter file of gigabytes costs a few KiB. Each
    tensor's data can then be read where it lies (:class:`StoredTensor`)."""
    program = program_or_default(main_program)
    chosen = chosen_vars(program, vars, predicate or is_persistable)
    return [StoredTensor(var.name, header, path, end - header.nbytes) for var, header, path, end
            in _walk(dirname, chosen, filename, _on_disk, _header_only)]


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
