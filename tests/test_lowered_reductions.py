"""The lowered forms of the reductions, and of the ops built on them, compute what their
kernels compute.

Programs as users write them (a max-pool over time by reduce_max, an L2 regulariser, a
log-softmax classifier with nll_loss next to it, the cumulative sum of a sequence, norms
and distances), run plainly and through ``pd.CompiledProgram`` from one start: the same
fetched values bit for bit (the compiled forms call the kernels' own scalar functions and
numba loops, in the kernels' order), no failed compiled run, and the ops inside compiled
segments. A reduced axis of no elements fed to the compiled reduce_max, and a label out of
range fed to the compiled nll_loss, raise the interpreter's errors, and the parameters
stay as they were.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from test_lowered_forms import (assert_compiled, assert_refused_and_kept, build_program,
                                compiled_after_learning, data, floats, interpreted_because,
                                run_both, run_programs)

RNG = np.random.default_rng(23)


def _params(main):
    return [v for v in main.global_block().vars.values() if v.persistable and "@" not in v.name
            and v.name.endswith((".w_0", ".b_0"))]


def _trained(build_loss, feeds, *ops, runs_each: int = 1):
    """``build_loss()`` -> (the loss, other values to fetch); trained by SGD, compiled and
    plain, once per feed (``runs_each`` times); the parameters fetched too."""
    def build():
        loss, *more = build_loss()
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, *more, *_params(pd.default_main_program())]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [f for f in feeds for _ in range(runs_each)])
    assert_compiled(main, compiled, *ops, "sgd")
    return main, compiled


# --- reduce_max / _min / _prod: a max-pool over time ----------------------------------------
@pytest.mark.parametrize("op_type", ["reduce_max", "reduce_min", "reduce_prod"])
def test_a_pool_over_time_trained(op_type):
    """[B, T, H] -> fc per step -> tanh -> reduced over T (a middle axis) -> fc -> softmax
    cross-entropy, by SGD; two batch sizes (the machine code is not specialised on them)."""
    def build_loss():
        x, label = pd.data("x", [None, 5, 4]), pd.data("label", [None, 1], "int64")
        h = pd.layer.fc(x, 6, num_flatten_dims=2, act="tanh")
        pooled = getattr(pd.op, op_type)(X=h, dim=[1])
        loss = pd.mean(pd.layers.softmax_with_cross_entropy(pd.layer.fc(pooled, 3), label))
        return loss, pooled
    feeds = [{"x": floats(b, 5, 4), "label": RNG.integers(0, 3, (b, 1))} for b in (4, 7)]
    _trained(build_loss, feeds, op_type, op_type + "_grad", runs_each=2)


@pytest.mark.parametrize("op_type", ["reduce_max", "reduce_min", "reduce_prod"])
@pytest.mark.parametrize("dim, keep_dim, reduce_all, dtype", [
    ([1], False, False, "float32"), ([0, 2], True, False, "float64"),
    ([-1], False, False, "float64"), ([0], True, True, "float32")])
def test_folds_and_their_gradients(op_type, dim, keep_dim, reduce_all, dtype):
    def build():
        x = data("x", [3, 4, 5], dtype)
        out = getattr(pd.op, op_type)(X=x, dim=dim, keep_dim=keep_dim, reduce_all=reduce_all)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    feed = {"x": RNG.uniform(0.5, 1.5, (3, 4, 5)).astype(dtype)}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, op_type, op_type + "_grad")


@pytest.mark.parametrize("op_type", ["reduce_max", "reduce_min"])
def test_ties_each_get_the_gradient_as_in_the_interpreter(op_type):
    """Equal maxima (minima) each get all of dOut, a NaN row gives NaN: reduce_max's rule;
    reduce_amax / _amin share dOut among the ties."""
    x = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [5, np.nan, 1, 5]], np.float32)

    def build():
        v = data("x", [3, 4])
        plain = getattr(pd.op, op_type)(X=v, dim=[1])
        shared = getattr(pd.op, op_type.replace("reduce_", "reduce_a"))(X=v, dim=[1])
        return [plain, shared, *pd.gradients(pd.mean(plain * 3.0), [v]),
                *pd.gradients(pd.mean(shared * 3.0), [v])]
    main, compiled = run_both(build, {"x": x})
    amax = op_type.replace("reduce_", "reduce_a")
    assert_compiled(main, compiled, op_type, op_type + "_grad", amax, amax + "_grad")


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_integer_folds(dtype):
    def build():
        x = pd.data("x", [4, 3], dtype)
        return [pd.op.reduce_max(X=x, dim=[0]), pd.op.reduce_min(X=x, dim=[1], keep_dim=True),
                pd.op.reduce_prod(X=x, dim=[1]), pd.op.reduce_amax(X=x, dim=[1])]
    main, compiled = run_both(build, {"x": RNG.integers(-5, 6, (4, 3)).astype(dtype)})
    assert_compiled(main, compiled, "reduce_max", "reduce_min", "reduce_prod", "reduce_amax")


def test_an_empty_reduced_axis_raises_the_interpreters_error():
    """Compiled for rows of 4, fed rows of none: the compiled reduce_max refuses, the
    interpreter's rerun names the op and the axis, and the parameters stay as they were."""
    def build():
        x = pd.data("x", [3, None])
        pooled = pd.op.reduce_max(X=x, dim=[1], keep_dim=True)
        loss = pd.mean(pd.layer.fc(pooled, 1))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss]
    main, exe, scope, compiled, fetch = compiled_after_learning(build, {"x": floats(3, 4)})
    assert_compiled(main, compiled, "reduce_max", "mul_grad")
    assert_refused_and_kept(exe, compiled, main, scope, {"x": np.zeros((3, 0), np.float32)},
                            fetch, Exception, r"reduce_max.*no elements along dim \[1\]")


