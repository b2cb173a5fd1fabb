"""The lowered forms of the sorting and selecting ops and of a few common leftovers compute
what their kernels compute.

Programs as users hold them: a classifier's top-5 accuracy fetched every step, the k best
scores of a beam step trained through, scores argsorted with ties and NaNs, gradients
clipped by norm, a running maximum, running products, predictions checked with isclose,
an MLP trained by AdamW and by RMSProp. Each runs plainly and through
``pd.CompiledProgram`` from one start (tests/test_lowered_forms.py's helpers), bit for
bit: top_k_v2 and argsort call the interpreter's own sorting loop
(kernels/cpu/sorting.py), cummax / cummin / cumprod their running-scan loops, the
gradients add into zeros in Indices' order as ``np.add.at`` does, accuracy is its
kernel's loop, clip_by_norm sums the squares in the interpreter's row-sum order, and the
optimizers run their kernels' own update loops. A negative label fed to a compiled
accuracy raises the interpreter's error naming the op, and no parameter moves.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from test_lowered_forms import (assert_compiled, assert_refused_and_kept, build_program,
                                compiled_after_learning, data, floats, run_both, run_programs)

RNG = np.random.default_rng(23)


def _labels(classes, n):
    return RNG.integers(0, classes, (n, 1)).astype(np.int64)


def _classifier(optimizer, k=5, classes=10, targets=True):
    """An MLP classifier trained by ``optimizer``; its top-k accuracy fetched each step
    (``targets``: trained towards the labels' one-hot rows; else the labels feed only the
    accuracy)."""
    x, label = pd.data("x", [None, 12]), pd.data("label", [None, 1], "int64")
    logits = pd.layer.fc(pd.layer.fc(x, 16, act="relu"), classes)
    error = pd.softmax(logits)
    if targets:
        error = error - pd.op.one_hot_v2(X=label, depth=classes, dtype=5)
    loss = pd.mean(pd.layers.square(error))
    values, indices = pd.op.top_k_v2(X=pd.softmax(logits), k=k)
    accuracy, correct, total = pd.op.accuracy(Out=values, Indices=indices, Label=label)
    optimizer.minimize(loss)
    return [loss, accuracy, correct, total, indices]


# --- top-k accuracy, trained by each optimizer ------------------------------------------------
@pytest.mark.parametrize("make, update", [
    (lambda: pd.optimizer.SGD(0.5), "sgd"),
    (lambda: pd.optimizer.AdamW(0.01, weight_decay=0.05), "adamw"),
    (lambda: pd.optimizer.RMSProp(0.01, momentum=0.5), "rmsprop"),
    (lambda: pd.optimizer.RMSProp(0.01, centered=True), "rmsprop")])
def test_a_classifiers_top5_accuracy_fetched_each_step(make, update):
    """Three steps with batches of other sizes (the same machine code): the same losses,
    accuracies and top-5 classes; the parameters are compared by run_programs' fetches
    through the losses of the later steps."""
    main, startup, fetch = build_program(lambda: _classifier(make()))
    feeds = [{"x": floats(n, 12), "label": _labels(10, n)} for n in (16, 16, 9, 21)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "top_k_v2", "accuracy", update)


def _trained_params(optimizer_of, feeds):
    """The parameters after training an MLP plainly and compiled from one start."""
    def build():
        x = pd.data("x", [None, 6])
        loss = pd.mean(pd.layers.square(pd.layer.fc(pd.layer.fc(x, 8, act="tanh"), 3)))
        optimizer_of().minimize(loss)
        return [loss]
    main, startup, fetch = build_program(build)
    exe, plain, compiled_scope = pd.Executor(), pd.Scope(), pd.Scope()
    exe.run(startup, scope=plain)
    exe.run(startup, scope=compiled_scope)
    compiled = pd.CompiledProgram(main)
    for feed in feeds:
        exe.run(main, feed=feed, fetch_list=fetch, scope=plain)
        exe.run(compiled, feed=feed, fetch_list=fetch, scope=compiled_scope)
    assert compiled.failures == []
    return main, compiled, {p.name: (plain.find_var(p.name).get(),
                                     compiled_scope.find_var(p.name).get())
                            for p in main.global_block().all_parameters()}


@pytest.mark.parametrize("optimizer_of, update", [
    (lambda: pd.optimizer.AdamW(0.01, weight_decay=0.1), "adamw"),
    (lambda: pd.optimizer.RMSProp(0.01, rho=0.9, momentum=0.9), "rmsprop")])
def test_an_mlp_trained_three_steps_has_the_same_parameters(optimizer_of, update):
    feeds = [{"x": floats(8, 6)} for _ in range(3)]
    main, compiled, params = _trained_params(optimizer_of, feeds)
    for name, (want, got) in params.items():
        assert np.array_equal(got, want), name
    assert_compiled(main, compiled, update)


def test_adamw_with_an_lr_ratio_stays_in_the_interpreter_and_trains_the_same():
    """lr_ratio scales LearningRate before the step, which the compiled form has no slot
    for: the op runs interpreted, between compiled segments, with the same results."""
    feeds = [{"x": floats(8, 6)} for _ in range(3)]
    main, compiled, params = _trained_params(
        lambda: pd.optimizer.AdamW(0.01, lr_ratio=lambda p: 0.5), feeds)
    for name, (want, got) in params.items():
        assert np.array_equal(got, want), name
    assert "adamw: interpreted (no lowered form" in compiled.source()


# --- top_k and argsort, and their gradients ---------------------------------------------------
@pytest.mark.parametrize("k, axis, largest", [(3, -1, True), (2, 0, False), (4, 1, True)])
def test_top_k_in_a_program_trained_by_sgd(k, axis, largest):
    """A beam step's scores: the k best of each line feed the loss, so top_k_v2_grad puts
    each gradient back where its value came from. Compared to 1e-6: the fc's bias
    gradient (elementwise_add_grad, over 5 x batch rows) is a vectorised sum whose order
    LLVM picks per function (REORDERED_SUMS in test_compiler.py), so later steps' scores
    may differ in the last bit."""
    def build():
        x = pd.data("x", [None, 5, 6])
        scores = pd.layer.fc(x, 6, num_flatten_dims=2)
        values, indices = pd.op.top_k_v2(X=scores, k=k, axis=axis, largest=largest)
        loss = pd.mean(pd.layers.square(values))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, values, indices]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 5, 6)} for n in (4, 4, 3)]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, "top_k_v2", "top_k_v2_grad", "sgd")


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
@pytest.mark.parametrize("axis, descending", [(-1, False), (-1, True), (0, True), (1, False)])
def test_scores_argsorted_with_ties_and_nans(dtype, axis, descending):
    """Ties keep the order of their positions (longer rows than std::sort's 16 too); a
    NaN is the largest value: last ascending, first descending."""
    def build():
        return list(pd.op.argsort(X=pd.data("x", [3, 20, 4], dtype), axis=axis,
                                  descending=descending))
    x = RNG.integers(0, 4, (3, 20, 4)).astype(dtype)
    if dtype.startswith("float"):
        x[0, 3, 1] = x[2, 17, 0] = x[1, 0, 3] = np.nan
        x[1, 5, 2] = -0.0
    main, compiled = run_both(build, {"x": x})
    assert_compiled(main, compiled, "argsort")


def test_sorted_scores_pass_their_gradient_back():
    """paddle.sort's Out feeds the loss: argsort_grad puts each gradient back."""
    def build():
        x, weights = data("x", [6, 7]), pd.data("w", [6, 7])
        out, _ = pd.op.argsort(X=x * 2.0, axis=0, descending=True)
        loss = pd.mean(out * weights)           # each rank of the sort weighs its own
        return [out, *pd.gradients(loss, [x])]
    main, compiled = run_both(build, {"x": RNG.integers(0, 3, (6, 7)).astype(np.float32),
                                      "w": floats(6, 7)})
    assert_compiled(main, compiled, "argsort", "argsort_grad")


# --- running extremes --------------------------------------------------------------------------
@pytest.mark.parametrize("op_type, axis, index_dtype", [
    ("cummax", -1, 3), ("cummin", 0, 2), ("cummax", 1, 2)])
def test_a_running_max_trained_by_sgd(op_type, axis, index_dtype):
    """The running extreme of an fc's scores feeds the loss; its gradient goes back to
    where each running value came from. To 1e-6, as top_k's program: the fc's bias
    gradient is a vectorised sum in LLVM's order."""
    def build():
        x = pd.data("x", [None, 4, 6])
        scores = pd.layer.fc(x, 6, num_flatten_dims=2)
        out, indices = getattr(pd.op, op_type)(x=scores, axis=axis, dtype=index_dtype)
        loss = pd.mean(pd.layers.square(out))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, out, indices]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [{"x": floats(3, 4, 6)}] * 3, exact=False)
    assert_compiled(main, compiled, op_type, op_type + "_grad", "sgd")


