"""A ``while`` op (and its ``while_grad``) compiled as loops in their segment.

In the interpreter each step of a while (ops/while_op.py) is a Python round: test the
condition, make a kid scope, run the body op by op, keep the scope for the gradient or
delete it. Compiled, the body is one generated function and the op a loop that calls it::

    # op 4 while: X=i/h/W/x/n, Condition=cond -> Out=i/h/cond ...
    n4 = 0
    while True:
        if v5.size != 1:
            raise ValueError("op 4 while: the condition must hold one value")
        if not v5.ravel()[0]:
            break
        if n4 >= 1000000:
            raise LoopLimitReached("4 steps 1000000")
        stop_if_interrupted()
        c4 = block1_segment_0(v0, v3, v1, v2, v4)
        v0 = c4[3]          # the loop variables the body writes, the condition among them
        v3 = c4[4]
        v5 = c4[6]
        n4 += 1

It keeps what the interpreter's loop guarantees: the step limit (``MAX_STEPS`` as it was
when the loop was compiled), whose error is the interpreter's, raised at once (a rerun in
the interpreter would run a million steps to say the same); Jupyter's Interrupt at every
step (kernels/cpu/loop_guard.py). A loop variable keeps one type over the steps, as one
variable of the compiled loop; a body that changed one's dtype or rank fails to compile,
and the run falls back to the interpreter.

**Training.** A while whose gradient is taken keeps every step's scope for ``while_grad``:
the body's values of that step, and a snapshot of the loop variables as the step began
(ops/while_op.snapshot_names). Compiled, the pair is two loops in one segment, as a
recurrent op's (recurrent_loop.py): the forward loop stacks, step by step, the values the
gradient block reads (stacks that double when full: the step count is known only at the
end), under the interpreter's limit of kept bytes (``MAX_KEPT_BYTES``, counted as the
interpreter counts a kid scope: the body's own values and the snapshots); the backward
loop walks the steps last first, calling the gradient block with the step's slices and the
running gradients of the loop variables, and adds up the others' in the interpreter's
order. Counters updated in place are not stacked: the gradient block walks them back.

The body is learned from the step scopes the interpreter's run kept (training), or, in a
loop that keeps none (inference), from the body's own plan, learned when the interpreter's
run of the loop ran it.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .lowering import Learned
from .sub_blocks import (Declined, arguments, file_pair, learned_in, outer_value,
                         outer_writes, summed_line, whole_sub_block)
from ..core.errors import ExecutionError
from ..core.grad_maker import EMPTY_VAR, forward_name, grad_name
from ..kernels.cpu import layout as KL
from ..kernels.cpu import tensor_array as KT
from ..kernels.cpu.loop_guard import LoopLimitReached, stop_if_interrupted
from ..ops import while_op

FIRST_CAPACITY = 16            # steps a training loop's stacks hold before they first grow


@dataclass(eq=False)
class WhileLoop:
    """A while op, compiled (see the module docstring)."""
    body: object                  # the body's compiled function (a Segment)
    args: list                    # per argument of body: ("outer", number)
    writes: list                  # (position in body's results, number in this block)
    limit: int
    # training: what each step stacks for the gradient (("made", position) | ("snap",
    # number)), the positions of the body's own values and the snapshots' numbers (what
    # a kept kid scope holds: its bytes count), the byte limit
    saved: list = field(default_factory=list)
    local: list = field(default_factory=list)
    snaps: list = field(default_factory=list)
    max_bytes: int = 0
    grad: "WhileGrad | None" = field(default=None, repr=False)

    def emit(self, w, pop) -> None:
        b, o = w.body, pop.index
        cond = w._use(pop.in_ix["Condition"][0])
        fn = w._global(self.body.compile())
        args = ", ".join(outer_value(w, self.body, pos, k)
                         for pos, (_, k) in enumerate(self.args))
        made_here = [j for _, j in self.writes if j not in w.defined and j not in w.reads]
        training = self.grad is not None
        snaps = {k: w._use(k) for k in self.snaps}      # values as each step begins
        b.append(f"    n{o} = 0")
        if training:
            b.append(f"    kept{o} = 0")
        b.append("    while True:")
        b.append(f"        if {cond}.size != 1:\n            raise ValueError(\"op {o} while: "
                 f"the condition must hold one value\")")
        b.append(f"        if not {cond}.ravel()[0]:\n            break")
        limit = w._global(LoopLimitReached)
        b.append(f"        if n{o} >= {self.limit}:\n            raise {limit}(\"{o} steps "
                 f"{self.limit}\")")
        b.append(f"        {w._global(stop_if_interrupted)}()")
        if training:
            held = [f"{v}.nbytes" for v in snaps.values()]
            b += [f"        sv{o}_{k} = {v}" for k, v in snaps.items()]
        b.append(f"        c{o} = {fn}({args})")
        if training:
            held += [f"c{o}[{pos}].nbytes" for pos in self.local]
            b.append(f"        kept{o} += {' + '.join(held) or '0'}")
            report = w.report()
            b.append(f"        if kept{o} > {self.max_bytes}:\n"
                     f"            {report}[0] = n{o} + 1\n            {report}[1] = kept{o}\n"
                     f"            raise {limit}(\"{o} bytes\")")
            put, grow = w._global(KL.put_step), w._global(KL.grown)
            for k, (kind, ref) in enumerate(self.saved):
                value = f"c{o}[{ref}]" if kind == "made" else f"sv{o}_{ref}"
                b.append(f"        if n{o} == 0:\n            st{o}_{k} = np.empty(("
                         f"{FIRST_CAPACITY},) + {value}.shape, {value}.dtype)\n"
                         f"        elif n{o} == st{o}_{k}.shape[0]:\n"
                         f"            st{o}_{k} = {grow}(st{o}_{k})")
                b.append(f"        {put}(st{o}_{k}, n{o}, {value})")
        for pos, j in self.writes:
            b.append(f"        {w._define(j)} = c{o}[{pos}]")
        b.append(f"        n{o} += 1")
        if made_here or training:       # values only a step makes: none without a step
            b.append(f"    if n{o} == 0:\n        raise {w._global(Declined)}(\"op {o} while: "
                     f"no step ran\")")


@dataclass(eq=False)
class WhileGrad:
    """A while_grad op, compiled with its while (see the module docstring)."""
    body: object
    args: list                    # ("og", k) | ("saved", k) | ("outer", number)
    og: list                      # per Out@GRAD: ("given", number) | ("zeros", number) |
    outputs: list                 #   None; per X@GRAD: (kind "carried"/"summed", position
    writes: list                  #   or -1, its og or -1, number, X's number); counters
    forward: WhileLoop | None = field(default=None, repr=False)
    forward_pop: object = field(default=None, repr=False)

    def emit(self, w, gpop) -> None:
        b, o, f = w.body, gpop.index, self.forward_pop.index
        for k, og in enumerate(self.og):
            if og is None:
                continue
            kind, i = og
            element = w.learned[i].element          # a tensor array's (dtype, rank)
            if kind == "given":
                value = w.array(i, *element) if element else w._use(i)
            elif kind == "zeros":
                value = f"np.zeros_like({w._use(i)})"
            else:                # an array no gradient reached: an empty one, as the
                dtype, rank = element          # interpreter's step scopes see none
                value = f"{w._global(KT.fresh)}(np.empty(({'0, ' * (rank + 1)}), " \
                        f"{w._dtype(dtype)}))"
            b.append(f"    g{o}_{k} = {value}")
        b.append(f"    for s{o} in range(n{f}):")
        b.append(f"        t{o} = n{f} - 1 - s{o}")
        b.append(f"        {w._global(stop_if_interrupted)}()")
        args = [f"g{o}_{k}" if kind == "og" else f"st{f}_{k}[t{o}]" if kind == "saved"
                else outer_value(w, self.body, pos, k)
                for pos, (kind, k) in enumerate(self.args)]
        b.append(f"        q{o} = {w._global(self.body.compile())}({', '.join(args)})")
        for n, (kind, pos, k, _, _) in enumerate(self.outputs):
            if pos < 0:
                continue
            if kind == "carried":           # the gradient flowing into the step before
                b.append(f"        g{o}_{k} = q{o}[{pos}]")
            else:                           # summed in the interpreter's order
                b.append(summed_line(f"x{o}_{n}", f"q{o}[{pos}]", f"s{o}"))
        for pos, j in self.writes:          # counters walked back
            b.append(f"        {w._define(j)} = q{o}[{pos}]")
        for n, (kind, pos, k, j, x) in enumerate(self.outputs):
            value = f"g{o}_{k}" if kind == "carried" else f"x{o}_{n}" if pos >= 0 else \
                f"np.zeros_like({w._use(x)})"
            b.append(f"    {w._define(j)} = {value}")


def while_forms(program, prepared, env, executor, fuse, compile_whole_block,
                whole_plan) -> dict:
    """{op index: WhileLoop or WhileGrad} for this block's while ops: a training while
    with its while_grad, from the step scopes it kept in ``env``; one that keeps none from
    its body's own plan (``whole_plan(prepared body)``: that Segment or None)."""
    forms = {}
    numbers = {n: i for i, n in enumerate(prepared.names)}
    for pop in prepared.ops:
        if pop.op.type != "while" or pop.tensor_attrs is not None or \
                not pop.in_ix.get("Condition") or pop.in_ix["Condition"][0] < 0:
            continue
        sub = pop.attrs["sub_block"]
        block = executor.prepare(program, getattr(sub, "idx", sub))
        if not (pop.keep_scopes and not pop.attrs["is_test"]):
            body = whole_plan(block)
            made = _loop(pop, block, body, numbers) if body is not None else None
            if made is not None:
                forms[pop.index] = made
            continue
        ix = (pop.out_ix.get("StepScopes") or (-1,))[0]
        scopes = env[ix]._value if ix >= 0 and env[ix] is not None else None
        grads = [g for g in prepared.ops if g.op.type == "while_grad"
                 and (g.in_ix.get("StepScopes") or (None,))[0] == ix]
        if not scopes or len(grads) != 1:
            continue             # no step ran in the run it was learned from, or unpaired
        kid = scopes[0]
        body = compile_whole_block(block, learned_in(kid, block.names), fuse)
        made = _loop(pop, block, body, numbers) if body is not None else None
        file_pair(forms, pop, made, grads, lambda gpop: _grad(
            program, pop, gpop, block, made, kid, env, numbers, executor, fuse,
            compile_whole_block))
    return forms


