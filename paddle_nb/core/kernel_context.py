"""What a kernel sees while it runs: its op's inputs, attributes and outputs in a scope.

Kernels read inputs with ``ctx.input("X")`` (a list for duplicable slots:
``ctx.inputs("X")``), attributes with ``ctx.attr("axis")`` and write results with
``ctx.set_output("Out", array)``. A kernel that runs a sub-block returns a generator
(``yield from ctx.run_block(idx, scope)``) so the stepper can stop inside it.
"""
from __future__ import annotations

import numpy as np

from . import validate
from .errors import ExecutionError
from .grad_maker import EMPTY_VAR
from .selected_rows import SelectedRows


class KernelContext:
    __slots__ = ("op", "scope", "executor", "place", "training", "frames", "check_nan_inf",
                 "stepping", "before_op")

    def __init__(self, op, scope, executor, place, training=False, frames=(),
                 check_nan_inf=False, stepping=True):
        self.op = op              # a PreparedOp
        self.scope = scope
        self.executor = executor
        self.place = place
        self.training = training
        self.frames = frames      # the running blocks, outermost first
        self.check_nan_inf = check_nan_inf   # sub-blocks run with the same check
        self.stepping = stepping             # ... and yield a Step per op only if this is on
        self.before_op = None                # Executor.steps' hook, passed to sub-blocks

    # --- inputs -----------------------------------------------------------------------
    def has_input(self, slot: str) -> bool:
        return bool(self.op.inputs.get(slot))

    def input_names(self, slot: str) -> list[str]:
        return self.op.inputs.get(slot, [])

    def input(self, slot: str):
        """The value of the (first) variable in input ``slot``; None if the slot is empty."""
        names = self.op.inputs.get(slot)
        if not names:
            return None
        return self._value(names[0], slot)

    def input_or_none(self, slot: str, i: int = 0):
        """The value of input ``slot`` (its ``i``-th var), or None when nothing wrote it
        (a branch that ran on no rows, an output of a block that did not run)."""
        names = self.op.inputs.get(slot)
        if not names or i >= len(names):
            return None
        var = self.scope.find_var(names[i])
        return var.get() if var is not None and var.is_initialized() else None

    def inputs(self, slot: str) -> list:
        return [self._value(n, slot) for n in self.op.inputs.get(slot, [])]

    def _value(self, name: str, slot: str):
        var = self.scope.find_var(name)
        if var is None or not var.is_initialized():
            raise ExecutionError(f"input slot {slot}: variable {name!r} has no value. "
                                 + _why_no_value(self.op, name))
        return var.get()

    # --- attributes and outputs ---------------------------------------------------------
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

    def output_names(self, slot: str) -> list[str]:
        return self.op.outputs.get(slot, [])

    def has_output(self, slot: str) -> bool:
        return bool(self.op.outputs.get(slot))

    def set_output(self, slot: str, value, i: int = 0) -> None:
        names = self.op.outputs.get(slot)
        if not names or names[i] == EMPTY_VAR:     # an output nobody asked for
            return
        name = names[i]
        if getattr(value, "nbytes", 0) > validate.MAX_TENSOR_BYTES:
            _too_large(slot, name, value)
        var = self.scope.find_var(name)
        if var is None:
            var = self.scope.var(name)
        var.set(value)

    def out(self, slot: str, shape, dtype, i: int = 0) -> np.ndarray:
        """A new array for output ``slot``, which the kernel writes whole. The compiled run
        path (core/fast_path.py) answers with a buffer from an earlier run when it can;
        here, where a learner may keep any step's values, it is always a new one."""
        return np.empty(shape, dtype)

    def set_outputs(self, slot: str, values) -> None:
        for i, v in enumerate(values):
            self.set_output(slot, v, i)

    def output_value(self, slot: str, i: int = 0):
        """The current value of output ``slot``'s ``i``-th variable, or None if unset."""
        names = self.op.outputs.get(slot) or []
        var = self.scope.find_var(names[i]) if i < len(names) else None
        return var.get() if var is not None and var.is_initialized() else None

    def output_var(self, slot: str, i: int = 0):
        name = self.op.outputs[slot][i]
        return self.scope.find_var(name) or self.scope.var(name)

    # --- sub-blocks -----------------------------------------------------------------------
    @property
    def keep_scopes(self) -> bool:
        """Keep the scopes sub-blocks ran in (a gradient op will read them)?"""
        return self.op.keep_scopes

    def new_scope(self, name: str):
        """A kid of this op's scope, named for the scope tree: ``while@3/step 2``."""
        return self.scope.new_scope(f"{self.op.op.type}@{self.op.index}/{name}")

    def run_block(self, block_idx: int, scope):
        """A generator running block ``block_idx`` in ``scope``, one Step per op."""
        return self.executor.run_sub_block(self.op.program, block_idx, scope, self.training,
                                           self.frames, self.op.op, self.check_nan_inf,
                                           self.stepping, self.before_op)


def _too_large(slot: str, name: str, value):
    """The allocation guard's backstop, for outputs sized by data (runtime_shapes.py sizes
    the others before the kernel runs): the value is dropped, never stored."""
    raise ExecutionError(f"output {slot} ({name!r}) has shape {list(value.shape)} "
                         f"({value.dtype}), {validate.human_bytes(value.nbytes)}; "
                         f"{validate._limit_text()}")


def _why_no_value(pop, name: str) -> str:
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


class CudaKernelContext(KernelContext):
    """The context of a kernel running on CUDAPlace: tensors it reads are device arrays.

    A numpy array found in a scope (a parameter a startup program made on the CPU, a value
    a user set) is copied to the device on first read and stored back in its variable, so
    it stays there for every later op and run; the items of a tensor array likewise.
    """
    __slots__ = ()

    def out(self, slot: str, shape, dtype, i: int = 0):
        """None: CUDA kernels allocate their device arrays themselves (ops/places.py's
        CUDA primitives take ``out`` for symmetry with the CPU's and ignore it)."""
        return None

    def _value(self, name: str, slot: str):
        var = self.scope.find_var(name)
        if var is None or not var.is_initialized():
            raise ExecutionError(f"input slot {slot}: variable {name!r} has no value. "
                                 + _why_no_value(self.op, name))
        return _on_device(var)

    def input_or_none(self, slot: str, i: int = 0):
        names = self.op.inputs.get(slot)
        if not names or i >= len(names):
            return None
        var = self.scope.find_var(names[i])
        return _on_device(var) if var is not None and var.is_initialized() else None


def _on_device(var):
    """``var``'s value with host tensors moved to the device (and stored back): an
    array, a SelectedRows' rows and value, a tensor array's items."""
    from ..kernels.cuda import device   # noqa: PLC0415 (numba.cuda only when CUDA runs)
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
