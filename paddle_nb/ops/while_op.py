"""The ``while`` op and its gradient (the Block design's while_op, Fluid's While).

``while`` runs its block, each time in a new kid scope, as long as the (outer) bool
``Condition`` holds; the body updates the condition and the loop variables, which live
outside. When training, each step's scope is kept, holding a snapshot of the loop
variables as they were when the step began (as Paddle's WhileOp does; a counter updated in
place is not copied, the gradient block undoes its ``increment``), so that ``while_grad``
can run the gradient block in each step's scope, last step first:

- the gradient of what a step wrote (``Out@GRAD`` for the last step) is put in its scope;
- after the step's gradient block, a loop variable's gradient is the gradient that flows
  into the step before it; the gradients of variables only read (parameters) add up.

Both kernels only move tensors (through arrays.py), so they serve both places; on CUDA
the condition is copied to the host once per step.
"""
from __future__ import annotations

import os
import warnings

from ..core import attrs as A
from ..core.errors import ExecutionError
from ..core.grad_maker import EMPTY_VAR, GradOp, forward_name, grad_name
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core.limits import human_bytes
from . import arrays
from .body_gradient import body_grad_attrs

DEFAULT_MAX_STEPS = 1_000_000   # a loop this long is almost surely a condition never updated
MAX_STEPS_ENV = "PADDLE_NB_MAX_WHILE_STEPS"


# A training loop keeps every step's scope for its gradient: bounded by bytes as well as by
# steps, since a loop that never ends would fill the memory long before a million steps.
DEFAULT_MAX_KEPT_BYTES = 2 ** 31   # 2 GiB of tensors in the step scopes of one while op
MAX_KEPT_BYTES_ENV = "PADDLE_NB_MAX_WHILE_BYTES"


def _positive_int_from_env(variable: str, default: int, what: str, environ) -> int:
    """The positive integer the environment ``variable`` holds, else ``default``; a value
    that is not one is ignored with a warning."""
    text = environ.get(variable, "").strip()
    if not text:
        return default
    try:
        value = int(text)
        if value < 1:
            raise ValueError
    except ValueError:
        warnings.warn(f"{variable}={environ[variable]!r} is not a positive integer; "
                      f"using the default {what} {default}", stacklevel=3)
        return default
    return value


def max_steps_from_env(environ=os.environ) -> int:
    """The step limit the environment variable PADDLE_NB_MAX_WHILE_STEPS sets (a positive
    integer), else DEFAULT_MAX_STEPS; a value that is not one is ignored with a warning."""
    return _positive_int_from_env(MAX_STEPS_ENV, DEFAULT_MAX_STEPS, "while step limit", environ)


def max_kept_bytes_from_env(environ=os.environ) -> int:
    """The byte limit PADDLE_NB_MAX_WHILE_BYTES sets, else DEFAULT_MAX_KEPT_BYTES."""
    return _positive_int_from_env(MAX_KEPT_BYTES_ENV, DEFAULT_MAX_KEPT_BYTES,
                                  "limit of bytes a training while keeps", environ)


# Steps one while op may run before it is stopped with an error, and the bytes its kept
# step scopes may hold when training. Set these module attributes
# (paddle_nb.ops.while_op.MAX_STEPS = 10_000) or the environment variables before import.
MAX_STEPS = max_steps_from_env()
MAX_KEPT_BYTES = max_kept_bytes_from_env()

_ATTRS = [Attr("sub_block", A.BLOCK, None, "the loop body"),
          Attr("is_test", A.BOOLEAN, False, "inference: no step scopes are kept"),
          Attr("skip_eager_deletion_vars", A.STRINGS, [], "kept for Paddle compatibility",
               extra=True)]


def _truth(value) -> bool:
    v = arrays.host(value)        # on CUDA: one 1-element copy per step, the loop's test
    if v.size != 1:
        raise ExecutionError(f"the while condition must hold one bool, got shape {list(v.shape)}")
    return bool(v.ravel()[0])


def snapshot_names(program, sub_block, x_names) -> list[str]:
    """Loop inputs to save at each step's start: tensors that are not parameters and that
    no single op updates in place (those are counters, like ``increment``: the gradient
    block walks them back itself, with increment's gradient, an increment by -step)."""
    body = program.block(sub_block)
    in_place = {n for op in body.ops for n in op.input_arg_names if n in op.output_arg_names}
    names = []
    for n in x_names:
        desc = body.lookup(n)
        if desc is not None and not desc.is_parameter and n not in in_place:
            names.append(n)
    return names


def _while(ctx):
    cond = ctx.scope.find_var(ctx.input_names("Condition")[0])
    keep = ctx.keep_scopes and not ctx.attr("is_test")
    snap = snapshot_names(ctx.op.program, ctx.attr("sub_block"), ctx.input_names("X")) \
        if keep else []
    scopes, step, limit, kept = [], 0, MAX_STEPS, 0
    while _truth(cond.get()):
        if step >= limit:
            raise ExecutionError(step_limit_message(limit, ctx.input_names("Condition")[0]))
        kid = ctx.new_scope(f"step {step}")
        start = {}
        for n in snap:
            v = ctx.scope.find_var(n)
            if v is not None and v.is_initialized() and arrays.is_tensor(v.get()):
                start[n] = v.get()
        yield from ctx.run_block(ctx.attr("sub_block"), kid)
        if keep:
            for n, value in start.items():   # what the step read, for its gradient
                kid.var(n).set(value)
            scopes.append(kid)
            kept += kid.held_bytes()
            if kept > MAX_KEPT_BYTES:
                raise ExecutionError(kept_too_much_message(
                    step + 1, kept, ctx.input_names("Condition")[0]))
        else:
            ctx.scope.delete_scope(kid)
        step += 1
    if ctx.has_output("StepScopes"):
        ctx.output_var("StepScopes").set(scopes, kind="scopes")


