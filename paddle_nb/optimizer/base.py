"""What every optimizer shares: ``minimize(loss)`` = append_backward, then per gradient the
clipping and weight-decay ops, then one update op per parameter.

As in Fluid, the learning rate is a persistable variable (``learning_rate_0``) that the
startup program fills (or, with a scheduler from lr.py, that the executor sets from the
scheduler before each run), and each optimizer's accumulators (``<param>_velocity_0``,
``<param>_moment1_0``, ...) are persistable variables the startup program fills. Every
op appended here carries ``op_role`` 2 (optimize), so ``clone(for_test=True)`` drops it.
The order is Paddle's: clip the gradients, then add the decay, then update.

A sparse embedding's gradient (``is_sparse=True``: a SelectedRows, declared
VarType.SELECTED_ROWS) reaches the update op as it is when there is no decay (sgd,
momentum and adam take it); a decay turns it dense (regularizer.py). Clipping one, or
updating one with an optimizer that does not take it, is refused here, at build time.
"""
from __future__ import annotations

from ..builders import arg_checks as check
from ..core import dtypes, unique_name
from ..core.backward import OP_ROLE_OPTIMIZE, append_backward
from ..core.errors import BuildError
from ..core.framework_pb2 import VarType
from ..core.registry import lookup
from ..core.program import Program, default_startup_program
from ..core.variable import Variable
from .clip import GradientClip
from .lr import LRScheduler
from .regularizer import L2Decay, WeightDecay, decay_of


def _parameters(builder: str, name: str, value):
    """None (every trainable parameter), or a list of Parameters or their names."""
    if value is None:
        return None
    if not isinstance(value, (list, tuple)) or \
            not all(isinstance(p, (Variable, str)) for p in value):
        raise check.refuse(builder, name, "a list of parameters (or their names), or None",
                           value)
    return list(value)


