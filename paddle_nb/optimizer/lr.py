"""Learning-rate schedulers, as ``paddle.optimizer.lr`` has them.

In a static program the learning rate is a persistable variable the update ops read. A
scheduler is plain Python that lives beside the program: the optimizer given one binds it
to that variable (``program.lr_scheduler``), the executor writes the scheduler's current
value into the variable before each run, and the user calls ``scheduler.step()`` between
runs (once per step or per epoch, as they choose). Nothing about it is in the
ProgramDesc, as in Paddle: the ops only ever see a number in the scope.

    sched = pd.optimizer.lr.StepDecay(0.1, step_size=2, gamma=0.5)
    pd.optimizer.AdamW(sched).minimize(loss)
    for batch in batches:
        exe.run(feed=batch, fetch_list=[loss])
        sched.step()
"""
from __future__ import annotations

import math

from ..builders import arg_checks as check


class LRScheduler:
    """``last_epoch`` counts the calls of ``step()``; ``get_lr()`` is the rate at it."""

    def __init__(self, learning_rate: float = 0.1, last_epoch: int = -1, verbose=False):
        builder = type(self).__name__
        self.base_lr = float(check.number(builder, "learning_rate", learning_rate, low=0))
        self.last_epoch = check.integer(builder, "last_epoch", last_epoch, low=-1)
        self.verbose = bool(verbose)
        self.last_lr = self.base_lr
        self.var_name: str | None = None
        self.step()

    def __call__(self) -> float:
        return self.last_lr

    def step(self, epoch: int | None = None) -> None:
        """Advance to the next epoch (or to ``epoch``) and compute its rate."""
        if epoch is None:
            self.last_epoch += 1
            self.last_lr = self.get_lr()
        else:
            self.last_epoch = check.integer(type(self).__name__, "epoch", epoch, low=0)
            self.last_lr = self.closed_form()
        if self.verbose:
            print(f"Epoch {self.last_epoch}: {type(self).__name__} set learning rate to "
                  f"{self.last_lr}.")

    def get_lr(self) -> float:
        return self.closed_form()

    def closed_form(self) -> float:
        raise NotImplementedError

    def bind(self, program, var_name: str) -> None:
        """Make ``var_name`` of ``program`` this scheduler's variable (the executor sets
        it from ``self()`` before each run of the program)."""
        self.var_name = var_name
        program.lr_scheduler = self

    def state_dict(self) -> dict:
        return {"last_epoch": self.last_epoch, "last_lr": self.last_lr}

    def set_state_dict(self, state: dict) -> None:
        self.last_epoch, self.last_lr = int(state["last_epoch"]), float(state["last_lr"])

    def __repr__(self):
        return f"<{type(self).__name__} epoch {self.last_epoch}: lr {self.last_lr}>"


