"""What a kernel sees while it runs: its op's inputs, attributes and outputs in a scope.

Kernels read inputs with ``ctx.input("X")`` (a list for duplicable slots:
``ctx.inputs("X")``), attributes with ``ctx.attr("axis")`` and write results with
``ctx.set_output("Out", array)``. A kernel that runs a sub-block returns a generator
(``yield from ctx.run_block(idx, scope)``) so the stepper can stop inside it.

There is one context class for every way a block runs. What differs between runs sits in
the :class:`BlockRun` every op of one block run shares:

* **the environment**: each name the block's ops use was numbered when the block was
  prepared (``fast_path.bind_slots``); the run looks each up in the scope chain once, and an
  op reads ``env[i]`` instead of walking the scopes per input;
* **the hooks** (:class:`RunHooks`): single steps, the NaN/Inf check and the debugger's
  before-op copy. ``Executor.run`` has none (``hooks`` is None: nothing to test per op but
  that); ``Executor.steps`` and the debugger pass them down to every sub-block;
* **the place's memory** (:data:`HOST` or :data:`DEVICE`): where tensors a kernel reads
  live and who allocates its outputs. On CUDAPlace a host array found in a scope (a
  parameter a startup program made on the CPU) moves to the device on first read and is
  stored back, so it stays there; CUDA kernels allocate their device arrays themselves;
* **buffer reuse**: ``ctx.out`` hands back an output array this op made on an earlier run
  when nobody holds it any more. Stepping turns it off: a learner may keep any step's values.
"""
from __future__ import annotations

import sys

import numpy as np

from . import limits
from .errors import ExecutionError
from .selected_rows import SelectedRows
from ..kernels.cuda import device


class RunHooks:
    """What watches a block run op by op; None on the plain path (``Executor.run``).

    ``stepping``: yield a Step after each op (``Executor.steps``, the debugger);
    ``check_nan_inf``: test every float output as soon as its op has run;
    ``before_op(op, scope, frames)``: called before each op's kernel (the debugger copies
    what the op will overwrite, for stepping back)."""
    __slots__ = ("stepping", "check_nan_inf", "before_op")

    def __init__(self, stepping: bool = True, check_nan_inf: bool = False, before_op=None):
        self.stepping = stepping
        self.check_nan_inf = check_nan_inf
        self.before_op = before_op


class HostMemory:
    """Tensors are numpy arrays in the scope, read as they are; outputs ``np.empty``."""
    on_host = True

    @staticmethod
    def read(var):
        return var._value

    @staticmethod
    def empty(shape, dtype):
        return np.empty(shape, dtype)


class DeviceMemory:
    """CUDAPlace: a host tensor read moves to the device and is stored back (an array, a
    SelectedRows' rows and value, a tensor array's items); kernels allocate outputs."""
    on_host = False

    @staticmethod
    def read(var):
        return on_device(var)

    @staticmethod
    def empty(shape, dtype):
        return None        # CUDA kernels allocate device arrays themselves


HOST, DEVICE = HostMemory(), DeviceMemory()


class BlockRun:
    """What every op of one block run shares: the scope, the executor, the stack of frames,
    the environment (one Variable or None per bound name), the hooks, the place's memory and
    whether output buffers are reused."""
    __slots__ = ("scope", "executor", "place", "frames", "env", "hooks", "memory", "on_host",
                 "reuse", "compiler")

    def __init__(self, scope, executor, frames, names, hooks, bound=None, compiler=None):
        self.scope = scope
        self.executor = executor
        self.place = executor.place
        self.frames = frames
        self.hooks = hooks
        self.memory = DEVICE if self.place.kind == "cuda" else HOST
        self.on_host = self.memory is HOST        # read on every input: one attribute
        self.reuse = hooks is None and self.on_host
        self.compiler = compiler     # a CompiledProgram's run: sub-blocks run its plans too
        find = scope.find_var
        if bound is None:
            self.env = [find(n) for n in names]
        else:       # a compiled plan's names only (the rest of the block is never read)
            self.env = env = [None] * len(names)
            for i in bound:
                env[i] = find(names[i])

    def bind_all(self, names) -> None:
        """Look up every name still unbound (a compiled plan's guess was wrong)."""
        find, env = self.scope.find_var, self.env
        for i, var in enumerate(env):
            if var is None:
                env[i] = find(names[i])


