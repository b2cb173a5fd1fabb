"""Feeds in, fetches out: what ``Executor.run`` checks and converts at the edges of a run.

* **Feeds** are checked before anything is written: the name is a data variable of the
  global block (not a parameter, which lives in the scope), the value converts to its
  declared dtype without changing a number, fits its declared shape (-1 = any size) and is
  under the tensor size limit. A training loop feeding the same dtype and shape every step
  takes a shortcut that reads no protobuf.
* **Fetches** must name a variable of the global block that the run wrote or was fed; what
  comes back is the user's own: a copy, unless the run scope that made a large array dies
  now and nobody else holds it; a device array comes back to the host; a SelectedRows as
  what it is.
* **A learning-rate scheduler** (pd.optimizer.lr) writes its value before each run, like a
  feed, as Paddle's executor does.
"""
from __future__ import annotations

import numbers

import numpy as np

from . import dtypes, limits
from .errors import FeedError, FetchError, did_you_mean
from .framework_pb2 import VarType
from .selected_rows import SelectedRows
from .symbol_table import var_dtype, var_shape


def scheduled_learning_rate(program) -> dict:
    """{learning-rate variable: its value now} for a program built with a scheduler
    (pd.optimizer.lr), which Paddle's executor writes before each run too; {} otherwise.
    It goes in like a feed: a run that fails puts the old value back."""
    scheduler = program.lr_scheduler
    if scheduler is None or not program.global_block().has_var(scheduler.var_name):
        return {}
    var = program.global_block().var(scheduler.var_name)
    return {var.name: np.asarray(scheduler(), dtype=var.dtype).reshape(var.shape)}


def fetch_names(program, fetch_list) -> list[str]:
    """The names of ``fetch_list`` (Variables or names), each checked: declared in the global
    block, and not a list of step scopes (gone when the run ends)."""
    if fetch_list is None:
        return []
    if not isinstance(fetch_list, (list, tuple)):
        fetch_list = [fetch_list]
    names = []
    gb = program.global_block()
    for item in fetch_list:
        name = item if isinstance(item, str) else getattr(item, "name", None)
        if not isinstance(name, str):
            raise FetchError(f"fetch_list items are Variables or names, got {item!r}")
        if not gb.has_var(name):
            owner = program.find_var_block(name)
            if owner is not None:
                raise FetchError(
                    f"cannot fetch {name!r}: it is declared only in {owner.path}, a "
                    f"sub-block whose scope is gone when the run ends; fetch an output of "
                    f"the op that owns that block instead")
            every = [n for b in program.blocks for n in b.table.vars]
            raise FetchError(f"cannot fetch {name!r}: no block of this program declares "
                             f"it{did_you_mean(name, every)}")
        if gb.table.vars[name].type.type == VarType.STEP_SCOPES:
            raise FetchError(
                f"cannot fetch {name!r}: it holds the step scopes a control-flow op kept "
                f"for its gradient, and they are deleted when the run ends; fetch the "
                f"tensors you want from them instead (or step through the run with "
                f"exe.steps / pd.Debugger to look inside the scopes while they live)")
        names.append(name)
    return names