def test_a_running_max_keeps_a_nan_once_met():
    """Among equal values the latest position is the running one; a NaN stays."""
    def build():
        return list(pd.op.cummax(x=pd.data("x", [5, 7], "float64"), axis=1))
    x = RNG.integers(0, 3, (5, 7)).astype(np.float64)
    x[1, 2] = x[3, 0] = np.nan
    main, compiled = run_both(build, {"x": x})
    assert_compiled(main, compiled, "cummax")


@pytest.mark.parametrize("dim", [-1, 0])
def test_running_products_and_their_gradient(dim):
    """cumprod of a tensor holding a zero: the gradient needs no division by X."""
    def build():
        x = data("x", [4, 5], "float64")
        out = pd.op.cumprod(X=x, dim=dim)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    x = RNG.uniform(0.5, 1.5, (4, 5))
    x[2, 1] = 0.0
    main, compiled = run_both(build, {"x": x})
    assert_compiled(main, compiled, "cumprod", "cumprod_grad")


# --- clip_by_norm --------------------------------------------------------------------------
@pytest.mark.parametrize("clip_norm", [0.05, 100.0])          # clipped, and left as it was
def test_gradients_clipped_by_norm(clip_norm):
    def build():
        x = pd.data("x", [None, 6])
        loss = pd.mean(pd.layers.square(pd.layer.fc(pd.layer.fc(x, 8, act="relu"), 2)))
        pd.optimizer.SGD(0.5, grad_clip=pd.ClipGradByNorm(clip_norm)).minimize(loss)
        return [loss]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [{"x": floats(8, 6)} for _ in range(3)])
    assert_compiled(main, compiled, "clip_by_norm", "sgd")


