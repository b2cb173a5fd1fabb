"""Conditional execution: conditional_block and the ops that split and merge around it.

``conditional_block`` runs its sub-block, in a kid scope, when its condition holds: a
scalar bool (``is_scalar_condition``; Paddle's ``cond``), or else "every Cond tensor has
rows" (Fluid's row-wise IfElse, where Cond is the branch's share of the mask). The kid
scope is kept in the ``Scope`` output for ``conditional_block_grad``, which runs the
gradient block in that same scope. Around it:

- ``select_input`` / ``select_output`` pick or route one of several tensors by an int mask
  (how Paddle merges the two branches of ``cond``);
- ``split_lod_tensor`` / ``merge_lod_tensor`` split a minibatch's rows by a bool mask and
  merge them back in the original order (the Block and Scope design's IfElse).

Every kernel here only moves tensors (arrays.py does it for numpy and device arrays), so
each is registered for both places; conditions and masks are read on the host.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.errors import ExecutionError
from ..core.infer_shape import dims_compatible
from ..core.grad_maker import EMPTY_VAR, GradOp, grad_name
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels.cpu import layout as KL
from ..kernels.lowered import Call
from . import arrays
from .body_gradient import body_grad_attrs
from .common import numba_holds

SUB_BLOCK = Attr("sub_block", A.BLOCK, None, "the block to run")


# --- conditional_block --------------------------------------------------------------------------
def _should_run(ctx) -> bool:
    conds = ctx.inputs("Cond")
    if ctx.attr("is_scalar_condition"):
        c = arrays.host(conds[0])            # on CUDA: one 1-element copy to the host
        if c.size != 1:
            raise ExecutionError(f"Cond of a scalar conditional_block must hold one value, got "
                                 f"shape {list(c.shape)}")
        return bool(c.ravel()[0])
    return all((c.size if arrays.is_tensor(c) else np.size(c)) > 0 for c in conds)


def _conditional_block(ctx):
    scopes = []
    if _should_run(ctx):
        kid = ctx.new_scope("branch")
        yield from ctx.run_block(ctx.attr("sub_block"), kid)
        if ctx.keep_scopes:
            scopes.append(kid)
        else:
            ctx.scope.delete_scope(kid)
    if ctx.has_output("Scope"):
        ctx.output_var("Scope").set(scopes, kind="scopes")


def _conditional_block_grad(ctx):
    scopes = ctx.input_or_none("Scope") or []
    names = ctx.input_names("Input")
    grads = ctx.output_names("Input@GRAD")
    if scopes:
        kid = scopes[0]
        for i, og in enumerate(ctx.input_names("Out@GRAD")):   # the outputs' gradients
            value = ctx.input_or_none("Out@GRAD", i)
            if value is not None:
                kid.var(og).set(value)
        yield from ctx.run_block(ctx.attr("sub_block"), kid)
    for i, (x, gx) in enumerate(zip(names, grads)):
        if gx == EMPTY_VAR:
            continue
        # inside, the gradient has its plain name; outside it may have been renamed
        inner = scopes[0].find_local_var(grad_name(x)) if scopes else None
        if inner is not None and inner.is_initialized():
            ctx.set_output("Input@GRAD", inner.get(), i)
        else:                 # the branch did not run, or did not touch x: a zero gradient
            value = ctx.input_or_none("Input", i)
            if arrays.is_tensor(value):
                ctx.set_output("Input@GRAD", arrays.zeros_like(value), i)


def _conditional_block_grad_maker(op, no_grad):
    """A gradient block for the sub-block, run in the forward scope by the grad op."""
    inputs = op.input("Input")
    wanted = [x for x in inputs if x not in no_grad]
    outs = op.output("Out")
    if not wanted or not outs:
        return []
    attrs = body_grad_attrs(op, outs, no_grad)
    if attrs is None:
        return []
    return [GradOp("conditional_block_grad",
                   {"Cond": op.input("Cond"), "Input": inputs, "Out": outs,
                    "Out@GRAD": [grad_name(o) for o in outs], "Scope": op.output("Scope")},
                   {"Input@GRAD": [grad_name(x) if x in wanted else EMPTY_VAR
                                   for x in inputs]}, attrs)]


_COND_ATTRS = [SUB_BLOCK,
               Attr("is_scalar_condition", A.BOOLEAN, False, "Cond is one bool (else: run "
                    "when every Cond tensor has rows)"),
               Attr("skip_eager_deletion_vars", A.STRINGS, [], "kept for Paddle "
                    "compatibility", extra=True)]

register(OpDef(
    "conditional_block",
    [Slot("Cond", "the condition", duplicable=True),
     Slot("Input", "variables the block reads from outside", duplicable=True,
          dispensable=True)],
    [Slot("Out", "variables the block writes outside", duplicable=True, dispensable=True),
     Slot("Scope", "the scope the block ran in (for the gradient)", dispensable=True)],
    _COND_ATTRS,
    comment="Run sub_block in a kid scope if Cond holds.",
    kernels={"cpu": _conditional_block, "cuda": _conditional_block},
    grad=_conditional_block_grad_maker))

register(OpDef(
    "conditional_block_grad",
    [Slot("Cond", "the condition", duplicable=True),
     Slot("Input", "the forward inputs", duplicable=True, dispensable=True),
     Slot("Out", "the forward outputs", duplicable=True, dispensable=True),
     Slot("Out@GRAD", "their gradients", duplicable=True, dispensable=True),
     Slot("Scope", "the forward scope", dispensable=True)],
    [Slot("Input@GRAD", "the inputs' gradients", duplicable=True, dispensable=True)],
    _COND_ATTRS,
    comment="Run the gradient block of a conditional_block in the scope it ran in; inputs "
            "of a branch that did not run get zero gradients.",
    kernels={"cpu": _conditional_block_grad, "cuda": _conditional_block_grad}, grad=NO_GRADIENT,
    grad_of="conditional_block"))


# --- select_input / select_output -----------------------------------------------------------
def _mask(ctx, branches: list[str], slot: str) -> int:
    """The branch Mask picks (read on the host), checked to be one of ``branches``."""
    mask = arrays.host(ctx.input("Mask"))
    if mask.size != 1:
        raise ExecutionError(f"slot Mask must hold one value, given shape {list(mask.shape)}")
    check.indices(mask, len(branches), slot="Mask", what="branch",
                  counted=f"the {len(branches)} variables of {slot}")
    return int(mask.ravel()[0])


def _select_input(ctx):
    i = _mask(ctx, ctx.input_names("X"), "X")
    value = ctx.input_or_none("X", i)
    if value is None:
        raise ExecutionError(f"select_input: X[{i}] ({ctx.input_names('X')[i]!r}) has no value "
                             f"(its branch did not run?)")
    ctx.set_output("Out", value)


def _select_output(ctx):
    x, chosen = ctx.input("X"), _mask(ctx, ctx.output_names("Out"), "Out")
    ctx.set_output("Out", x, chosen)
    for j in range(len(ctx.output_names("Out"))):     # the others: zeros, unless written
        if j != chosen and ctx.output_value("Out", j) is None:
            ctx.set_output("Out", arrays.zeros_like(x), j)


def _select_input_infer(ctx):
    """The branches of a cond give one shape and element type (-1 dims, known at run time,
    may differ): Out has it. Its gradient (select_output) gives the branch not taken zeros
    of the taken one's shape, which is right only then."""
    have = [i for i in range(len(ctx.input_names("X"))) if ctx.has_value("X", i)]
    shapes = [ctx.shape("X", i) for i in have]
    for i, s in zip(have, shapes):
        if len(s) != len(shapes[0]) or ctx.dtype("X", i) != ctx.dtype("X", have[0]) or \
                not all(dims_compatible(a, b) for a, b in zip(s, shapes[0])):
            ctx.fail("the candidates must have one shape and element type", slot="X",
                     given=", ".join(ctx.describe_input("X", j) for j in have))
    ctx.require_dtype("Mask", "int")
    merged = [d if all(s[k] == d for s in shapes) else -1 for k, d in enumerate(shapes[0])] \
        if shapes else []
    ctx.set_output("Out", merged, ctx.dtype("X", have[0]) if have else None)


