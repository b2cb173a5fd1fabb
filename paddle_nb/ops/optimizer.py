"""Optimizers as ops (Fluid's slots): sgd, momentum, adagrad, rmsprop; the Adam family is in
ops/adam.py.

Each reads a parameter, its gradient, the learning rate (a persistable 0-d or [1] tensor set
by the startup program, or by a learning-rate scheduler between runs) and its accumulators,
and writes them back (``ParamOut`` is the same variable as ``Param``). ``pd.optimizer.*``'s
``minimize`` appends one op per parameter.

An update's math is one scalar function of one element under ``@update``
(kernels/update.py), which generates its loops for both places; ``optimizer_op`` declares
the op around it: the slots, the checks every optimizer shares and the kernels that feed
the function its arrays, its one-element cells and its attributes.

sgd, momentum and adam also take a SelectedRows Grad (an embedding's sparse gradient,
core/selected_rows.py) and apply it as Paddle 2.6.2's CPU kernels do: each op's
``sparse`` function, next to its dense one. The other optimizers refuse one before they
run (Paddle 2.6.2 has sparse kernels for Adagrad, RMSProp and others, not built here).
"""
from __future__ import annotations

import math

from ..core import attrs as A
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core.selected_rows import SelectedRows
from ..kernels.lowered import Call
from ..kernels.update import update
from . import selected_rows
from .arrays import copy as copy_array
from .common import FLOAT_TYPES
from ..backends import CPU, CUDA

# Parameter elements from which the prange twins run (2 threads): the first measured power
# of 2 where they took <= ~0.8x the serial loop's time.
MIN_PARALLEL_SGD = 131_072        # measured crossover ~64k elements
MIN_PARALLEL_MOMENTUM = 65_536    # measured crossover ~24k
MIN_PARALLEL_ADAM = 32_768        # measured crossover ~16k (Adam's family, Adagrad, RMSProp)

PARAM_IN = [Slot("Param", "the parameter"), Slot("Grad", "its gradient"),
            Slot("LearningRate", "the learning rate (a 1-element tensor)"),
            Slot("MasterParam", "fp32 copy for mixed precision (unused)", dispensable=True)]
MULTI_PRECISION = Attr("multi_precision", A.BOOLEAN, False, "kept for Paddle compatibility",
                       extra=True)


def check_state(ctx, like_param=(), one_element=()):
    """Param, Grad and the accumulators are float tensors of Param's shape; the learning
    rate and the beta powers hold one element (a 0-d or [1] tensor), as Paddle checks."""
    for slot in ("Param", "Grad", "LearningRate", *like_param, *one_element):
        ctx.require_dtype(slot, "float")
    for slot in ("Grad", *like_param):
        ctx.require_same_shape(slot, "Param")
    for slot in like_param:                  # written back in Param's type
        ctx.require_same_dtype(slot, "Param")
    for slot in ("LearningRate", *one_element):
        ctx.require_one_element(slot)


def read_state(ctx, arrays, cells, grad=None):
    """The op's arrays and cells (``grad``, when given, in place of Grad's value: a sparse
    gradient made dense); a size the generated loop would read past is refused (shape
    inference said so before the run; a scope edited since may disagree)."""
    values = [grad if s == "Grad" and grad is not None else ctx.input(s) for s in arrays]
    size = int(values[0].size)
    for slot, value in zip(arrays[1:], values[1:]):
        if int(value.size) != size:
            raise ValueError(f"{slot} has shape {list(value.shape)}, Param "
                             f"{list(values[0].shape)}")
    ones = [ctx.input(s) for s in cells]
    for slot, value in zip(cells, ones):
        if int(value.size) != 1:
            raise ValueError(f"{slot} must hold one element, it has shape {list(value.shape)}")
    return values + ones


def buffers(ctx, place, slots, like):
    """The arrays the CPU writes ``slots`` into: the kernel context's (on the fast
    path, the buffers a parameter takes turns between, so training allocates none)."""
    if place.name != "cpu":
        return None
    return [ctx.out(slot, like.shape, like.dtype) for slot in slots]