# --- isclose ---------------------------------------------------------------------------------
def test_predictions_checked_close_to_targets():
    """isclose of an fc's output against a target, NaNs and infinities included."""
    def build():
        x, target = pd.data("x", [None, 4]), pd.data("target", [None, 3])
        out = pd.layer.fc(x, 3)
        return [pd.op.isclose(Input=out, Other=target, rtol="0.1", atol="0.01"),
                pd.op.isclose(Input=target, Other=target, equal_nan=True)]
    main, startup, fetch = build_program(build)
    target = floats(5, 3)
    target[1, 2], target[3, 0] = np.nan, np.inf
    compiled = run_programs(main, startup, fetch, [{"x": floats(5, 4), "target": target}] * 3)
    assert_compiled(main, compiled, "isclose")


# --- a bad label ---------------------------------------------------------------------------
def test_a_negative_label_raises_the_interpreters_error_and_moves_nothing():
    good = {"x": floats(6, 12), "label": _labels(10, 6)}
    main, exe, scope, compiled, fetch = compiled_after_learning(
        lambda: _classifier(pd.optimizer.SGD(0.5), k=3, targets=False), good)
    index = next(i for i, op in enumerate(main.global_block().ops) if op.type == "accuracy")
    assert index in compiled.segments()
    bad = dict(good, label=good["label"].copy())
    bad["label"][4, 0] = -2
    assert_refused_and_kept(exe, compiled, main, scope, bad, fetch, Exception,
                            r"accuracy: input slot Label: .*Label\[4\] = -2")
    exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    assert compiled.failures == [] and compiled.disabled_because is None
