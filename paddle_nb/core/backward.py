"""Backward as a program transformation (docs/architecture.md, decision 3; the Framework
design).

``append_backward(loss)`` appends ordinary, visible ops to the loss's block:

1. ``fill_constant`` 1.0 into ``loss@GRAD``;
2. for every op on the path from a variable that needs a gradient to the loss, in reverse
   order, the ops its gradient maker returns (``mul_grad``, ...), reading ``Out@GRAD`` and
   writing ``X@GRAD``; a gradient a grad op needs but nothing produced (an output off the
   loss's path) is made by ``fill_zeros_like`` first;
3. a gradient written by several grad ops is renamed ``x@GRAD@RENAME@k`` at each write and
   the parts are added by a ``sum`` op just before ``x@GRAD`` is first read.

Variables with ``stop_gradient``, integer or bool dtype, or in ``no_grad_set`` get no
gradient. The grad ops carry ``op_role`` (1 backward, 257 the loss's fill) so that
``clone(for_test=True)`` can drop them. Only the global block is differentiated here;
control-flow ops bring their own gradient sub-blocks.
"""
from __future__ import annotations

from . import dtypes, registry
from .errors import BuildError
from .framework_pb2 import VarType
from .grad_maker import (EMPTY_VAR, GRAD_SUFFIX, Grad, GradOp, forward_name, grad_name,
                         runs_in_every_grad_block)
from .operator import (OP_ROLE_BACKWARD, OP_ROLE_FORWARD, OP_ROLE_LOSS,  # noqa: F401
                       OP_ROLE_OPTIMIZE, Operator, is_forward, op_role)
from .symbol_table import tensor_desc
from .variable import Variable, var_names, view

# the types a gradient flows through: floats, and complex numbers (as_complex, as_real)
_FLOAT_TYPES = {VarType.FP16, VarType.FP32, VarType.FP64, VarType.BF16, VarType.COMPLEX64,
                VarType.COMPLEX128}


def _names(items) -> set[str]:
    return set(var_names(items))


def _no_grad_names(block, no_grad_set, keep=()) -> set[str]:
    names = _names(no_grad_set)
    table = block.table
    while table is not None:
        for d in table.vars.values():
            t = tensor_desc(d) if d.type.type != VarType.SELECTED_ROWS else None
            if d.stop_gradient or t is None or t.data_type not in _FLOAT_TYPES:
                names.add(d.name)
        table = table.parent
    return names - set(keep)


def _differentiable_inputs(op: Operator) -> list[str]:
    op_def = op.op_def
    slots = op_def.grad.resolve(op_def)[1] if isinstance(op_def.grad, Grad) else \
        [s.name for s in op_def.inputs]
    return [n for s in slots for n in op.input(s)]


def _ops_on_path(ops: list[Operator], targets: set[str], no_grad: set[str]) -> list[Operator]:
    """The forward ops between the variables that need gradients and the targets.

    A variable no earlier op wrote comes from outside (a fed input, a parameter, a loop
    variable of a block that is read before the body writes it: ``array_read(arr, i)``
    before ``array_write(.., i, arr)``), so a gradient can flow into it."""
    produced = set()    # written by an earlier op
    carries = set()     # variables through which a gradient can flow
    relevant = []
    for op in ops:
        if op.op_def.grad in (None, registry.NO_GRADIENT):
            produced.update(op.output_arg_names)
            continue
        ins = _differentiable_inputs(op)
        if any(n in carries or (n not in produced and n not in no_grad) for n in ins):
            carries.update(n for n in op.output_arg_names if n not in no_grad)
            relevant.append(op)
        produced.update(op.output_arg_names)
    needed, path = set(targets), []
    for op in reversed(relevant):
        if needed & set(op.output_arg_names):
            path.append(op)
            needed.update(n for n in op.input_arg_names if n not in no_grad)
    path.reverse()
    return path


def _grad_ops_for(op: Operator, no_grad: set[str]) -> list[GradOp]:
    maker = op.op_def.grad
    if maker is None:
        raise BuildError(f"op {op.type} has no gradient maker yet (its declaration says "
                         f"neither a Grad nor NO_GRADIENT)")
    made = maker.make(op, no_grad) if isinstance(maker, Grad) else maker(op, no_grad)
    kept = []
    spent = frozenset(grad_name(n) for n in op.output_arg_names)
    for g in made:
        outs = [n for names in g.outputs.values() for n in names if n != EMPTY_VAR]
        if outs:
            g.attrs["op_role"] = OP_ROLE_BACKWARD
            kept.append(g)
    if kept:
        kept[-1].consumes = spent
    return kept


