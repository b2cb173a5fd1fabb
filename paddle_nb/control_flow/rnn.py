"""RNN (the Block and Scope design's RNNOp, Fluid's StaticRNN): a step block run once per time step.

    rnn = pd.rnn()
    with rnn.step():
        h = rnn.memory(init=m)              # the memory's value from the step before
        h_prev = rnn.previous_memory(h)      # (the design has both names; one var)
        a = pd.layer.fc(W, x)                # x: an outer sequence -> this step's x[t]
        act = pd.sigmoid(pd.add(a, pd.layer.fc(U, h_prev)))
        rnn.update_memory(h, act)
        rnn.output(a, act)
    o1, o2 = rnn()                           # stacked over time: [T, ...]

Sequences are time-major ([T, batch, ...]) as in Fluid. A sequence variable (made by
``pd.sequence``, lod_level 1) that the step reads is a step input automatically; any other
variable becomes one with ``rnn.step_input(x)`` or ``x.as_step_input()``. Other outer
variables (parameters) are read as they are. Also spelled ``pd.create_rnn()`` +
``stepnet()`` (the Block and Scope design) and ``pd.rnn_op()`` + ``add_input`` / ``add_output``
(the Block design).
"""
from __future__ import annotations

import contextlib

from ..builders import arg_checks as check
from ..core import unique_name
from ..core.block_deps import external_reads_and_writes
from ..core.framework_pb2 import VarType
from ..core.program import default_main_program
from ..core.variable import Variable
from .blocks import misuse, scope_list_var, sub_block

_BEFORE, _INSIDE, _AFTER = "before", "inside", "after"
_active: list["StaticRNN"] = []      # the RNNs whose step block is open (innermost last)


class _Memory:
    def __init__(self, init, pre):
        self.init, self.pre, self.new = init, pre, None


