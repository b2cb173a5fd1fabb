"""The sampling ops' draws (ops/sampling.py: bernoulli, poisson, multinomial, randint,
randperm, rrelu's noise, gumbel_softmax's noise), on the CPU.

Every draw is ``counter_uniform(seed, counter)`` (kernels/cpu/random.py): a hash of the
seed and the draw's number, no generator state. The scalar functions below compute one
element from its own counters; the loops here call them element by element, and
kernels/cuda/sampling.py calls the same functions from one thread per element (or per row),
so one seed gives the same values on both places. An element that needs several draws
(poisson's rejection loop, a multinomial row) numbers them ``(element << 24) + j``:
2**24 draws per element, far more than any loop here takes.

At the end, the ops' forms in a compiled block (paddle_nb/compiler): the same loops, after
the same checks of X as the ops' kernels make (raising, so that the interpreter reruns the op
and names the error), with the seed the kernel takes: a fixed one, or 0 for a new one from
numpy's generator (random.chosen_seed), drawn where the kernel draws it, after the checks.
"""
import math

import numpy as np
from numba import njit

from .random import chosen_seed, counter_uniform
from .reduce import _softmax_grad_rows

_SHIFT = np.uint64(24)


@njit(cache=True, fastmath=False, error_model="numpy")
def draw(seed, element, j):
    """The j-th uniform (0, 1) value of ``element``."""
    return counter_uniform(np.uint64(seed), (np.uint64(element) << _SHIFT) + np.uint64(j))


@njit(cache=True, fastmath=False, error_model="numpy")
def pick_below(u, span):
    """An integer in [0, span) from a uniform u in (0, 1)."""
    k = int(u * span)
    return k if k < span else span - 1       # (u * span rounded up to span)


@njit(cache=True, fastmath=False, error_model="numpy")
def poisson_one(seed, element, lam):
    """A Poisson(lam) count: Knuth's product of uniforms below lam = 10, else Hormann's
    transformed rejection (PTRS, as numpy's generator); 0 for lam <= 0."""
    if not lam > 0.0:
        return 0.0
    j = 0
    if lam < 10.0:
        limit = math.exp(-lam)
        k = 0
        p = draw(seed, element, j)
        while p > limit:
            k += 1
            j += 1
            p *= draw(seed, element, j)
        return float(k)
    slam = math.sqrt(lam)
    loglam = math.log(lam)
    b = 0.931 + 2.53 * slam
    a = -0.059 + 0.02483 * b
    invalpha = 1.1239 + 1.1328 / (b - 3.4)
    vr = 0.9277 - 3.6224 / (b - 2.0)
    while True:
        u = draw(seed, element, j) - 0.5
        v = draw(seed, element, j + 1)
        j += 2
        us = 0.5 - abs(u)
        k = math.floor((2.0 * a / us + b) * u + lam + 0.43)
        if us >= 0.07 and v <= vr:
            return k
        if k < 0.0 or (us < 0.013 and v > us):
            continue
        if (math.log(v) + math.log(invalpha) - math.log(a / (us * us) + b)
                <= -lam + k * loglam - math.lgamma(k + 1.0)):
            return k


@njit(cache=True, fastmath=False, error_model="numpy")
def multinomial_row(seed, row, probs, samples, replacement, out):
    """``samples`` category indices of one row of (unnormalised) ``probs`` into ``out``.
    With replacement: each sample by the inverse of the cumulative sums. Without: the
    categories with the largest keys u**(1/p) (Efraimidis and Spirakis), which is drawing
    one at a time and removing it."""
    n = probs.shape[0]
    total = 0.0
    for c in range(n):
        total += probs[c]
    if replacement:
        for s in range(samples):
            target = draw(seed, row, s) * total
            acc = 0.0
            pick = n - 1
            while pick > 0 and probs[pick] == 0.0:   # never the last zero-weight ones
                pick -= 1
            for c in range(n):
                acc += probs[c]
                if target < acc and probs[c] > 0.0:
                    pick = c
                    break
            out[s] = pick
        return
    for s in range(samples):           # selection: the largest remaining key each time
        best = -1.0
        pick = -1
        for c in range(n):
            if probs[c] <= 0.0:
                continue
            taken = False
            for t in range(s):
                if out[t] == c:
                    taken = True
            if taken:
                continue
            key = math.log(draw(seed, row, c)) / probs[c]
            if pick < 0 or key > best:
                best = key
                pick = c
        out[s] = pick


