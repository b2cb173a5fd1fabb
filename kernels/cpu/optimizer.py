"""Parameter updates. Each returns new arrays (the executor stores them as ParamOut...),
so a value a user put in a scope is never changed behind their back."""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=True, error_model="numpy")
def sgd(param, grad, lr):
    return param - lr * grad


@njit(cache=True, fastmath=True, error_model="numpy")
def momentum(param, grad, velocity, lr, mu, nesterov):
    v = mu * velocity + grad
    if nesterov:
        return param - lr * (grad + mu * v), v
    return param - lr * v, v


@njit(cache=True, fastmath=True, error_model="numpy")
def adam(param, grad, m1, m2, lr, beta1, beta2, eps, beta1_pow, beta2_pow):
    """Paddle's Adam: bias correction folded into the step size."""
    m1_out = beta1 * m1 + (1 - beta1) * grad
    m2_out = beta2 * m2 + (1 - beta2) * grad * grad
    lr_t = lr * np.sqrt(1 - beta2_pow) / (1 - beta1_pow)
    p_out = param - lr_t * (m1_out / (np.sqrt(m2_out) + eps * np.sqrt(1 - beta2_pow)))
    return p_out, m1_out, m2_out
