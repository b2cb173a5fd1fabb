"""spectral_norm kernels (ops/spectral_norm.py): W [h, m] divided by its largest singular
value sigma, estimated by power iteration from the vectors U [h] and V [m].

Each iteration is Paddle's: v = W^T u / (||W^T u|| + eps), then u = W v / (||W v|| + eps);
sigma = u^T W v. The iterates are kept (us [iters+1, h], vs [iters+1, m], and each step's
two norms) because the gradient goes back through them: Out depends on W directly and
through u and v, and dW here is the derivative of the whole function (what central
differences measure). Paddle 2.6.2's spectral_norm_grad is not (ops/spectral_norm.py).

One function over one matrix, forward or backward, that allocates nothing (the caller
passes the scratch arrays), so kernels/cuda/spectral_norm.py compiles the same code for one
device thread. Its helpers (a half-step of the power iteration, and the gradient of its
normalization) are ``register_jitable``, not ``njit``: both compilers take them, and
numba's CUDA simulator runs them as plain Python (the simulator cannot pass its arrays on
to a CPU-compiled function). Sums accumulate in float64.
"""
import math

import numpy as np

from numba import njit
from numba.extending import register_jitable


@register_jitable(error_model="numpy")
def _normalized_product(mat, xs, xk, ys, k, norms, half, eps):
    """One half-step of the power iteration: ys[k] = mat xs[xk] / (||mat xs[xk]|| + eps),
    the norm kept in norms[k, half]. Called with W^T (a transposed view, so the same
    products in the same order as a loop over W's columns) for v and with W for u."""
    rows, cols = mat.shape
    norm = 0.0
    for a in range(rows):
        s = 0.0
        for b in range(cols):
            s += mat[a, b] * xs[xk, b]
        ys[k, a] = s
        norm += s * s
    norms[k, half] = math.sqrt(norm)
    for a in range(rows):
        ys[k, a] = ys[k, a] / (norms[k, half] + eps)


@register_jitable(error_model="numpy")
def _normalized_grad(ys, k, norms, half, eps, gy, gx):
    """Back through one half-step's normalization y = x / (||x|| + eps), y = ys[k] and
    ||x|| = norms[k, half]: gx = gy / c - x (x . gy) / (||x|| c^2), c = ||x|| + eps
    (x = y c)."""
    c = norms[k, half] + eps
    dot = 0.0
    for a in range(gy.size):
        dot += ys[k, a] * c * gy[a]
    coef = dot / (norms[k, half] * c * c) if norms[k, half] > 0 else 0.0
    for a in range(gy.size):
        gx[a] = gy[a] / c - ys[k, a] * c * coef