class KernelContext:
    """A kernel's view of one op (a PreparedOp) in one block run: inputs and outputs by the
    numbers ``fast_path.bind_slots`` gave the op's slots."""
    __slots__ = ("op", "run")

    def __init__(self, op, run: BlockRun):
        self.op = op              # a PreparedOp
        self.run = run

    # the run's shared state, read through (kernels of control-flow ops use these)
    scope = property(lambda self: self.run.scope)
    executor = property(lambda self: self.run.executor)
    place = property(lambda self: self.run.place)
    frames = property(lambda self: self.run.frames)     # the running blocks, outermost first

    @property
    def stepping(self) -> bool:
        """Does somebody watch single steps (a fused op then yields its inner steps)?"""
        hooks = self.run.hooks
        return hooks is not None and hooks.stepping

    # --- inputs -----------------------------------------------------------------------
    def has_input(self, slot: str) -> bool:
        return bool(self.op.inputs.get(slot))

    def input_names(self, slot: str) -> list[str]:
        return self.op.inputs.get(slot, [])

    def input(self, slot: str):
        """The value of the (first) variable in input ``slot``; None if the slot is empty."""
        ix = self.op.in_ix.get(slot)
        if not ix:
            return None
        run = self.run
        var = run.env[ix[0]]
        if var is None or var._kind is None:
            return self._no_value(slot, 0)
        value = var._value
        if value.__class__ is np.ndarray and run.on_host:
            return value                      # the common case, without another call
        return self._read(var)

    def input_or_none(self, slot: str, i: int = 0):
        """The value of input ``slot`` (its ``i``-th var), or None when nothing wrote it
        (a branch that ran on no rows, an output of a block that did not run)."""
        ix = self.op.in_ix.get(slot)
        var = self.run.env[ix[i]] if ix and i < len(ix) else None
        return self._read(var) if var is not None and var._kind is not None else None

    def inputs(self, slot: str) -> list:
        env, out = self.run.env, []
        for j, i in enumerate(self.op.in_ix.get(slot, ())):
            var = env[i]
            out.append(self._read(var) if var is not None and var._kind is not None
                       else self._no_value(slot, j))
        return out

    def _read(self, var):
        if var._value is None:   # the value and its kind are cleared together by _destroy
            return var.get()     # ... which says the scope was deleted
        return self.run.memory.read(var)

    def _no_value(self, slot: str, i: int):
        name = self.op.inputs[slot][i]
        var = self.run.env[self.op.in_ix[slot][i]]
        if var is not None and not var._scope.alive:
            var.get()            # the scope-was-deleted error
        raise ExecutionError(f"input slot {slot}: variable {name!r} has no value. "
                             + why_no_value(self.op, name))

    # --- attributes ---------------------------------------------------------------------
    def attr(self, name: str):
        """Attribute ``name``; where a tensor gives it (fill_constant's ShapeTensorList...),
        the tensor's value now (core/attr_tensors.py): a kernel never reads those itself."""
        given = self.op.tensor_attrs
        if given is not None and name in given.by_attr:
            return given.value(name, self.inputs)
        return self.op.attrs[name]

    def resolved(self, key, make):
        """``make()``, computed once per op and ``key`` (say, the input's dtype) and kept on
        the prepared op: the glue a kernel derives from attributes (which kernel, the
        constants in the input's type) is resolved at its first run, not at every run
        (at every run where a tensor gives an attribute: its value may change).
        The prepared op is rebuilt when the program changes, and the memo with it."""
        if self.op.tensor_attrs is not None:     # attributes tensors give change per run
            return make()
        memo = self.op.memo
        value = memo.get(key, memo)
        if value is memo:
            value = memo[key] = make()
        return value

    # --- outputs ----------------------------------------------------------------------
    def output_names(self, slot: str) -> list[str]:
        return self.op.outputs.get(slot, [])

    def has_output(self, slot: str) -> bool:
        return bool(self.op.outputs.get(slot))

    def set_output(self, slot: str, value, i: int = 0) -> None:
        ix = self.op.out_ix.get(slot)
        if not ix or ix[i] < 0:                   # an output nobody asked for
            return
        j = ix[i]
        if getattr(value, "nbytes", 0) > limits.MAX_TENSOR_BYTES:
            too_large(slot, self.op.outputs[slot][i], value)
        env = self.run.env
        var = env[j]
        if var is None:                           # declared nowhere: made in this scope
            var = env[j] = self.run.scope.var(self.op.outputs[slot][i])
        if value.__class__ is np.ndarray:
            var._value, var._kind = value, "tensor"
        else:
            var.set(value)

    def set_outputs(self, slot: str, values) -> None:
        for i, v in enumerate(values):
            self.set_output(slot, v, i)

    def output_value(self, slot: str, i: int = 0):
        """The current value of output ``slot``'s ``i``-th variable, or None if unset."""
        ix = self.op.out_ix.get(slot) or ()
        var = self.run.env[ix[i]] if i < len(ix) and ix[i] >= 0 else None
        return var.get() if var is not None and var._kind is not None else None

    def output_var(self, slot: str, i: int = 0):
        """The Variable of output ``slot``; one declared nowhere is made in this scope."""
        j = self.op.out_ix[slot][i]
        env = self.run.env
        var = env[j]
        if var is None:
            var = env[j] = self.run.scope.var(self.op.outputs[slot][i])
        return var

    def out(self, slot: str, shape, dtype, i: int = 0, _count=sys.getrefcount):
        """An array for output ``slot``, which the kernel writes whole (None on CUDA: its
        kernels allocate). On the plain path it is the array this op made on an earlier run
        when nobody holds it any more (not the user who fetched it, not a scope, not a view),
        else a new one. Two buffers per output take turns, so an optimizer's new parameter
        value is written into the parameter array of two steps ago: no allocation, and the
        run stays all or nothing (the previous value is untouched until the run ends). Each
        thread has its own buffers: with one pair shared by threads running the same op,
        reference counts did not stop another thread's numbers showing up
        (tests/test_concurrency.py). ``shape`` a tuple (a list never matches a buffer)."""
        run = self.run
        if not run.reuse:
            return run.memory.empty(shape, dtype)
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
        new = np.empty(shape, dtype)
        pair[0], pair[1] = b, new
        return new

    # --- sub-blocks -----------------------------------------------------------------------
    @property
    def keep_scopes(self) -> bool:
        """Keep the scopes sub-blocks ran in (a gradient op will read them)?"""
        return self.op.keep_scopes

    def new_scope(self, name: str):
        """A kid of this op's scope, named for the scope tree: ``while@3/step 2``."""
        return self.run.scope.new_scope(f"{self.op.op.type}@{self.op.index}/{name}")

    def run_block(self, block_idx: int, scope):
        """A generator running block ``block_idx`` in ``scope`` under this run's hooks (one
        Step per op when stepping)."""
        run = self.run
        return run.executor.run_sub_block(self.op.program, block_idx, scope, run.frames,
                                          self.op.op, run.hooks, run.compiler)