def _lowered_select_input(info):
    """kernels/cpu/layout.picked: the candidates have one dtype and rank (a compiled
    cond's branch not taken gives a placeholder of them, which Mask never names:
    compiler/branch.py)."""
    count = len(info.pop.inputs["X"])
    dtypes_ = {info.dtype("X", i) for i in range(count)}
    ranks = {info.ndim("X", i) for i in range(count)}
    if len(dtypes_) != 1 or len(ranks) != 1 or not numba_holds(dtypes_.pop()):
        return None
    return Call(KL.picked, ("X", "Mask"), ("Out",))


def _lowered_select_output(info):
    if not numba_holds(info.dtype("X")):
        return None
    return Call(KL.routed, ("X", "Mask"), ("Out",), (len(info.pop.outputs["Out"]),))


register(OpDef(
    "select_input", [Slot("X", "the candidates", duplicable=True),
                     Slot("Mask", "which one (an int32 scalar)")], [Slot("Out", "X[Mask]")], [],
    comment="Out = X[Mask]: merges the branches of cond.",
    infer_shape=_select_input_infer,
    kernels={"cpu": _select_input, "cuda": _select_input}, lowered=_lowered_select_input,
    grad=lambda op, no_grad: [GradOp(
        "select_output", {"X": [grad_name(op.output("Out")[0])], "Mask": op.input("Mask")},
        {"Out": [grad_name(x) if x not in no_grad else EMPTY_VAR for x in op.input("X")]})]))