def check_feed(program, prepared, feed: dict) -> dict:
    """``feed`` by name, each value converted to its variable's dtype and checked against its
    declared shape and the size limit; a name that is not a data variable is an error."""
    if not isinstance(feed, dict):
        raise FeedError(f"feed must be a dict of name -> array, got {type(feed).__name__}")
    gb = program.global_block()
    specs = prepared.feed_specs
    checked = {}
    for key, value in feed.items():
        name = key if isinstance(key, str) else getattr(key, "name", key)
        spec = specs.get(name)
        # The common case, without reading the protobuf: an array of the declared
        # dtype and a fitting shape (what a training loop feeds every step).
        if spec is not None and value.__class__ is np.ndarray and value.dtype == spec[0] \
                and _shape_fits(spec[1], value.shape) and \
                value.nbytes <= limits.MAX_TENSOR_BYTES:
            checked[name] = value
            continue
        desc = gb.table.vars.get(name)
        if desc is None:
            written = {n for o in gb.ops for n in o.output_arg_names}
            data = [d.name for d in gb.table.vars.values()
                    if not d.persistable and d.name not in written]
            raise FeedError(f"cannot feed {name!r}: the global block declares no such "
                            f"variable{did_you_mean(name, gb.table.vars)} (variables no "
                            f"op writes: {data[:10]})")
        if desc.persistable:
            what = "a parameter" if desc.is_parameter else "persistable"
            raise FeedError(
                f"cannot feed {name!r}: it is {what}, so it lives in the scope across runs "
                f"and a feed would last one run. Set it in the scope instead "
                f"(scope.find_var({name!r}).set(array)), or load it with "
                f"pd.io.load_persistables")
        checked[name] = convert_feed(name, desc, value)
        specs[name] = (dtypes.to_numpy(var_dtype(desc)), tuple(var_shape(desc) or ()))
    return checked

def fetch(run_scope, name: str, feed: dict):
    """The value of ``name`` when the run ends, as the user gets it (module docstring)."""
    var = run_scope.find_var(name)
    if var is None or not var.is_initialized():
        raise FetchError(f"cannot fetch {name!r}: it is declared, but nothing in this run "
                         f"wrote it and it was not fed")
    value = var.get()
    if value.__class__ is SelectedRows:
        # Paddle 2.6.2's fetch refuses a SelectedRows ("The Variable type must be
        # TensorArray"); here it comes back as what it is, copied to the host: rows,
        # value, height (.to_dense() for the dense tensor).
        return value.to_host()
    if hasattr(value, "copy_to_host"):
        return value.copy_to_host()
    # A large run-scope array that a kernel allocated is handed over without a copy:
    # the run scope dies now, so nobody else holds it. Anything else is copied, so
    # changing the result never changes a parameter (a view, a value of an outer
    # scope) or a feed. Small arrays are copied anyway: cheaper than making sure.
    if value.__class__ is np.ndarray and value.nbytes >= _NO_COPY_BYTES and \
            value.base is None and \
            var.scope is run_scope and not _is_fed(value, feed) and \
            not _held_outside(value, run_scope):
        return value
    return np.array(value, copy=True)


def convert_feed(name: str, desc, value) -> np.ndarray:
    want_code = var_dtype(desc)
    shape = var_shape(desc)
    if want_code is None or desc.type.type != VarType.LOD_TENSOR:
        raise FeedError(f"cannot feed {name!r}: it is not a tensor variable")
    try:
        want = dtypes.to_numpy(want_code)
    except TypeError:
        raise FeedError(f"cannot feed {name!r}: its declared data type "
                        f"{dtypes.name(want_code)} is not a tensor element type") from None
    if isinstance(value, np.ndarray):
        if value.dtype != want:
            raise FeedError(f"feed {name!r}: expected dtype {want}, given {value.dtype} "
                            f"(convert it with .astype('{want}'))")
        array = value
    else:
        array = _array_from_python(name, value, want)
    if shape:
        if not _shape_fits(shape, array.shape):
            raise FeedError(f"feed {name!r}: expected shape {shape} (-1 = any size), given "
                            f"{list(array.shape)}")
    if array.nbytes > limits.MAX_TENSOR_BYTES:
        # nbytes is the logical size: a broadcast view (np.broadcast_to, zero strides) is a
        # few bytes of memory, but every op that reads it makes a result of this size
        view = (f" (a view with strides {array.strides}: it takes little memory itself, "
                f"but every op that reads it makes a result of this size)"
                if 0 in array.strides and array.size > 1 else "")
        raise FeedError(f"feed {name!r}: shape {list(array.shape)} ({array.dtype}) is "
                        f"{limits.human_bytes(array.nbytes)} as a tensor{view}; "
                        f"{limits.limit_text()}")
    return array


