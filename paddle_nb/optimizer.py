"""Optimizers: ``minimize(loss)`` = append_backward + one update op per parameter.

As in Fluid, the learning rate is a persistable variable (``learning_rate_0``) that the
startup program fills, and each optimizer's accumulators (``<param>_velocity_0``,
``<param>_moment1_0``, ...) are persistable variables the startup program zeroes. The
update ops carry ``op_role`` 2 (optimize) so ``clone(for_test=True)`` drops them.
"""
from __future__ import annotations

from . import arg_checks as check
from .core import dtypes, unique_name
from .core.backward import OP_ROLE_OPTIMIZE, append_backward
from .core.errors import BuildError
from .core.program import Program, default_startup_program
from .core.variable import Variable


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

    def __init__(self, learning_rate: float = 0.01, parameter_list=None):
        builder = type(self).__name__
        if isinstance(learning_rate, Variable):
            # the update ops read it as their one-element LearningRate
            self._lr_var = check.variable(builder, "learning_rate", learning_rate,
                                          dtype="float", one_element=True)
        else:
            check.number(builder, "learning_rate", learning_rate, low=0, low_open=True)
            self._lr_var = None
        self.learning_rate = learning_rate
        self.parameter_list = _parameters(builder, "parameter_list", parameter_list)

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
            self._lr_var = self._persistable(program, startup,
                                             unique_name.generate("learning_rate"), [], dtype,
                                             self.learning_rate)
        return self._lr_var

    def _accumulator(self, program, startup, param, kind, shape=None, value=0.0):
        name = unique_name.generate(f"{param.name}_{kind}")
        return self._persistable(program, startup, name,
                                 list(param.shape) if shape is None else shape,
                                 param.dtype, value)

    # --- the public API ---------------------------------------------------------------
    def minimize(self, loss, startup_program=None, parameter_list=None, no_grad_set=None):
        """Append the backward pass and the update ops; return (update ops, params_grads)."""
        check.variable("minimize", "loss", loss, dtype="float")
        parameter_list = _parameters("minimize", "parameter_list", parameter_list)
        if startup_program is not None and not isinstance(startup_program, Program):
            raise check.refuse("minimize", "startup_program", "a Program or None",
                               startup_program)
        if no_grad_set is not None and (isinstance(no_grad_set, (str, Variable)) or
                                        not hasattr(no_grad_set, "__iter__")):
            raise check.refuse("minimize", "no_grad_set", "a set of variables (or names), "
                               "or None", no_grad_set)
        params_grads = append_backward(loss, parameter_list or self.parameter_list,
                                       no_grad_set)
        if not params_grads:
            raise BuildError(f"minimize({loss.name}): no trainable parameter affects the loss")
        return self.apply_gradients(params_grads, loss.block.program,
                                    startup_program or default_startup_program()), params_grads

    def apply_gradients(self, params_grads, program, startup):
        lr = self._learning_rate(program, startup, params_grads[0][0].dtype)
        block = program.global_block()
        ops = []
        for param, grad in params_grads:
            inputs, outputs, attrs = self._update(program, startup, param, grad, lr)
            attrs["op_role"] = OP_ROLE_OPTIMIZE
            ops.append(block.append_op(self.op_type, inputs, outputs, attrs))
        return ops

    def _update(self, program, startup, param, grad, lr):
        raise NotImplementedError


class SGD(Optimizer):
    """param -= learning_rate * grad"""
    op_type = "sgd"

    def _update(self, program, startup, param, grad, lr):
        return ({"Param": [param], "Grad": [grad], "LearningRate": [lr]},
                {"ParamOut": [param]}, {})


class Momentum(Optimizer):
    """velocity = momentum * velocity + grad; param -= learning_rate * velocity"""
    op_type = "momentum"

    def __init__(self, learning_rate=0.01, momentum=0.9, use_nesterov=False,
                 parameter_list=None):
        super().__init__(learning_rate, parameter_list)
        # mu >= 1 makes the velocity grow without bound; < 0 turns the step around
        self.momentum = check.number("Momentum", "momentum", momentum, low=0, high=1,
                                     high_open=True)
        self.use_nesterov = check.boolean("Momentum", "use_nesterov", use_nesterov)

    def _update(self, program, startup, param, grad, lr):
        v = self._accumulator(program, startup, param, "velocity")
        return ({"Param": [param], "Grad": [grad], "Velocity": [v], "LearningRate": [lr]},
                {"ParamOut": [param], "VelocityOut": [v]},
                {"mu": self.momentum, "use_nesterov": self.use_nesterov})


class Adam(Optimizer):
    """Adam (Kingma & Ba) with Paddle's bias-corrected step."""
    op_type = "adam"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 parameter_list=None):
        super().__init__(learning_rate, parameter_list)
        # Paddle's own ranges: the bias correction divides by 1 - beta**t
        self.beta1 = check.number("Adam", "beta1", beta1, low=0, high=1, high_open=True)
        self.beta2 = check.number("Adam", "beta2", beta2, low=0, high=1, high_open=True)
        self.epsilon = check.number("Adam", "epsilon", epsilon, low=0)

    def _update(self, program, startup, param, grad, lr):
        m1 = self._accumulator(program, startup, param, "moment1")
        m2 = self._accumulator(program, startup, param, "moment2")
        b1p = self._accumulator(program, startup, param, "beta1_pow_acc", [1], self.beta1)
        b2p = self._accumulator(program, startup, param, "beta2_pow_acc", [1], self.beta2)
        return ({"Param": [param], "Grad": [grad], "LearningRate": [lr], "Moment1": [m1],
                 "Moment2": [m2], "Beta1Pow": [b1p], "Beta2Pow": [b2p]},
                {"ParamOut": [param], "Moment1Out": [m1], "Moment2Out": [m2],
                 "Beta1PowOut": [b1p], "Beta2PowOut": [b2p]},
                {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon})


SGDOptimizer, MomentumOptimizer, AdamOptimizer = SGD, Momentum, Adam
