"""recurrent_grad_trim: a recurrent op's gradient block without the ops its time steps
never need.

``recurrent_grad`` runs the gradient block once per time step. Before each run it puts
every output's gradient in the step's scope (zeros where none arrived), and after it reads
back only the gradients of the parameters, the step inputs and the previous memories.
Backward, built one op at a time, does not know that, so each step runs:

* ``rnn_memory_helper_grad``, which copies an output's gradient, or makes zeros when it
  has none: here it always has one, so its readers can read that gradient itself;
* trailing ``fill_zeros_like`` ops resetting gradients the block already spent (so a
  program that read them again would see zeros): nothing reads them after the block;
* declarations of gradients no op of the block touches any more (recurrent_hoist moved
  their op out), each a Variable made in every step's scope.

Dropping them takes two or three ops out of every time step of the backward pass and
gives the same bits (copies and unread writes are all that go).
"""
from __future__ import annotations

from ..core.grad_maker import EMPTY_VAR, grad_name
from ..core.program import Program
from .matching import untouched_between


def run(program: Program, keep=frozenset()) -> int:
    """Trim every recurrent gradient block of ``program`` (in place); returns how many ops
    went."""
    count = 0
    for parent in program.blocks:
        for rg in parent.ops:
            if rg.type != "recurrent_grad":
                continue
            block = program.block(rg.attr("sub_block"))
            # an op owning a block there may read names its slots do not list: leave it be
            if not any(op.has_attr("sub_block") for op in block.ops):
                count += _read_given_gradients(block, rg, keep)
                count += _drop_unread(block, rg, keep)
    return count


def _read_after(rg) -> set[str]:
    """What recurrent_grad reads from a step's scope after the block ran."""
    names = rg.input("parameters") + rg.input("inputs") + list(rg.attr("ex_states") or [])
    return {grad_name(n) for n in names}


def _read_given_gradients(block, rg, keep) -> int:
    given = {grad_name(o) for o in rg.input("outputs")}
    for i, op in enumerate(block.ops):
        dout = op.input("Out@GRAD") if op.type == "rnn_memory_helper_grad" else []
        if not dout or dout[0] not in given:
            continue
        copy, source = op.output("X@GRAD")[0], op.input("Out@GRAD")[0]
        ops = block.ops
        readers = [j for j, o in enumerate(ops) if j > i and copy in o.input_arg_names]
        writers = [j for j, o in enumerate(ops) if copy in o.output_arg_names]
        if copy in keep or copy in _read_after(rg) or writers != [i] or not readers or \
                not untouched_between(ops, i, readers[-1] + 1, [source]):
            continue
        for j in readers:
            for v in ops[j].desc.inputs:
                v.arguments[:] = [source if a == copy else a for a in v.arguments]
        block._remove_op(i)
        if block.has_var(copy):
            block._remove_var(copy)
        block.table.touch()
        return 1 + _read_given_gradients(block, rg, keep)
    return 0


def _drop_unread(block, rg, keep) -> int:
    live = _read_after(rg) | set(keep)
    dropped = 0
    for i in reversed(range(len(block.ops))):
        op = block.ops[i]
        outs = [n for n in op.output_arg_names if n != EMPTY_VAR]
        unread = outs and not (set(outs) & live) and all(block.has_var(n) for n in outs)
        if unread:
            block._remove_op(i)
            dropped += 1
        else:
            live |= set(op.input_arg_names)
    # and the declarations nothing uses any more (each is a Variable made every step)
    needed = {n for op in block.ops for n in op.input_arg_names + op.output_arg_names}
    needed |= {grad_name(n) for n in rg.input("outputs") + list(rg.attr("states") or [])}
    needed |= _read_after(rg) | set(keep)         # recurrent_grad sets or reads these
    for name in list(block.table.vars):
        if name not in needed:
            block._remove_var(name)
    return dropped
