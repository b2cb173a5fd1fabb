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
when the condition of an IfElse branch fails the compiled code raises
``sub_blocks.Declined`` before any value is stored, and the executor runs that one run in
the interpreter, without counting it as a failure of the compiler (compiled_program.py); a
program whose branches keep declining runs them in the interpreter from then on. With
random rows both branches of an IfElse get rows, and a run is one call.

The two branches of ``cond`` (scalar conditions) take turns instead, and only
``select_input`` reads their outputs, by ``cast(pred)``: it never picks the branch not
taken. So such a branch (``Branch.merged``) is an ``if``: not taken, it gives placeholders
(empty arrays of its outputs' dtypes and ranks) and its gradient op gives its inputs
zeros, as the interpreter's does. A learning run takes one branch; the other is a
stand-in (``_not_learned``) that raises ``NotLearnedWay`` where it must run, and that run
goes to the interpreter and has the block learned again, remembering the branch learned
before (``remembered``): from then on both ways are compiled.

A pair is compiled only together, in one segment (the branch's values live there), from
what the interpreter's run left in the kept kid scope. A conditional_block whose scope is
not kept (no gradient op: inference) compiles alone, from its branch block's own plan
(learned when the interpreter ran the branch).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .sub_blocks import (Declined, NotLearnedWay, arguments, file_pair, outer_value,
                         outer_writes, whole_sub_block)
from ..core.grad_maker import EMPTY_VAR, grad_name


@dataclass(eq=False)
class Branch:
    """A conditional_block, compiled (see the module docstring)."""
    block: object                 # the sub-block's compiled function (a Segment)
    args: list                    # per argument of block: ("outer", number)
    outputs: list                 # (position in block's results, number in this block)
    grad: "BranchGrad | None" = field(default=None, repr=False)
    # a branch of cond whose outputs only select_input reads, by the same condition:
    # not taken, it gives placeholders (shape, dtype per output, as learned) instead
    merged: list | None = None

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
        if self.block is None:          # a branch of cond no run has taken yet
            b.append(f"    taken{o} = bool({test})")
            b.append(f"    if taken{o}:\n        raise {w._global(NotLearnedWay)}(\"op {o} "
                     f"conditional_block: its branch was not learned yet\")")
            if self.skippable:
                b += [f"    {w._define(j)} = np.empty(({'0, ' * len(shape)}), "
                      f"{w._dtype(dtype)})"
                      for (_, j), (shape, dtype) in zip(self.outputs, self.merged)]
            else:
                b.append(f"    raise {w._global(NotLearnedWay)}(\"op {o} conditional_block: "
                         f"its outputs are read outside the segment\")")
            return
        fn = w._global(self.block.compile())
        args = ", ".join(outer_value(w, self.block, pos, k)
                         for pos, (_, k) in enumerate(self.args))
        if self.skippable:
            b.append(f"    taken{o} = bool({test})")
            b.append(f"    if taken{o}:")
            b.append(f"        c{o} = {fn}({args})")
            b += [f"        {w._define(j)} = c{o}[{pos}]" for pos, j in self.outputs]
            b.append("    else:                # select_input takes the other branch's")
            for (_, j), (shape, dtype) in zip(self.outputs, self.merged):
                b.append(f"        {w._define(j)} = np.empty(({'0, ' * len(shape)}), "
                         f"{w._dtype(dtype)})")
            return
        b.append(f"    if not ({test}):\n        raise {w._global(Declined)}("
                 f"\"op {o} conditional_block: its condition fails on this run\")")
        b.append(f"    c{o} = {fn}({args})")
        for pos, j in self.outputs:
            b.append(f"    {w._define(j)} = c{o}[{pos}]")

    @property
    def skippable(self) -> bool:
        """May the branch not run here? Only if select_input alone reads its outputs (by
        its condition: it never takes a placeholder) and the user sees none of them
        (compiled_program drops ``merged`` where a fetch or an outer scope would)."""
        return self.merged is not None


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
        """The gradient block's call (after its forward op's, in the same function); a
        branch not taken gives its inputs zero gradients, as the interpreter's does."""
        b, o, f = w.body, gpop.index, self.forward_pop.index
        if self.block is None:          # (its forward raised where the branch runs)
            b += [f"    {w._define(j)} = np.zeros_like({w._use(x)})" for _, j, x in self.grads]
            return
        out_grads = gpop.in_ix["Out@GRAD"]
        args = [w._use(out_grads[k]) if kind == "out_grad" else f"c{f}[{k}]"
                if kind == "made" else outer_value(w, self.block, pos, k)
                for pos, (kind, k) in enumerate(self.args)]
        pad = "    "
        if self.forward.skippable:
            b.append(f"    if taken{f}:")
            pad = "        "
        b.append(f"{pad}q{o} = {w._global(self.block.compile())}({', '.join(args)})")
        for pos, j, x in self.grads:
            value = f"q{o}[{pos}]" if pos >= 0 else f"np.zeros_like({w._use(x)})"
            b.append(f"{pad}{w._define(j)} = {value}")
        for pos, j in self.writes:
            b.append(f"{pad}{w._define(j)} = q{o}[{pos}]")
        if self.forward.skippable:
            b.append("    else:")
            b += [f"        {w._define(j)} = np.zeros_like({w._use(x)})"
                  for _, j, x in self.grads]


def branch_forms(program, prepared, env, executor, fuse, compile_whole_block,
                 whole_plan, remembered: dict) -> dict:
    """{op index: Branch or BranchGrad} for this block's conditional_blocks whose branch
    ran in the interpreter's run (its kept kid scope in ``env``), each paired with its
    gradient op; or, where no gradient op reads the scope (inference), from the branch
    block's own plan. ``compile_whole_block``, ``whole_plan``: as recurrent_loop's.

    A branch of cond (scalar) that this run did not take is taken from ``remembered``
    (the CompiledProgram's: {(block, op index): (prepared block, forms)}), where an earlier
    learning run took it: so a cond whose condition flips compiles both ways once each
    has run, and its merge (select_input) with them."""
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
        made = {}
        if not scopes:          # not kept (inference: from the branch's own plan, if it
            if not grads:       # ran), or this run did not take it
                sub = pop.attrs["sub_block"]
                block = executor.prepare(program, getattr(sub, "idx", sub))
                step = whole_plan(block)
                branch = _branch(block, step, numbers) if step is not None else None
                if branch is not None and _outputs_learned(branch, env):
                    made[pop.index] = branch
        elif not (len(grads) > 1 or grads and grads[0].in_ix["Cond"] != pop.in_ix["Cond"]):
            branch = _forward(program, pop, scopes[0], numbers, executor, fuse,
                              compile_whole_block)
            if branch is not None and not _outputs_learned(branch, env):
                branch = None
            file_pair(made, pop, branch, grads, lambda gpop: _backward(
                program, pop, gpop, scopes[0], numbers, branch, env, executor, fuse,
                compile_whole_block))
        key = (prepared.block.idx, pop.index)
        merged = pop.attrs["is_scalar_condition"] and _merged_by_select_input(prepared, pop)
        if made:
            if pop.attrs["is_scalar_condition"]:
                remembered[key] = (prepared, made)
            if merged:
                made[pop.index].merged = made[pop.index].merged or [
                    (env[j]._value.shape, env[j]._value.dtype)
                    for _, j in made[pop.index].outputs]
        elif key in remembered and remembered[key][0] is prepared:
            made = remembered[key][1]          # a branch of cond learned on another run
        elif merged:                           # one no run took yet: a stand-in that
            made = _not_learned(prepared, pop, grads, env)     # declines if it must run
        forms.update(made)
    return forms


def _not_learned(prepared, pop, grads: list, env) -> dict:
    """Forms for a branch of cond that no learning run took: not taken, it gives
    placeholders (the outputs' declared dtype and rank) and its inputs zero gradients;
    taken, it raises NotLearnedWay, and the next run learns the block again."""
    merged = []
    for name in pop.outputs.get("Out", ()):
        var = prepared.block.var(name)
        merged.append((tuple(max(d, 0) for d in var.shape), np.dtype(var.dtype)))
    outputs = [(-1, j) for j in pop.out_ix.get("Out", ())]
    if any(j < 0 for _, j in outputs):
        return {}
    made = {pop.index: Branch(None, [], outputs, merged=merged)}
    if grads:
        gpop = grads[0]
        zeros = []
        for gx, j, xi in zip(gpop.outputs["Input@GRAD"], gpop.out_ix["Input@GRAD"],
                             gpop.in_ix["Input"]):
            if gx == EMPTY_VAR or j < 0:
                continue
            if xi < 0 or env[xi] is None or env[xi]._value.__class__ is not np.ndarray:
                return {}
            zeros.append((-1, j, xi))
        file_pair(made, pop, made[pop.index], grads,
                  lambda gpop: BranchGrad(None, [], zeros, []))
    return made


def _outputs_learned(branch: Branch, env) -> bool:
    """Did this run give every output of the (taken) branch an array?"""
    return all(env[j] is not None and env[j]._value.__class__ is np.ndarray
               for _, j in branch.outputs)


def _merged_by_select_input(prepared, pop) -> bool:
    """Are the outputs of conditional_block ``pop`` read, in its block, only by
    select_input ops whose Mask is ``cast(its condition)`` and that take the output at
    position 1 (the true branch of cond) or, for a branch run on ``logical_not(p)``, the
    Mask ``cast(p)`` at position 0 (and by the gradient ops of branches, which run only
    where their branch ran)? Then a placeholder for an output of the branch not taken is
    never picked (control_flow/cond.py builds cond so; Paddle does too)."""
    made_by = {n: op for op in prepared.ops for ns in op.outputs.values() for n in ns}
    cond = pop.inputs["Cond"][0]
    negated = made_by.get(cond)
    if negated is not None and negated.op.type == "logical_not":
        wanted, position = negated.inputs["X"][0], 0
    else:
        wanted, position = cond, 1
    outputs = set(pop.outputs.get("Out", ()))
    for op in prepared.ops:
        read = outputs & {n for ns in op.inputs.values() for n in ns}
        if not read or op is pop or op.op.type == "conditional_block_grad":
            continue            # (a gradient op runs under the branch's own test)
        if op.op.type != "select_input":
            return False
        mask = made_by.get(op.inputs["Mask"][0])
        xs = op.inputs["X"]
        if mask is None or mask.op.type != "cast" or mask.inputs["X"][0] != wanted or \
                len(xs) != 2 or any(x in outputs for k, x in enumerate(xs) if k != position):
            return False
    return True


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