# --- squared_l2_norm: an L2 regulariser ------------------------------------------------------
def test_a_regression_with_an_l2_regulariser():
    """loss = mean squared error + 0.01 * squared_l2_norm(W), by SGD."""
    def build_loss():
        x, y = pd.data("x", [None, 6]), pd.data("y", [None, 1])
        pred = pd.layer.fc(x, 1)
        w = next(p for p in _params(pd.default_main_program()) if p.name.endswith(".w_0"))
        penalty = pd.op.squared_l2_norm(X=w)
        loss = pd.mean(pd.layer.square_error_cost(pred, y)) + penalty * 0.01
        return loss, penalty
    # (batches under 8: numpy sums the bias's gradient pairwise from 8 rows on, the compiled
    # elementwise_add_grad in order: tests/test_compiler.py's REORDERED_SUMS)
    feeds = [{"x": floats(b, 6), "y": floats(b, 1)} for b in (7, 5)]
    _trained(build_loss, feeds, "squared_l2_norm", "squared_l2_norm_grad", runs_each=2)


# --- log_softmax with nll_loss ---------------------------------------------------------------
def _log_softmax_classifier():
    x, label = pd.data("x", [None, 5]), pd.data("label", [None], "int64")
    log_probs = pd.op.log_softmax(X=pd.layer.fc(x, 4), axis=-1)
    loss, _ = pd.op.nll_loss(X=log_probs, Label=label)         # (Out, Total_weight)
    return loss, log_probs


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_softmax_and_its_gradient(dtype):
    def build():
        x = data("x", [3, 4, 7], dtype)
        out = pd.op.log_softmax(X=x)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    main, compiled = run_both(build, {"x": floats(3, 4, 7, dtype=dtype) * 5})
    assert_compiled(main, compiled, "log_softmax", "log_softmax_grad")


def test_a_log_softmax_classifier_with_nll_loss():
    feeds = [{"x": floats(b, 5), "label": RNG.integers(0, 4, b)} for b in (6, 7)]
    _trained(_log_softmax_classifier, feeds, "log_softmax", "log_softmax_grad", "nll_loss",
             "nll_loss_grad", runs_each=2)


def test_a_label_out_of_range_raises_the_interpreters_error():
    """nll_loss reads X by label: a label of 4 for 4 classes is refused in the compiled
    code, the interpreter's rerun names the op, and the parameters stay as they were."""
    def build():
        loss, _ = _log_softmax_classifier()
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss]
    main, exe, scope, compiled, fetch = compiled_after_learning(
        build, {"x": floats(3, 5), "label": np.array([0, 3, 1])})
    assert_compiled(main, compiled, "log_softmax", "nll_loss", "nll_loss_grad")
    assert_refused_and_kept(exe, compiled, main, scope,
                            {"x": floats(3, 5), "label": np.array([0, 4, 1])}, fetch,
                            Exception, "nll_loss")


def test_a_log_softmax_along_another_axis_stays_in_the_interpreter():
    _, compiled = run_both(lambda: [pd.op.log_softmax(X=data("x", [3, 4]), axis=0)],
                           {"x": floats(3, 4)})
    assert interpreted_because(compiled, "log_softmax").startswith("no lowered form")


# --- cumsum, logcumsumexp: running sums of a sequence ---------------------------------------
@pytest.mark.parametrize("op_type", ["cumsum", "logcumsumexp"])
def test_running_sums_of_a_sequence_trained(op_type):
    """[B, T, H] -> fc per step -> running sums over T -> the last step -> fc -> MSE."""
    def build_loss():
        x, y = pd.data("x", [None, 5, 3]), pd.data("y", [None, 1])
        h = pd.layer.fc(x, 4, num_flatten_dims=2)
        running = getattr(pd.op, op_type)(X=h, axis=1)
        last = pd.layer.reshape(pd.op.slice(Input=running, axes=[1], starts=[4], ends=[5]), [-1, 4])
        loss = pd.mean(pd.layer.square_error_cost(pd.layer.fc(last, 1), y))
        return loss, running
    feeds = [{"x": floats(b, 5, 3), "y": floats(b, 1)} for b in (4, 6)]
    _trained(build_loss, feeds, op_type, op_type + "_grad", runs_each=2)