class Optimizer:
    op_type = ""

    def __init__(self, learning_rate=0.01, parameters=None, weight_decay=None, grad_clip=None,
                 name=None, *, parameter_list=None):
        builder = type(self).__name__
        if isinstance(learning_rate, Variable):
            # the update ops read it as their one-element LearningRate
            self._lr_var = check.variable(builder, "learning_rate", learning_rate,
                                          dtype="float", one_element=True)
        elif isinstance(learning_rate, LRScheduler):
            self._lr_var = None
        else:
            check.number(builder, "learning_rate", learning_rate, low=0, low_open=True)
            self._lr_var = None
        self.learning_rate = learning_rate
        if parameters is not None and parameter_list is not None:
            raise BuildError(f"{builder}: give parameters= or parameter_list= (Fluid's "
                             "name), not both")
        self.parameter_list = _parameters(builder, "parameters", parameters) \
            if parameters is not None else _parameters(builder, "parameter_list",
                                                       parameter_list)
        self.regularization = WeightDecay.of(builder, "weight_decay", weight_decay)
        if grad_clip is not None and not isinstance(grad_clip, GradientClip):
            raise check.refuse(builder, "grad_clip", "a ClipGradByValue, ClipGradByNorm or "
                               "ClipGradByGlobalNorm, or None", grad_clip)
        self.grad_clip = grad_clip
        self.name = check.text(builder, "name", name, optional=True)

    def get_lr(self) -> float:
        """The learning rate the next run uses (a scheduler's current value)."""
        if isinstance(self.learning_rate, LRScheduler):
            return self.learning_rate()
        if isinstance(self.learning_rate, Variable):
            raise BuildError(f"{type(self).__name__}: the learning rate is the variable "
                             f"{self.learning_rate.name!r}; read it from the scope")
        return float(self.learning_rate)

    # --- persistable helpers ------------------------------------------------------------
    def _persistable(self, program, startup, name, shape, dtype, value):
        """A persistable var in both programs, filled with ``value`` by the startup one."""
        main_var = program.global_block().create_var(name, shape, dtype, persistable=True,
                                                     stop_gradient=True)
        startup_var = startup.global_block().create_var(name, shape, dtype, persistable=True)
        startup.global_block().append_op(
            "fill_constant", outputs={"Out": [startup_var]},
            attrs={"shape": list(shape), "value": float(value),
                   "dtype": dtypes.to_code(dtype), "str_value": repr(float(value))})
        return main_var

    def _learning_rate(self, program, startup, dtype):
        if self._lr_var is None:
            scheduler = self.learning_rate if isinstance(self.learning_rate, LRScheduler) \
                else None
            value = scheduler() if scheduler else self.learning_rate
            self._lr_var = self._persistable(program, startup,
                                             unique_name.generate("learning_rate"), [], dtype,
                                             value)
            if scheduler is not None:            # the executor sets it before each run
                scheduler.bind(program, self._lr_var.name)
        return self._lr_var

    def _accumulator(self, program, startup, param, kind, shape=None, value=0.0):
        name = unique_name.generate(f"{param.name}_{kind}")
        return self._persistable(program, startup, name,
                                 list(param.shape) if shape is None else shape,
                                 param.dtype, value)

    # --- the public API ---------------------------------------------------------------
    def minimize(self, loss, startup_program=None, parameters=None, no_grad_set=None, *,
                 parameter_list=None):
        """Append the backward pass and the update ops; return (update ops, params_grads)."""
        check.variable("minimize", "loss", loss, dtype="float")
        chosen = _parameters("minimize", "parameters", parameters) \
            if parameters is not None else _parameters("minimize", "parameter_list",
                                                       parameter_list)
        if startup_program is not None and not isinstance(startup_program, Program):
            raise check.refuse("minimize", "startup_program", "a Program or None",
                               startup_program)
        if no_grad_set is not None and (isinstance(no_grad_set, (str, Variable)) or
                                        not hasattr(no_grad_set, "__iter__")):
            raise check.refuse("minimize", "no_grad_set", "a set of variables (or names), "
                               "or None", no_grad_set)
        params_grads = append_backward(loss, chosen or self.parameter_list, no_grad_set)
        if not params_grads:
            raise BuildError(f"minimize({loss.name}): no trainable parameter affects the loss")
        return self.apply_gradients(params_grads, loss.block.program,
                                    startup_program or default_startup_program()), params_grads

    def apply_gradients(self, params_grads, program=None, startup=None):
        """Clip, decay, update: the optimize part of the program, after its backward."""
        program = program or params_grads[0][0].block.program
        startup = startup or default_startup_program()
        block = program.global_block()
        lr = self._learning_rate(program, startup, params_grads[0][0].dtype)
        # Paddle's order: by parameter name (so the ops come out the same)
        params_grads = sorted(params_grads, key=lambda pg: pg[0].name)
        sparse = [p.name for p, g in params_grads if g.type == VarType.SELECTED_ROWS]
        if self.grad_clip is not None and sparse:
            raise BuildError(
                f"{type(self.grad_clip).__name__}: the gradient of {sparse[0]} is a "
                f"SelectedRows (an embedding with is_sparse=True), and clipping a SelectedRows "
                f"is not built here; build the embedding with is_sparse=False to clip its "
                f"gradient")
        if self.grad_clip is not None:
            params_grads = self.grad_clip.append(block, params_grads)
        params_grads = [(p, self._append_decay(block, p, g)) for p, g in params_grads]
        takes = lookup(self.op_type).selected_rows
        for p, g in params_grads:
            if g.type == VarType.SELECTED_ROWS and "Grad" not in takes:
                raise BuildError(
                    f"{type(self).__name__}: the gradient of {p.name} is a SelectedRows (an "
                    f"embedding with is_sparse=True), which its {self.op_type} op does not "
                    f"take (SGD, Momentum and Adam do); build the embedding with "
                    f"is_sparse=False, or give the parameter a weight decay (the decayed "
                    f"gradient is dense)")
        ops = []
        for param, grad in params_grads:
            inputs, outputs, attrs = self._update(program, startup, param, grad, lr)
            attrs["op_role"] = OP_ROLE_OPTIMIZE
            ops.append(block.append_op(self.op_type, inputs, outputs, attrs))
        return ops

    def _decay(self, param):
        """The decay to add to ``param``'s gradient as ops: its own (ParamAttr's
        regularizer) before the optimizer's, as in Paddle."""
        return decay_of(param) or self.regularization

    def _append_decay(self, block, param, grad):
        decay = self._decay(param)
        return grad if decay is None else decay.append(block, param, grad)

    def _update(self, program, startup, param, grad, lr):
        raise NotImplementedError


class FusedL2Optimizer(Optimizer):
    """An optimizer whose update op adds an optimizer-wide L2 decay itself (Momentum's
    ``regularization_method``), as Paddle builds it: no scale/sum ops for those."""

    def _decay(self, param):
        own = decay_of(param)
        if own is None and isinstance(self.regularization, L2Decay):
            return None
        return own or self.regularization

    def _fused_l2(self, param) -> float:
        if decay_of(param) is None and isinstance(self.regularization, L2Decay):
            return self.regularization.coeff
        return 0.0
