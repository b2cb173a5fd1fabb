"""Cross-entropy kernels over rows: probabilities (n, classes), hard labels (n,); and, at
the end, the scalar math of huber_loss, smooth_l1_loss, label_smooth and kldiv_loss with
the loops a compiled block runs for them.

Each entry point picks a serial or a ``prange`` (over rows) kernel by size, both generated
around the same per-row code (twins.py), inlined (``inline="always"``: a call per row that
passes arrays costs an NRT incref/decref pair; softmax_xent_grad over 65,536 rows of 16
took 0.79 ms, now 0.17).
"""
import math

import numpy as np
from numba import njit
from numba.extending import register_jitable

from .check import first_outside
from .matrix_view import last_axis_rows
from .reduce import _row_softmax_serial, _row_sum_serial
from .threads import parallel_ok
from .twins import twins

# From where the prange kernels run (2 threads): the first measured power of 2 where they
# took <= ~0.8x the serial time, for 16 to 1000 classes.
MIN_PARALLEL_LOSS_ROWS = 8_192         # hard_label_loss: measured crossover ~4k rows
MIN_PARALLEL_SOFTMAX_GRAD = 131_072    # softmax_xent_grad: crossover 32k-128k elements
MIN_PARALLEL_XENT_ROWS = 1_024         # xent_grad (zeros + one value a row): crossover
#                                        < 1k rows at 64 classes, ~1k at 16


@njit(cache=True, fastmath=True, error_model="numpy", inline="always")
def _hard_label_loss_row(prob, label, ignore_index, out, i):
    if label[i] == ignore_index:
        out[i] = 0
    else:
        out[i] = -np.log(prob[i, label[i]])


_hard_label_loss_serial, _hard_label_loss_parallel = twins(
    _hard_label_loss_row, "_hard_label_loss", items="prob.shape[0]",
    allocate={"out": "np.empty(prob.shape[0], dtype=prob.dtype)"})


def hard_label_loss(prob, label, ignore_index):
    """-log(prob[i, label[i]]) per row; 0 where label == ignore_index."""
    if prob.shape[0] >= MIN_PARALLEL_LOSS_ROWS and parallel_ok():
        return _hard_label_loss_parallel(prob, label, ignore_index)
    return _hard_label_loss_serial(prob, label, ignore_index)


@njit(cache=True, fastmath=True, error_model="numpy", inline="always")
def _softmax_xent_grad_row(softmax, label, dloss, ignore_index, out, i):
    c = softmax.shape[1]
    if label[i] == ignore_index:
        for j in range(c):
            out[i, j] = 0
        return
    for j in range(c):
        out[i, j] = softmax[i, j] * dloss[i]
    out[i, label[i]] -= dloss[i]


_softmax_xent_grad_serial, _softmax_xent_grad_parallel = twins(
    _softmax_xent_grad_row, "_softmax_xent_grad", items="softmax.shape[0]",
    allocate={"out": "np.empty_like(softmax)"})


def softmax_xent_grad(softmax, label, dloss, ignore_index):
    """d loss / d logits = (softmax - onehot(label)) * dloss, rows with ignore_index 0."""
    if softmax.size >= MIN_PARALLEL_SOFTMAX_GRAD and parallel_ok():
        return _softmax_xent_grad_parallel(softmax, label, dloss, ignore_index)
    return _softmax_xent_grad_serial(softmax, label, dloss, ignore_index)


@njit(cache=True, fastmath=True, error_model="numpy", inline="always")
def _xent_grad_row(prob, label, dloss, ignore_index, out, i):
    if label[i] != ignore_index:
        out[i, label[i]] = -dloss[i] / prob[i, label[i]]


_xent_grad_serial, _xent_grad_parallel = twins(
    _xent_grad_row, "_xent_grad", items="prob.shape[0]", allocate={"out": "np.zeros_like(prob)"})