@pytest.mark.parametrize("op_type", ["cumsum", "logcumsumexp"])
@pytest.mark.parametrize("attrs, dtype", [
    (dict(axis=0), "float32"), (dict(axis=-1, exclusive=True), "float64"),
    (dict(axis=1, reverse=True), "float32"),
    (dict(flatten=True, exclusive=True, reverse=True), "float64")])
def test_scans_and_their_gradients(op_type, attrs, dtype):
    def build():
        x = data("x", [3, 4, 2], dtype)
        out = getattr(pd.op, op_type)(X=x, **attrs)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    main, compiled = run_both(build, {"x": floats(3, 4, 2, dtype=dtype)})
    assert_compiled(main, compiled, op_type, op_type + "_grad")


@pytest.mark.parametrize("dtype", ["int32", "int64"])
def test_an_integer_cumsum(dtype):
    def build():
        x = pd.data("x", [4, 5], dtype)
        return [pd.op.cumsum(X=x, axis=1), pd.op.cumsum(X=x, flatten=True, reverse=True)]
    main, compiled = run_both(build, {"x": RNG.integers(-9, 10, (4, 5)).astype(dtype)})
    assert_compiled(main, compiled, "cumsum")


# --- logsumexp, all / any --------------------------------------------------------------------
@pytest.mark.parametrize("axis, keepdim", [([1], False), ([0, 2], True), ([], False)])
def test_logsumexp_and_its_gradient(axis, keepdim):
    x = floats(3, 4, 5) * 4
    x[0, 1, :] = -np.inf                      # a row of -inf: its result is -inf

    def build():
        v = data("x", [3, 4, 5])
        out = pd.op.logsumexp(X=v, axis=axis, keepdim=keepdim)
        return [out, *pd.gradients(pd.mean(out), [v])]
    main, compiled = run_both(build, {"x": x})
    assert_compiled(main, compiled, "logsumexp", "logsumexp_grad")


def test_all_and_any_of_a_mask():
    x = floats(4, 5)
    x[1] = 0
    x[2, 3] = np.nan

    def build():
        v = pd.data("x", [4, 5])
        mask = pd.data("mask", [4, 5], "bool")
        return [pd.op.reduce_all(X=v, dim=[1]), pd.op.reduce_any(X=v, dim=[0], keep_dim=True),
                pd.op.reduce_all(X=mask, dim=[0, 1]), pd.op.reduce_any(X=mask, dim=[1])]
    main, compiled = run_both(build, {"x": x, "mask": x > 0})
    assert_compiled(main, compiled, "reduce_all", "reduce_any")


# --- norms and distances ---------------------------------------------------------------------
@pytest.mark.parametrize("p", [2.0, 1.0, 3.0, np.inf, -np.inf, 0.0])
def test_p_norm_of_features_trained(p):
    """fc -> p_norm over the features (and as one vector) -> a loss, by SGD."""
    def build_loss():
        x = pd.data("x", [None, 5])
        h = pd.layer.fc(x, 4)
        rows = pd.op.p_norm(X=h, porder=p, axis=1, keepdim=True)
        whole = pd.op.p_norm(X=h, porder=p, asvector=True)
        return pd.mean(rows) + whole * 0.1, rows, whole
    _trained(build_loss, [{"x": floats(6, 5)}], "p_norm", "p_norm_grad", runs_each=3)


@pytest.mark.parametrize("p", [2.0, 1.5, np.inf, 0.0])
def test_dist_and_its_gradients(p):
    def build():
        x, y = data("x", [3, 4]), data("y", [3, 4])
        out = pd.op.dist(X=x, Y=y, p=p)
        return [out, *pd.gradients(out, [x, y])]
    main, compiled = run_both(build, {"x": floats(3, 4), "y": floats(3, 4)})
    assert_compiled(main, compiled, "dist", "dist_grad")


@pytest.mark.parametrize("dim, keep_dim", [([1], True), ([0, 2], False), ([], False)])
def test_frobenius_norm_and_its_gradient(dim, keep_dim):
    def build():
        x = data("x", [3, 4, 5])
        out = pd.op.frobenius_norm(X=x, dim=dim, keep_dim=keep_dim)
        return [out, *pd.gradients(pd.mean(out), [x])]
    main, compiled = run_both(build, {"x": floats(3, 4, 5)})
    assert_compiled(main, compiled, "frobenius_norm", "frobenius_norm_grad")