def _is_tensor_array(block, name: str) -> bool:
    v = _forward_var(block, name)
    return v is not None and v.type.type == VarType.LOD_TENSOR_ARRAY


def _fill_missing(block, grad_ops: list[GradOp], available: set[str]) -> list[GradOp]:
    """Put ``fill_zeros_like`` before a grad op that reads a gradient nobody wrote; not for
    a tensor array's gradient, only declared: left without a value it is an empty array,
    whose entries read_from_array (write_to_array's gradient, with X_W) reads as zeros."""
    out = []
    for g in grad_ops:
        for names in g.inputs.values():
            for n in names:
                if GRAD_SUFFIX in n and n not in available and \
                        _is_tensor_array(block, forward_name(n)):
                    _declare_names(block, [n])
                    available.add(n)
                elif GRAD_SUFFIX in n and n not in available:
                    out.append(GradOp("fill_zeros_like", {"X": [forward_name(n)]}, {"Out": [n]},
                                      {"op_role": OP_ROLE_BACKWARD}))
                    available.add(n)
        out.append(g)
        available.update(n for names in g.outputs.values() for n in names)
    return out


def _add_up_repeated(block, grad_ops: list[GradOp], initial=()) -> list[GradOp]:
    """Rename gradients written more than once and sum them before their first read.
    ``initial`` gradients hold a value before the first op (set by the op that runs a
    gradient block, e.g. the gradient arriving from the next RNN step): writes add to it.
    Once the gradient op of a variable's writer has read its gradient, the gradient is
    spent: a later write (the variable's value before an overwrite) starts afresh. An
    initial gradient spent and never written again ends as zeros, so the op running the
    block reads the right (zero) gradient of the value the block started with; not a
    tensor array's: a write_to_array set one entry, and the gradient of the others (the
    array the block started with) is the gradient array as it stands."""
    parts: dict[str, list[str]] = {n: [n] for n in initial}   # x@GRAD -> partial sums
    writer: dict[str, tuple[GradOp, str, int]] = {}
    spent_initial = set()
    result = []

    def flush(name):
        if len(parts.get(name, [])) > 1:
            result.append(GradOp("sum", {"X": parts[name]}, {"Out": [name]},
                                 {"op_role": OP_ROLE_BACKWARD}))
            parts[name] = [name]

    for g in grad_ops:
        for names in g.inputs.values():
            for n in names:
                flush(n)
        for n in g.consumes:        # read now: what the op writes under n is a new value
            if n in parts:
                parts.pop(n)
                writer.pop(n, None)
                if n in initial:
                    spent_initial.add(n)
        for slot, names in g.outputs.items():
            for i, n in enumerate(names):
                if GRAD_SUFFIX not in n or n == EMPTY_VAR:
                    continue
                if n not in parts:
                    parts[n], writer[n] = [n], (g, slot, i)
                    continue
                if parts[n] == [n] and n in writer:   # the first write is renamed too
                    first_op, first_slot, first_i = writer[n]
                    renamed = f"{n}@RENAME@0"
                    first_op.outputs[first_slot][first_i] = renamed
                    parts[n] = [renamed]
                new = f"{n}@RENAME@{len(parts[n])}"
                names[i] = new
                parts[n].append(new)
        result.append(g)
    for n in list(parts):
        flush(n)
        spent_initial.discard(n)            # written again after it was spent
    for n in sorted(spent_initial):
        if _is_tensor_array(block, forward_name(n)):
            continue
        result.append(GradOp("fill_zeros_like", {"X": [forward_name(n)]}, {"Out": [n]},
                             {"op_role": OP_ROLE_BACKWARD}))
    return result


