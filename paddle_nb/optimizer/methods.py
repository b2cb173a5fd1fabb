"""The optimizers: each names its update op and the accumulators it keeps (Paddle 2's
signatures; Fluid's ``parameter_list=`` and ``*Optimizer`` names work too)."""
from __future__ import annotations

from ..builders import arg_checks as check
from .base import FusedL2Optimizer, Optimizer


class SGD(Optimizer):
    """param -= learning_rate * grad"""
    op_type = "sgd"

    def _update(self, program, startup, param, grad, lr):
        return ({"Param": [param], "Grad": [grad], "LearningRate": [lr]},
                {"ParamOut": [param]}, {})


class Momentum(FusedL2Optimizer):
    """velocity = momentum * velocity + grad; param -= learning_rate * velocity"""
    op_type = "momentum"

    def __init__(self, learning_rate=0.01, momentum=0.9, parameters=None, use_nesterov=False,
                 weight_decay=None, grad_clip=None, rescale_grad=1.0, name=None, *,
                 parameter_list=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         parameter_list=parameter_list)
        # mu >= 1 makes the velocity grow without bound; < 0 turns the step around
        self.momentum = check.number("Momentum", "momentum", momentum, low=0, high=1,
                                     high_open=True)
        self.use_nesterov = check.boolean("Momentum", "use_nesterov", use_nesterov)
        self.rescale_grad = check.number("Momentum", "rescale_grad", rescale_grad)

    def _update(self, program, startup, param, grad, lr):
        v = self._accumulator(program, startup, param, "velocity")
        l2 = self._fused_l2(param)
        return ({"Param": [param], "Grad": [grad], "Velocity": [v], "LearningRate": [lr]},
                {"ParamOut": [param], "VelocityOut": [v]},
                {"mu": self.momentum, "use_nesterov": self.use_nesterov,
                 "regularization_method": "l2_decay" if l2 else "",
                 "regularization_coeff": l2, "rescale_grad": self.rescale_grad})


def _betas(builder, beta1, beta2, epsilon):
    # Paddle's own ranges: the bias correction divides by 1 - beta**t
    return (check.number(builder, "beta1", beta1, low=0, high=1, high_open=True),
            check.number(builder, "beta2", beta2, low=0, high=1, high_open=True),
            check.number(builder, "epsilon", epsilon, low=0))


class Adam(Optimizer):
    """Adam (Kingma & Ba) with Paddle's bias-corrected step. ``lazy_mode``: a sparse
    embedding's gradient (a SelectedRows) updates only the rows looked up."""
    op_type = "adam"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 parameters=None, weight_decay=None, grad_clip=None, name=None, *,
                 parameter_list=None, lazy_mode=False):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         parameter_list=parameter_list)
        self.beta1, self.beta2, self.epsilon = _betas(type(self).__name__, beta1, beta2,
                                                      epsilon)
        self.lazy_mode = check.boolean(type(self).__name__, "lazy_mode", lazy_mode)

    def _moments(self, program, startup, param):
        m1 = self._accumulator(program, startup, param, "moment1")
        m2 = self._accumulator(program, startup, param, "moment2")
        b1p = self._accumulator(program, startup, param, "beta1_pow_acc", [1], self.beta1)
        b2p = self._accumulator(program, startup, param, "beta2_pow_acc", [1], self.beta2)
        return ({"Moment1": [m1], "Moment2": [m2], "Beta1Pow": [b1p], "Beta2Pow": [b2p]},
                {"Moment1Out": [m1], "Moment2Out": [m2], "Beta1PowOut": [b1p],
                 "Beta2PowOut": [b2p]})

    def _update(self, program, startup, param, grad, lr):
        state, state_out = self._moments(program, startup, param)
        return ({"Param": [param], "Grad": [grad], "LearningRate": [lr], **state},
                {"ParamOut": [param], **state_out},
                {"beta1": self.beta1, "beta2": self.beta2, "epsilon": self.epsilon,
                 "lazy_mode": self.lazy_mode})


class AdamW(Adam):
    """Adam with decoupled weight decay: param *= 1 - lr * weight_decay before the step
    (for the parameters ``apply_decay_param_fun(name)`` accepts; all by default)."""
    op_type = "adamw"

    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 parameters=None, weight_decay=0.01, lr_ratio=None, apply_decay_param_fun=None,
                 grad_clip=None, name=None, *, parameter_list=None):
        # weight_decay is AdamW's own coefficient here, not a regularizer's
        super().__init__(learning_rate, beta1, beta2, epsilon, parameters, None, grad_clip,
                         name, parameter_list=parameter_list)
        self.coeff = check.number("AdamW", "weight_decay", weight_decay, low=0, high=1)
        self.lr_ratio = check.function("AdamW", "lr_ratio", lr_ratio, optional=True)
        self.apply_decay_param_fun = check.function("AdamW", "apply_decay_param_fun",
                                                    apply_decay_param_fun, optional=True)

    def _update(self, program, startup, param, grad, lr):
        inputs, outputs, attrs = super()._update(program, startup, param, grad, lr)
        decays = self.apply_decay_param_fun is None or self.apply_decay_param_fun(param.name)
        ratio = 1.0 if self.lr_ratio is None else check.number(
            "AdamW", "lr_ratio(param)", self.lr_ratio(param), low=0)
        attrs.update(coeff=self.coeff, with_decay=bool(decays), lr_ratio=ratio)
        return inputs, outputs, attrs


