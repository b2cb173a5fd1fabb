"""A sub-block compiled whole, for the control-flow op that owns it.

A ``recurrent`` op calls its step block once per step and a ``conditional_block`` its
branch once; compiled (recurrent_loop.py, branch.py), the owner becomes a loop or an ``if``
in its segment, calling the sub-block as one compiled function. That function is the same
source as the sub-block's own plan when it runs under an interpreted owner (plan.py's
``compile_whole_block``), so one compile serves both. It is learned from the scope the
interpreter's run of the sub-block left (a step scope, the branch's kid scope), which the
owner keeps for its gradient op: where the owner keeps none (inference), it stays
interpreted.
"""
from __future__ import annotations

from .lowering import Learned
from ..kernels.cpu.tensor_array import UnevenArray


class Declined(Exception):
    """Raised by compiled code where a control-flow op cannot serve this run as compiled:
    a branch whose condition fails, a loop that ran no step (neither made the values the
    code after it reads; branch.py, while_loop.py). The run is run again in the
    interpreter, and that is no failure of the compiler (compiled_program.py)."""


class NotLearnedWay(Declined):
    """A branch of cond (a scalar condition) not taken on this run, that was not learned
    the other way yet: declined, and the block is learned again on its next run, which
    remembers this branch and learns the other (branch.py)."""


def is_decline(error: BaseException | None) -> bool:
    """Was ``error`` (or what it was raised from) a compiled op declining its run (a
    tensor array whose entries change shape counts: the interpreter's lists hold any)?"""
    return _raised_by(error, (Declined, UnevenArray))


def _raised_by(error: BaseException | None, kinds) -> bool:
    """Is ``error``, or one of the errors it was raised from, one of ``kinds``?"""
    seen = 0
    while error is not None and seen < 8:
        if isinstance(error, kinds):
            return True
        error, seen = error.__cause__ or error.__context__, seen + 1
    return False


def learned_in(scope, names) -> list[Learned]:
    """What ``scope`` (and the scopes above it) holds for each of ``names``."""
    out = []
    for n in names:
        var = scope.find_var(n)
        out.append(Learned(var._value if var is not None else None))
    return out


def whole_sub_block(program, pop, scope, executor, fuse, compile_whole_block):
    """(the prepared sub-block of op ``pop``, it as one compiled Segment learned from
    ``scope``), or (the prepared block, None) when some op of it has no lowered form."""
    sub = pop.attrs["sub_block"]
    block = executor.prepare(program, getattr(sub, "idx", sub))
    return block, compile_whole_block(block, learned_in(scope, block.names), fuse)


def arguments(step, kinds, numbers) -> list | None:
    """Where each argument of compiled block ``step`` comes from: ``(kind, position)`` for
    the first of ``kinds`` (``(kind, names)`` pairs) whose names hold it, else ``("outer",
    its number in the enclosing block)`` (``numbers``: name -> number); None when a name
    is neither."""
    args = []
    for i in step.reads:
        name = step.names[i]
        found = next(((kind, names.index(name)) for kind, names in kinds if name in names),
                     None)
        if found is None:
            if name not in numbers:
                return None
            found = ("outer", numbers[name])
        args.append(found)
    return args


def outer_value(w, step, pos: int, k: int) -> str:
    """Argument ``pos`` of compiled block ``step``, taken from name number ``k`` of the
    segment Writer ``w`` writes: a tensor array as the segment holds one (an empty one
    where the segment starts it), any other value by its name."""
    arrays = step.source.arrays or {}
    i = step.reads[pos]
    return w.array(k, *arrays[i]) if i in arrays else w._use(k)


def outer_writes(block, step, numbers) -> list | None:
    """(position in ``step``'s results, number in the enclosing block) of each name
    compiled block ``step`` writes outside its own block (into a scope above the kid, as
    the interpreter's run of it does), or None for a name the enclosing block lacks."""
    local = set(block.local)
    out = []
    for pos, i in enumerate(step.writes):
        name = step.names[i]
        if name not in local:
            if name not in numbers:
                return None
            out.append((pos, numbers[name]))
    return out


def file_pair(forms: dict, pop, made, grad_pops: list, make_grad) -> None:
    """File ``made``, the compiled form of control-flow op ``pop`` (or None), in ``forms``
    by op index, with ``make_grad(grad_pop)``'s form of its gradient op where it has one
    (``grad_pops``: it, or nothing): both or neither, each knowing the other."""
    if made is None:
        return
    if grad_pops:
        grad = make_grad(grad_pops[0])
        if grad is None:
            return
        forms[grad_pops[0].index] = grad
        made.grad, grad.forward, grad.forward_pop = grad, made, pop
    forms[pop.index] = made


def summed_line(total: str, value: str, step: str) -> str:
    """The loop body lines that add ``value`` into ``total`` at each step of a gradient
    loop (``step`` its counter): a copy at step 0, then in place, in the interpreter's
    order (its sums[x] + value), so the same bits, and no new array a step."""
    return (f"        if {step} == 0:\n            {total} = {value}.copy()\n"
            f"        else:\n            {total} += {value}")


def learn_again(error: BaseException | None) -> bool:
    """Was ``error`` (or what it was raised from) a branch of cond not learned its way?"""
    return _raised_by(error, NotLearnedWay)