_NO_COPY_BYTES = 1 << 16


def _is_fed(value, feed: dict) -> bool:
    return any(value is v for v in feed.values())


def _held_outside(value, run_scope) -> bool:
    """Does a scope above the run scope hold ``value`` (an op like assign can pass a
    parameter's array on unchanged)? Parameters are few: an identity scan is cheap."""
    scope = run_scope.parent
    while scope is not None:
        if any(v._value is value for v in list(scope._vars.values())):
            return True
        scope = scope.parent
    return False


def _shape_fits(declared, given) -> bool:
    """A declared shape (-1 = any size; empty = not declared) admits ``given``."""
    return not declared or (len(declared) == len(given) and
                            all(d < 0 or d == g for d, g in zip(declared, given)))


def _array_from_python(name: str, value, want: np.dtype) -> np.ndarray:
    """A list, scalar or other array-like as an array of ``want``; refuses what is not
    numbers (None, a dict, an arbitrary object, strings) and conversions that would change
    a value (1.5 or 300 into an int8, 2 into a bool)."""
    what = type(value).__name__
    try:
        natural = np.asarray(value)
    except (TypeError, ValueError) as e:          # ragged nested lists, broken __array__
        raise FeedError(f"feed {name!r}: cannot convert {what} to {want}: {e}") from None
    kind = natural.dtype.kind
    if kind in "OV":
        if natural.ndim and all(isinstance(v, numbers.Number) for v in natural.flat):
            raise FeedError(f"feed {name!r}: cannot convert {what} to {want}: it holds "
                            f"numbers no fixed-size type holds (too large?): "
                            f"{natural.ravel()[:3].tolist()}")
        raise FeedError(f"feed {name!r}: cannot convert {what} to {want}: a feed is a numpy "
                        f"array, a (nested) list of numbers or a number; {what} is not "
                        f"array-like" + (" (a list of other objects)" if natural.ndim else ""))
    if kind in "USMmc":
        raise FeedError(f"feed {name!r}: cannot convert {what} to {want}: it holds "
                        f"{natural.dtype} values, not real numbers")
    try:
        array = natural.astype(want)
    except (TypeError, ValueError) as e:
        raise FeedError(f"feed {name!r}: cannot convert {what} to {want}: {e}") from None
    if want.kind in "biu" and natural.dtype != want:
        with np.errstate(invalid="ignore"):
            lossless = np.array_equal(array.astype(natural.dtype), natural)
        if not lossless:
            bad = natural.ravel()[np.flatnonzero(array.astype(natural.dtype).ravel()
                                                 != natural.ravel())[:3]]
            raise FeedError(f"feed {name!r}: {want} cannot hold the given values exactly "
                            f"(e.g. {', '.join(map(repr, bad.tolist()))}); convert them "
                            f"yourself (np.asarray(v).astype('{want}')) if that is meant")
    return array


def missing_feed_error(prepared, missing) -> FeedError:
    """Located at the first op that reads a missing data variable, as the kernel's own error
    would be, with the other missing ones listed."""
    name = missing[0]
    pop, slot = prepared.data_reads[name]
    example = ", ".join(f"{n!r}: ..." for n in missing)
    text = (f"{pop.where}: input slot {slot}: variable {name!r} has no value: it is a data "
            f"variable (no op writes it, so only a feed can) and the feed does not have it; "
            f"pass exe.run(..., feed={{{example}}})")
    for other in missing[1:]:
        o_pop, o_slot = prepared.data_reads[other]
        text += f"\n  also not fed: {other!r}, read by {o_pop.where} (slot {o_slot})"
    if pop.created_at:
        text += f"\n  op created at: {pop.created_at}"
    e = FeedError(text)
    e._paddle_nb_located = True
    e.failed_op = pop.op
    return e