register(OpDef(
    "select_output", [Slot("X", "the value"), Slot("Mask", "where it goes (an int32 scalar)")],
    [Slot("Out", "the destinations", duplicable=True)], [],
    comment="Out[Mask] = X (the other outputs are left alone).",
    infer_shape=lambda ctx: [ctx.require_dtype("Mask", "int")] + [
        ctx.set_output("Out", ctx.shape("X"), ctx.dtype("X"), i=i)
        for i in range(len(ctx.output_names("Out")))],
    kernels={"cpu": _select_output, "cuda": _select_output}, lowered=_lowered_select_output,
    grad=lambda op, no_grad: [] if op.input("X")[0] in no_grad else [GradOp(
        "select_input", {"X": [grad_name(o) for o in op.output("Out")],
                         "Mask": op.input("Mask")},
        {"Out": [grad_name(op.input("X")[0])]})]))


# --- split_lod_tensor / merge_lod_tensor --------------------------------------------------------
def _rows(mask) -> np.ndarray:
    """The mask as host bools, one per row (on CUDA: one copy of the mask to the host, to
    know which rows go where)."""
    return arrays.host(mask).reshape(-1).astype(bool)


def _split(ctx):
    x, rows = ctx.input("X"), _rows(ctx.input("Mask"))
    if len(rows) != len(x):
        raise ExecutionError(f"Mask has {len(rows)} rows, X has {len(x)}: the condition of "
                             f"a row-wise IfElse must have one row per instance of X")
    ctx.set_output("OutTrue", arrays.take_rows(x, np.flatnonzero(rows)))
    ctx.set_output("OutFalse", arrays.take_rows(x, np.flatnonzero(~rows)))


def _merge(ctx):
    rows = _rows(ctx.input("Mask"))
    t, f = ctx.input_or_none("InTrue"), ctx.input_or_none("InFalse")
    like = t if t is not None else f
    if like is None:
        raise ExecutionError("merge_lod_tensor: neither branch produced a value")
    parts = [(np.flatnonzero(rows), t, "InTrue"), (np.flatnonzero(~rows), f, "InFalse")]
    for picked, src, slot in parts:
        # every row Mask sends to a branch must come from it, no more and no fewer (numpy
        # would broadcast one row over many; a device copy would read past the end)
        given = 0 if src is None else (src.shape[0] if src.ndim else None)
        if given != len(picked) or src is not None and (
                src.shape[1:] != like.shape[1:] or src.dtype != like.dtype):
            raise ExecutionError(
                f"slot {slot}: Mask sends {len(picked)} rows to this branch, which gave "
                + ("no value" if src is None else f"{src.dtype}{list(src.shape)}")
                + f"; expected {len(picked)} rows of {like.dtype}{list(like.shape[1:])}")
    ctx.set_output("Out", arrays.merge_rows(len(rows), [p[:2] for p in parts], like))


def _same_rows_infer(ctx):
    ctx.require_dtype("Mask", "integer or bool")
    shape = ctx.require_rank("X", 1)
    for slot in ("OutTrue", "OutFalse"):        # how many rows each gets is known at run time
        ctx.set_output(slot, [-1] + shape[1:] if shape else shape, ctx.dtype("X"))