def xent_grad(prob, label, dloss, ignore_index):
    """d(-log prob[label]) / d prob: -dloss / prob at the label, 0 elsewhere."""
    if prob.shape[0] >= MIN_PARALLEL_XENT_ROWS and parallel_ok():
        return _xent_grad_parallel(prob, label, dloss, ignore_index)
    return _xent_grad_serial(prob, label, dloss, ignore_index)


# --- inside a compiled block (paddle_nb/compiler): class axis last, hard labels ----------
# The serial loops above, called from numba code (reduce.py says why serial), after the
# labels' range check that the places' hard_labels makes (raising here: the executor then
# runs the block in the interpreter, whose error names the op and the label).
@njit(cache=True, fastmath=False, error_model="numpy")
def rows_and_labels(scores, label, ignore_index):
    """``scores`` as (rows, classes) and ``label``'s class indices, one per row, each
    checked to be in [0, classes) or ignore_index."""
    rows = last_axis_rows(scores)
    flat = np.ascontiguousarray(label).reshape(label.size)
    if flat.size != rows.shape[0]:
        raise ValueError("Label does not hold one class index per row")
    if first_outside(flat, 0, rows.shape[1], True, ignore_index) >= 0:
        raise ValueError("a class index of Label is out of range")
    return rows, flat


@njit(cache=True, fastmath=False, error_model="numpy")
def softmax_xent(logits, label, ignore_index):
    """softmax_with_cross_entropy: (Softmax, Loss) of logits over the last axis."""
    rows, labels = rows_and_labels(logits, label, ignore_index)
    prob = _row_softmax_serial(rows)
    loss = _hard_label_loss_serial(prob, labels, ignore_index)
    return prob.reshape(logits.shape), loss.reshape(logits.shape[:-1] + (1,))


