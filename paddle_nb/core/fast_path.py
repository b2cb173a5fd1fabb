"""The compiled run path: what ``Executor.run`` uses when nobody watches single steps.

``Executor.steps`` and the debugger look every name up in the scope chain when an op reads
or writes it, because a learner may pause between any two ops and look. ``Executor.run``
without ``check_nan_inf`` has no such watcher, so a block is bound once instead:

* **A flat environment.** Every name a block's ops use gets a number when the block is
  prepared (:func:`bind_slots`: each op's slots become tuples of numbers). When the block
  runs, each name is looked up in the scope chain once, giving a list of ``Variable``
  objects (the environment); an op then reads ``env[i]._value`` instead of walking scopes
  per input. The scopes themselves are exactly the interpreter's (the same run scope, step
  scopes and kids), so control-flow kernels, which make and read scopes, run unchanged.
* **A light context.** :class:`FlatContext` has two fields (the op and the block run); the
  run's shared state (scope, executor, place, flags, environment) sits in one
  :class:`BlockRun` made per block run, not copied into a context per op.
* **Reused output buffers.** A kernel that asks ``ctx.out(slot, shape, dtype)`` for its
  output array gets the array this op made on an earlier run when nobody else holds it any
  more (its reference count says so: not the user who fetched it, not a scope, not a view),
  and a new one otherwise. Two buffers per output take turns, so an optimizer's new
  parameter value is written into the parameter array of two steps ago: no allocation, and
  the run stays all or nothing (the previous value is untouched until the run ends). Each
  thread has its own buffers (a ``threading.local`` on the prepared op): with one pair
  shared by threads running the same op, 2 of 30 runs of eight threads training an RNN
  gave another thread's numbers (tests/test_concurrency.py), which the reference counts
  did not prevent; per thread, 0 of 50. The interpreter's context answers ``out`` with
  ``np.empty``, so a stepped run never shares.
* **Rewritten programs.** ``rewrite`` (installed by ``paddle_nb.passes``: the core does not
  import the passes) may give the compiled path a rewritten copy of a program, as Paddle's
  IR passes do (a recurrent op's input projection hoisted out of the loop, fc fusion). The
  copy keeps every name the run feeds or fetches. Errors must name the ops of the program
  the user wrote, so a run of the copy that fails is undone (runs are all or nothing) and
  the program as written runs again, whose error is the one raised.

A test (tests/test_fast_path.py) runs every op-table program and the course's models both
ways and compares the results bit for bit (to 1e-6 where a rewrite reorders float sums).
"""
from __future__ import annotations

import sys

import numpy as np

from . import validate
from .errors import ExecutionError
from .grad_maker import EMPTY_VAR
from .kernel_context import KernelContext, _on_device, _too_large, _why_no_value


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
    sig = []
    for i in entry_ix:
        var = env[i]
        value = var._value if var is not None else None
        sig.append((value.shape, value.dtype) if value.__class__ is np.ndarray
                   else (value.__class__, getattr(value, "shape", None)))
    return tuple(sig)


def signature(pop, env) -> tuple:
    """runtime_shapes.signature over the environment: the shapes (and numpy dtypes) of the
    values ``pop`` reads."""
    sig = []
    for i in pop.sig_ix:
        var = env[i] if i >= 0 else None
        value = var._value if var is not None else None
        sig.append((value.shape, value.dtype) if value.__class__ is np.ndarray
                   else (value.__class__, getattr(value, "shape", None)))
    if pop.tensor_attrs is not None:    # shapes that depend on a tensor's value: it too
        sig.append(pop.tensor_attrs.key(
            lambda slot: [env[i].get() for i in pop.in_ix[slot]]))
    return tuple(sig)


class BlockRun:
    """What every op of one block run shares: the scope, the executor and its switches,
    the stack of frames, and the environment (one Variable or None per bound name)."""
    __slots__ = ("scope", "executor", "place", "training", "frames", "env")

    def __init__(self, scope, executor, place, training, frames, names):
        self.scope = scope
        self.executor = executor
        self.place = place
        self.training = training
        self.frames = frames
        find = scope.find_var
        self.env = [find(n) for n in names]