def too_large(slot: str, name: str, value):
    """The allocation guard's backstop, for outputs sized by data (runtime_shapes.py sizes
    the others before the kernel runs): the value is dropped, never stored."""
    raise ExecutionError(f"output {slot} ({name!r}) has shape {list(value.shape)} "
                         f"({value.dtype}), {limits.human_bytes(value.nbytes)}; "
                         f"{limits.limit_text()}")


def why_no_value(pop, name: str) -> str:
    """Why ``name`` holds nothing when ``pop`` (a PreparedOp) reads it: from its declaration."""
    generic = ("Nothing before this op wrote it, it was not fed, and no scope holds it (a "
               "parameter needs its startup program run first).")
    try:
        block = pop.op.block
        desc = block.lookup(name)
    except Exception:                     # noqa: BLE001 (only a better message is at stake)
        return generic
    if desc is None:
        return generic
    if desc.persistable:
        return (f"It is {'a parameter' if desc.is_parameter else 'persistable'}: its value "
                f"comes from the scope, and this scope has none (run the startup program "
                f"first, or load it with pd.io.load_persistables, in this scope).")
    writers = [op for b in block.program.blocks for op in b.ops
               if name in op.output_arg_names]
    if not writers:
        return (f"No op writes it, so only a feed can: pass it in feed= "
                f"(exe.run(..., feed={{{name!r}: ...}})).")
    return ("The ops that write it did not run before this one (a branch that ran on no "
            "rows, a loop that ran no steps), and it was not fed. " + generic)


def on_device(var):
    """``var``'s value with host tensors moved to the device (and stored back): an
    array, a SelectedRows' rows and value, a tensor array's items."""
    value = var.get()
    if isinstance(value, np.ndarray):
        value = device.to_device(value)
        var.set(value, "tensor")
    elif value.__class__ is SelectedRows and not value.on_device:
        value = value.map(device.to_device)
        var.set(value, "selected_rows")
    elif isinstance(value, list) and any(isinstance(v, np.ndarray) for v in value):
        value[:] = [device.to_device(v) if isinstance(v, np.ndarray) else v for v in value]
    return value