def update_kernels(kernel, arrays, cells, outputs, params_of, after=None, sparse=None):
    """{"cpu": ..., "cuda": ...} running ``kernel`` (an @update function) on the ``arrays``
    and ``cells`` slots and the scalars ``params_of(ctx)``, storing what it returns in the
    ``outputs`` slots; ``after(ctx, place)`` writes what is not elementwise (beta powers).
    A SelectedRows Grad goes to ``sparse(ctx, place, dense)``, where ``dense(ctx, grad)``
    is the dense update with ``grad`` as the gradient."""
    def make(place):
        def dense(ctx, grad=None):
            state = read_state(ctx, arrays, cells, grad)
            values = place.update(kernel, *state, *params_of(ctx),
                                  out=buffers(ctx, place, outputs, state[0]))
            for slot, value in zip(outputs, values if len(outputs) > 1 else [values]):
                ctx.set_output(slot, value)      # (of Param's shape: no view)
            if after is not None:
                after(ctx, place)

        if sparse is None:
            return dense

        def run(ctx):
            if ctx.input("Grad").__class__ is SelectedRows:
                return sparse(ctx, place, dense)
            return dense(ctx)
        return run
    return {"cpu": make(CPU), "cuda": make(CUDA)}


def update_lowered(kernel, arrays, cells, outputs, params_of, after=None):
    """The lowered form (kernels/lowered.py) of update_kernels' dense update: ``kernel``'s
    returning loop (kernels/update.py), then ``after(info)``'s Calls (what the kernels'
    ``after`` writes; None: no compiled form). A SelectedRows Grad never gets here: the
    compiler keeps ops on anything but dense tensors in the interpreter."""
    def lowered(info):
        if info.dtype("Param").name not in FLOAT_TYPES or \
                not all(info.has_output(slot) for slot in outputs):
            return None
        rest = after(info) if after is not None else ()
        if rest is None:
            return None
        return (Call(kernel.returning, (*arrays, *cells), tuple(outputs),
                     tuple(params_of(info))), *rest)
    return lowered


def optimizer_op(op_type, comment, kernel, state, cells, outputs, attrs, params_of,
                 extra_inputs=(), after=None, kernels=None, sparse=None,
                 reads_attr_tensors=(), lowered_after=None, lowered=None):
    """Declare an optimizer op: Param, Grad, LearningRate, MasterParam and ``state`` (slot
    names: accumulators of Param's shape, then ``cells``: one-element tensors) in,
    ``outputs`` ((slot, the input slot it updates) pairs) out; ``kernel`` reads Param,
    Grad, the state arrays, LearningRate and the cells, and returns the values of the
    outputs in order (ParamOut first). ``sparse`` (see update_kernels) makes Grad take a
    SelectedRows. ``reads_attr_tensors``: the inputs that give an attribute at run time
    (Adam's Beta1Tensor...), which the kernels read as that attribute (ctx.attr).
    In a compiled block the op is ``kernel``'s returning loop where the kernels are
    update_kernels' and, with an ``after``, ``lowered_after`` gives its Calls
    (update_lowered); an op with its own ``kernels`` gives its own ``lowered``."""
    state_slots = [Slot(name, doc) for name, doc in state + cells]
    array_names = [name for name, _ in state]
    cell_names = [name for name, _ in cells]

    def infer(ctx):
        check_state(ctx, like_param=array_names, one_element=cell_names)
        for out_slot, in_slot in outputs:
            if ctx.has_output(out_slot) and ctx.has_input(in_slot):
                ctx.set_output(out_slot, ctx.shape(in_slot), ctx.dtype(in_slot))

    out_slots = [Slot(out, f"the updated {src}") for out, src in outputs]
    elementwise = [out for out, src in outputs if src in ("Param", *array_names)]
    if kernels is None and (after is None or lowered_after is not None):
        lowered = update_lowered(kernel, ["Param", "Grad", *array_names],
                                 ["LearningRate", *cell_names], elementwise, params_of,
                                 lowered_after)
    register(OpDef(
        op_type, PARAM_IN + state_slots + list(extra_inputs), out_slots,
        list(attrs) + [MULTI_PRECISION], comment=comment, infer_shape=infer,
        lowered=lowered,
        kernels=kernels or update_kernels(
            kernel, ["Param", "Grad", *array_names], ["LearningRate", *cell_names],
            elementwise, params_of, after, sparse),
        grad=NO_GRADIENT, selected_rows=("Grad",) if sparse is not None else (),
        reads_attr_tensors=reads_attr_tensors))


