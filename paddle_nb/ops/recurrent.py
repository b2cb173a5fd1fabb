"""The ``recurrent`` op (Fluid's StaticRNN, the Block and Scope design's RNNOp) and its BPTT
gradient.

Time-major, as in Fluid: every sequence in ``inputs`` is ``[T, ...]`` and step t sees
``x[t]``. Each step runs the step block in a kid scope of its own, where

- each step input is a local variable with the *same name* as the outer sequence, holding
  ``x[t]`` (shadowing: a scope looks a name up locally before its parent);
- each memory's previous value (``ex_states[i]``) is the initial state at step 0 and, after,
  the value ``states[i]`` had at the end of the step before;
- each output is a local variable with the same name as the outer output, stacked over time
  into ``[T, ...]`` when the loop ends.

Training keeps every step's scope (``step_scopes``) for ``recurrent_grad``, which walks them
backwards: it hands each step the gradient of its outputs and of its memories (from the next
step), runs the gradient block in that step's scope, adds up the parameters' gradients and
stacks the inputs'. Inference reuses two scopes and frees them at the end.

The kernels only move tensors (stack, add, zeros through arrays.py), so each is registered
for both places: on CUDA, ``x[t]`` is a view of the device sequence and nothing is copied
to the host.
"""
from __future__ import annotations

from ..core import attrs as A
from ..core.errors import ExecutionError
from ..core.grad_maker import EMPTY_VAR, GradOp, grad_name
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core.limits import check_tensor_size
from ..kernels.cpu.fill import copied, filled_like
from ..kernels.cpu.layout import filled_batch_like
from ..kernels.lowered import Call
from . import arrays
from .body_gradient import body_grad_attrs
from .common import dtype_code_check, dtype_to_numpy, same_shape_as_x
from .fill import _element as element_of   # (the element np.full writes)

_ATTRS = [Attr("ex_states", A.STRINGS, [], "the step block's previous-memory variables"),
          Attr("states", A.STRINGS, [], "the step block's memory variables (same order)"),
          Attr("sub_block", A.BLOCK, None, "the step block"),
          Attr("reverse", A.BOOLEAN, False, "run from the last time step to the first"),
          Attr("is_train", A.BOOLEAN, True, "kept for Paddle compatibility", extra=True),
          Attr("has_states", A.BOOLEAN, False, "kept for Paddle compatibility", extra=True),
          Attr("skip_eager_deletion_vars", A.STRINGS, [], "kept for Paddle compatibility",
               extra=True)]


def _order(ctx, steps: int):
    return range(steps - 1, -1, -1) if ctx.attr("reverse") else range(steps)


def _local(scope, name: str):
    var = scope.find_local_var(name)
    return var.get() if var is not None and var.is_initialized() else None


def _recurrent(ctx):
    names, seqs = ctx.input_names("inputs"), ctx.inputs("inputs")
    if not seqs:
        raise ExecutionError("recurrent needs at least one step input (time-major [T, ...])")
    steps = len(seqs[0])
    for n, s in zip(names, seqs):
        if len(s) != steps:
            raise ExecutionError(f"step input {n!r} has {len(s)} time steps, {names[0]!r} has "
                                 f"{steps}: inputs are time-major [T, batch, ...]")
    ex_states, states = ctx.attr("ex_states"), ctx.attr("states")
    inits = ctx.inputs("initial_states")
    outputs = ctx.output_names("outputs")
    collected = {o: [None] * steps for o in outputs}
    keep = ctx.keep_scopes
    scopes, reused, prev = [None] * steps, [], None
    for count, t in enumerate(_order(ctx, steps)):
        if keep:
            scope = ctx.new_scope(f"step {t}")
        else:                            # inference: two scopes, used in turn
            if len(reused) < 2:
                reused.append(ctx.new_scope(f"step {len(reused)}"))
            scope = reused[count % 2]
        for n, s in zip(names, seqs):
            scope.var(n).set(s[t])
        for i, (ex, st) in enumerate(zip(ex_states, states)):
            value = inits[i] if prev is None else _local(prev, st)
            if value is None:
                raise ExecutionError(f"memory {st!r} has no value after step {t - 1}")
            scope.var(ex).set(value)
        yield from ctx.run_block(ctx.attr("sub_block"), scope)
        for o in outputs:
            collected[o][t] = _local(scope, o)
        scopes[t], prev = scope, scope
    for i, o in enumerate(outputs):
        if any(v is None for v in collected[o]):
            raise ExecutionError(f"the step block did not write output {o!r}")
        ctx.set_output("outputs", arrays.stack(collected[o]), i)
    if ctx.has_output("step_scopes"):
        ctx.output_var("step_scopes").set(scopes if keep else [], kind="scopes")
    for s in reused:
        ctx.scope.delete_scope(s)