def _loop(pop, block, body, numbers) -> WhileLoop | None:
    args = arguments(body, [], numbers)
    writes = outer_writes(block, body, numbers)
    if args is None or writes is None:
        return None
    return WhileLoop(body, args, writes, while_op.MAX_STEPS)


def _grad(program, pop, gpop, fwd_block, fwd: WhileLoop, kid, env, numbers, executor, fuse,
          compile_whole_block) -> WhileGrad | None:
    block, step = whole_sub_block(program, gpop, kid, executor, fuse, compile_whole_block)
    if step is None:
        return None

    def array(i):
        return i >= 0 and env[i] is not None and env[i]._value.__class__ is np.ndarray

    def tensor_array(i):         # whose entries a compiled array holds (one shape)
        return i >= 0 and env[i] is not None and Learned(env[i]._value).element is not None
    # the gradients of the loop's final values (ops/while_op._while_grad's ``og``); a
    # tensor array's is an array (an empty one where no gradient reached it)
    outer_og = list(gpop.inputs.get("Out@GRAD", []))
    inner_og = list(gpop.attrs.get("original_output_grad") or outer_og)
    og, og_fwd = [], []
    for name, i in zip(outer_og, gpop.in_ix.get("Out@GRAD", ())):
        final = numbers.get(forward_name(name), -1)
        og.append(("given", i) if array(i) or tensor_array(i) else ("zeros", final)
                  if array(final) else ("empty", final) if tensor_array(final) else None)
        og_fwd.append(forward_name(name))
    inner = [n if o is not None else None for n, o in zip(inner_og, og)]
    # what the gradient block reads from a step's scope: the body's values of that step,
    # the snapshots of the loop variables as it began; the rest from this block
    fwd_local = set(fwd_block.local)
    made = [fwd.body.names[i] if fwd.body.names[i] in fwd_local else None
            for i in fwd.body.writes]
    # (the interpreter keeps no copy of a tensor array: a step's entries stay in place)
    snaps = [n for n in while_op.snapshot_names(pop.op.program, pop.attrs["sub_block"],
                                                pop.inputs.get("X", []))
             if n not in numbers or not tensor_array(numbers[n])]
    if any(n not in numbers or not array(numbers[n]) for n in snaps):
        return None
    body_arrays = fwd.body.source.arrays or {}
    if any(fwd.body.names[i] in fwd_local for i in body_arrays):
        return None              # an array made in a step: its kept bytes are not counted
    args = arguments(step, [("og", inner), ("made", made), ("snap", snaps)], numbers)
    writes = outer_writes(block, step, numbers)
    if args is None or writes is None:
        return None
    saved = []
    for kind, k in args:
        entry = ("made", k) if kind == "made" else ("snap", numbers[snaps[k]]) \
            if kind == "snap" else None
        if entry is not None and entry not in saved:
            saved.append(entry)
    args = [("saved", saved.index(("made", k) if kind == "made" else ("snap", numbers[
        snaps[k]]))) if kind in ("made", "snap") else (kind, k) for kind, k in args]
    at = {step.names[i]: pos for pos, i in enumerate(step.writes)}
    local, carried = set(block.local), set(gpop.inputs.get("X", [])) & set(
        gpop.inputs.get("Out", []))
    outputs = []
    for x, gx, j, xi in zip(gpop.inputs.get("X", []), gpop.outputs.get("X@GRAD", []),
                            gpop.out_ix.get("X@GRAD", ()), gpop.in_ix.get("X", ())):
        if gx == EMPTY_VAR or j < 0:
            continue
        pos = at.get(grad_name(x), -1) if grad_name(x) in local else -1
        if x in carried:
            k = og_fwd.index(x) if x in og_fwd else -1
            if k < 0 or og[k] is None:
                return None
            outputs.append(("carried", pos, k, j, xi))
        elif tensor_array(xi):
            return None          # an array's gradients summed over the steps: interpreted
        elif pos >= 0 or array(xi):
            outputs.append(("summed", pos, -1, j, xi))
    fwd.saved, fwd.max_bytes = saved, while_op.MAX_KEPT_BYTES
    fwd.local = [pos for pos, i in enumerate(fwd.body.writes)
                 if fwd.body.names[i] in fwd_local]
    fwd.snaps = [numbers[n] for n in snaps]
    return WhileGrad(step, args, og, outputs, writes)


def limit_error(segment, reached: LoopLimitReached) -> ExecutionError:
    """The interpreter's error for a compiled loop of ``segment`` that ran past a limit,
    with the op's place and line; final: the executor does not run the program again."""
    index, kind, *numbers = str(reached).split()
    pop = next(p for p in segment.pops if p.index == int(index))
    condition = pop.inputs["Condition"][0]
    said = while_op.step_limit_message(int(numbers[0]), condition) if kind == "steps" else \
        while_op.kept_too_much_message(int(segment.report[0]), int(segment.report[1]),
                                       condition)
    text = f"{pop.where}: {said}"
    if pop.created_at:
        text += f"\n  op created at: {pop.created_at}"
    error = ExecutionError(text)
    error._paddle_nb_located = True
    error._paddle_nb_final = True
    error.failed_op = pop.op
    return error