@njit(cache=True, fastmath=False, error_model="numpy")
def gumbel_softmax_row(seed, row, z, temperature, hard, out):
    """softmax((z + g) / temperature) of one row, g = -log(-log(u)) Gumbel noise; with
    ``hard`` the one-hot vector of its largest entry."""
    n = z.shape[0]
    top = -np.inf
    for c in range(n):
        g = -math.log(-math.log(draw(seed, row, c)))
        out[c] = (z[c] + g) / temperature
        if out[c] > top:
            top = out[c]
    if hard:
        first = 0
        for c in range(n):
            if out[c] == top:
                first = c
                break
        for c in range(n):
            out[c] = 1.0 if c == first else 0.0
        return
    total = 0.0
    for c in range(n):
        out[c] = math.exp(out[c] - top)
        total += out[c]
    for c in range(n):
        out[c] = out[c] / total


@njit(cache=True, fastmath=False, error_model="numpy")
def randperm_into(seed, out):
    """0..n-1 shuffled in place (Fisher-Yates, swap i with a draw in [0, i])."""
    n = out.shape[0]
    for i in range(n):
        out[i] = i
    for i in range(n - 1, 0, -1):
        j = int(draw(seed, i, 0) * (i + 1))
        if j > i:                        # (a draw rounded up to 1.0)
            j = i
        tmp = out[i]
        out[i] = out[j]
        out[j] = tmp


# --- the CPU loops ---------------------------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def bernoulli(p, seed, out):
    for i in range(p.size):
        out[i] = 1.0 if draw(seed, i, 0) < p[i] else 0.0


@njit(cache=True, fastmath=False, error_model="numpy")
def poisson(lam, seed, out):
    for i in range(lam.size):
        out[i] = poisson_one(seed, i, lam[i])


@njit(cache=True, fastmath=False, error_model="numpy")
def randint(low, high, seed, out):
    span = high - low
    for i in range(out.size):
        out[i] = low + pick_below(draw(seed, i, 0), span)


@njit(cache=True, fastmath=False, error_model="numpy")
def rrelu_noise(x, lower, upper, seed, noise):
    """The slope of each element: drawn from U(lower, upper) where x < 0, 1 elsewhere."""
    for i in range(x.size):
        noise[i] = lower + (upper - lower) * draw(seed, i, 0) if x[i] < 0 else 1.0


@njit(cache=True, fastmath=False, error_model="numpy")
def multinomial(probs, samples, replacement, seed, out):
    for r in range(probs.shape[0]):
        multinomial_row(seed, r, probs[r], samples, replacement, out[r])


@njit(cache=True, fastmath=False, error_model="numpy")
def gumbel_softmax(rows, temperature, hard, seed, out):
    for r in range(rows.shape[0]):
        gumbel_softmax_row(seed, r, rows[r], temperature, hard, out[r])


# --- in a compiled block ---------------------------------------------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def _flat(x):
    return np.ascontiguousarray(x).reshape(x.size)


@njit(cache=True, fastmath=False, error_model="numpy")
def _within(flat, high):
    """Is every value in [0, high] (NaN is not)?"""
    for i in range(flat.size):
        if not (flat[i] >= 0.0 and flat[i] <= high):
            return False
    return True