def _recurrent_grad(ctx):
    scopes = ctx.input("step_scopes")
    if not scopes:
        raise ExecutionError("recurrent_grad: the forward pass kept no step scopes")
    steps = len(scopes)
    ex_states, states = ctx.attr("ex_states"), ctx.attr("states")
    outputs, out_grads = ctx.input_names("outputs"), ctx.input_names("outputs@GRAD")
    param_names, input_names = ctx.input_names("parameters"), ctx.input_names("inputs")
    param_sums = {p: None for p in param_names}
    input_grads = {x: [None] * steps for x in input_names}
    from_next = None                     # memory gradients handed back by the later step
    for t in reversed(list(_order(ctx, steps))):
        scope = scopes[t]
        given = {}
        for i, (o, og) in enumerate(zip(outputs, out_grads)):
            g = ctx.input_or_none("outputs@GRAD", i)
            given[grad_name(o)] = g[t] if g is not None else arrays.zeros_like(_local(scope, o))
        for ex, st in zip(ex_states, states):
            g = from_next[ex] if from_next is not None else arrays.zeros_like(_local(scope, st))
            given[grad_name(st)] = arrays.add(given[grad_name(st)], g) \
                if grad_name(st) in given else g
        for name, value in given.items():
            scope.var(name).set(value)
        yield from ctx.run_block(ctx.attr("sub_block"), scope)
        for p in param_names:
            g = _local(scope, grad_name(p))
            if g is not None:
                param_sums[p] = g if param_sums[p] is None else arrays.add(param_sums[p], g)
        for x in input_names:
            input_grads[x][t] = _local(scope, grad_name(x))
        from_next = {ex: _grad_or_zeros(scope, ex) for ex in ex_states}
    for i, p in enumerate(param_names):
        value = param_sums[p]
        ctx.set_output("parameters@GRAD", value if value is not None
                       else arrays.zeros_like(ctx.inputs("parameters")[i]), i)
    for i, x in enumerate(input_names):
        seq = ctx.inputs("inputs")[i]
        parts = [g if g is not None else arrays.zeros_like(seq[t])
                 for t, g in enumerate(input_grads[x])]
        ctx.set_output("inputs@GRAD", arrays.astype(arrays.stack(parts), seq.dtype), i)
    for i, ex in enumerate(ex_states):
        ctx.set_output("initial_states@GRAD", from_next[ex], i)


def _grad_or_zeros(scope, name):
    g = _local(scope, grad_name(name))
    return g if g is not None else arrays.zeros_like(_local(scope, name))


def _recurrent_grad_maker(op, no_grad):
    outputs, states = op.output("outputs"), op.attr("states")
    attrs = body_grad_attrs(op, set(outputs) | set(states), no_grad)
    if attrs is None:
        return []
    want = lambda names: [grad_name(n) if n not in no_grad else EMPTY_VAR   # noqa: E731
                          for n in names]
    return [GradOp("recurrent_grad",
                   {"inputs": op.input("inputs"), "initial_states": op.input("initial_states"),
                    "parameters": op.input("parameters"), "outputs": outputs,
                    "outputs@GRAD": [grad_name(o) for o in outputs],
                    "step_scopes": op.output("step_scopes")},
                   {"inputs@GRAD": want(op.input("inputs")),
                    "initial_states@GRAD": want(op.input("initial_states")),
                    "parameters@GRAD": want(op.input("parameters"))}, attrs)]


def _slot(name, comment):
    return Slot(name, comment, duplicable=True, dispensable=True)


register(OpDef(
    "recurrent",
    [_slot("inputs", "sequences, time-major [T, ...]"),
     _slot("initial_states", "each memory's value before step 0"),
     _slot("parameters", "outer variables the step block reads")],
    [_slot("outputs", "per-step outputs stacked to [T, ...]"),
     Slot("step_scopes", "the steps' scopes (kept for the gradient)", dispensable=True)],
    _ATTRS, comment="Run the step block once per time step (Fluid's StaticRNN).",
    kernels={"cpu": _recurrent, "cuda": _recurrent}, grad=_recurrent_grad_maker))

register(OpDef(
    "recurrent_grad",
    [_slot("inputs", ""), _slot("initial_states", ""), _slot("parameters", ""),
     _slot("outputs", ""), _slot("outputs@GRAD", "gradients of the stacked outputs"),
     Slot("step_scopes", "the forward steps' scopes")],
    [_slot("inputs@GRAD", ""), _slot("initial_states@GRAD", ""),
     _slot("parameters@GRAD", "summed over time steps")],
    _ATTRS, comment="Backpropagation through time over the forward step scopes.",
    kernels={"cpu": _recurrent_grad, "cuda": _recurrent_grad}, grad=NO_GRADIENT,
    grad_of="recurrent"))


# --- rnn_memory_helper: how a step output leaves the block (Fluid) ------------------------------
def _memory_helper_grad(ctx):
    dout = ctx.input_or_none("Out@GRAD")
    ctx.set_output("X@GRAD", dout if dout is not None else arrays.zeros_like(ctx.input("X")))


def _memory_helper_grad_infer(ctx):
    """Out@GRAD, when one reached Out, has Out's shape; X@GRAD gets X's."""
    if ctx.has_value("Out@GRAD") and ctx.has_value("Out"):
        ctx.require_gradient_fits("Out")
    if ctx.has_value("X"):
        ctx.set_output("X@GRAD", ctx.shape("X"), ctx.dtype("X"))