def _declare_grad_vars(block, grad_ops: list[GradOp]) -> None:
    """Declare each gradient a grad op writes in ``block`` itself (a gradient block keeps
    its own copy, which the op running the block then hands to the outside), shaped like
    its forward variable, looked up from ``block`` and, for a gradient block, from the
    forward block it differentiates. A sparse embedding's gradient is declared
    SELECTED_ROWS, and so is the ``sum`` of SelectedRows parts (Paddle's sum gives a
    SelectedRows only when every input is one)."""
    sparse: set[str] = set()
    for g in grad_ops:
        for slot, names in g.outputs.items():
            parts = g.inputs.get("X", ()) if g.type == "sum" else ()
            if slot in g.selected_rows or (parts and all(n in sparse for n in parts)):
                sparse.update(names)
    _declare_names(block, [n for g in grad_ops for names in g.outputs.values() for n in names],
                   sparse)


def _declare_names(block, names, sparse=frozenset()) -> None:
    table = block.table
    for n in names:
        if n == EMPTY_VAR or n in table.vars:
            continue
        if GRAD_SUFFIX not in n and _forward_var(block, n) is not None:
            continue      # a forward variable a grad op restores (a counter): no new one
        fwd = _forward_var(block, forward_name(n))
        t = tensor_desc(fwd) if fwd is not None else None
        if t is not None:
            kind = VarType.SELECTED_ROWS if n in sparse else fwd.type.type
            table.declare(n, shape=list(t.dims), dtype=t.data_type, kind=kind)
        else:
            table.var(n)


def _forward_var(block, name: str):
    """The forward variable ``name`` as a gradient block sees it: the forward block it
    differentiates (and that block's parents) first, then its own chain."""
    if block.forward_block_idx >= 0:
        v = _forward_var(block.program.block(block.forward_block_idx), name)
        if v is not None:
            return v
    return block.table.find_var(name)


def _append_backward_ops(block, targets: list[Variable], target_grads, no_grad: set[str]):
    """Append the backward ops; return the forward ops that were differentiated."""
    forward_ops = [op for op in block.ops if is_forward(op)]
    path = _ops_on_path(forward_ops, {t.name for t in targets}, no_grad)
    if not path:
        return path
    grad_ops: list[GradOp] = []
    for t, tg in zip(targets, target_grads):
        if tg is not None:
            grad_ops.append(GradOp("assign", {"X": [tg.name]}, {"Out": [grad_name(t.name)]},
                                   {"op_role": OP_ROLE_BACKWARD}))
        else:
            grad_ops.append(_ones_like(t))
    for op in reversed(path):
        grad_ops.extend(_grad_ops_for(op, no_grad))
    grad_ops = _fill_missing(block, grad_ops, set())
    grad_ops = _add_up_repeated(block, grad_ops)
    _declare_grad_vars(block, grad_ops)
    for g in grad_ops:
        block.append_op(g.type, g.inputs, g.outputs, g.attrs, infer_shape=False)
    return path


def append_grad_block(op: Operator, sub_block_idx: int, targets: set[str],
                      initial_grads: set[str], no_grad: set[str]):
    """The gradient block of a control-flow op's sub-block: a new block (parent: the op's
    block, ``forward_block_idx``: the sub-block) holding the backward of the ops in the
    sub-block that lead to ``targets``. ``initial_grads`` are gradients the op will put in
    the scope before running the block (its outputs' gradients, an RNN memory's gradient
    from the next step). Returns (grad block, forward ops differentiated)."""
    program = op.block.program
    forward = program.block(sub_block_idx)
    saved = program.current_block_idx
    grad_block = program.create_block(parent_idx=op.block.idx)
    grad_block.table.header.forward_block_idx = sub_block_idx
    program.current_block_idx = saved
    forward_ops = [o for o in forward.ops if is_forward(o)]
    path = _ops_on_path(forward_ops, targets, no_grad)
    # and, when anything is differentiated, every op whose gradient undoes a change of
    # state (an in-place counter: Fluid differentiates all ops of a sub-block), in order
    on_path = {id(o) for o in path}
    differentiated = [o for o in forward_ops if id(o) in on_path
                      or (path and runs_in_every_grad_block(o.op_def))]
    grad_ops: list[GradOp] = []
    for fop in reversed(differentiated):
        grad_ops.extend(_grad_ops_for(fop, no_grad))
    grad_ops = _fill_missing(grad_block, grad_ops, set(initial_grads))
    grad_ops = _add_up_repeated(grad_block, grad_ops, initial_grads)
    sparse = [g for g in grad_ops if g.selected_rows]
    if sparse and op.type in _ADDS_UP_STEPS:
        raise BuildError(
            f"{op.type}: {sparse[0].type} in its block makes a sparse gradient (a "
            f"SelectedRows: is_sparse=True), and {op.type}_grad adds a parameter's gradient "
            f"up over the steps as dense tensors; build the embedding with is_sparse=False, "
            f"or look it up outside the loop")
    _declare_names(grad_block, sorted(initial_grads))      # the op puts these in the scope
    _declare_grad_vars(grad_block, grad_ops)
    for g in grad_ops:
        grad_block.append_op(g.type, g.inputs, g.outputs, g.attrs, infer_shape=False)
    return grad_block, path


