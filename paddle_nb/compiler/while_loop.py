"""A ``while`` op compiled as a loop in its segment.

In the interpreter each step of a while (ops/while_op.py) is a Python round: test the
condition, make a kid scope, run the body op by op, delete the scope. Compiled, the body is
one generated function (its own plan, learned when the interpreter's run of the loop ran
it, holds the whole block as one segment), and the op a loop that calls it::

    # op 4 while: X=i/h/W/x/n, Condition=cond -> Out=i/h/cond ...
    n4 = 0
    while True:
        if v5.size != 1:
            raise ValueError("op 4 while: the condition must hold one value")
        if not v5.ravel()[0]:
            break
        if n4 >= 1000000:
            raise StepLimitReached("4 1000000")
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

Only a while whose step scopes are not kept compiles this way (inference, or a loop no
gradient reads): a training while keeps every step's scope for ``while_grad``, under the
memory limit of ops/while_op.py, and runs in the interpreter, each step one call of its
body's compiled segments.
"""
from __future__ import annotations

from dataclasses import dataclass

from .sub_blocks import Declined, arguments, outer_writes
from ..core.errors import ExecutionError
from ..kernels.cpu.loop_guard import StepLimitReached, stop_if_interrupted
from ..ops import while_op


@dataclass(eq=False)
class WhileLoop:
    """A while op, compiled (see the module docstring)."""
    body: object                  # the body's compiled function (a Segment)
    args: list                    # per argument of body: ("outer", number)
    writes: list                  # (position in body's results, number in this block)
    limit: int
    grad = None                   # (no partner: plan._split_pairs)

    def emit(self, w, pop) -> None:
        b, o = w.body, pop.index
        cond = w._use(pop.in_ix["Condition"][0])
        fn = w._global(self.body.compile())
        args = ", ".join(w._use(k) for _, k in self.args)
        made_here = [j for _, j in self.writes if j not in w.defined and j not in w.reads]
        b.append(f"    n{o} = 0")
        b.append("    while True:")
        b.append(f"        if {cond}.size != 1:\n            raise ValueError(\"op {o} while: "
                 f"the condition must hold one value\")")
        b.append(f"        if not {cond}.ravel()[0]:\n            break")
        b.append(f"        if n{o} >= {self.limit}:\n            raise "
                 f"{w._global(StepLimitReached)}(\"{o} {self.limit}\")")
        b.append(f"        {w._global(stop_if_interrupted)}()")
        b.append(f"        c{o} = {fn}({args})")
        for pos, j in self.writes:
            b.append(f"        {w._define(j)} = c{o}[{pos}]")
        b.append(f"        n{o} += 1")
        if made_here:               # values only a step makes: none without a step
            b.append(f"    if n{o} == 0:\n        raise {w._global(Declined)}(\"op {o} while: "
                     f"no step ran\")")


def while_forms(program, prepared, executor, whole_plan) -> dict:
    """{op index: WhileLoop} for this block's while ops that keep no step scopes and whose
    body's own plan compiled it whole (``whole_plan(prepared body)``: that Segment or
    None)."""
    forms = {}
    numbers = {n: i for i, n in enumerate(prepared.names)}
    for pop in prepared.ops:
        if pop.op.type != "while" or pop.tensor_attrs is not None:
            continue
        if pop.keep_scopes and not pop.attrs["is_test"]:
            continue                     # training: while_grad reads its step scopes
        if not pop.in_ix.get("Condition") or pop.in_ix["Condition"][0] < 0:
            continue
        sub = pop.attrs["sub_block"]
        block = executor.prepare(program, getattr(sub, "idx", sub))
        body = whole_plan(block)
        if body is None:
            continue
        args = arguments(body, [], numbers)
        writes = outer_writes(block, body, numbers)
        if args is None or writes is None:
            continue
        forms[pop.index] = WhileLoop(body, args, writes, while_op.MAX_STEPS)
    return forms


def limit_error(segment, reached: StepLimitReached) -> ExecutionError:
    """The interpreter's error for a compiled loop of ``segment`` that ran its limit, with
    the op's place and line; final: the executor does not run the program again."""
    index, limit = map(int, str(reached).split())
    pop = next(p for p in segment.pops if p.index == index)
    text = f"{pop.where}: {while_op.step_limit_message(limit, pop.inputs['Condition'][0])}"
    if pop.created_at:
        text += f"\n  op created at: {pop.created_at}"
    error = ExecutionError(text)
    error._paddle_nb_located = True
    error._paddle_nb_final = True
    error.failed_op = pop.op
    return error