def _merge_infer(ctx):
    """Out has the branches' row shape; they must agree on it and on the element type."""
    ctx.require_dtype("Mask", "integer or bool")
    like = "InTrue" if ctx.has_input("InTrue") else "InFalse"
    shape = ctx.require_rank(like, 1)
    if ctx.has_input("InTrue") and ctx.has_input("InFalse"):
        other = ctx.require_rank("InFalse", 1)
        if len(other) != len(shape) or not all(
                a < 0 or b < 0 or a == b for a, b in zip(other[1:], shape[1:])) \
                or ctx.dtype("InFalse") != ctx.dtype("InTrue"):
            ctx.fail("the branches' rows must have one shape and element type",
                     slot="InFalse", expected=f"rows of {ctx.describe_input('InTrue')}",
                     given=ctx.describe_input("InFalse"))
    ctx.set_output("Out", [-1] + shape[1:] if shape else shape, ctx.dtype(like))


# --- in a compiled block (kernels/lowered.py): kernels/cpu/layout.rows_where and rows_merged
# (conditional_block compiles as a branch of its segment: paddle_nb/compiler/branch.py)
def _lowered_split(info):
    if not numba_holds(info.dtype("X")) or info.ndim("X") == 0:
        return None
    return tuple(Call(KL.rows_where, ("X", "Mask"), (slot,), (want,))
                 for slot, want in (("OutTrue", True), ("OutFalse", False))
                 if info.has_output(slot))


def _lowered_merge(info):
    # a branch that got no rows gave no value: then the op is not lowered (lowering.py
    # asks every operand to be an array), and in a run that was compiled from one where
    # it had rows, the compiled branch declines the run (compiler/branch.py)
    if not (info.has_input("InTrue") and info.has_input("InFalse")):
        return "one branch only"
    if info.dtype("InTrue") != info.dtype("InFalse") or not numba_holds(info.dtype("InTrue")) \
            or info.ndim("InTrue") == 0 or info.ndim("InTrue") != info.ndim("InFalse"):
        return None
    return Call(KL.rows_merged, ("Mask", "InTrue", "InFalse"), ("Out",))


_LEVEL = Attr("level", A.INT, 0, "the LoD level to split at (only 0 here)")

register(OpDef(
    "split_lod_tensor", [Slot("X", "the minibatch"), Slot("Mask", "bool, one per row")],
    [Slot("OutTrue", "the rows where Mask holds"), Slot("OutFalse", "the other rows")],
    [_LEVEL], comment="Split X's rows by Mask (the way into a row-wise IfElse).",
    infer_shape=_same_rows_infer, kernels={"cpu": _split, "cuda": _split},
    lowered=_lowered_split,
    grad=lambda op, no_grad: [] if op.input("X")[0] in no_grad else [GradOp(
        "merge_lod_tensor", {"X": op.input("X"), "Mask": op.input("Mask"),
                             "InTrue": [grad_name(op.output("OutTrue")[0])],
                             "InFalse": [grad_name(op.output("OutFalse")[0])]},
        {"Out": [grad_name(op.input("X")[0])]}, {"level": 0})]))

register(OpDef(
    "merge_lod_tensor",
    [Slot("X", "the original minibatch (for its rows)"), Slot("Mask", "bool, one per row"),
     Slot("InTrue", "rows of the true branch", dispensable=True),
     Slot("InFalse", "rows of the false branch", dispensable=True)],
    [Slot("Out", "the rows merged back in X's order")],
    [_LEVEL], comment="Merge the branches' rows back in their original order.",
    infer_shape=_merge_infer, kernels={"cpu": _merge, "cuda": _merge},
    lowered=_lowered_merge,
    grad=lambda op, no_grad: [GradOp(
        "split_lod_tensor", {"X": [grad_name(op.output("Out")[0])], "Mask": op.input("Mask")},
        {"OutTrue": [grad_name(n) if n not in no_grad else EMPTY_VAR
                     for n in op.input("InTrue")],
         "OutFalse": [grad_name(n) if n not in no_grad else EMPTY_VAR
                      for n in op.input("InFalse")]}, {"level": 0})]))
