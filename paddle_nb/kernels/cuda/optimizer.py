"""Parameter updates on the device, the math of kernels/cpu/optimizer.py.

Each launcher returns NEW arrays (the executor stores them as ParamOut, ...; a run that
fails is undone by putting the old arrays back, which works only if nobody wrote into
them). The learning rate and Adam's beta powers stay on the device as 1-element arrays
and are read inside the kernel: no device-to-host copy per parameter per step.
"""
from __future__ import annotations

import math

from numba import cuda

from .device import empty, flat, launch_1d


@cuda.jit(cache=True)
def _sgd(param, grad, lr, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = param[i] - lr[0] * grad[i]


@cuda.jit(cache=True)
def _momentum(param, grad, velocity, lr, mu, nesterov, rescale, l2_coeff, p_out, v_out):
    for i in range(cuda.grid(1), p_out.size, cuda.gridsize(1)):
        g = grad[i] * rescale                           # rescale_grad, then L2 decay
        if l2_coeff != 0.0:                             # (0 * an infinite param is NaN)
            g += l2_coeff * param[i]
        v = mu * velocity[i] + g
        v_out[i] = v
        if nesterov:
            p_out[i] = param[i] - lr[0] * (g + mu * v)
        else:
            p_out[i] = param[i] - lr[0] * v


@cuda.jit(cache=True)
def _adam(param, grad, m1, m2, lr, beta1, beta2, eps, beta1_pow, beta2_pow,
          p_out, m1_out, m2_out, beta1_pow_out, beta2_pow_out):
    """Paddle's Adam: bias correction folded into the step size."""
    b1p = beta1_pow[0]
    b2p = beta2_pow[0]
    lr_t = lr[0] * math.sqrt(1.0 - b2p) / (1.0 - b1p)
    eps_t = eps * math.sqrt(1.0 - b2p)
    start = cuda.grid(1)
    for i in range(start, p_out.size, cuda.gridsize(1)):
        g = grad[i]
        a = beta1 * m1[i] + (1.0 - beta1) * g
        b = beta2 * m2[i] + (1.0 - beta2) * g * g
        m1_out[i] = a
        m2_out[i] = b
        p_out[i] = param[i] - lr_t * (a / (math.sqrt(b) + eps_t))
    if start == 0:                     # one thread advances the powers for the next step
        beta1_pow_out[0] = b1p * beta1
        beta2_pow_out[0] = b2p * beta2


def sgd(param, grad, lr):
    """param - lr * grad; ``lr`` a 1-element device array."""
    out = empty(param.shape, param.dtype)
    if out.size:
        blocks, threads = launch_1d(out.size)
        _sgd[blocks, threads](flat(param), flat(grad), flat(lr), flat(out))
    return out


def momentum(param, grad, velocity, lr, mu: float, nesterov: bool, rescale: float = 1.0,
             l2_coeff: float = 0.0):
    """(ParamOut, VelocityOut): v = mu * v + g; param - lr * v (Nesterov: lr * (g + mu v))."""
    p_out = empty(param.shape, param.dtype)
    v_out = empty(param.shape, param.dtype)
    if p_out.size:
        blocks, threads = launch_1d(p_out.size)
        _momentum[blocks, threads](flat(param), flat(grad), flat(velocity), flat(lr),
                                   float(mu), bool(nesterov), float(rescale), float(l2_coeff),
                                   flat(p_out), flat(v_out))
    return p_out, v_out


def adam(param, grad, m1, m2, lr, beta1: float, beta2: float, eps: float, beta1_pow,
         beta2_pow):
    """(ParamOut, Moment1Out, Moment2Out, Beta1PowOut, Beta2PowOut)."""
    outs = [empty(a.shape, a.dtype) for a in (param, m1, m2, beta1_pow, beta2_pow)]
    blocks, threads = launch_1d(max(param.size, 1))
    # launched even for an empty parameter: thread 0 still advances the beta powers
    _adam[blocks, threads](flat(param), flat(grad), flat(m1), flat(m2), flat(lr),
                           float(beta1), float(beta2), float(eps), flat(beta1_pow),
                           flat(beta2_pow), *[flat(o) for o in outs])
    return tuple(outs)
