"""A ``conditional_block`` and its ``conditional_block_grad``, compiled as a branch.

In the interpreter a conditional_block (a branch of the Block and Scope design's row-wise
IfElse, or of Paddle's ``cond``) tests its condition, makes a kid scope, runs its sub-block
there op by op and keeps the scope for its gradient op, which runs the gradient block in
it. Compiled, the sub-block is one generated function (sub_blocks.py) and the op a test
and a call inside its segment::

    # op 5 conditional_block: Cond=mask@true, Input=x@true/wt/bt -> Out=out_true ...
    if not (v4.size > 0):
        raise Declined("op 5 conditional_block: ...")
    c5 = block1_segment_0(v5, v6, v7)
    v10 = c5[2]

The kid scope becomes the tuple the call returns: the gradient op's call takes the values
its block reads from the branch out of it (``c5[0]``), the outputs' gradients from the
enclosing block, and the inputs' gradients are what it returns (zeros for an input the
gradient block does not reach, as the interpreter gives).

A branch is compiled from a run that took it; a branch not taken makes no values (its
outputs, its scope), and there is nothing of the right shape to give the ops after it. So
when the condition fails the compiled code raises ``sub_blocks.Declined`` before any
value is stored, and the executor runs that one run in the interpreter, without counting it as
a failure of the compiler (compiled_program.py); a program whose branches keep declining
runs them in the interpreter from then on. With random rows both branches of an IfElse
get rows, and a run is one call.

A pair is compiled only together, in one segment (the branch's values live there), from
what the interpreter's run left in the kept kid scope. A conditional_block whose scope is
not kept (no gradient op: inference) compiles alone, from its branch block's own plan
(learned when the interpreter ran the branch).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .sub_blocks import (Declined, arguments, file_pair, outer_value, outer_writes,
                         whole_sub_block)
from ..core.grad_maker import EMPTY_VAR, grad_name


@dataclass(eq=False)
class Branch:
    """A conditional_block, compiled (see the module docstring)."""
    block: object                 # the sub-block's compiled function (a Segment)
    args: list                    # per argument of block: ("outer", number)
    outputs: list                 # (position in block's results, number in this block)
    grad: "BranchGrad | None" = field(default=None, repr=False)

    def emit(self, w, pop) -> None:
        """The test and the call, into Writer ``w``'s body (codegen.Writer)."""
        b, o = w.body, pop.index
        conds = [w._use(i) for i in pop.in_ix["Cond"]]
        if pop.attrs["is_scalar_condition"]:
            b.append(f"    if {conds[0]}.size != 1:\n        raise ValueError(\"op {o} "
                     f"conditional_block: Cond of a scalar condition must hold one value\")")
            test = f"{conds[0]}.ravel()[0]"
        else:                           # every Cond tensor has rows (the IfElse's test)
            test = " and ".join(f"{c}.size > 0" for c in conds)
        b.append(f"    if not ({test}):\n        raise {w._global(Declined)}("
                 f"\"op {o} conditional_block: its condition fails on this run\")")
        fn = w._global(self.block.compile())
        args = ", ".join(outer_value(w, self.block, pos, k)
                         for pos, (_, k) in enumerate(self.args))
        b.append(f"    c{o} = {fn}({args})")
        for pos, j in self.outputs:
            b.append(f"    {w._define(j)} = c{o}[{pos}]")


@dataclass(eq=False)
class BranchGrad:
    """A conditional_block_grad, compiled with its conditional_block."""
    block: object
    args: list                    # ("out_grad", k) | ("made", position) | ("outer", number)
    grads: list                   # per Input@GRAD: (position or -1: zeros, number, input's)
    writes: list                  # other names it writes outside: (position, number)
    forward: Branch | None = field(default=None, repr=False)
    forward_pop: object = field(default=None, repr=False)

    def emit(self, w, gpop) -> None:
        """The gradient block's call (after its forward op's, in the same function)."""
        b, o, f = w.body, gpop.index, self.forward_pop.index
        out_grads = gpop.in_ix["Out@GRAD"]
        args = [w._use(out_grads[k]) if kind == "out_grad" else f"c{f}[{k}]"
                if kind == "made" else outer_value(w, self.block, pos, k)
                for pos, (kind, k) in enumerate(self.args)]
        b.append(f"    q{o} = {w._global(self.block.compile())}({', '.join(args)})")
        for pos, j, x in self.grads:
            value = f"q{o}[{pos}]" if pos >= 0 else f"np.zeros_like({w._use(x)})"
            b.append(f"    {w._define(j)} = {value}")
        for pos, j in self.writes:
            b.append(f"    {w._define(j)} = q{o}[{pos}]")


