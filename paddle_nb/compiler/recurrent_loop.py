"""A ``recurrent`` op (StaticRNN) and its ``recurrent_grad``, compiled as loops.

In the interpreter each time step is a Python round: a kid scope, the step inputs and
memories set in it, the step block run op by op; the gradient walks the kept scopes back.
Compiled, the step block is one generated function (its whole block as one segment, the
way any block is compiled) and the op a loop inside its segment that calls it once per
step::

    # op 1 recurrent: inputs=x, initial_states=h0, parameters=w/u/b -> outputs=out ...
    h1_0 = v0                                       # the memory's initial state
    for s1 in range(T1):
        t1 = s1
        r1 = block1_segment_0(v1[t1], v2, h1_0, v3, v4)   # the state of the step before
        h1_0 = r1[4]
        if s1 == 0:                                  # step 0's results size the stacks
            st1_4 = np.empty((T1,) + r1[4].shape, r1[4].dtype)
        put_step(st1_4, t1, r1[4])

The scopes the backward pass reads become arrays: every value of the step block that the
gradient block reads is stacked over time (``[T, ...]``) by the forward loop, and the
gradient loop, walking the steps back, hands the gradient block's function the step's
slice, the outputs' gradients and the memories' gradients from the step after; it adds the
parameters' gradients up and stacks the inputs'. The order of every sum is the
interpreter's (ops/recurrent.py), so the numbers are its numbers.

The pair is compiled only together, in one segment (the stacks live there), from what the
interpreter's run of it left in its kept step scopes (training). A recurrent op whose
scopes are not kept (inference) compiles alone, its step block from that block's own plan
(learned when the interpreter's run of the op ran it). One whose blocks hold an op without
a lowered form runs in the interpreter, and each of its steps runs its block's compiled
segments.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .sub_blocks import arguments, file_pair, summed_line, whole_sub_block
from ..kernels.cpu import layout as KL
from ..kernels.cpu.loop_guard import stop_if_interrupted
from ..core.grad_maker import grad_name


@dataclass(eq=False)
class StepLoop:
    """The forward loop of a recurrent op (see the module docstring)."""
    step: object                  # the step block's compiled function (a Segment)
    args: list                    # per argument of step: ("input", k) | ("ex", k) | ("outer", i)
    returned: list                # the step block's numbers the step function returns
    states: list                  # per memory: its position in ``returned``
    outputs: list                 # per output: (position in returned, global number or -1)
    saved: list                   # positions in returned stacked for the gradient
    reverse: bool
    grad: "GradLoop | None" = field(default=None, repr=False)

    def emit(self, w, pop) -> None:
        emit_forward(w, pop, self)


@dataclass(eq=False)
class GradLoop:
    """The backward loop of a recurrent_grad op."""
    step: object
    args: list                    # ("saved", k) | ("out_grad", k) | ("state_grad", k) |
    returned: list                #   ("outer", i)
    params: list = field(default_factory=list)   # per parameter: (position or -1, global)
    inputs: list = field(default_factory=list)   # per input: (position or -1, global)
    exes: list = field(default_factory=list)     # per memory: (position or -1, global)
    forward_pop: object = field(default=None, repr=False)   # the recurrent op and its
    forward: StepLoop | None = field(default=None, repr=False)   # loop (emit_backward)

    def emit(self, w, gpop) -> None:
        emit_backward(w, gpop, self)


def pair_forms(program, prepared, env, executor, fuse, compile_whole_block,
               whole_plan) -> dict:
    """{op index: StepLoop or GradLoop} for the recurrent ops of this block that compile
    with their gradient op (from its kept step scopes in ``env``), or alone where no
    gradient op reads them (inference: from the step block's own plan). ``compile_whole_
    block(prepared, learned, fuse)``: a block as one Segment, or None (plan.py's);
    ``whole_plan(prepared)``: the block's own plan's one Segment, or None."""
    forms = {}
    numbers = {n: i for i, n in enumerate(prepared.names)}
    pops = prepared.ops
    for pop in pops:
        if pop.op.type != "recurrent" or not pop.out_ix.get("step_scopes"):
            continue
        ix = pop.out_ix["step_scopes"][0]
        scopes = env[ix]._value if ix >= 0 and env[ix] is not None else None
        grads = [g for g in pops if g.op.type == "recurrent_grad"
                 and g.in_ix.get("step_scopes", (None,))[0] == ix]
        if not scopes:                   # inference: its scopes are gone
            if not grads and all(i >= 0 and env[i] is not None and env[i]._value.__class__
                                 is np.ndarray for i in pop.in_ix.get("initial_states", ())):
                sub = pop.attrs["sub_block"]
                step = whole_plan(executor.prepare(program, getattr(sub, "idx", sub)))
                made = _step_loop(pop, step, numbers) if step is not None else None
                if made is not None:
                    forms[pop.index] = made
            continue
        if len(grads) > 1:
            continue
        made = _forward(program, pop, scopes[0], numbers, executor, fuse, compile_whole_block)
        if made is not None and not _states_keep_their_types(pop, scopes[0], env):
            made = None
        file_pair(forms, pop, made, grads, lambda gpop: _backward(
            program, pop, gpop, scopes[0], numbers, made, executor, fuse, compile_whole_block))
    return forms


def _states_keep_their_types(pop, step_scope, env) -> bool:
    """Does each memory's state after a step have its initial state's dtype and rank (one
    variable holds both in the compiled loop)?"""
    for name, i in zip(pop.attrs["states"], pop.in_ix.get("initial_states", ())):
        init = env[i]._value if i >= 0 and env[i] is not None else None
        var = step_scope.find_var(name)
        state = var._value if var is not None else None
        if not (isinstance(init, np.ndarray) and isinstance(state, np.ndarray)
                and init.dtype == state.dtype and init.ndim == state.ndim):
            return False
    return True


def _forward(program, pop, scope, numbers, executor, fuse, compile_whole_block):
    _, step = whole_sub_block(program, pop, scope, executor, fuse, compile_whole_block)
    return _step_loop(pop, step, numbers) if step is not None else None


def _step_loop(pop, step, numbers) -> StepLoop | None:
    """The forward loop calling compiled step block ``step``, or None."""
    args = arguments(step, [("input", pop.inputs.get("inputs", [])),
                             ("ex", list(pop.attrs["ex_states"]))], numbers)
    if args is None:
        return None
    returned = list(step.writes)
    at = {step.names[i]: k for k, i in enumerate(returned)}
    states = [at.get(n) for n in pop.attrs["states"]]
    outs = [(at.get(n), j) for n, j in zip(pop.outputs.get("outputs", []),
                                           pop.out_ix.get("outputs", ()))]
    if None in states or any(k is None for k, _ in outs):
        return None
    return StepLoop(step, args, returned, states, outs, [], bool(pop.attrs["reverse"]))


def _backward(program, pop, gpop, scope, numbers, fwd: StepLoop, executor, fuse,
              compile_whole_block):
    _, step = whole_sub_block(program, gpop, scope, executor, fuse, compile_whole_block)
    if step is None:
        return None
    inputs, exes = pop.inputs.get("inputs", []), list(pop.attrs["ex_states"])
    out_grads = [grad_name(n) for n in pop.outputs.get("outputs", [])]
    state_grads = [grad_name(n) for n in pop.attrs["states"]]
    if set(out_grads) & set(state_grads):
        return None                      # a memory that is an output too: left interpreted
    made = [fwd.step.names[i] for i in fwd.returned]     # by position in the step's results
    args = arguments(step, [("out_grad", out_grads), ("state_grad", state_grads),
                             ("made", made), ("saved_input", inputs), ("saved_ex", exes)],
                      numbers)
    if args is None:
        return None
    # what the forward loop stacks: the step values read here, and the memories' states
    # (the value a memory had before a step is the state of the step before it)
    for kind, k in args:
        position = k if kind == "made" else fwd.states[k] if kind == "saved_ex" else None
        if position is not None and position not in fwd.saved:
            fwd.saved.append(position)
    args = [("saved", fwd.saved.index(k)) if kind == "made" else (kind, k) for kind, k in args]
    names = step.names
    at = {names[i]: k for k, i in enumerate(step.writes)}

    def wanted(slot, fwd_names_):
        out = []
        for n, j in zip(fwd_names_, gpop.out_ix.get(slot, ())):
            out.append((at.get(grad_name(n), -1), j))
        return out
    return GradLoop(step, args, list(step.writes),
                    wanted("parameters@GRAD", gpop.inputs.get("parameters", [])),
                    wanted("inputs@GRAD", inputs), wanted("initial_states@GRAD", exes))


# --- the generated lines -------------------------------------------------------------------
def emit_forward(w, pop, form: StepLoop) -> None:
    """The forward loop, into Writer ``w``'s body (codegen.Writer)."""
    b, o = w.body, pop.index
    seqs = [w._use(i) for i in pop.in_ix.get("inputs", ())]
    inits = [w._use(i) for i in pop.in_ix.get("initial_states", ())]
    fn = w._global(form.step.compile())
    b.append(f"    T{o} = {seqs[0]}.shape[0]")
    for s in seqs[1:]:
        b.append(f"    if {s}.shape[0] != T{o}:\n        raise ValueError(\"op {o} recurrent: "
                 f"step inputs of different lengths\")")
    # one call site of the step function (a step peeled off before the loop would be a
    # second, which LLVM inlines and optimises again: twice the compile time); the stacks
    # are made at step 0 from its results, so the loop needs a step, and each memory's
    # state has one type (pair_forms checks: the initial state's dtype and rank)
    b.append(f"    if T{o} == 0:\n        raise ValueError(\"op {o} recurrent: no steps\")")
    for k, init in enumerate(inits):
        b.append(f"    h{o}_{k} = {init}")

    def call(t):
        args = []
        for kind, k in form.args:
            args.append(f"{seqs[k]}[{t}]" if kind == "input" else f"h{o}_{k}" if kind == "ex"
                        else w._use(k))
        return f"{fn}({', '.join(args)})"
    stacked = sorted({k for k, _ in form.outputs} | set(form.saved))
    put = w._global(KL.put_step)
    b.append(f"    for s{o} in range(T{o}):")
    t = f"T{o} - 1 - s{o}" if form.reverse else f"s{o}"
    b.append(f"        t{o} = {t}")
    b.append(f"        {w._global(stop_if_interrupted)}()")
    b.append(f"        r{o} = {call(f't{o}')}")
    for k, pos in enumerate(form.states):
        b.append(f"        h{o}_{k} = r{o}[{pos}]")
    for k in stacked:
        b.append(f"        if s{o} == 0:\n            st{o}_{k} = np.empty((T{o},) + "
                 f"r{o}[{k}].shape, r{o}[{k}].dtype)")
        b.append(f"        {put}(st{o}_{k}, t{o}, r{o}[{k}])")
    for k, j in form.outputs:
        if j >= 0:
            b.append(f"    {w._define(j)} = st{o}_{k}")


def emit_backward(w, gpop, form: GradLoop) -> None:
    """The gradient loop (after emit_forward of its forward op, in the same function)."""
    fwd, fwd_pop = form.forward, form.forward_pop
    b, o, f = w.body, gpop.index, fwd_pop.index
    fn = w._global(form.step.compile())
    seqs = [w._use(i) for i in fwd_pop.in_ix.get("inputs", ())]
    inits = [w._use(i) for i in fwd_pop.in_ix.get("initial_states", ())]
    out_grads = [w._use(i) if i >= 0 else None for i in gpop.in_ix.get("outputs@GRAD", ())]
    out_pos = [k for k, _ in fwd.outputs]
    params = [w._use(i) for i in gpop.in_ix.get("parameters", ())]
    # before the loop: each memory's gradient from the step after (zeros at the last
    # step), the sums and stacks (given their types here; the first step overwrites)
    for k in range(len(fwd.states)):
        b.append(f"    g{o}_{k} = np.zeros_like(h{f}_{k})")
    for n, (pos, j) in enumerate(form.params):
        if j >= 0 and pos >= 0:
            b.append(f"    p{o}_{n} = np.zeros_like({params[n]})")
    for n, (pos, j) in enumerate(form.inputs):
        if j >= 0:
            b.append(f"    x{o}_{n} = np.zeros({seqs[n]}.shape, {seqs[n]}.dtype)")
    order = f"s{o}" if fwd.reverse else f"T{f} - 1 - s{o}"
    b.append(f"    for s{o} in range(T{f}):")
    b.append(f"        t{o} = {order}")
    b.append(f"        {w._global(stop_if_interrupted)}()")
    args = []
    for kind, k in form.args:
        if kind == "saved":
            args.append(f"st{f}_{fwd.saved[k]}[t{o}]")
        elif kind == "saved_input":
            args.append(f"{seqs[k]}[t{o}]")
        elif kind == "saved_ex":          # the state of the step before, or the initial
            before, edge = (f"t{o} + 1", f"t{o} == T{f} - 1") if fwd.reverse else \
                (f"t{o} - 1", f"t{o} == 0")
            args.append(f"({inits[k]} if {edge} else st{f}_{fwd.states[k]}[{before}])")
        elif kind == "out_grad":
            g = out_grads[k]
            args.append(f"{g}[t{o}]" if g is not None else
                        f"np.zeros_like(st{f}_{out_pos[k]}[t{o}])")
        elif kind == "state_grad":
            args.append(f"g{o}_{k}")
        else:
            args.append(w._use(k))
    b.append(f"        q{o} = {fn}({', '.join(args)})")
    for n, (pos, j) in enumerate(form.params):      # summed in the interpreter's order,
        if j >= 0 and pos >= 0:                      # into one array (no new one a step)
            b.append(summed_line(f"p{o}_{n}", f"q{o}[{pos}]", f"s{o}"))
    for n, (pos, j) in enumerate(form.inputs):
        if j >= 0 and pos >= 0:
            b.append(f"        {w._global(KL.put_step)}(x{o}_{n}, t{o}, q{o}[{pos}])")
    for k, (pos, _) in enumerate(form.exes):
        b.append(f"        g{o}_{k} = q{o}[{pos}]" if pos >= 0 else
                 f"        g{o}_{k} = np.zeros_like(g{o}_{k})")
    for n, (pos, j) in enumerate(form.params):
        if j >= 0:
            b.append(f"    {w._define(j)} = p{o}_{n}" if pos >= 0 else
                     f"    {w._define(j)} = np.zeros_like({params[n]})")
    for n, (pos, j) in enumerate(form.inputs):
        if j >= 0:
            b.append(f"    {w._define(j)} = x{o}_{n}")
    for k, (pos, j) in enumerate(form.exes):
        if j >= 0:
            b.append(f"    {w._define(j)} = g{o}_{k}")