class Lamb(Adam):
    """LAMB: Adam's step plus decay, scaled per parameter by ||param|| / ||step||."""
    op_type = "lamb"

    def __init__(self, learning_rate=0.001, lamb_weight_decay=0.01, beta1=0.9, beta2=0.999,
                 epsilon=1e-6, parameters=None, grad_clip=None,
                 exclude_from_weight_decay_fn=None, always_adapt=False, name=None, *,
                 parameter_list=None):
        super().__init__(learning_rate, beta1, beta2, epsilon, parameters, None, grad_clip,
                         name, parameter_list=parameter_list)
        self.lamb_weight_decay = check.number("Lamb", "lamb_weight_decay", lamb_weight_decay,
                                              low=0)
        self.exclude = check.function("Lamb", "exclude_from_weight_decay_fn",
                                      exclude_from_weight_decay_fn, optional=True)
        self.always_adapt = check.boolean("Lamb", "always_adapt", always_adapt)

    def _update(self, program, startup, param, grad, lr):
        inputs, outputs, attrs = super()._update(program, startup, param, grad, lr)
        excluded = self.exclude is not None and self.exclude(param)
        attrs.update(weight_decay=0.0 if excluded else self.lamb_weight_decay,
                     always_adapt=self.always_adapt)
        return inputs, outputs, attrs


class Adagrad(Optimizer):
    """moment += grad^2; param -= learning_rate * grad / (sqrt(moment) + epsilon)"""
    op_type = "adagrad"

    def __init__(self, learning_rate, epsilon=1e-6, parameters=None, weight_decay=None,
                 grad_clip=None, name=None, initial_accumulator_value=0.0, *,
                 parameter_list=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         parameter_list=parameter_list)
        self.epsilon = check.number("Adagrad", "epsilon", epsilon, low=0)
        self.initial = check.number("Adagrad", "initial_accumulator_value",
                                    initial_accumulator_value, low=0)

    def _update(self, program, startup, param, grad, lr):
        m = self._accumulator(program, startup, param, "moment", value=self.initial)
        return ({"Param": [param], "Grad": [grad], "Moment": [m], "LearningRate": [lr]},
                {"ParamOut": [param], "MomentOut": [m]}, {"epsilon": self.epsilon})


class RMSProp(Optimizer):
    """mean_square = rho * mean_square + (1 - rho) * grad^2; the step is the learning rate
    times grad / sqrt(mean_square (minus mean_grad^2, centered) + epsilon), with momentum."""
    op_type = "rmsprop"

    def __init__(self, learning_rate, rho=0.95, epsilon=1e-6, momentum=0.0, centered=False,
                 parameters=None, weight_decay=None, grad_clip=None, name=None, *,
                 parameter_list=None):
        super().__init__(learning_rate, parameters, weight_decay, grad_clip, name,
                         parameter_list=parameter_list)
        self.rho = check.number("RMSProp", "rho", rho, low=0, high=1)
        self.epsilon = check.number("RMSProp", "epsilon", epsilon, low=0)
        self.momentum = check.number("RMSProp", "momentum", momentum, low=0)
        self.centered = check.boolean("RMSProp", "centered", centered)

    def _update(self, program, startup, param, grad, lr):
        ms, mom, mg = (self._accumulator(program, startup, param, kind)
                       for kind in ("mean_square", "momentum", "mean_grad"))
        return ({"Param": [param], "Grad": [grad], "MeanSquare": [ms], "Moment": [mom],
                 "MeanGrad": [mg], "LearningRate": [lr]},
                {"ParamOut": [param], "MeanSquareOut": [ms], "MomentOut": [mom],
                 "MeanGradOut": [mg]},
                {"epsilon": self.epsilon, "decay": self.rho, "momentum": self.momentum,
                 "centered": self.centered})


(SGDOptimizer, MomentumOptimizer, AdamOptimizer, AdamWOptimizer, LambOptimizer,  # Fluid's
 AdagradOptimizer, RMSPropOptimizer) = (SGD, Momentum, Adam, AdamW, Lamb, Adagrad, RMSProp)