class StepDecay(LRScheduler):
    """base_lr * gamma ** (epoch // step_size)."""

    def __init__(self, learning_rate, step_size: int, gamma: float = 0.1, last_epoch=-1,
                 verbose=False):
        self.step_size = check.integer("StepDecay", "step_size", step_size, low=1)
        self.gamma = check.number("StepDecay", "gamma", gamma, low=0, high=1, high_open=True)
        super().__init__(learning_rate, last_epoch, verbose)

    def closed_form(self):
        return self.base_lr * self.gamma ** (self.last_epoch // self.step_size)


class MultiStepDecay(LRScheduler):
    """base_lr * gamma ** (the number of milestones passed)."""

    def __init__(self, learning_rate, milestones, gamma: float = 0.1, last_epoch=-1,
                 verbose=False):
        if not isinstance(milestones, (list, tuple)) or \
                list(milestones) != sorted(set(milestones)):
            raise check.refuse("MultiStepDecay", "milestones", "an increasing list of epochs",
                               milestones)
        self.milestones = [check.integer("MultiStepDecay", "milestones", m, low=0)
                           for m in milestones]
        self.gamma = check.number("MultiStepDecay", "gamma", gamma, low=0, high=1,
                                  high_open=True)
        super().__init__(learning_rate, last_epoch, verbose)

    def closed_form(self):
        return self.base_lr * self.gamma ** sum(self.last_epoch >= m for m in self.milestones)


class ExponentialDecay(LRScheduler):
    """base_lr * gamma ** epoch."""

    def __init__(self, learning_rate, gamma: float, last_epoch=-1, verbose=False):
        self.gamma = check.number("ExponentialDecay", "gamma", gamma, low=0, high=1,
                                  high_open=True)
        super().__init__(learning_rate, last_epoch, verbose)

    def closed_form(self):
        return self.base_lr * self.gamma ** self.last_epoch


class PiecewiseDecay(LRScheduler):
    """values[i] while epoch < boundaries[i]; values[-1] after the last boundary."""

    def __init__(self, boundaries, values, last_epoch=-1, verbose=False):
        if not isinstance(boundaries, (list, tuple)) or not isinstance(values, (list, tuple)) \
                or len(values) != len(boundaries) + 1:
            raise check.refuse("PiecewiseDecay", "values", "a list of one more value than "
                               "the list of boundaries", values)
        self.boundaries = list(boundaries)
        self.values = [float(check.number("PiecewiseDecay", "values", v, low=0))
                       for v in values]
        super().__init__(self.values[0], last_epoch, verbose)

    def closed_form(self):
        for boundary, value in zip(self.boundaries, self.values):
            if self.last_epoch < boundary:
                return value
        return self.values[-1]


class CosineAnnealingDecay(LRScheduler):
    """eta_min + (base_lr - eta_min) * (1 + cos(pi * epoch / T_max)) / 2, computed step by
    step from the previous rate as Paddle does (so the two agree to the last bit)."""

    def __init__(self, learning_rate, T_max: int, eta_min: float = 0.0,   # noqa: N803
                 last_epoch=-1, verbose=False):
        self.T_max = check.integer("CosineAnnealingDecay", "T_max", T_max, low=1)
        self.eta_min = float(check.number("CosineAnnealingDecay", "eta_min", eta_min, low=0))
        super().__init__(learning_rate, last_epoch, verbose)

    def get_lr(self):
        t, T = self.last_epoch, self.T_max   # noqa: N806
        if t == 0:
            return self.base_lr
        if (t - 1 - T) % (2 * T) == 0:
            return self.last_lr + (self.base_lr - self.eta_min) * (1 - math.cos(math.pi / T)) / 2
        return ((1 + math.cos(math.pi * t / T)) / (1 + math.cos(math.pi * (t - 1) / T))
                * (self.last_lr - self.eta_min) + self.eta_min)

    def closed_form(self):
        return self.eta_min + (self.base_lr - self.eta_min) * (
            1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2


class LinearWarmup(LRScheduler):
    """start_lr rising linearly to end_lr over warmup_steps, then ``learning_rate`` (a
    number, or a scheduler that starts counting when the warm-up ends)."""

    def __init__(self, learning_rate, warmup_steps: int, start_lr: float, end_lr: float,
                 last_epoch=-1, verbose=False):
        if not isinstance(learning_rate, LRScheduler):
            check.number("LinearWarmup", "learning_rate", learning_rate, low=0)
        self.learning_rate = learning_rate
        self.warmup_steps = check.integer("LinearWarmup", "warmup_steps", warmup_steps, low=1)
        self.start_lr = float(check.number("LinearWarmup", "start_lr", start_lr, low=0))
        self.end_lr = float(check.number("LinearWarmup", "end_lr", end_lr, low=0))
        super().__init__(start_lr, last_epoch, verbose)

    def get_lr(self):
        if self.last_epoch < self.warmup_steps:
            return (self.end_lr - self.start_lr) * self.last_epoch / self.warmup_steps \
                + self.start_lr
        if isinstance(self.learning_rate, LRScheduler):
            self.learning_rate.step(self.last_epoch - self.warmup_steps)
            return self.learning_rate()
        return float(self.learning_rate)

    closed_form = get_lr
