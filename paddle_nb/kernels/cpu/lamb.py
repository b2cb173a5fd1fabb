"""lamb's update (ops/adam.py): Adam's step, plus weight decay, scaled per parameter by the
trust ratio ||Param|| / ||step||.

Two @update loops (kernels/update.py, for every place): ``lamb_moments`` (the moments and
the step direction) and ``lamb_step`` (the parameter moved by the direction times the
trust ratio); the interpreter's kernel runs them around the places' squared norms. In a
compiled block ``lamb_update`` is the same two loops (their serial ``returning`` forms)
around the same norms (reduce.squared_l2_norm: the interpreter's serial row sum).
"""
import math

from numba import njit

from ..update import update
from .reduce import squared_l2_norm

# Parameter elements from which the prange twins run: Adam's family's measured crossover
# (ops/optimizer.py's MIN_PARALLEL_ADAM, which these loops were measured with)
MIN_PARALLEL_LAMB = 32_768


@update(arrays=4, cells=2, outputs=3, min_parallel=MIN_PARALLEL_LAMB)
def lamb_moments(param, grad, m1, m2, beta1_pow, beta2_pow, beta1, beta2, epsilon,
                 weight_decay):
    """The moments and the step direction before the trust ratio (Adam's, plus decay)."""
    m1 = beta1 * m1 + (1.0 - beta1) * grad
    m2 = beta2 * m2 + (1.0 - beta2) * grad * grad
    m1_hat = m1 / (1.0 - beta1_pow)
    m2_hat = m2 / (1.0 - beta2_pow)
    return m1, m2, m1_hat / (math.sqrt(m2_hat) + epsilon) + weight_decay * param


@update(arrays=2, cells=3, min_parallel=MIN_PARALLEL_LAMB)
def lamb_step(param, direction, lr, param_sq, direction_sq, adapt):
    ratio = 1.0
    if adapt and param_sq > 0.0 and direction_sq > 0.0:    # the trust ratio
        ratio = math.sqrt(param_sq) / math.sqrt(direction_sq)
    return param - lr * ratio * direction


# their serial loops as numba code calls them (a global dispatcher, not an attribute),
# under the names update.py compiles them by
lamb_moments__returning, lamb_step__returning = lamb_moments.returning, lamb_step.returning


@njit(cache=True, fastmath=False, error_model="numpy")
def lamb_update(param, grad, m1, m2, lr, beta1_pow, beta2_pow, beta1, beta2, epsilon,
                weight_decay, adapt):
    """lamb's (ParamOut, Moment1Out, Moment2Out) in a compiled block: the kernel's two
    update loops around the squared norms, summed as the kernel's sum_axes sums them
    (squared_l2_norm: the serial row sum of one row)."""
    m1_out, m2_out, direction = lamb_moments__returning(
        param, grad, m1, m2, beta1_pow, beta2_pow, beta1, beta2, epsilon, weight_decay)
    param_out = lamb_step__returning(param, direction, lr, squared_l2_norm(param),
                                     squared_l2_norm(direction), adapt)
    return param_out, m1_out, m2_out