def _memory_helper(ctx):
    ctx.set_output("Out", ctx.input("X"))


def _lowered_memory_helper_grad(info):
    """In a compiled block: Out@GRAD, or zeros where no gradient reached Out."""
    if info.has_input("Out@GRAD"):
        return Call(copied, ("Out@GRAD",), ("X@GRAD",))
    return Call(filled_like, ("X",), ("X@GRAD",), (info.dtype("X").type(0),))


register(OpDef(
    "rnn_memory_helper", [Slot("X", "the step's value")], [Slot("Out", "its copy")],
    [Attr("dtype", A.INT, -1, "kept for Paddle compatibility", extra=True)],
    comment="Out = X: copies a step output to the variable the recurrent op stacks.",
    infer_shape=same_shape_as_x,
    kernels={"cpu": _memory_helper, "cuda": _memory_helper},
    lowered=lambda info: Call(copied, ("X",), ("Out",)),
    grad=lambda op, no_grad: [] if op.input("X")[0] in no_grad else [GradOp(
        "rnn_memory_helper_grad", {"X": op.input("X"), "Out": op.output("Out"),
                                   "Out@GRAD": [grad_name(op.output("Out")[0])]},
        {"X@GRAD": [grad_name(op.input("X")[0])]}, dict(op.attrs))]))

register(OpDef(
    "rnn_memory_helper_grad", [Slot("X", ""), Slot("Out", ""),
                               Slot("Out@GRAD", "", dispensable=True)],
    [Slot("X@GRAD", "Out@GRAD, or zeros when it has none", dispensable=True)],
    [Attr("dtype", A.INT, -1, "kept for Paddle compatibility", extra=True)],
    comment="X@GRAD = Out@GRAD (zeros if no gradient reached Out).",
    infer_shape=_memory_helper_grad_infer,
    kernels={"cpu": _memory_helper_grad, "cuda": _memory_helper_grad}, grad=NO_GRADIENT,
    lowered=_lowered_memory_helper_grad, grad_of="rnn_memory_helper"))


# --- fill_constant_batch_size_like: a memory without init ---------------------------------------
def _fill_batch_like(ctx):
    ref = ctx.input("Input")
    shape = list(ctx.attr("shape"))
    shape[ctx.attr("output_dim_idx")] = ref.shape[ctx.attr("input_dim_idx")]
    dtype = dtype_to_numpy(ctx.attr("dtype"))
    check_tensor_size(shape, dtype, "fill_constant_batch_size_like")
    ctx.set_output("Out", arrays.full(shape, ctx.attr("value"), dtype, like=ref))


def _fill_batch_like_infer(ctx):
    shape, ref = list(ctx.attr("shape")), ctx.shape("Input")
    out_i = ctx.require_range("output_dim_idx", ctx.attr("output_dim_idx"), 0, len(shape))
    in_i = ctx.require_range("input_dim_idx", ctx.attr("input_dim_idx"), 0, len(ref),
                             slot="Input")
    shape[out_i] = ref[in_i]
    ctx.set_output("Out", shape, ctx.attr("dtype"))


def _lowered_fill_batch_like(info):
    """kernels/cpu/layout.filled_batch_like: the batch dim read from Input when the block
    runs, so one compiled function serves every batch size."""
    element = element_of(info.attr("value"), dtype_to_numpy(info.attr("dtype")))
    shape = tuple(int(d) for d in info.attr("shape"))
    if element is None or not shape:
        return None
    return Call(filled_batch_like, ("Input",), ("Out",),
                (shape, info.attr("input_dim_idx"), info.attr("output_dim_idx"), element,
                 len(shape)))


register(OpDef(
    "fill_constant_batch_size_like", [Slot("Input", "the variable to take the batch size from")],
    [Slot("Out", "the filled tensor")],
    [Attr("shape", A.INTS, [], "Out's shape (the batch entry is replaced)"),
     Attr("value", A.FLOAT, 0.0, "the value"),
     Attr("dtype", A.INT, 5, "VarType code of Out's element type",
          check=dtype_code_check()),
     Attr("input_dim_idx", A.INT, 0, "which dim of Input is the batch"),
     Attr("output_dim_idx", A.INT, 0, "which dim of Out gets it"),
     Attr("str_value", A.STRING, "", "kept for Paddle compatibility", extra=True),
     Attr("force_cpu", A.BOOLEAN, False, "kept for Paddle compatibility", extra=True)],
    comment="Out = a tensor of shape with Input's batch size, filled with value (the "
            "initial value of an RNN memory given by shape and batch_ref).",
    infer_shape=_fill_batch_like_infer,
    kernels={"cpu": _fill_batch_like, "cuda": _fill_batch_like}, grad=NO_GRADIENT,
    lowered=_lowered_fill_batch_like,
    # shape[output_dim_idx] is the batch size, known when it runs
    allocates=("shape", "dtype", "output_dim_idx")))