def unchanged(ctx, outputs) -> None:
    """Each output a copy of the input it updates: Paddle's sparse kernels return before
    writing anything when the gradient has no rows (ParamOut is Param's own tensor there)."""
    for out, src in outputs:
        if ctx.has_output(out):
            ctx.set_output(out, copy_array(ctx.input(src)))


def cell(value):
    """A one-element tensor (0-d or [1]) as a [1] array, on its place."""
    return value.reshape((1,)) if value.ndim != 1 else value


# --- sgd ----------------------------------------------------------------------------------------
@update(arrays=2, cells=1, min_parallel=MIN_PARALLEL_SGD)
def sgd(param, grad, lr):
    return param - lr * grad


def sgd_sparse(ctx, place, dense):
    """Paddle's SGD with a SelectedRows gradient (sgd_dense_param_sparse_grad): only the
    rows given move, each by -lr * its value, in the order of the ids, so a repeated row
    takes its steps one after the other (they add up); the other rows stay as they are."""
    param = ctx.input("Param")
    rows, value = selected_rows.given(ctx, "Grad", "Param")
    out = buffers(ctx, place, ["ParamOut"], param)     # a new array: Param stays as it was
    if out is None:
        out = copy_array(param)
    else:
        out = out[0]
        out[...] = param
    selected_rows.add_rows(out.reshape((int(param.shape[0]), int(value.shape[1]))), rows,
                           value, cell(ctx.input("LearningRate")), -1.0)
    ctx.set_output("ParamOut", out)


optimizer_op("sgd", "ParamOut = Param - LearningRate * Grad (a SelectedRows Grad: only its "
             "rows, repeats added).", sgd, [], [],
             [("ParamOut", "Param")], [], lambda ctx: (), sparse=sgd_sparse)


# --- momentum -----------------------------------------------------------------------------------
@update(arrays=3, cells=1, outputs=2, min_parallel=MIN_PARALLEL_MOMENTUM)
def momentum(param, grad, velocity, lr, mu, nesterov, rescale, l2_coeff):
    g = grad * rescale                      # rescale_grad, then Paddle's fused L2 decay
    if l2_coeff != 0.0:                     # (0 * an infinite parameter would be NaN)
        g += l2_coeff * param
    v = mu * velocity + g
    if nesterov:
        return param - lr * (g + mu * v), v
    return param - lr * v, v


def momentum_sparse(ctx, place, dense):
    """Paddle's Momentum with a SelectedRows gradient (MomentumSparseImpl): the rows are
    merged (repeats added) and every element of Param and Velocity is updated, with the
    merged gradient where its row is given and 0 elsewhere, so Velocity decays and keeps
    moving the rows not looked up: the dense update with the dense gradient. A gradient
    with no rows changes nothing (Paddle returns before it writes)."""
    param = ctx.input("Param")
    rows, value = selected_rows.given(ctx, "Grad", "Param")
    if not int(rows.shape[0]):
        return unchanged(ctx, [("ParamOut", "Param"), ("VelocityOut", "Velocity")])
    dense(ctx, selected_rows.dense(rows, value, param.shape))


optimizer_op(
    "momentum", "Velocity = mu * Velocity + Grad; Param -= LearningRate * Velocity (a "
    "SelectedRows Grad: merged, zero in the other rows).",
    momentum, [("Velocity", "the running velocity")], [],
    [("ParamOut", "Param"), ("VelocityOut", "Velocity")],
    [Attr("mu", A.FLOAT, 0.9, "the momentum"),
     Attr("use_nesterov", A.BOOLEAN, False, "Nesterov's look-ahead update"),
     Attr("regularization_method", A.STRING, "", "'' or 'l2_decay'"),
     Attr("regularization_coeff", A.FLOAT, 0.0, "the L2 decay coefficient"),
     Attr("rescale_grad", A.FLOAT, 1.0, "Grad is multiplied by this first")],
    lambda ctx: (ctx.attr("mu"), bool(ctx.attr("use_nesterov")), ctx.attr("rescale_grad"),
                 ctx.attr("regularization_coeff")
                 if ctx.attr("regularization_method") == "l2_decay" else 0.0),
    sparse=momentum_sparse)


# --- adagrad ------------------------------------------------------------------------------------
@update(arrays=3, cells=1, outputs=2, min_parallel=MIN_PARALLEL_ADAM)
def adagrad(param, grad, moment, lr, epsilon):
    m = moment + grad * grad
    return param - lr * grad / (math.sqrt(m) + epsilon), m