# control-flow ops whose gradient adds a parameter's gradient over the steps (dense only)
_ADDS_UP_STEPS = ("while", "recurrent")


def _ones_like(target: Variable) -> GradOp:
    shape = list(target.shape)
    out = {"Out": [grad_name(target.name)]}
    role = OP_ROLE_BACKWARD | OP_ROLE_LOSS
    if any(d < 0 for d in shape):        # a loss with a batch dimension: ones like it
        return GradOp("fill_any_like", {"X": [target.name]}, out,
                      {"value": 1.0, "op_role": role})
    return GradOp("fill_constant", {}, out, {"shape": shape, "value": 1.0, "op_role": role,
                                             "dtype": dtypes.to_code(target.dtype)})


def _check_target(t, what: str) -> Variable:
    if not isinstance(t, Variable):
        raise BuildError(f"{what} must be a Variable, got {type(t).__name__} {t!r}")
    if t.block.idx != 0:
        raise BuildError(f"{what} {t.name!r} lives in {t.block.path}; backward starts from a "
                         f"variable of the global block")
    return t


def append_backward(loss: Variable, parameter_list=None, no_grad_set=None):
    """Append the backward pass of ``loss`` and return ``[(parameter, gradient)]`` for the
    trainable parameters (or those in ``parameter_list``) that received a gradient."""
    _check_target(loss, "the loss")
    block = loss.block
    no_grad = _no_grad_names(block, no_grad_set)
    if loss.name in no_grad:
        raise BuildError(f"the loss {loss.name!r} has stop_gradient set (or is not a float "
                         f"tensor): nothing can be differentiated")
    if not _append_backward_ops(block, [loss], [None], no_grad):
        raise BuildError(f"the loss {loss.name!r} does not depend on anything that needs a "
                         f"gradient (a trainable parameter, or a variable with "
                         f"stop_gradient=False)")
    if parameter_list is None:
        params = [p for p in block.program.all_parameters() if p.trainable]
    else:
        wanted = _names(parameter_list)
        params = [p for p in block.program.all_parameters() if p.name in wanted]
    pairs = []
    for p in params:
        g = block.table.find_var(grad_name(p.name))
        if g is not None and p.name not in no_grad:
            pairs.append((p, view(block, g)))
    return pairs


def gradients(targets, inputs, target_gradients=None, no_grad_set=None):
    """Gradients of (the sum of) ``targets`` with respect to ``inputs``: a list of
    Variables, ``None`` where an input does not affect the targets. Inputs get a gradient
    even when they are marked ``stop_gradient`` (they were asked for)."""
    targets = list(targets) if isinstance(targets, (list, tuple)) else [targets]
    inputs = list(inputs) if isinstance(inputs, (list, tuple)) else [inputs]
    if target_gradients is None:
        target_gradients = [None] * len(targets)
    target_gradients = list(target_gradients) if isinstance(target_gradients, (list, tuple)) \
        else [target_gradients]
    if len(target_gradients) != len(targets):
        raise BuildError(f"{len(targets)} targets but {len(target_gradients)} target_gradients")
    for t in targets:
        _check_target(t, "a target")
    block = targets[0].block
    no_grad = _no_grad_names(block, no_grad_set, keep=_names(inputs))
    _append_backward_ops(block, targets, target_gradients, no_grad)
    result = []
    for x in inputs:
        g = block.table.find_var(grad_name(x.name))
        result.append(view(block, g) if g is not None else None)
    return result