@njit(cache=True, fastmath=False, error_model="numpy")
def spectral_norm_pass(w, u0, v0, iters, eps, us, vs, norms, g, gu, gv, ga, gb, backward):
    """Forward: g = w / sigma (g's other scratch unused). Backward: g holds dOut on entry
    and d sum(dOut * w / sigma) / dw on return, through the power iteration (U and V
    held); gu, gb [h] and gv, ga [m] are scratch."""
    h, m = w.shape
    for i in range(h):
        us[0, i] = u0[i]
    for j in range(m):
        vs[0, j] = v0[j]
    for k in range(1, iters + 1):           # v = normalize(W^T u), u = normalize(W v)
        _normalized_product(w.T, us, k - 1, vs, k, norms, 0, eps)
        _normalized_product(w, vs, k, us, k, norms, 1, eps)
    sigma = 0.0
    for i in range(h):
        s = 0.0
        for j in range(m):
            s += w[i, j] * vs[iters, j]
        sigma += us[iters, i] * s
    if not backward:
        for i in range(h):
            for j in range(m):
                g[i, j] = w[i, j] / sigma
        return
    inner = 0.0
    for i in range(h):
        for j in range(m):
            inner += g[i, j] * w[i, j]
    dsigma = -inner / (sigma * sigma)
    for i in range(h):                      # Out = W / sigma, sigma = u^T W v
        s = 0.0
        for j in range(m):
            s += w[i, j] * vs[iters, j]
        gu[i] = dsigma * s
    for j in range(m):
        s = 0.0
        for i in range(h):
            s += w[i, j] * us[iters, i]
        gv[j] = dsigma * s
    for i in range(h):
        for j in range(m):
            g[i, j] = g[i, j] / sigma + dsigma * us[iters, i] * vs[iters, j]
    for k in range(iters, 0, -1):
        _normalized_grad(us, k, norms, 1, eps, gu, gb)    # u_k = normalize(b), b = W v_k
        for i in range(h):
            for j in range(m):
                g[i, j] += gb[i] * vs[k, j]
        for j in range(m):
            s = 0.0
            for i in range(h):
                s += w[i, j] * gb[i]
            gv[j] += s
        _normalized_grad(vs, k, norms, 0, eps, gv, ga)    # v_k = normalize(a), a = W^T u_(k-1)
        for i in range(h):
            for j in range(m):
                g[i, j] += us[k - 1, i] * ga[j]
        for i in range(h):
            s = 0.0
            for j in range(m):
                s += w[i, j] * ga[j]
            gu[i] = s
        for j in range(m):
            gv[j] = 0.0


# --- inside a compiled block (paddle_nb/compiler): the op's steps around the pass above, as
# ops/spectral_norm.py takes them (Weight's axis ``dim`` moved first by ``order``, the
# matrix a C-contiguous [h, m], the same scratch), returning new arrays
@njit(cache=True, fastmath=False, error_model="numpy")
def _matrix(w, u, v, order):
    """Weight moved to ``order`` as a C-contiguous [h, m], U and V checked against it."""
    moved = np.ascontiguousarray(w.transpose(order))
    h = moved.shape[0]
    mat = moved.reshape((h, moved.size // h if h else 0))
    if u.shape != (h,) or v.shape != (mat.shape[1],):
        raise ValueError("spectral_norm: U and V do not fit Weight seen as a matrix")
    return moved, mat


@njit(cache=True, fastmath=False, error_model="numpy")
def _run(mat, u, v, iters, eps, g, backward):
    """spectral_norm_pass with the op's scratch (ops/spectral_norm._scratch)."""
    h, m = mat.shape
    us, vs = np.empty((iters + 1, h), mat.dtype), np.empty((iters + 1, m), mat.dtype)
    norms = np.zeros((iters + 1, 2), mat.dtype)
    spectral_norm_pass(mat, u, v, iters, eps, us, vs, norms, g, np.empty(h, mat.dtype),
                       np.empty(m, mat.dtype), np.empty(m, mat.dtype), np.empty(h, mat.dtype),
                       backward)


@njit(cache=True, fastmath=False, error_model="numpy")
def spectral_normalized(w, u, v, order, inverse, iters, eps):
    """spectral_norm's Out = Weight / sigma, in Weight's layout."""
    moved, mat = _matrix(w, u, v, order)
    out = np.empty(mat.shape, mat.dtype)
    _run(mat, u, v, iters, eps, out, False)
    return np.ascontiguousarray(out.reshape(moved.shape).transpose(inverse))


@njit(cache=True, fastmath=False, error_model="numpy")
def spectral_normalized_grad(w, u, v, dout, order, inverse, iters, eps):
    """spectral_norm's dWeight, through the power iteration."""
    moved, mat = _matrix(w, u, v, order)
    if dout.shape != w.shape:
        raise ValueError("spectral_norm_grad: Out@GRAD must have Weight's shape")
    dw = np.ascontiguousarray(dout.transpose(order)).reshape(mat.shape).copy()
    _run(mat, u, v, iters, eps, dw, True)
    return np.ascontiguousarray(dw.reshape(moved.shape).transpose(inverse))