class StaticRNN:
    def __init__(self, name: str | None = None):
        self.name = unique_name.generate(name or "rnn")
        self.parent = default_main_program().current_block()
        self.status = _BEFORE
        self.block = None
        self.step_inputs: list[Variable] = []          # outer sequences
        self.memories: dict[str, _Memory] = {}         # previous-memory name -> link
        self.outputs: list[Variable] = []              # outer stacked outputs
        self.seq_len = None

    # --- the step block -------------------------------------------------------------------
    @contextlib.contextmanager
    def step(self):
        if self.status != _BEFORE:
            raise misuse(f"{self.name}: the step block can be opened once")
        self.status = _INSIDE
        _active.append(self)
        try:
            with sub_block() as block:
                self.block = block
                yield self
        finally:
            _active.pop()
            self.status = _AFTER
        self._complete()

    stepnet = step

    def _check_inside(self, what):
        if self.status != _INSIDE:
            raise misuse(f"{self.name}.{what}() must be called inside 'with {self.name}"
                         f".step():'")

    def step_input(self, x: Variable) -> Variable:
        """This step's slice ``x[t]`` of an outer, time-major sequence ``x``."""
        self._check_inside("step_input")
        check.variable(f"{self.name}.step_input", "x", x)
        if not x.shape:
            raise misuse(f"{self.name}: step input {x.name!r} has no time dimension")
        if self.seq_len is not None and x.shape[0] >= 0 and self.seq_len >= 0 \
                and x.shape[0] != self.seq_len:
            raise misuse(f"{self.name}: step inputs must have the same number of time steps "
                         f"(time-major [T, ...]): {x.name!r} has {x.shape[0]}, an earlier one "
                         f"{self.seq_len}")
        self.seq_len = x.shape[0]
        if all(s.name != x.name for s in self.step_inputs):
            self.step_inputs.append(x)
        local = self.block.table.vars.get(x.name)
        if local is None:     # same name as the sequence: in the step scope it shadows it
            return self.block.create_var(x.name, list(x.shape[1:]), x.dtype)
        return Variable(self.block, local)

    add_input = step_input

    def memory(self, init: Variable | None = None, shape=None, batch_ref=None,
               init_value: float = 0.0, init_batch_dim_idx: int = 0,
               ref_batch_dim_idx: int = 1) -> Variable:
        """A value carried from step to step; its previous value is returned. Without
        ``init``, it starts as ``init_value`` with ``shape`` and ``batch_ref``'s batch size."""
        self._check_inside("memory")
        builder = f"{self.name}.memory"
        check.variable(builder, "init", init, optional=True)
        check.variable(builder, "batch_ref", batch_ref, optional=True)
        if shape is not None:
            shape = check.shape(builder, "shape", shape, batch=True)
        init_value = check.number(builder, "init_value", init_value)
        init_batch_dim_idx = check.integer(builder, "init_batch_dim_idx", init_batch_dim_idx,
                                           low=0)
        ref_batch_dim_idx = check.integer(builder, "ref_batch_dim_idx", ref_batch_dim_idx,
                                          low=0)
        if init is None:
            if shape is None or batch_ref is None:
                raise misuse(f"{self.name}.memory() needs init=, or shape= and batch_ref=")
            boot = self.parent.create_var(unique_name.generate(f"{self.name}.memory_boot"),
                                          list(shape), batch_ref.dtype)
            self.parent.append_op("fill_constant_batch_size_like", {"Input": [batch_ref.name]},
                                  {"Out": [boot]},
                                  {"shape": list(shape), "value": float(init_value),
                                   "input_dim_idx": ref_batch_dim_idx,
                                   "output_dim_idx": init_batch_dim_idx,
                                   "dtype": boot.desc.type.lod_tensor.tensor.data_type})
            init = boot
        pre = self.block.create_var(unique_name.generate(f"{self.name}.mem"), list(init.shape),
                                    init.dtype)
        self.memories[pre.name] = _Memory(init, pre)
        return pre

    def previous_memory(self, mem: Variable) -> Variable:
        """The Block and Scope design's spelling: the memory's value from the previous step."""
        self._link(mem)
        return mem

    def update_memory(self, mem: Variable, value: Variable) -> None:
        """``value`` becomes the memory's value for the next step."""
        self._check_inside("update_memory")
        check.variable(f"{self.name}.update_memory", "value", value)
        self._link(mem).new = value

    def _link(self, mem) -> _Memory:
        link = self.memories.get(getattr(mem, "name", None))
        if link is None:
            raise misuse(f"{self.name}: {mem!r} is not a memory of this RNN (use the variable "
                         f"rnn.memory() returned)")
        return link

    def step_output(self, o: Variable) -> None:
        self._check_inside("output")
        check.variable(f"{self.name}.output", "outs", o)
        copy = self.block.create_var(unique_name.generate(f"{self.name}.out"), list(o.shape),
                                     o.dtype)
        self.block.append_op("rnn_memory_helper", {"X": [o]}, {"Out": [copy]})
        stacked = self.parent.create_var(copy.name, [self.seq_len or -1] + list(o.shape),
                                         o.dtype)
        self.outputs.append(stacked)

    def output(self, *outs: Variable) -> None:
        for o in outs:
            self.step_output(o)

    add_output = output

    # --- leaving the block ------------------------------------------------------------------
    def _complete(self):
        program = self.parent.program
        for pre, link in self.memories.items():
            if link.new is None:
                raise misuse(f"{self.name}: memory {pre!r} was never updated: call "
                             f"rnn.update_memory(mem, new_value) in the step")
        reads, _ = external_reads_and_writes(program, self.block.idx)
        for name in reads:          # outer sequences read directly are step inputs too
            var = self.parent.table.find_var(name)
            if var is not None and var.type.type == VarType.LOD_TENSOR \
                    and var.type.lod_tensor.lod_level > 0 \
                    and all(s.name != name for s in self.step_inputs):
                self.step_inputs.append(Variable(self.parent, var))
                self.block.create_var(name, list(var.type.lod_tensor.tensor.dims)[1:],
                                      var.type.lod_tensor.tensor.data_type)
        if not self.step_inputs:
            raise misuse(f"{self.name}: the step reads no sequence; give it one with "
                         f"rnn.step_input(x) or x.as_step_input()")
        self.block.infer_shapes()          # the step now sees x[t], not x
        for stacked in self.outputs:
            step_shape = self.block.var(stacked.name).shape
            stacked.set_shape([self.step_inputs[0].shape[0]] + list(step_shape))
        stepped = {s.name for s in self.step_inputs}
        params = [n for n in reads if n not in stepped]
        self.parent.append_op(
            "recurrent",
            {"inputs": self.step_inputs,
             "initial_states": [m.init for m in self.memories.values()],
             "parameters": params},
            {"outputs": self.outputs, "step_scopes": [scope_list_var(self.parent, self.name)]},
            {"ex_states": list(self.memories), "states": [m.new.name
                                                          for m in self.memories.values()],
             "sub_block": self.block, "reverse": False, "is_train": True})

    def __call__(self):
        if self.status != _AFTER:
            raise misuse(f"{self.name}() must be called after its step block, not inside it")
        if len(self.outputs) == 1:
            return self.outputs[0]
        return list(self.outputs)


def as_step_input(x: Variable) -> Variable:
    """``x.as_step_input()``: a step input of the RNN whose step block is open."""
    if not _active:
        raise misuse(f"{x.name}.as_step_input() must be called inside an RNN's step block")
    return _active[-1].step_input(x)


def rnn(name: str | None = None) -> StaticRNN:
    check.text("rnn", "name", name, optional=True)
    return StaticRNN(name)


create_rnn = rnn_op = rnn