optimizer_op(
    "adagrad", "Moment += Grad^2; Param -= LearningRate * Grad / (sqrt(Moment) + epsilon).",
    adagrad, [("Moment", "the sum of squared gradients")], [],
    [("ParamOut", "Param"), ("MomentOut", "Moment")],
    [Attr("epsilon", A.FLOAT, 1e-6, "keeps the division finite")],
    lambda ctx: (ctx.attr("epsilon"),))


# --- rmsprop ------------------------------------------------------------------------------------
@update(arrays=5, cells=1, outputs=4, min_parallel=MIN_PARALLEL_ADAM)
def rmsprop(param, grad, mean_square, moment, mean_grad, lr, epsilon, decay, mu, centered):
    ms = decay * mean_square + (1 - decay) * grad * grad
    mg = mean_grad
    if centered:              # the variance about the running mean, not the raw second moment
        mg = decay * mean_grad + (1 - decay) * grad
        v = lr * grad / math.sqrt(ms - mg * mg + epsilon)
    else:
        v = lr * grad / math.sqrt(ms + epsilon)
    mom = mu * moment + v
    return param - mom, mom, ms, mg


def _rmsprop_mean_grad(place):
    """The centred form needs MeanGrad; the plain one passes MeanSquare in its place (the
    function ignores it) and writes MeanGradOut only when MeanGrad was given."""
    def run(ctx):
        centered = bool(ctx.attr("centered"))
        has_mean_grad = ctx.has_input("MeanGrad")
        if centered and not has_mean_grad:
            raise ValueError("centered=True needs the MeanGrad input")
        mean_grad = "MeanGrad" if has_mean_grad else "MeanSquare"
        state = read_state(ctx, ["Param", "Grad", "MeanSquare", "Moment", mean_grad],
                           ["LearningRate"])
        slots = ("ParamOut", "MomentOut", "MeanSquareOut", "MeanGradOut")
        values = place.update(rmsprop, *state, ctx.attr("epsilon"), ctx.attr("decay"),
                              ctx.attr("momentum"), centered,
                              out=buffers(ctx, place, slots, state[0]))
        for slot, value in zip(slots, values):
            if slot != "MeanGradOut" or (has_mean_grad and ctx.has_output(slot)):
                ctx.set_output(slot, value)
    return run


def _lowered_rmsprop(info):
    """rmsprop's returning loop where MeanGrad is given (RMSProp always gives it; without
    it the kernel passes MeanSquare in its place and writes no MeanGradOut)."""
    if info.dtype("Param").name not in FLOAT_TYPES or not info.has_input("MeanGrad") or \
            not all(info.has_output(s) for s in ("ParamOut", "MomentOut", "MeanSquareOut")):
        return None
    return Call(rmsprop.returning,
                ("Param", "Grad", "MeanSquare", "Moment", "MeanGrad", "LearningRate"),
                ("ParamOut", "MomentOut", "MeanSquareOut", "MeanGradOut"),
                (info.attr("epsilon"), info.attr("decay"), info.attr("momentum"),
                 bool(info.attr("centered"))))


optimizer_op(
    "rmsprop", "MeanSquare = decay * MeanSquare + (1 - decay) * Grad^2; Moment = momentum * "
    "Moment + LearningRate * Grad / sqrt(MeanSquare (- MeanGrad^2, centered) + epsilon); "
    "Param -= Moment.",
    rmsprop, [("MeanSquare", "running mean of Grad^2"), ("Moment", "the running step")], [],
    [("ParamOut", "Param"), ("MomentOut", "Moment"), ("MeanSquareOut", "MeanSquare"),
     ("MeanGradOut", "MeanGrad")],
    [Attr("epsilon", A.FLOAT, 1e-10, "keeps the square root positive"),
     Attr("decay", A.FLOAT, 0.9, "decay of the running means"),
     Attr("momentum", A.FLOAT, 0.0, "the momentum of the step"),
     Attr("centered", A.BOOLEAN, False, "divide by the variance, not the second moment")],
    None, extra_inputs=[Slot("MeanGrad", "running mean of Grad (centered)", dispensable=True)],
    kernels={"cpu": _rmsprop_mean_grad(CPU), "cuda": _rmsprop_mean_grad(CUDA)},
    lowered=_lowered_rmsprop)
