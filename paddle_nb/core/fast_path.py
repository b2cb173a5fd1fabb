"""A block bound once, and the rewritten programs of ``Executor.run``'s fast path.

* **A flat environment.** Every name a block's ops use gets a number when the block is
  prepared (:func:`bind_slots`: each op's slots become tuples of numbers). When the block
  runs, each name is looked up in the scope chain once, giving a list of ``Variable``
  objects (the environment, ``kernel_context.BlockRun``); an op then reads ``env[i]._value``
  instead of walking scopes per input. Every run binds this way, stepped or not: the scopes
  are the same objects either way (the run scope, step scopes and kids), and a name written
  in a nearer scope than the one bound is one the block itself declares, so it is bound
  there. A debugger stepping back puts the same Variable objects back, so the bindings of a
  paused run stay true.
* **The allocation guard's signatures.** :func:`signature` is what an op's guard compares
  (the shapes and dtypes it reads); :func:`entry_signature` lets a block run skip the guard
  op by op when what enters the block has shapes it passed with before.
* **Rewritten programs.** ``rewrite`` (installed by ``paddle_nb.passes``: the core does not
  import the passes) may give ``Executor.run`` a rewritten copy of a program, as Paddle's
  IR passes do (a recurrent op's input projection hoisted out of the loop, fc fusion):
  :func:`rewritten`. The copy keeps every name the run feeds or fetches. Errors must name the
  ops of the program the user wrote, so a run of the copy that fails is undone (runs are all
  or nothing) and the program as written runs again, whose error is the one raised. Stepping
  and the NaN/Inf check run the program as written.

A test (tests/test_fast_path.py) runs every op-table program and the course's models both
ways (``run`` and ``steps``) and compares the results bit for bit (to 1e-6 where a rewrite
reorders float sums).
"""
from __future__ import annotations

import numpy as np

from . import registry
from .grad_maker import EMPTY_VAR


# (program, keep: frozenset of names) -> a rewritten copy of program, or None when no pass
# changes it; set by paddle_nb.passes (passes.for_fast_path).
rewrite = None


def bind_slots(prepared_ops) -> tuple[list[str], tuple[int, ...]]:
    """Number every name the ops use (inputs and outputs, first use first) and give each
    op ``in_ix`` / ``out_ix`` (slot -> tuple of numbers; -1 for an empty output) and
    ``sig_ix`` (the numbers of what its allocation guard reads). Returns the names, in
    number order (the environment of a block run is ``[find_var(n) for n in names]``), and
    the numbers of the names some op reads before any op of the block writes them."""
    numbers: dict[str, int] = {}

    def ix(name: str) -> int:
        if name == EMPTY_VAR:
            return -1
        i = numbers.get(name)
        if i is None:
            i = numbers[name] = len(numbers)
        return i

    written: set[int] = set()
    entry: list[int] = []
    for pop in prepared_ops:
        pop.in_ix = {slot: tuple(ix(n) for n in names) for slot, names in pop.inputs.items()}
        pop.out_ix = {slot: tuple(ix(n) for n in names) for slot, names in pop.outputs.items()}
        pop.sig_ix = tuple(ix(n) for n in pop.input_list)
        entry += [i for i in pop.sig_ix if i >= 0 and i not in written and i not in entry]
        written.update(i for ix_ in pop.out_ix.values() for i in ix_ if i >= 0)
    return list(numbers), tuple(entry)


def entry_signature(entry_ix, env) -> tuple:
    """The shapes and dtypes of what a block reads before writing it (its feeds,
    parameters, step inputs): with every op's output shape a function of its inputs'
    (all ops have shape inference, none made a data-sized output), equal entry signatures
    mean equal shapes everywhere in the block, so the allocation guard that passed for one
    passes for the other without being run op by op."""
    return tuple(_keys(env, entry_ix))


def _keys(env, indices) -> list:
    """(shape, dtype) of each numpy value at ``indices`` of the environment, (class, shape)
    of any other (-1: an empty slot). One loop, not a call per value: it runs per op."""
    keys = []
    for i in indices:
        var = env[i] if i >= 0 else None
        value = var._value if var is not None else None
        keys.append((value.shape, value.dtype) if value.__class__ is np.ndarray
                    else (value.__class__, getattr(value, "shape", None)))
    return keys


def signature(pop, env) -> tuple:
    """What ``pop``'s allocation guard compares with its last pass: the shapes (and, for
    numpy arrays, dtypes) of the values it reads, with the class of any other value (a
    device array, a SelectedRows of the same shape, a list). About 0.4 us for a one-input
    op: the guard's cost per op per run, when the block's entry shapes are new."""
    sig = _keys(env, pop.sig_ix)
    if pop.tensor_attrs is not None:    # shapes that depend on a tensor's value: it too
        sig.append(pop.tensor_attrs.key(
            lambda slot: [env[i].get() for i in pop.in_ix[slot]]))
    return tuple(sig)


# The attribute of a Program holding its rewritten copies for the fast path:
# {names kept: (program version, copy or None)}.
_REWRITE_ATTR = "_rewritten_for_run"


def rewritten(program, feed, fetch_list):
    """The fast path's copy of ``program`` (:data:`rewrite`) keeping what this run feeds and
    fetches, made once per program version and set of names; None when no pass changes the
    program (or a pass fails: the program runs as written)."""
    if rewrite is None:
        return None
    names = set()
    for key in (feed or {}):
        names.add(key if isinstance(key, str) else getattr(key, "name", None))
    items = fetch_list if isinstance(fetch_list, (list, tuple)) else \
        ([] if fetch_list is None else [fetch_list])
    for item in items:
        names.add(item if isinstance(item, str) else getattr(item, "name", None))
    keep = frozenset(n for n in names if isinstance(n, str))
    cache = program.__dict__.setdefault(_REWRITE_ATTR, {})
    version = program.version
    hit = cache.get(keep)
    if hit is not None and hit[0] == version:
        return hit[1]
    try:
        # a program that talks to parameter servers is not run twice (a failed run of the
        # copy would have sent its gradients already): it runs as written
        copy = None if talks_to_servers(program) else rewrite(program, keep)
    except Exception:                 # noqa: BLE001 (a pass that cannot: run as written)
        copy = None
    if len(cache) >= 8:               # a loop fetching ever other names: keep it bounded
        cache.clear()
    cache[keep] = (version, copy)
    return copy


def talks_to_servers(program) -> bool:
    """Does an op of ``program`` use the executor's transport (OpDef.remote)?"""
    return any(registry.is_registered(op.type) and registry.lookup(op.type).remote
               for b in program.blocks for op in b.ops)