def branch_forms(program, prepared, env, executor, fuse, compile_whole_block,
                 whole_plan) -> dict:
    """{op index: Branch or BranchGrad} for this block's conditional_blocks whose branch
    ran in the interpreter's run (its kept kid scope in ``env``), each paired with its
    gradient op; or, where no gradient op reads the scope (inference), from the branch
    block's own plan. ``compile_whole_block``, ``whole_plan``: as recurrent_loop's."""
    forms = {}
    numbers = {n: i for i, n in enumerate(prepared.names)}
    for pop in prepared.ops:
        if pop.op.type != "conditional_block" or pop.tensor_attrs is not None:
            continue
        ix = (pop.out_ix.get("Scope") or (-1,))[0]
        scopes = env[ix]._value if ix >= 0 and env[ix] is not None else None
        if not all(i >= 0 and env[i] is not None for i in pop.in_ix["Cond"]):
            continue
        grads = [g for g in prepared.ops if g.op.type == "conditional_block_grad"
                 and (g.in_ix.get("Scope") or (None,))[0] == ix]
        if not scopes:          # not kept (inference: from the branch's own plan, if it
            if not grads:       # ran), or this run did not take it
                sub = pop.attrs["sub_block"]
                block = executor.prepare(program, getattr(sub, "idx", sub))
                step = whole_plan(block)
                made = _branch(block, step, numbers) if step is not None else None
                if made is not None:
                    forms[pop.index] = made
            continue
        if len(grads) > 1 or grads and grads[0].in_ix["Cond"] != pop.in_ix["Cond"]:
            continue
        made = _forward(program, pop, scopes[0], numbers, executor, fuse, compile_whole_block)
        file_pair(forms, pop, made, grads, lambda gpop: _backward(
            program, pop, gpop, scopes[0], numbers, made, env, executor, fuse,
            compile_whole_block))
    return forms


def _forward(program, pop, kid, numbers, executor, fuse, compile_whole_block):
    block, step = whole_sub_block(program, pop, kid, executor, fuse, compile_whole_block)
    return _branch(block, step, numbers) if step is not None else None


def _branch(block, step, numbers) -> Branch | None:
    """The branch calling compiled block ``step`` (of prepared ``block``), or None."""
    args = arguments(step, [], numbers)          # a branch reads only the enclosing block's
    outputs = outer_writes(block, step, numbers)
    if args is None or outputs is None:
        return None
    return Branch(step, args, outputs)


def _backward(program, pop, gpop, kid, numbers, fwd: Branch, env, executor, fuse,
              compile_whole_block):
    block, step = whole_sub_block(program, gpop, kid, executor, fuse, compile_whole_block)
    if step is None or any(i < 0 for i in gpop.in_ix.get("Out@GRAD", ())):
        return None
    fwd_block = executor.prepare(program, getattr(pop.attrs["sub_block"], "idx",
                                                  pop.attrs["sub_block"]))
    fwd_local = set(fwd_block.local)
    # what the gradient block reads from the kid scope: the outputs' gradients (set there
    # by the grad op) and the branch's own values; anything else from the enclosing block
    made = [fwd.block.names[i] if fwd.block.names[i] in fwd_local else None
            for i in fwd.block.writes]
    args = arguments(step, [("out_grad", list(gpop.inputs["Out@GRAD"])), ("made", made)],
                     numbers)
    writes = outer_writes(block, step, numbers)
    if args is None or writes is None:
        return None
    at = {step.names[i]: pos for pos, i in enumerate(step.writes)}
    local = set(block.local)
    grads = []
    for x, gx, j, xi in zip(gpop.inputs["Input"], gpop.outputs["Input@GRAD"],
                            gpop.out_ix["Input@GRAD"], gpop.in_ix["Input"]):
        if gx == EMPTY_VAR or j < 0:
            continue
        inner = grad_name(x)
        if inner in local and inner in at:
            grads.append((at[inner], j, xi))
        elif inner in fwd_local or xi < 0 or env[xi] is None or \
                env[xi]._value.__class__ is not np.ndarray:
            return None              # the kid holds it some other way: left interpreted
        else:                        # the gradient block does not reach x: zeros
            grads.append((-1, j, xi))
    return BranchGrad(step, args, grads, writes)