@njit(cache=True, fastmath=False, error_model="numpy")
def softmax_xent_grad_of(softmax, label, dloss, ignore_index):
    """softmax_with_cross_entropy's dLogits, from Softmax and dLoss (of one dtype)."""
    prob, labels = rows_and_labels(softmax, label, ignore_index)
    d = np.ascontiguousarray(dloss).reshape(prob.shape[0])
    return _softmax_xent_grad_serial(prob, labels, d, ignore_index).reshape(softmax.shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def xent(x, label, ignore_index):
    """cross_entropy's Y: -log of each row's probability at its label."""
    prob, labels = rows_and_labels(x, label, ignore_index)
    return _hard_label_loss_serial(prob, labels, ignore_index).reshape(x.shape[:-1] + (1,))


@njit(cache=True, fastmath=False, error_model="numpy")
def xent_grad_of(x, label, dy, ignore_index):
    """cross_entropy's dX, from X and dY (of one dtype)."""
    prob, labels = rows_and_labels(x, label, ignore_index)
    d = np.ascontiguousarray(dy).reshape(prob.shape[0])
    return _xent_grad_serial(prob, labels, d, ignore_index).reshape(x.shape)


# --- losses of a difference, smoothed labels, divergences ---------------------------------
# (ops/pointwise_losses.py, ops/log_prob_losses.py) The scalar math is written once here,
# as register_jitable functions: the ops' @pointwise kernels (both places) call them, and
# so do the loops below, which a compiled block calls where an op writes two outputs
# (huber_loss: Residual and Out) or sums (smooth_l1_loss's rows) or reads a size
# (label_smooth: epsilon / classes; kldiv_loss: its sum's divisor). Both sides are
# compiled without fastmath (the @pointwise kernels say fastmath=False): with "contract",
# "arcp" or "afn" LLVM decides per loop whether to fuse a product into an FMA, divide by a
# reciprocal or approximate a log, and a vectorised ufunc loop and these serial loops
# decided differently (kldiv's gradient: one ulp apart).
@register_jitable
def huber_value(r, delta):
    """huber of a residual r: 0.5 r^2 where |r| <= delta, else delta (|r| - delta / 2)."""
    a = abs(r)
    return 0.5 * r * r if a <= delta else delta * (a - 0.5 * delta)


@register_jitable
def huber_slope(r, dout, delta):
    """d Out / d Y (Residual = Y - X) times dOut; d Out / d X is its negative."""
    if abs(r) <= delta:
        return r * dout
    return delta * dout if r > 0 else -delta * dout


@register_jitable
def smoothed(x, keep, add):
    """A label softened: x * (1 - epsilon) + epsilon * (the prior's probability)."""
    return x * keep + add


@njit(cache=True, fastmath=False, error_model="numpy")
def huber_residual_and_loss(x, y, delta):
    """huber_loss's (Residual = Y - X, Out), each of x's shape and dtype."""
    if x.shape != y.shape:
        raise ValueError("huber_loss: Y has another shape than X")
    xf, yf = np.ascontiguousarray(x).reshape(x.size), np.ascontiguousarray(y).reshape(y.size)
    residual, out = np.empty(x.shape, x.dtype), np.empty(x.shape, x.dtype)
    rf, of = residual.reshape(x.size), out.reshape(x.size)
    for i in range(xf.size):
        rf[i] = yf[i] - xf[i]
        of[i] = huber_value(rf[i], delta)
    return residual, out


@njit(cache=True, fastmath=False, error_model="numpy")
def uniformly_smoothed(x, keep, epsilon):
    """label_smooth without PriorDist: x * keep + epsilon / classes (the last dim), that
    share rounded once to x's dtype, as the op's kernel rounds it."""
    add = np.empty(1, x.dtype)
    add[0] = epsilon / x.shape[x.ndim - 1]
    xf = np.ascontiguousarray(x).reshape(x.size)
    out = np.empty(x.shape, x.dtype)
    of = out.reshape(x.size)
    for i in range(xf.size):
        of[i] = smoothed(xf[i], keep, add[0])
    return out


@register_jitable
def kldiv_value(target, x):
    """Target * (log(Target) - X); 0 where Target <= 0 (0 log 0 = 0; a NaN stays NaN)."""
    if target <= 0:
        return 0.0
    return target * (math.log(target) - x)


@register_jitable
def kldiv_log_target_value(target, x):
    """The same with Target a log-probability: exp(Target) * (Target - X)."""
    return math.exp(target) * (target - x)


@njit(cache=True, fastmath=False, error_model="numpy")
def _kldiv_elements(target, x, log_target):
    tf, xf = np.ascontiguousarray(target).reshape(x.size), np.ascontiguousarray(x).reshape(x.size)
    loss = np.empty(x.size, x.dtype)
    for i in range(x.size):
        loss[i] = kldiv_log_target_value(tf[i], xf[i]) if log_target else \
            kldiv_value(tf[i], xf[i])
    return loss


@njit(cache=True, fastmath=False, error_model="numpy")
def kldiv_reduced(target, x, log_target, reduction):
    """kldiv_loss reduced to a 0-d Loss (x of rank >= 1): the elements' sum (the serial row
    sum the op's kernel runs), divided by the count of elements (mean; NaN for none) or by
    the first dim (batchmean, 1 when it is 0), the factor 1 / divisor rounded to x's dtype
    as numpy rounds an array times a Python float."""
    if target.shape != x.shape:
        raise ValueError("kldiv_loss: Target has another shape than X")
    loss = _kldiv_elements(target, x, log_target)
    total = _row_sum_serial(loss.reshape((1, x.size)))
    divisor = 1.0
    if reduction == "mean":
        divisor = float(x.size) if x.size else np.nan
    elif reduction == "batchmean":
        divisor = float(x.shape[0]) if x.shape[0] else 1.0
    if divisor != 1.0:
        total = total * total.dtype.type(1 / divisor)
    return total.reshape(())


@register_jitable
def kldiv_slope(target, dloss, divisor):
    """kldiv's dX: -Target * dLoss / divisor (0 where Target <= 0)."""
    if target <= 0:
        return 0.0
    return -target * dloss / divisor


@register_jitable
def kldiv_log_target_slope(target, dloss, divisor):
    return -math.exp(target) * dloss / divisor


@njit(cache=True, fastmath=False, error_model="numpy")
def _kldiv_slopes(target, dloss, divisor, log_target):
    tf = np.ascontiguousarray(target).reshape(target.size)
    dx = np.empty(target.shape, target.dtype)
    df = dx.reshape(target.size)
    for i in range(target.size):
        df[i] = kldiv_log_target_slope(tf[i], dloss, divisor) if log_target else \
            kldiv_slope(tf[i], dloss, divisor)
    return dx


@njit(cache=True, fastmath=False, error_model="numpy")
def kldiv_reduced_grad(target, x, dloss, log_target, reduction):
    """dX of a reduced kldiv_loss (dLoss one value of x's dtype): the slope with the
    forward's divisor, rounded to x's dtype as the op's kernel passes it."""
    if target.shape != x.shape or dloss.size != 1:
        raise ValueError("kldiv_loss_grad: Target or Loss@GRAD has another shape")
    divisor = 1.0
    if reduction == "mean":
        divisor = float(x.size) if x.size else np.nan
    elif reduction == "batchmean":
        divisor = float(x.shape[0]) if x.shape[0] else 1.0
    return _kldiv_slopes(target, dloss.reshape(1)[0], x.dtype.type(divisor), log_target)


@register_jitable
def smooth_l1_value(d, sigma2):
    """Fluid's smooth L1 of a difference d: 0.5 (sigma d)^2 inside 1 / sigma^2, else
    |d| - 0.5 / sigma^2."""
    a = abs(d)
    return 0.5 * d * d * sigma2 if a < 1.0 / sigma2 else a - 0.5 / sigma2


@register_jitable
def smooth_l1_slope(d, dout, sigma2):
    """Its derivative times dOut (0 at d = 0 outside the quadratic part)."""
    if abs(d) < 1.0 / sigma2:
        return sigma2 * d * dout
    return dout if d > 0 else (-dout if d < 0 else dout * 0)


# smooth_l1_loss's loops: X, Y (and the weights: both arrays or both None, a literal the
# generated code passes) of one shape [rows, ...], seen flat, each step rounded to X's
# dtype as the op's kernel rounds it (the difference, the weighted difference, the loss,
# the weighted loss), then each row summed by the kernel's serial row sum.
@njit(cache=True, fastmath=False, error_model="numpy")
def _flat(a):
    return np.ascontiguousarray(a).reshape(a.size)


@njit(cache=True, fastmath=False, error_model="numpy")
def smooth_l1_rows(x, y, inside, outside, sigma2):
    """(Diff = inside (X - Y), Out = per row the sum of outside * smooth_l1(Diff))."""
    if x.shape != y.shape:
        raise ValueError("smooth_l1_loss: Y has another shape than X")
    df = _flat(x) - _flat(y)
    if inside is not None:
        df = df * _flat(inside)
    errors = np.empty(x.size, x.dtype)
    for i in range(x.size):
        errors[i] = smooth_l1_value(df[i], sigma2)
    if outside is not None:
        errors = errors * _flat(outside)
    rows = x.shape[0]
    per_row = errors.reshape((rows, x.size // rows if rows else 0))
    return df.reshape(x.shape), _row_sum_serial(per_row).reshape((rows, 1))


@njit(cache=True, fastmath=False, error_model="numpy")
def smooth_l1_rows_grad(diff, dout, inside, outside, sigma2):
    """(dX, dY = -dX) from Diff and dOut (one value a row)."""
    rows = diff.shape[0]
    if dout.size != rows:
        raise ValueError("smooth_l1_loss_grad: Out@GRAD does not hold one value a row")
    d, df = _flat(dout), _flat(diff)
    per_row = diff.size // rows if rows else 0
    dx = np.empty(diff.size, diff.dtype)
    for i in range(diff.size):
        dx[i] = smooth_l1_slope(df[i], d[i // per_row], sigma2)
    if inside is not None:
        dx = dx * _flat(inside)
    if outside is not None:
        dx = dx * _flat(outside)
    return dx.reshape(diff.shape), -dx.reshape(diff.shape)
