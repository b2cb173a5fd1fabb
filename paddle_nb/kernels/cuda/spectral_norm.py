"""spectral_norm on the device: kernels/cpu/spectral_norm.py's function (read it first)
compiled as a device function and run in one thread per matrix (spectral_norm normalises
one weight: a power iteration is a chain of matrix-vector products, each needing the
last)."""
from __future__ import annotations

import numpy as np
from numba import cuda

from ..cpu.spectral_norm import spectral_norm_pass
from .copy import copy
from .device import empty

_pass = cuda.jit(device=True)(spectral_norm_pass.py_func)


@cuda.jit(cache=True)
def _spectral_norm(w, u0, v0, iters, eps, us, vs, norms, g, gu, gv, ga, gb, backward):
    if cuda.grid(1) == 0:
        _pass(w, u0, v0, iters, eps, us, vs, norms, g, gu, gv, ga, gb, backward)


def _run(w, u, v, iters: int, eps: float, g, backward: bool):
    h, m = (int(d) for d in w.shape)
    scratch = [empty(shape, w.dtype) for shape in
               ((iters + 1, h), (iters + 1, m), (iters + 1, 2), (h,), (m,), (m,), (h,))]
    us, vs, norms, gu, gv, ga, gb = scratch
    _spectral_norm[1, 1](w, u, v, np.int64(iters), float(eps), us, vs, norms, g, gu, gv,
                         ga, gb, backward)
    return g


def spectral_norm(w, u, v, iters: int, eps: float):
    """w [h, m] / sigma, a new device array."""
    out = empty(tuple(int(d) for d in w.shape), w.dtype)
    return _run(w, u, v, iters, eps, out, False) if out.size else out


def spectral_norm_grad(w, u, v, iters: int, eps: float, dout):
    """d sum(dout * Out) / dw (through the power iteration), a new device array."""
    g = copy(dout)                               # the kernel overwrites dOut with dW
    return _run(w, u, v, iters, eps, g, True) if g.size else g
