"""spectral_norm kernels (ops/spectral_norm.py): W [h, m] divided by its largest singular
value sigma, estimated by power iteration from the vectors U [h] and V [m].

Each iteration is Paddle's: v = W^T u / (||W^T u|| + eps), then u = W v / (||W v|| + eps);
sigma = u^T W v. The iterates are kept (us [iters+1, h], vs [iters+1, m], and each step's
two norms) because the gradient goes back through them: Out depends on W directly and
through u and v, and dW here is the derivative of the whole function (what central
differences measure). Paddle 2.6.2's spectral_norm_grad is not (ops/spectral_norm.py).

One function over one matrix, forward or backward, that calls no other function with an
array and allocates nothing (the caller passes the scratch arrays), so
kernels/cuda/spectral_norm.py compiles the same code for one device thread (numba's CUDA
simulator cannot pass its arrays on to a CPU-compiled function). Sums accumulate in
float64.
"""
import math

from numba import njit


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
        norm = 0.0
        for j in range(m):
            s = 0.0
            for i in range(h):
                s += w[i, j] * us[k - 1, i]
            vs[k, j] = s
            norm += s * s
        norms[k, 0] = math.sqrt(norm)
        for j in range(m):
            vs[k, j] = vs[k, j] / (norms[k, 0] + eps)
        norm = 0.0
        for i in range(h):
            s = 0.0
            for j in range(m):
                s += w[i, j] * vs[k, j]
            us[k, i] = s
            norm += s * s
        norms[k, 1] = math.sqrt(norm)
        for i in range(h):
            us[k, i] = us[k, i] / (norms[k, 1] + eps)
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
        # u_k = b / (||b|| + eps), b = W v_k: gb = gu / c - b (b . gu) / (||b|| c^2)
        c = norms[k, 1] + eps
        dot = 0.0
        for i in range(h):
            dot += us[k, i] * c * gu[i]
        coef = dot / (norms[k, 1] * c * c) if norms[k, 1] > 0 else 0.0
        for i in range(h):
            gb[i] = gu[i] / c - us[k, i] * c * coef
        for i in range(h):
            for j in range(m):
                g[i, j] += gb[i] * vs[k, j]
        for j in range(m):
            s = 0.0
            for i in range(h):
                s += w[i, j] * gb[i]
            gv[j] += s
        # v_k = a / (||a|| + eps), a = W^T u_(k-1)
        c = norms[k, 0] + eps
        dot = 0.0
        for j in range(m):
            dot += vs[k, j] * c * gv[j]
        coef = dot / (norms[k, 0] * c * c) if norms[k, 0] > 0 else 0.0
        for j in range(m):
            ga[j] = gv[j] / c - vs[k, j] * c * coef
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
