"""The CPU kernels (kernels/cpu/) against numpy: every serial and prange variant, float32
and float64, odd sizes; the entry points on both sides of each size threshold; the fast
float32 exp / tanh / sigmoid over the whole float32 range, NaN and inf included.

Sizes stay small (a variant computes the same at 7 elements as at 7 million) and each
compiled kernel is reused across cases, so numba's compile time stays one-off.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd

from paddle_nb.ops import activation as A
from paddle_nb.ops import adam as ADAM
from paddle_nb.ops import optimizer as O
from paddle_nb.ops import elementwise as E
from paddle_nb.kernels.cpu import loss as L
from paddle_nb.kernels.cpu import layer_norm as LN
from paddle_nb.kernels.cpu import matmul as M
from paddle_nb.kernels.cpu import reduce as R
from paddle_nb.kernels.cpu import threads

FLOATS = [np.float32, np.float64]
# relative error allowed against a float64 reference: fast float32 math, libm float64
RTOL = {np.float32: 1e-6, np.float64: 1e-13}
VARIANTS = ["serial", "parallel"]


def elementwise(module, name, kind):
    """``f(*inputs, out)``: the serial variant of an elementwise kernel is its ufunc (a
    vectorised loop), the parallel one its prange twin."""
    entry = getattr(module, name)
    entry = getattr(entry, "cpu", entry)          # a @pointwise kernel's CPU side
    if kind == "parallel":
        return entry.parallel
    return lambda *args: entry.ufunc(*args[:-1], out=args[-1])


@pytest.fixture(autouse=True)
def no_recent_blas():
    """Size alone picks the variant (threads.py holds prange back just after BLAS)."""
    threads._last_blas = float("-inf")
    yield
    threads._last_blas = float("-inf")


def rng():
    return np.random.default_rng(7)


def close(got, ref, dtype, rtol=None, atol=0.0):
    rtol = RTOL[dtype] if rtol is None else rtol
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


def eps(dtype):
    """An absolute tolerance for results that may cancel to ~0 (a few roundings of O(1))."""
    return 4 * float(np.finfo(dtype).eps)


def sigmoid64(x):
    x = np.asarray(x, np.float64)
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


UNARY = {   # name: (numpy reference in float64, input maker)
    "relu": (lambda x: np.maximum(x, 0), lambda r, n, dt: r.standard_normal(n).astype(dt)),
    "sigmoid": (sigmoid64, lambda r, n, dt: (r.standard_normal(n) * 8).astype(dt)),
    "tanh": (np.tanh, lambda r, n, dt: (r.standard_normal(n) * 4).astype(dt)),
    "exp": (np.exp, lambda r, n, dt: (r.standard_normal(n) * 20).astype(dt)),
    "log": (np.log, lambda r, n, dt: (r.random(n) * 100 + 1e-3).astype(dt)),
    "square": (np.square, lambda r, n, dt: r.standard_normal(n).astype(dt)),
}
GRADS = {   # name: numpy reference of (forward value or input, dout)
    "relu_grad": lambda o, d: d * (o > 0),          # Paddle's formula: a NaN d stays NaN
    "sigmoid_grad": lambda o, d: d * o * (1 - o),
    "tanh_grad": lambda o, d: d * (1 - o * o),
    "exp_grad": lambda o, d: d * o,
    "log_grad": lambda x, d: d / x,
    "square_grad": lambda x, d: d * 2 * x,
}
BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}


# --- elementwise: each variant, the ufunc, and the entry point ------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", UNARY)
def test_unary_variants_match_numpy(name, dtype):
    ref, make = UNARY[name]
    x = make(rng(), 1001, dtype)
    want = ref(x.astype(np.float64))
    outs = []
    for kind in VARIANTS:
        outs.append(np.empty_like(x))
        elementwise(A, name, kind)(x, outs[-1])
        close(outs[-1], want, dtype)
    strided = np.empty(2 * x.size, dtype)[::2]        # not contiguous: the ufunc runs
    strided[:] = x
    got = getattr(A, name).cpu(strided, out=np.empty_like(x))
    close(got, want, dtype)
    assert got.dtype == dtype
    for other in outs:                                # one scalar function: same bits
        np.testing.assert_array_equal(other, got)


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", GRADS)
def test_gradient_variants_match_numpy(name, dtype):
    r = rng()
    o = (r.random(999) * 2 + 0.1).astype(dtype)
    d = r.standard_normal(999).astype(dtype)
    want = GRADS[name](o.astype(np.float64), d.astype(np.float64))
    for kind in VARIANTS:
        out = np.empty_like(o)
        elementwise(A, name, kind)(o, d, out)
        close(out, want, dtype, atol=eps(dtype))
    got = getattr(A, name).cpu(o[:, None], d[None, :5], out=np.empty((999, 5), dtype))
    close(got, GRADS[name](o[:, None].astype(np.float64), d[None, :5]), dtype,
          atol=eps(dtype))


# integer division is trunc_div, a ufunc with no prange twin: not a variant to compare
@pytest.mark.parametrize("name,dtype", [(n, t) for n in BINARY
                                        for t in FLOATS + [np.int32, np.int64]
                                        if not (n == "div" and t in (np.int32, np.int64))])
def test_binary_variants_match_numpy_exactly(name, dtype):
    r = rng()
    if np.issubdtype(dtype, np.integer):
        info = np.iinfo(dtype)                        # wrap-around as numpy's int loops
        x = r.integers(info.min // 2, info.max // 2, 1003).astype(dtype)
        y = r.integers(info.min // 2, info.max // 2, 1003).astype(dtype)
    else:
        x, y = r.standard_normal(1003).astype(dtype), r.standard_normal(1003).astype(dtype)
    with np.errstate(over="ignore"):
        want = BINARY[name](x, y)
    for kind in VARIANTS:
        out = np.empty_like(x)
        elementwise(E, name, kind)(x, y, out)
        np.testing.assert_array_equal(out, want)
    np.testing.assert_array_equal(getattr(E, name).cpu(x, y, out=np.empty_like(x)), want)
    col = getattr(E, name).cpu(x[:, None], y[None, :3], out=np.empty((1003, 3), dtype))
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(col, BINARY[name](x[:, None], y[None, :3]))


def _spy(monkeypatch, obj, attr):
    calls = []
    real = getattr(obj, attr)

    def spy(*args):
        calls.append(args[0].size if hasattr(args[0], "size") else None)
        return real(*args)
    monkeypatch.setattr(obj, attr, spy)
    return calls


@pytest.mark.parametrize("kernel, threshold", [(A.tanh.cpu, A.MIN_PARALLEL_MATH),
                                               (A.relu.cpu, A.MIN_PARALLEL_CHEAP),
                                               (E.add.cpu, E.MIN_PARALLEL)])
def test_entry_points_switch_variant_at_their_threshold(monkeypatch, kernel, threshold):
    parallel = _spy(monkeypatch, kernel, "parallel")
    for n in (threshold - 1, threshold, threshold + 3):
        x = np.linspace(-2, 2, n, dtype=np.float32)
        args = (x,) * kernel.ufunc.nin
        got = kernel(*args, out=np.empty_like(x))
        np.testing.assert_array_equal(got, kernel.ufunc(*args))
    assert parallel == [threshold, threshold + 3]
    x = np.ones(threshold * 2, np.float32)
    strided = np.ones(threshold * 4, np.float32)[::2]
    kernel(*(strided,) * kernel.ufunc.nin, out=np.empty_like(x))     # not contiguous
    threads.note_blas()                               # just after BLAS: serial whatever the size
    kernel(*(x,) * kernel.ufunc.nin, out=np.empty_like(x))
    assert len(parallel) == 2


def test_the_twins_take_only_what_the_ufunc_would_compute_the_same():
    x = np.arange(10, dtype=np.float32)
    # in place (out is an input) is fine for an elementwise loop
    out = x.copy()
    assert E.add.cpu(out, x, out=out) is out
    np.testing.assert_array_equal(out, 2 * x)
    # overlapping views: numpy's buffering must decide, not a flat loop
    y = np.arange(10, dtype=np.float32)
    E.add.cpu(y[:-1], y[:-1], out=y[1:])
    want = np.arange(10, dtype=np.float32)
    np.add(want[:-1], want[:-1], out=want[1:])
    np.testing.assert_array_equal(y, want)
    # int32 inputs run the int32 loop (never float64), bool inputs no loop at all
    i = np.array([2**31 - 1, 5], np.int32)
    assert E.add.cpu(i, i, out=np.empty_like(i)).tolist() == [-2, 10]
    with pytest.raises(TypeError):
        E.add.cpu(np.ones(3, bool), np.ones(3, bool), out=np.empty(3, bool))
    # scalars, 0-d and empty arrays
    assert A.tanh.cpu(np.float32(0.5)) == pytest.approx(np.tanh(0.5), rel=1e-6)
    z = np.array(1.5, np.float32)
    assert A.square.cpu(z, out=np.empty((), np.float32)) == np.float32(2.25)
    assert E.mul.cpu(np.ones(0), np.ones(0), out=np.empty(0)).shape == (0,)


# --- fast float32 exp / tanh / sigmoid -----------------------------------------------------
def _float32_sample():
    """Every 4099th float32 bit pattern (about 1e6 values over the whole range, both
    signs), without NaN and inf."""
    bits = np.arange(0, 2**32, 4099, dtype=np.uint64).astype(np.uint32)
    x = bits.view(np.float32)
    return x[np.isfinite(x)]


def _ulps(a, b):
    return np.abs(a.view(np.int32).astype(np.int64) - b.view(np.int32).astype(np.int64))


@pytest.mark.parametrize("name, ref, max_ulp", [
    ("exp", np.exp, 1), ("tanh", np.tanh, 6), ("sigmoid", sigmoid64, 4)])
def test_fast_float32_math_is_within_a_few_ulp_everywhere(name, ref, max_ulp):
    x = _float32_sample()
    with np.errstate(over="ignore"):
        want64 = ref(x.astype(np.float64))
        want = want64.astype(np.float32)            # the correctly rounded float32 result
    for kind in VARIANTS:
        got = np.empty_like(x)
        with np.errstate(over="ignore"):              # exp overflows as numpy's, warning
            elementwise(A, name, kind)(x, got)
        assert _ulps(got, want).max() <= max_ulp
        normal = np.isfinite(want) & (np.abs(want) >= np.finfo(np.float32).tiny)
        assert (np.abs(got[normal] - want64[normal]) / np.abs(want64[normal])).max() < 1e-6
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))   # exp overflows alike


SPECIAL = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-40, -1e-40, 1e-30, -3e-39,
                    88.72283935546875, 88.72284, 89.5, -87.33654, -104.0, -150.0,
                    9.0, 9.1, 9.2, 20.0, -20.0, 40.0, -40.0, 1e30, -1e30], np.float32)


@pytest.mark.parametrize("name, numpy_fn", [
    ("exp", np.exp), ("tanh", np.tanh),
    ("sigmoid", lambda x: (1 / (1 + np.exp(-x.astype(np.float64)))).astype(x.dtype))])
@pytest.mark.parametrize("dtype", FLOATS)
def test_nan_inf_overflow_and_signed_zero_as_numpy(name, numpy_fn, dtype):
    x = SPECIAL.astype(dtype)
    with np.errstate(all="ignore"):
        want = numpy_fn(x)
    for kind in VARIANTS:
        got = np.empty_like(x)
        with np.errstate(all="ignore"):   # the ufunc warns of overflow, and of NaN inputs
            elementwise(A, name, kind)(x, got)      # (vector compares flag them "invalid")
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
        np.testing.assert_array_equal(np.isinf(got), np.isinf(want))
        num = ~np.isnan(want)                           # (a NaN's sign means nothing)
        np.testing.assert_array_equal(np.signbit(got[num]), np.signbit(want[num]))
        exact = ~np.isfinite(want) | (want == 0) | (np.abs(want) == 1)
        if name == "tanh":
            exact &= np.abs(x) > 9        # tanh(9.0) in float32 is 0.99999994, not 1
        np.testing.assert_array_equal(got[exact], want[exact])   # inf, 0, +-1 exactly
        np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-45)
    with np.errstate(invalid="ignore"):
        assert (A.tanh.cpu(x, out=np.empty_like(x))[1:3] == [1, -1]).all()
        got = A.sigmoid.cpu(x, out=np.empty_like(x))
    assert got[1] == 1 and got[2] == 0


@pytest.mark.parametrize("dtype", FLOATS)
def test_relu_and_its_gradient_let_nan_through_as_numpy(dtype):
    """relu(NaN) is NaN (numpy's maximum, Paddle, PyTorch), not 0: a NaN must not vanish
    in a model. The gradient is Paddle's dout * (out > 0): a NaN or inf dout gives NaN
    where the unit is off, a NaN out gives 0 * dout. Every variant, and the entry point on
    both sides of its parallel threshold."""
    x = SPECIAL.astype(dtype)
    d = np.roll(x, 3)                         # NaN and inf in dout at other positions
    with np.errstate(invalid="ignore"):
        want, want_grad = np.maximum(x, 0), d * (x > 0)
    assert np.isnan(want[0]) and np.isnan(want_grad).sum() > 1
    for kind in VARIANTS:
        got, grad = np.empty_like(x), np.empty_like(x)
        with np.errstate(invalid="ignore"):   # vector compares flag a NaN "invalid"
            elementwise(A, "relu", kind)(x, got)
            elementwise(A, "relu_grad", kind)(x, d, grad)
        np.testing.assert_array_equal(got, want)          # NaN where numpy has NaN
        np.testing.assert_array_equal(grad, want_grad)
    for n in (x.size, A.MIN_PARALLEL_CHEAP + x.size, A.MIN_PARALLEL_GRAD + x.size):
        big, dbig = np.resize(x, n), np.resize(d, n)
        with np.errstate(invalid="ignore"):
            np.testing.assert_array_equal(A.relu.cpu(big, out=np.empty_like(big)),
                                          np.maximum(big, 0))
            np.testing.assert_array_equal(A.relu_grad.cpu(big, dbig, out=np.empty_like(big)),
                                          dbig * (big > 0))


# --- reductions and softmax ----------------------------------------------------------------
SHAPES = [(1, 1), (3, 7), (5, 1), (1, 2049), (17, 33)]


@pytest.mark.parametrize("dtype", FLOATS)
def test_row_sum_variants(dtype):
    for shape in SHAPES:
        a = rng().standard_normal(shape).astype(dtype)
        for f in (R._row_sum_serial, R._row_sum_parallel):
            got = f(a)
            assert got.dtype == dtype
            close(got, a.astype(np.float64).sum(axis=1), dtype, rtol=1e-5 if
                  dtype == np.float32 else 1e-12)


def _softmax64(a):
    a = a.astype(np.float64)
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_row_softmax_variants(dtype):
    for shape in SHAPES + [(2, 3001)]:               # 3001 columns: several sum blocks
        a = (rng().standard_normal(shape) * 6).astype(dtype)
        want = _softmax64(a)
        for f in (R._row_softmax_serial, R._row_softmax_parallel):
            got = f(a)
            assert got.dtype == dtype
            close(got, want, dtype, rtol=5e-6 if dtype == np.float32 else 1e-12)


@pytest.mark.parametrize("f", [R._row_softmax_serial, R._row_softmax_parallel])
def test_row_softmax_masks_and_nan(f):
    a = np.array([[1, -np.inf, 2, -np.inf],            # masked entries give exactly 0
                  [np.nan, 0, 1, 2],                   # a NaN row is NaN
                  [-np.inf] * 4,                       # all masked: NaN, as numpy
                  [1e30, 1e30, -1e30, 0]], np.float32)  # huge values stay finite
    got = f(a)
    with np.errstate(invalid="ignore"):
        want = _softmax64(a)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_allclose(got[ok], want[ok], rtol=1e-6)
    assert got[0, 1] == 0 and got[0, 3] == 0 and got[3, 2] == 0


def test_reduce_entry_points_switch_at_their_thresholds(monkeypatch):
    for entry, name, threshold in ((R.row_sum, "_row_sum", R.MIN_PARALLEL_SUM),
                                   (R.row_softmax, "_row_softmax", R.MIN_PARALLEL_SOFTMAX)):
        par = _spy(monkeypatch, R, f"{name}_parallel")
        ser = _spy(monkeypatch, R, f"{name}_serial")
        for rows in (threshold // 64 - 1, threshold // 64):
            a = rng().standard_normal((rows, 64)).astype(np.float32)
            entry(a)
        entry(np.ones((1, threshold * 2), np.float32))   # one row: nothing to split
        assert len(ser) == 2 and len(par) == 1, name


# --- layer_norm (kernels/cpu/layer_norm.py) -------------------------------------------------
def _layer_norm64(x, dy, scale, bias, epsilon):
    """(Y, mean, var, dX, dScale, dBias) in float64: the row formulas, by numpy."""
    w, d = x.astype(np.float64), dy.astype(np.float64)
    mean, var = w.mean(axis=1), w.var(axis=1)
    r = 1 / np.sqrt(var + epsilon)
    x_hat = (w - mean[:, None]) * r[:, None]
    h = d * scale
    dx = r[:, None] * (h - h.mean(axis=1, keepdims=True)
                       - x_hat * (h * x_hat).mean(axis=1, keepdims=True))
    return x_hat * scale + bias, mean, var, dx, (d * x_hat).sum(axis=0), d.sum(axis=0)


@pytest.mark.parametrize("dtype", FLOATS)
def test_layer_norm_variants(dtype):
    """Both variants of the forward and of the gradient (2 and 5 chunks of partial sums:
    more chunks than rows too) against numpy, rows of 1 to 2049 values."""
    tol = 2e-5 if dtype == np.float32 else 1e-11
    for shape in [(1, 1), (3, 7), (5, 1), (1, 2049), (17, 33)]:
        r = rng()
        x = (r.standard_normal(shape) * 3 + 1).astype(dtype)
        dy = r.standard_normal(shape).astype(dtype)
        scale, bias = r.standard_normal(shape[1]), r.standard_normal(shape[1])
        want = _layer_norm64(x, dy, scale, bias, 1e-5)
        for forward in (LN._forward_serial, LN._forward_parallel):
            y = np.empty_like(x)
            mean, var = np.empty(shape[0], dtype), np.empty(shape[0], dtype)
            forward(x, scale, bias, 1e-5, y, mean, var)
            for got, ref in zip((y, mean, var), want[:3]):
                close(got, ref, dtype, rtol=tol, atol=tol)
        for grad, chunks in ((LN._grad_serial, 1), (LN._grad_parallel, 2),
                             (LN._grad_parallel, 5)):
            dx = np.empty_like(x)
            ds, db = np.zeros((chunks, shape[1])), np.zeros((chunks, shape[1]))
            grad(x, dy, want[1], want[2], scale, 1e-5, dx, ds, db)
            for got, ref in zip((dx, ds.sum(axis=0), db.sum(axis=0)), want[3:]):
                close(got, ref, dtype, rtol=tol, atol=tol)


def test_layer_norm_entry_points_switch_at_their_threshold(monkeypatch):
    n = LN.MIN_PARALLEL_LAYER_NORM
    calls = {name: _spy(monkeypatch, LN, name) for name in
             ("_forward_serial", "_forward_parallel", "_grad_serial", "_grad_parallel")}
    for rows, cols in ((n // 64 - 1, 64), (n // 64, 64), (1, n * 2)):   # one row: no split
        x = rng().standard_normal((rows, cols)).astype(np.float32)
        mean, var = np.empty(rows, np.float32), np.empty(rows, np.float32)
        LN.layer_norm(x, np.ones(cols), np.zeros(cols), 1e-5, np.empty_like(x), mean, var)
        _, ds, db = LN.layer_norm_grad(x, x, mean, var, np.ones(cols), 1e-5, np.empty_like(x))
        want = _layer_norm64(x, x, 1.0, 0.0, 1e-5)
        close(ds, want[4], np.float32, rtol=1e-4, atol=1e-3)
        close(db, want[5], np.float32, rtol=1e-5, atol=1e-3)
    assert [len(calls[k]) for k in ("_forward_serial", "_forward_parallel",
                                    "_grad_serial", "_grad_parallel")] == [2, 1, 2, 1]

# --- losses --------------------------------------------------------------------------------
def _loss_case(dtype, n=37, c=11):
    r = rng()
    prob = _softmax64(r.standard_normal((n, c))).astype(dtype)
    label = r.integers(0, c, n).astype(np.int64)
    label[::5] = -100                                  # ignore_index rows
    dloss = r.random(n).astype(dtype)
    return prob, label, dloss


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", VARIANTS)
def test_loss_kernels(dtype, kind):
    prob, label, dloss = _loss_case(dtype)
    keep = label != -100
    rows = np.arange(len(label))
    loss = getattr(L, f"_hard_label_loss_{kind}")(prob, label, -100)
    want = np.where(keep, -np.log(prob[rows, np.where(keep, label, 0)].astype(np.float64)), 0)
    close(loss, want, dtype)
    grad = getattr(L, f"_softmax_xent_grad_{kind}")(prob, label, dloss, -100)
    want = prob.astype(np.float64) * dloss[:, None]
    want[rows[keep], label[keep]] -= dloss[keep]
    want[~keep] = 0
    close(grad, want, dtype, atol=eps(dtype))
    grad = getattr(L, f"_xent_grad_{kind}")(prob, label, dloss, -100)
    want = np.zeros(prob.shape)
    want[rows[keep], label[keep]] = -dloss[keep] / prob[rows[keep], label[keep]]
    close(grad, want, dtype)
    assert loss.dtype == grad.dtype == dtype


def test_loss_entry_points_switch_at_their_thresholds(monkeypatch):
    calls = {name: (_spy(monkeypatch, L, f"_{name}_serial"),
                    _spy(monkeypatch, L, f"_{name}_parallel"))
             for name in ("hard_label_loss", "softmax_xent_grad", "xent_grad")}
    for n in (L.MIN_PARALLEL_LOSS_ROWS - 1, L.MIN_PARALLEL_LOSS_ROWS):
        prob, label, dloss = _loss_case(np.float32, n, 2)
        L.hard_label_loss(prob, label, -100)
    for n in (L.MIN_PARALLEL_SOFTMAX_GRAD // 4 - 1, L.MIN_PARALLEL_SOFTMAX_GRAD // 4):
        prob, label, dloss = _loss_case(np.float32, n, 4)
        L.softmax_xent_grad(prob, label, dloss, -100)
    for n in (L.MIN_PARALLEL_XENT_ROWS - 1, L.MIN_PARALLEL_XENT_ROWS):
        prob, label, dloss = _loss_case(np.float32, n, 3)
        L.xent_grad(prob, label, dloss, -100)
    for name, (ser, par) in calls.items():
        assert len(ser) == 1 and len(par) == 1, name


# --- matmul --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_matmul_kernels(dtype):
    r = rng()
    a, b = r.standard_normal((7, 5)).astype(dtype), r.standard_normal((5, 3)).astype(dtype)
    close(M.matmul2d(a, b), a.astype(np.float64) @ b, dtype, rtol=1e-5)
    f_a, f_b = a.T.copy().T, b.T.copy().T              # F-contiguous, as transposes are
    close(M.matmul2d(f_a, b), a.astype(np.float64) @ b, dtype, rtol=1e-5)
    close(M.matmul2d(a, f_b), a.astype(np.float64) @ b, dtype, rtol=1e-5)
    x, y = r.standard_normal((9, 3, 4)).astype(dtype), r.standard_normal((9, 4, 5)).astype(dtype)
    for f in (M._batched_matmul_serial, M._batched_matmul_parallel, M.batched_matmul):
        got = f(x, y)
        assert got.dtype == dtype
        close(got, np.matmul(x.astype(np.float64), y), dtype, rtol=1e-5)


def test_batched_matmul_runs_prange_only_over_many_small_products(monkeypatch):
    par = _spy(monkeypatch, M, "_batched_matmul_parallel")
    ser = _spy(monkeypatch, M, "_batched_matmul_serial")
    batch = M.MIN_PARALLEL_WORK // 16 ** 3
    small = np.ones((batch, 16, 16), np.float32)
    M.batched_matmul(small, small)
    M.batched_matmul(small[:-1], small[:-1])                  # too little work
    big = np.ones((2, 128, 128), np.float32)
    threads._last_blas = float("-inf")
    got = M.batched_matmul(big, big)          # each BLAS call threads: numpy's BLAS
    assert len(par) == 1 and len(ser) == 1
    assert not threads.parallel_ok()
    np.testing.assert_array_equal(got, np.full((2, 128, 128), 128, np.float32))


def test_a_large_product_runs_on_numpys_blas_pool_a_small_one_in_numba(monkeypatch):
    """numba's np.dot calls scipy's OpenBLAS, numpy numpy's: a product OpenBLAS threads
    goes through numpy so that the process wakes one BLAS pool, not two (module
    docstring of kernels/cpu/matmul.py)."""
    into = _spy(monkeypatch, M, "_matmul2d_into")
    small, out = np.ones((16, 64), np.float32), np.empty((16, 64), np.float32)
    M.matmul2d(small, np.ones((64, 64), np.float32), out)
    a, b = np.ones((64, 784), np.float32), np.ones((784, 256), np.float32)
    big_out = np.empty((64, 256), np.float32)
    assert M.matmul2d(a, b, big_out) is big_out
    assert len(into) == 1 and np.all(big_out == 784) and np.all(out == 64)


def test_only_a_threaded_product_keeps_the_prange_kernels_serial(monkeypatch):
    """A product OpenBLAS runs on the calling thread wakes none of its workers, so the
    prange kernels may still run after it; a threaded one starts threads.py's quiet time."""
    monkeypatch.setattr(threads, "_last_blas", float("-inf"))
    M.matmul2d(np.ones((16, 64), np.float32), np.ones((64, 64), np.float32))
    assert threads.parallel_ok()
    M.matmul2d(np.ones((64, 784), np.float32), np.ones((784, 256), np.float32))
    assert not threads.parallel_ok()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_program_that_wants_the_cores_keeps_its_products_on_the_calling_thread(
        monkeypatch, dtype):
    """With products_serial() (a CNN's run), a medium product runs in row blocks OpenBLAS
    keeps on the calling thread: the same values, transposed operands and a given out
    included, and threads.py's quiet time does not start; a larger one still threads."""
    monkeypatch.setattr(threads, "_last_blas", float("-inf"))
    monkeypatch.setattr(threads, "_products_serial", True)
    r = rng()
    a, b = r.standard_normal((64, 400)).astype(dtype), r.standard_normal((400, 120)).astype(dtype)
    tol = dict(rtol=1e-4, atol=1e-4) if dtype == np.float32 else dict(rtol=1e-12, atol=1e-10)
    np.testing.assert_allclose(M.matmul2d(a, b), a @ b, **tol)
    out, c = np.empty((400, 120), dtype), r.standard_normal((64, 120)).astype(dtype)
    assert M.matmul2d(a.T, c, out) is out                                # a F-ordered
    np.testing.assert_allclose(out, a.T @ c, **tol)
    np.testing.assert_allclose(M.matmul2d(a, b.T.copy().T), a @ b, **tol)   # b F-ordered
    assert threads.parallel_ok()
    big = r.standard_normal((512, 512)).astype(dtype)
    M.matmul2d(big, big)                        # 134 M multiply-adds: BLAS's threads
    assert not threads.parallel_ok()


def test_the_executor_keeps_products_serial_only_for_programs_with_convolutions():
    def run(build):
        main, startup = pd.Program(), pd.Program()
        with pd.program_guard(main, startup):
            build(pd.data("x", [2, 1, 6, 6]))
        exe, scope = pd.Executor(), pd.Scope()
        exe.run(startup, scope=scope)
        threads.keep_products_serial(None)
        exe.run(main, feed={"x": np.ones((2, 1, 6, 6), np.float32)}, scope=scope)
        return threads.products_serial()
    assert run(lambda x: pd.layer.conv2d(x, 2, 3)) is True
    assert run(lambda x: pd.layer.fc(x, 3)) is False


# --- optimizers ----------------------------------------------------------------------------
def _opt_case(dtype, shape=(5, 7)):
    r = rng()
    return [r.standard_normal(shape).astype(dtype) for _ in range(3)] + \
        [r.random(shape).astype(dtype)]


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("kind", VARIANTS)
def test_optimizer_variants(dtype, kind):
    """Each @update kernel's serial loop and prange twin give the formula's values."""
    p, g, v, m2 = _opt_case(dtype)
    t = dtype
    flat = [a.reshape(-1) for a in (p, g, v, m2)]
    out = [np.empty(p.size, dtype) for _ in range(3)]
    one = [np.array([t(x)]) for x in (0.1, 0.9 ** 3, 0.999 ** 3)]
    loop = (lambda k: k.serial) if kind == "serial" else (lambda k: k.parallel)
    loop(O.sgd)(flat[0], flat[1], one[0], out[0])
    close(out[0], p.reshape(-1) - t(0.1) * g.reshape(-1), dtype, atol=eps(dtype))
    for nesterov in (False, True):
        loop(O.momentum)(*flat[:3], one[0], t(0.9), nesterov, 1.0, 0.0, out[0], out[1])
        v_new = 0.9 * v.astype(np.float64) + g
        p_new = p - 0.1 * ((g + 0.9 * v_new) if nesterov else v_new)
        close(out[1], v_new.reshape(-1), dtype, atol=eps(dtype))
        close(out[0], p_new.reshape(-1), dtype, atol=eps(dtype))
    loop(ADAM.adamw)(*flat, np.array([t(0.01)]), *one[1:], 0.9, 0.999, 1e-8, 0.0, *out)
    g64 = g.astype(np.float64)
    m1 = 0.9 * v + 0.1 * g64
    m2n = 0.999 * m2 + 0.001 * g64 * g64
    lr = 0.01 * np.sqrt(1 - 0.999 ** 3) / (1 - 0.9 ** 3)
    want = p - lr * m1 / (np.sqrt(m2n) + 1e-8 * np.sqrt(1 - 0.999 ** 3))
    for got, ref in zip(out, (want, m1, m2n)):
        close(got, ref.reshape(-1), dtype, atol=eps(dtype))


def test_optimizer_entry_points_keep_shape_and_dtype(monkeypatch):
    f = np.float32
    lr, b1p, b2p = (np.array([f(x)]) for x in (0.5, 0.9, 0.999))
    for shape in ((), (3,), (2, 3, 4)):
        p, g, v, m2 = _opt_case(np.float32, shape)
        got = O.sgd.cpu(p, g, lr)
        assert got.shape == p.shape and got.dtype == p.dtype
        np.testing.assert_allclose(got, p - f(0.5) * g, rtol=1e-6, atol=1e-6)
        outs = O.momentum.cpu(p, g, v, lr, 0.9, True, 1.0, 0.0) + \
            ADAM.adamw.cpu(p, g, v, m2, lr, b1p, b2p, 0.9, 0.999, 1e-8, 0.0)
        assert all(o.shape == p.shape and o.dtype == p.dtype for o in outs)
    p, g, v, m2 = _opt_case(np.float32, (4, 6))
    np.testing.assert_allclose(O.sgd.cpu(p, g.T.copy().T, lr), p - f(0.5) * g, rtol=1e-6,
                               atol=1e-6)
    par = _spy(monkeypatch, ADAM.adamw, "parallel")
    ser = _spy(monkeypatch, ADAM.adamw, "serial")
    for n in (O.MIN_PARALLEL_ADAM - 1, O.MIN_PARALLEL_ADAM):
        p, g, v, m2 = _opt_case(np.float32, (n,))
        ADAM.adamw.cpu(p, g, v, m2, lr, b1p, b2p, 0.9, 0.999, 1e-8, 0.0)
    assert ser == [O.MIN_PARALLEL_ADAM - 1] and par == [O.MIN_PARALLEL_ADAM]


# --- embedding (kernels/cpu/embedding.py) ----------------------------------------------------
@pytest.mark.parametrize("dtype", FLOATS)
def test_embedding_variants(dtype):
    """Both variants of the lookup and of its gradient (bands of dw's rows: 1, 2 and 5,
    more bands than rows too) against numpy, with repeated ids and the padding id; the
    gradient's variants add in the order of the ids, so they agree bit for bit."""
    from paddle_nb.kernels.cpu import embedding as EMB   # noqa: PLC0415
    r = rng()
    for v, d, n, pad in ((1, 1, 3, -1), (7, 5, 40, 3), (50, 64, 300, 0), (3, 2, 0, -1)):
        w = r.standard_normal((v, d)).astype(dtype)
        dout = r.standard_normal((n, d)).astype(dtype)
        for ids in (r.integers(0, v, n).astype(np.int32), r.integers(0, v, n)):
            keep = ids != pad
            want = np.where(keep[:, None], w[ids], 0).astype(dtype)
            for lookup in (EMB._lookup_serial, EMB._lookup_parallel):
                out = np.full((n, d), np.nan, dtype)
                lookup(w, ids, pad, out)
                np.testing.assert_array_equal(out, want)
            want = np.zeros((v, d))
            np.add.at(want, ids[keep], dout[keep].astype(np.float64))
            serial = np.full_like(w, np.nan)
            EMB._lookup_grad_serial(dout, ids, pad, serial)
            close(serial, want, dtype, rtol=1e-5, atol=1e-5)
            for bands in (1, 2, 5):
                got = np.full_like(w, np.nan)
                EMB._lookup_grad_parallel(dout, ids, pad, got, bands)
                np.testing.assert_array_equal(got, serial)


def test_embedding_entry_points_switch_at_their_thresholds(monkeypatch):
    from paddle_nb.kernels.cpu import embedding as EMB   # noqa: PLC0415
    monkeypatch.setattr(EMB, "parallel_ok", lambda: True)
    monkeypatch.setattr(EMB.numba, "get_num_threads", lambda: 2)
    calls = {name: _spy(monkeypatch, EMB, name) for name in
             ("_lookup_serial", "_lookup_parallel", "_lookup_grad_serial",
              "_lookup_grad_parallel")}
    d = EMB.MIN_PARALLEL_GRAD_ROW
    w = np.ones((10, d), np.float32)
    n = EMB.MIN_PARALLEL_LOOKUP // d
    for rows in (n - 1, n):
        EMB.lookup(w, np.zeros(rows, np.int64), -1, np.empty((rows, d), np.float32))
    n = -(-(EMB.MIN_PARALLEL_LOOKUP_GRAD - w.size) // d)
    for rows in (n - 1, n):
        EMB.lookup_grad(np.ones((rows, d), np.float32), np.zeros(rows, np.int64), -1, w.shape)
    narrow = np.ones((n * 2, d // 2), np.float32)            # rows too short: serial
    EMB.lookup_grad(narrow, np.zeros(n * 2, np.int64), -1, (10, d // 2))
    assert [len(calls[k]) for k in ("_lookup_serial", "_lookup_parallel",
                                    "_lookup_grad_serial", "_lookup_grad_parallel")] == \
        [1, 1, 2, 1]