class FlatContext(KernelContext):
    """KernelContext over a :class:`BlockRun`: inputs and outputs by number."""
    __slots__ = ("run",)
    check_nan_inf = False       # the compiled path runs only without the check ...
    stepping = False            # ... and without single steps
    before_op = None            # ... or a debugger's hook
    _host = True                # a host array read is the value itself (not on CUDA)

    def __init__(self, op, run: BlockRun):     # super().__init__ on purpose not called
        self.op = op
        self.run = run

    # the run's shared state, read through (kernels of control-flow ops use these)
    scope = property(lambda self: self.run.scope)
    executor = property(lambda self: self.run.executor)
    place = property(lambda self: self.run.place)
    training = property(lambda self: self.run.training)
    frames = property(lambda self: self.run.frames)

    # --- inputs -----------------------------------------------------------------------
    def _var(self, slot: str, i: int = 0):
        ix = self.op.in_ix.get(slot)
        if not ix or i >= len(ix):
            return None
        return self.run.env[ix[i]]

    def input(self, slot: str):
        ix = self.op.in_ix.get(slot)
        if not ix:
            return None
        var = self.run.env[ix[0]]
        if var is None or var._kind is None:
            return self._no_value(slot, 0)
        value = var._value
        if value.__class__ is np.ndarray and self._host:
            return value                      # the common case, without another call
        return self._read(var)

    def input_or_none(self, slot: str, i: int = 0):
        var = self._var(slot, i)
        return self._read(var) if var is not None and var._kind is not None else None

    def inputs(self, slot: str) -> list:
        env, out = self.run.env, []
        for j, i in enumerate(self.op.in_ix.get(slot, ())):
            var = env[i]
            out.append(self._read(var) if var is not None and var._kind is not None
                       else self._no_value(slot, j))
        return out

    def _read(self, var):
        value = var._value
        if value is None:        # the value and its kind are cleared together by _destroy
            return var.get()     # ... which says the scope was deleted
        return value

    def _no_value(self, slot: str, i: int):
        name = self.op.inputs[slot][i]
        var = self.run.env[self.op.in_ix[slot][i]]
        if var is not None and not var._scope.alive:
            var.get()            # the scope-was-deleted error
        raise ExecutionError(f"input slot {slot}: variable {name!r} has no value. "
                             + _why_no_value(self.op, name))

    # --- outputs ----------------------------------------------------------------------
    def set_output(self, slot: str, value, i: int = 0) -> None:
        ix = self.op.out_ix.get(slot)
        if not ix or ix[i] < 0:                   # an output nobody asked for
            return
        j = ix[i]
        if getattr(value, "nbytes", 0) > validate.MAX_TENSOR_BYTES:
            _too_large(slot, self.op.outputs[slot][i], value)
        env = self.run.env
        var = env[j]
        if var is None:                           # declared nowhere: made here, as
            var = env[j] = self.run.scope.var(self.op.outputs[slot][i])   # set_output does
        if value.__class__ is np.ndarray:
            var._value, var._kind = value, "tensor"
        else:
            var.set(value)

    def output_value(self, slot: str, i: int = 0):
        ix = self.op.out_ix.get(slot) or ()
        var = self.run.env[ix[i]] if i < len(ix) and ix[i] >= 0 else None
        return var.get() if var is not None and var._kind is not None else None

    def output_var(self, slot: str, i: int = 0):
        j = self.op.out_ix[slot][i]
        var = self.run.env[j]
        if var is None:
            var = self.run.env[j] = self.run.scope.var(self.op.outputs[slot][i])
        return var

    def out(self, slot: str, shape, dtype, i: int = 0, _count=sys.getrefcount,
            _empty=np.empty) -> np.ndarray:
        """An array for output ``slot`` to be written whole by the kernel: one this op made
        on an earlier run if nobody holds it any more, else a new one (module docstring).
        ``shape`` a tuple (a list never matches a buffer: a new array each time)."""
        mine = self.op.buffers            # this thread's (a threading.local)
        buffers = getattr(mine, "d", None)
        if buffers is None:
            buffers = mine.d = {}
        key = slot if i == 0 else (slot, i)
        pair = buffers.get(key)
        if pair is None:
            pair = buffers[key] = [None, None]
        a, b = pair
        # each held by: the pair, the local name and getrefcount's argument; anything more
        # is someone else (a scope's Variable, the user, a view's .base). The reference is
        # taken before the count, so two threads asking at once both see more.
        if a is not None and _count(a) == 3 and a.shape == shape and a.dtype == dtype:
            pair[0], pair[1] = b, a           # the other one is tried first next time
            return a
        if b is not None and _count(b) == 3 and b.shape == shape and b.dtype == dtype:
            pair[0], pair[1] = a, b
            return b
        new = _empty(shape, dtype)
        pair[0], pair[1] = b, new
        return new


class FlatCudaContext(FlatContext):
    """The compiled path on CUDAPlace: host tensors move to the device on first read
    (CudaKernelContext's rule)."""
    __slots__ = ()
    _host = False

    def _read(self, var):
        if var._value is None:
            return var.get()
        return _on_device(var)

    def out(self, slot: str, shape, dtype, i: int = 0):
        return None        # CUDA kernels allocate device arrays themselves (CudaKernelContext)