def step_limit_message(limit: int, condition: str) -> str:
    """The error of a loop stopped at ``limit`` steps (here, and in a compiled loop)."""
    return (f"while ran {limit} steps and its condition {condition!r} still holds: does the "
            f"body update it? (the limit is paddle_nb.ops.while_op.MAX_STEPS, or the "
            f"environment variable {MAX_STEPS_ENV})")


def kept_too_much_message(steps: int, kept: int, condition: str) -> str:
    """The error of a training loop whose kept step scopes passed MAX_KEPT_BYTES (here,
    and in a compiled loop)."""
    return (f"while kept {steps} step scopes holding {human_bytes(kept)} of tensors for its "
            f"gradient (training keeps every step), past the limit of "
            f"{human_bytes(MAX_KEPT_BYTES)}; its condition {condition!r} still holds. If the "
            f"loop is meant to be this long, raise paddle_nb.ops.while_op.MAX_KEPT_BYTES (or "
            f"the environment variable {MAX_KEPT_BYTES_ENV}); if not, does the body update "
            f"its condition? (Inference, program.clone(for_test=True), keeps no step scopes.)")


def _while_grad(ctx):
    scopes = ctx.input_or_none("StepScopes") or []
    xs, x_grads = ctx.input_names("X"), ctx.output_names("X@GRAD")
    carried = set(xs) & set(ctx.input_names("Out"))
    # The gradients of the loop's final values, by forward variable; Out@GRAD lists only
    # those that have one (Paddle's programs leave out ints and bools), and the name each
    # has inside the gradient block is in original_output_grad.
    og, inside = {}, {}
    names = ctx.input_names("Out@GRAD")
    inner_names = ctx.op.attrs.get("original_output_grad") or names
    for i, (outer, inner) in enumerate(zip(names, inner_names)):
        fwd = forward_name(outer)
        g = ctx.input_or_none("Out@GRAD", i)
        if g is None:
            final = ctx.scope.find_var(fwd)
            value = final.get() if final is not None and final.is_initialized() else None
            g = arrays.zeros_like(value) if arrays.is_tensor(value) else None
        og[fwd], inside[fwd] = g, inner
    sums = {}
    for scope in reversed(scopes):
        for fwd, g in og.items():
            if g is not None:
                scope.var(inside[fwd]).set(g)
        yield from ctx.run_block(ctx.attr("sub_block"), scope)
        for x, gx in zip(xs, x_grads):
            if gx == EMPTY_VAR:
                continue
            local = scope.find_local_var(grad_name(x))
            value = local.get() if local is not None and local.is_initialized() else None
            if x in carried:
                og[x] = value if value is not None else og[x]
            elif value is not None:
                sums[x] = value if x not in sums else arrays.add(sums[x], value)
    for i, (x, gx) in enumerate(zip(xs, x_grads)):
        if gx == EMPTY_VAR:
            continue
        value = og.get(x) if x in carried else sums.get(x)
        if value is None:
            forward = ctx.input_or_none("X", i)
            if not arrays.is_tensor(forward):
                continue
            value = arrays.zeros_like(forward)
        ctx.set_output("X@GRAD", value, i)


def _while_grad_maker(op, no_grad):
    xs, outs = op.input("X"), op.output("Out")
    wanted = [x for x in xs if x not in no_grad]
    if not wanted:
        return []
    attrs = body_grad_attrs(op, {o for o in outs if o not in no_grad}, no_grad)
    if attrs is None:
        return []
    attrs["original_output_grad"] = [grad_name(o) for o in outs]
    return [GradOp("while_grad",
                   {"X": xs, "Out": outs, "Out@GRAD": [grad_name(o) for o in outs],
                    "StepScopes": op.output("StepScopes")},
                   {"X@GRAD": [grad_name(x) if x in wanted else EMPTY_VAR for x in xs]},
                   attrs)]


register(OpDef(
    "while",
    [Slot("X", "variables the body reads from outside", duplicable=True, dispensable=True),
     Slot("Condition", "a bool with one value, updated by the body")],
    [Slot("Out", "variables the body writes outside", duplicable=True, dispensable=True),
     Slot("StepScopes", "each step's scope (kept for the gradient)", dispensable=True)],
    _ATTRS, comment="Run sub_block while Condition holds, each step in a new kid scope.",
    kernels={"cpu": _while, "cuda": _while}, grad=_while_grad_maker))

register(OpDef(
    "while_grad",
    [Slot("X", "", duplicable=True, dispensable=True),
     Slot("Out", "", duplicable=True, dispensable=True),
     Slot("Out@GRAD", "gradients of the loop's final values", duplicable=True,
          dispensable=True),
     Slot("StepScopes", "the forward steps' scopes")],
    [Slot("X@GRAD", "gradients of the values the loop started from", duplicable=True,
          dispensable=True)],
    _ATTRS + [Attr("original_output_grad", A.STRINGS, [], "the names of Out@GRAD")],
    comment="Backpropagate through the loop's steps, last first.",
    kernels={"cpu": _while_grad, "cuda": _while_grad}, grad=NO_GRADIENT, grad_of="while"))