@njit(cache=True, fastmath=False, error_model="numpy")
def bernoulli_drawn(x, seed):
    flat = _flat(x)
    if not _within(flat, 1.0):
        raise ValueError("bernoulli: a probability is outside [0, 1]")
    out = np.empty(x.shape, x.dtype)
    bernoulli(flat, np.uint64(chosen_seed(seed)), out.reshape(x.size))
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def poisson_drawn(x, seed):
    flat = _flat(x)
    if not _within(flat, np.inf):
        raise ValueError("poisson: a mean is negative or NaN")
    out = np.empty(x.shape, x.dtype)
    poisson(flat, np.uint64(chosen_seed(seed)), out.reshape(x.size))
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def multinomial_drawn(x, samples, replacement, seed):
    """Out [..., samples] of X's rows of weights (the last dim, C > 0)."""
    c = x.shape[-1]
    rows = _flat(x).reshape((x.size // c, c))
    if not _within(rows.reshape(rows.size), np.inf):
        raise ValueError("multinomial: a weight is negative or NaN")
    for r in range(rows.shape[0]):
        nonzero = 0
        for j in range(c):
            if rows[r, j] > 0:
                nonzero += 1
        if nonzero == 0:
            raise ValueError("multinomial: a row of weights is all zeros")
        if not replacement and nonzero < samples:
            raise ValueError("multinomial: a row has fewer positive weights than num_samples")
    out = np.empty((rows.shape[0], samples), np.int64)
    multinomial(rows, samples, replacement, np.uint64(chosen_seed(seed)), out)
    return out.reshape(x.shape[:-1] + (samples,))


@njit(cache=True, fastmath=False, error_model="numpy")
def randint_drawn(shape, n, low, high, seed, zero):
    """randint's Out of ``shape`` (of ``n`` elements) in the dtype of ``zero``."""
    out = np.full(n, zero)
    randint(np.int64(low), np.int64(high), np.uint64(chosen_seed(seed)), out)
    return out.reshape(shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def randperm_drawn(n, seed, zero):
    out = np.full(n, zero)
    randperm_into(np.uint64(chosen_seed(seed)), out)
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def rrelu_drawn(x, lower, upper, seed):
    """(Out, Noise): X times each element's slope."""
    flat = _flat(x)
    noise = np.empty(x.size, x.dtype)
    rrelu_noise(flat, lower, upper, np.uint64(chosen_seed(seed)), noise)
    out = np.empty(x.size, x.dtype)
    for i in range(x.size):
        out[i] = flat[i] * noise[i]
    return out.reshape(x.shape), noise.reshape(x.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def rrelu_grad_drawn(dout, noise):
    """dX = dOut (in Noise's dtype) * Noise."""
    if dout.shape != noise.shape:
        raise ValueError("rrelu_grad: Out@GRAD and Noise differ in shape")
    d, n = _flat(dout), _flat(noise)
    dx = np.empty(n.size, noise.dtype)
    for i in range(n.size):
        dx[i] = noise.dtype.type(d[i]) * n[i]
    return dx.reshape(noise.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def _rows_along(x, perm):
    """x with its axis ``perm[-1]`` moved last (``perm``), as C-contiguous rows [R, C]."""
    moved = np.ascontiguousarray(np.transpose(x, perm))
    c = moved.shape[-1]
    return moved.reshape((moved.size // c, c)), moved.shape


@njit(cache=True, fastmath=False, error_model="numpy")
def gumbel_softmax_drawn(x, perm, back, temperature, hard, seed):
    """gumbel_softmax's Out along the axis ``perm`` moves last (``back`` undoes it)."""
    rows, moved = _rows_along(x, perm)
    out = np.empty(rows.shape, rows.dtype)
    gumbel_softmax(rows, temperature, hard, np.uint64(chosen_seed(seed)), out)
    return np.ascontiguousarray(np.transpose(out.reshape(moved), back))


@njit(cache=True, fastmath=False, error_model="numpy")
def gumbel_softmax_grad_rows(out, dout, perm, back, factor):
    """dX = Out * (dOut - sum(dOut * Out)) * factor (1 / temperature, rounded to Out's
    dtype as numpy rounds a Python float) along the axis ``perm`` moves last."""
    o_rows, moved = _rows_along(out, perm)
    d_rows, _ = _rows_along(dout.astype(out.dtype), perm)
    dx = _softmax_grad_rows(o_rows, d_rows)
    scale = out.dtype.type(factor)
    for i in range(dx.shape[0]):
        for j in range(dx.shape[1]):
            dx[i, j] = dx[i, j] * scale
    return np.ascontiguousarray(np.transpose(dx.reshape(moved), back))
