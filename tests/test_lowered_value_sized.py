"""The lowered forms of the ops whose output size depends on the values (masked_select and
its gradient, where_index, bincount, unique, unique_consecutive) compute what their kernels
compute, at whatever size each run's data gives.

Programs as users hold them: the positive activations of a layer selected into its loss
and trained by SGD, the classes a classifier predicts counted (and weighted by their
confidence), the distinct labels of a batch with their counts, the runs of a sorted
sequence, the coordinates of confident predictions. Each runs plainly and through
``pd.CompiledProgram`` from one start on batches that select, count or find another number
of values each time (tests/test_lowered_forms.py's helpers): the same values, bit for bit
(the forms call the interpreter's own loops, and numpy's ``np.unique`` through in_python),
no failed compiled run, the ops in a compiled segment. A negative value fed to a compiled
bincount, and a gradient of the wrong length fed to a compiled masked_select_grad, raise
the interpreter's error naming the op, and no parameter moves.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.framework_pb2 import VarType
from test_lowered_forms import (assert_compiled, assert_refused_and_kept, build_program,
                                compiled_after_learning, data, floats, run_programs)

RNG = np.random.default_rng(31)


def assert_stays_compiled(compiled):
    """No compiled run failed: each run's new sizes ran in the segments learned first."""
    assert compiled.failures == [] and "compiled run failed" not in compiled.source()


def _labels(classes, n):
    return RNG.integers(0, classes, (n,)).astype(np.int64)


# --- masked_select and its gradient -----------------------------------------------------------
def _positive_part_model(mask_of):
    """The activations of a layer that ``mask_of(h)`` selects feed the loss (an elementwise
    op and a reduce on the selected values), trained by SGD."""
    x = pd.data("x", [None, 6])
    h = pd.layer.fc(x, 5)
    y = pd.op.masked_select(X=h, Mask=mask_of(h))
    loss = pd.mean(pd.layers.square(y * 0.5))
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss, y]


@pytest.mark.parametrize("mask_of", [
    lambda h: h > 0,                                           # the mask of X's shape
    lambda h: pd.layers.reduce_sum(h, dim=0) > 0],             # one row, every row
    ids=["same_shape", "row_mask"])
def test_selected_activations_trained_by_sgd(mask_of):
    """Each batch selects another number of values (and a second batch size): one
    compiled segment runs them all. Compared to 1e-6: the fc's bias gradient is a sum
    LLVM orders per function (REORDERED_SUMS)."""
    main, startup, fetch = build_program(lambda: _positive_part_model(mask_of))
    feeds = [{"x": floats(n, 6)} for n in (8, 8, 8, 5, 5, 8)]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, "masked_select", "masked_select_grad", "sgd")
    assert_stays_compiled(compiled)


def test_a_broadcast_x_gets_the_gradients_of_its_copies():
    """A [1, 4] X selected by a [3, 4] mask: each element's gradient is the sum over the
    rows that select it (numpy's sum, through in_python), bit for bit."""
    def build():
        x, mask = data("x", [1, 4]), pd.data("mask", [3, 4], "bool")
        y = pd.op.masked_select(X=x * 2.0, Mask=mask)
        return [y, *pd.gradients(pd.mean(y * y), [x])]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(1, 4), "mask": RNG.random((3, 4)) > 0.4} for _ in range(4)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "masked_select", "masked_select_grad")
    assert_stays_compiled(compiled)


def test_nothing_selected_then_something():
    """A mask with no true entry (Y empty) and then others: the same compiled code."""
    def build():
        x = pd.data("x", [4, 3], "int32")
        y = pd.op.masked_select(X=x, Mask=x > 2)
        return [y, pd.layers.reduce_sum(pd.layers.cast(y, "int64"))]
    main, startup, fetch = build_program(build)
    feeds = [{"x": RNG.integers(0, 3, (4, 3)).astype(np.int32)}] + \
        [{"x": RNG.integers(0, 6, (4, 3)).astype(np.int32)} for _ in range(3)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "masked_select")
    assert_stays_compiled(compiled)


def test_a_gradient_of_another_length_is_refused():
    """A hand-built masked_select_grad (as an edited program holds it) whose dY stops
    matching the mask: the compiled check raises, the interpreter's rerun words it."""
    def build():
        x = pd.data("x", [2, 3], "float64")
        mask, dy = pd.data("mask", [2, 3], "bool"), pd.data("dy", [2], "float64")
        block = pd.default_main_program().global_block()
        dx = block.create_var("dx", [2, 3], "float64")
        block.append_op("masked_select_grad", {"X": [x], "Mask": [mask], "Y@GRAD": [dy]},
                        {"X@GRAD": [dx]}, {})
        return [dx]
    good = {"x": np.ones((2, 3)), "mask": np.eye(2, 3, dtype=bool), "dy": np.float64([3, 4])}
    main, exe, scope, compiled, fetch = compiled_after_learning(build, good)
    got, = exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    assert np.array_equal(got, [[3, 0, 0], [0, 4, 0]])
    assert_compiled(main, compiled, "masked_select_grad")
    bad = dict(good, mask=np.ones((2, 3), bool))
    assert_refused_and_kept(exe, compiled, main, scope, bad, fetch, pd.ExecutionError,
                            r"masked_select_grad: slot Y@GRAD: .*expected 6 \(Mask's true "
                            r"entries\), given 2 values")


# --- bincount ---------------------------------------------------------------------------------
def _classifier_counting(weighted: bool):
    """An MLP classifier trained by SGD; the classes it predicts counted into at least
    ``classes`` bins (``weighted``: each prediction weighted by its probability), and the
    labels counted too."""
    classes = 4
    x, label = pd.data("x", [None, 6]), pd.data("label", [None], "int64")
    labels_seen = pd.op.bincount(X=label)            # (before one_hot reads the labels)
    logits = pd.layer.fc(pd.layer.fc(x, 8, act="tanh"), classes)
    probs = pd.softmax(logits)
    target = pd.op.one_hot_v2(X=label, depth=classes, dtype=VarType.FP32)
    loss = pd.mean(pd.layers.square(probs - target))
    predicted = pd.op.arg_max(X=probs, axis=1)
    weights = pd.layers.reduce_sum(probs * target, dim=1) if weighted else None
    counted = pd.op.bincount(X=predicted, Weights=weights, minlength=classes) if weighted \
        else pd.op.bincount(X=predicted, minlength=classes)
    pd.optimizer.SGD(0.5).minimize(loss)
    return [loss, counted, labels_seen]


@pytest.mark.parametrize("weighted", [False, True])
def test_a_classifiers_predicted_classes_counted(weighted):
    main, startup, fetch = build_program(lambda: _classifier_counting(weighted))
    feeds = [{"x": floats(n, 6), "label": _labels(k, n)}
             for n, k in ((12, 4), (12, 2), (12, 3), (7, 4), (7, 1))]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, "bincount", "sgd")
    assert_stays_compiled(compiled)


@pytest.mark.parametrize("x_dtype, w_dtype", [("int32", "float64"), ("int64", "int32"),
                                              ("int32", "float32")])
def test_weights_of_each_type_summed(x_dtype, w_dtype):
    """Out is float32 for float32 Weights, else float64 (int Weights cast first)."""
    def build():
        x, w = pd.data("x", [None], x_dtype), pd.data("w", [None], w_dtype)
        return [pd.op.bincount(X=x, Weights=w, minlength=3)]
    main, startup, fetch = build_program(build)
    feeds = [{"x": RNG.integers(0, k, (n,)).astype(x_dtype),
              "w": (RNG.standard_normal(n) * 4).astype(w_dtype)}
             for n, k in ((9, 6), (9, 2), (9, 9), (4, 5))]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "bincount")
    assert_stays_compiled(compiled)


def test_a_negative_label_counted_is_refused():
    """bincount of the labels of a trained classifier, fed a -1: the compiled check
    raises, the interpreter's rerun words it, no parameter moves."""
    feed = {"x": floats(12, 6), "label": _labels(4, 12)}
    main, exe, scope, compiled, fetch = compiled_after_learning(
        lambda: _classifier_counting(False), feed)
    assert_compiled(main, compiled, "bincount")
    bad = dict(feed, label=np.where(np.arange(12) == 5, -1, feed["label"]))
    assert_refused_and_kept(exe, compiled, main, scope, bad, fetch, pd.ExecutionError,
                            r"bincount: slot X: every element must be non-negative")


# --- unique, unique_consecutive, where_index -------------------------------------------------
INT32, INT64 = VarType.INT32, VarType.INT64


@pytest.mark.parametrize("sorted_, index_type", [(True, INT64), (True, INT32),
                                                 (False, INT64)])
def test_the_distinct_labels_of_each_batch(sorted_, index_type):
    """paddle.unique of the labels with their counts, the classes' frequencies worked out
    from them: another number of distinct labels in each batch."""
    def build():
        label = pd.data("label", [None], "int64")
        out, indices, index, counts = pd.op.unique(
            X=label, is_sorted=sorted_, dtype=index_type, return_index=True,
            return_inverse=True, return_counts=True)
        share = pd.layers.cast(counts, "float32") / pd.layers.cast(
            pd.layers.reduce_sum(counts), "float32")
        return [out, indices, index, counts, share]
    main, startup, fetch = build_program(build)
    feeds = [{"label": _labels(k, n)} for n, k in ((10, 5), (10, 2), (10, 8), (6, 3))]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "unique")
    assert_stays_compiled(compiled)


def test_distinct_rows_with_nans():
    """unique of rows (axis 0) and of a flattened float tensor with NaNs."""
    def build():
        x = pd.data("x", [None, 3])
        rows = pd.op.unique(X=x, axis=[0], is_sorted=True, return_counts=True)
        flat = pd.op.unique(X=x, is_sorted=True, return_inverse=True)
        return [*rows[:1], rows[3], flat[0], flat[2]]
    main, startup, fetch = build_program(build)
    feeds = []
    for n in (6, 6, 4):
        x = RNG.integers(0, 2, (n, 3)).astype(np.float32)
        x[RNG.random((n, 3)) > 0.8] = np.nan
        feeds.append({"x": x})
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "unique")
    assert_stays_compiled(compiled)


@pytest.mark.parametrize("axis", [[], [1]])
def test_the_runs_of_a_sorted_sequence(axis):
    """unique_consecutive of tokens (flattened, or columns along axis 1): each run once,
    each token's run, each run's length; then the runs' mean length."""
    def build():
        x = pd.data("x", [2, None], "int64")
        out, index, counts = pd.op.unique_consecutive(X=x, axis=axis, return_inverse=True,
                                                      return_counts=True, dtype=INT32)
        mean_run = pd.mean(pd.layers.cast(counts, "float64"))
        return [out, index, counts, mean_run]
    main, startup, fetch = build_program(build)
    feeds = [{"x": np.sort(RNG.integers(0, k, (2, n)), axis=1)}
             for n, k in ((9, 3), (9, 6), (9, 2), (5, 4))]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "unique_consecutive")
    assert_stays_compiled(compiled)


def test_the_coordinates_of_confident_predictions():
    """paddle.nonzero of the probabilities above 0.3 of a trained classifier's softmax:
    another number of rows each batch, counted per column."""
    def build():
        x = pd.data("x", [None, 6])
        probs = pd.softmax(pd.layer.fc(x, 4))
        loss = pd.mean(pd.layers.square(probs))
        where = pd.op.where_index(Condition=probs > 0.3)
        per_axis = pd.layers.reduce_sum(where, dim=0)
        pd.optimizer.SGD(0.5).minimize(loss)
        return [loss, where, per_axis]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 6) * 3} for n in (10, 10, 10, 4)]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, "where_index", "sgd")
    assert_stays_compiled(compiled)


@pytest.mark.parametrize("dtype", ["bool", "int8", "float64"])
def test_nonzero_of_each_type(dtype):
    """NaN is nonzero, -0.0 is not; no true entry gives [0, rank]."""
    def build():
        return [pd.op.where_index(Condition=pd.data("c", [3, 2, 2], dtype))]
    main, startup, fetch = build_program(build)
    feeds = []
    for p in (0.5, 0.0, 0.9):
        c = (RNG.random((3, 2, 2)) < p).astype(dtype)
        if dtype == "float64":
            c[0, 1, 1], c[2, 0, 0] = np.nan, -0.0
        feeds.append({"c": c})
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "where_index")
    assert_stays_compiled(compiled)


# --- assert -----------------------------------------------------------------------------------
def _checked_model():
    """An fc trained by SGD whose loss is asserted below 1e4 each step (Data: the
    activations, shown by the error)."""
    x = pd.data("x", [None, 3])
    h = pd.layer.fc(x, 2)
    loss = pd.mean(h * h)
    getattr(pd.op, "assert")(Cond=loss < 1e4, Data=[h], summarize=4)
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss]


def test_a_false_assert_in_a_compiled_run_gives_the_interpreters_error():
    feed = {"x": floats(4, 3)}
    main, startup, fetch = build_program(_checked_model)
    compiled = run_programs(main, startup, fetch, [feed] * 3, exact=False)
    assert_compiled(main, compiled, "assert", "sgd")
    main, exe, scope, compiled, fetch = compiled_after_learning(_checked_model, feed)
    assert_refused_and_kept(exe, compiled, main, scope, {"x": feed["x"] + 1000}, fetch,
                            pd.ExecutionError, r"assert: the condition .* is false; Data:")


def test_a_value_sized_operand_learned_at_one_element_grows_without_a_failure():
    """Learned from a batch with one positive, masked_select's y and its keep-dim sum s are
    both [1], so the loop of ``y - s`` could take s as the loop's own shape; with five
    positives next time s must still be read as one element (codegen reads an operand
    learned at one element, in a loop of one, as either), and no compiled run fails."""
    def build():
        x = pd.data("x", [2, 4])
        y = pd.op.masked_select(X=x, Mask=x > 0)
        s = pd.layers.reduce_sum(y, dim=0, keep_dim=True)
        return [pd.mean((y - s) * (y - s))]
    one = np.full((2, 4), -1, np.float32)
    one[0, 1] = 2
    feeds = [{"x": one}, {"x": one}] + [{"x": floats(2, 4)} for _ in range(4)]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, feeds)
    assert_stays_compiled(compiled)
    assert "% r4_1.size]" in compiled.source()


def test_masked_select_of_0d_operands_runs_both_ways():
    """A 0-d X and Mask (a loss kept or dropped by a flag, as random programs make them)
    take the places' numpy path in the interpreter and stay interpreted compiled: numba
    cannot walk the empty broadcast shape of two 0-d shapes. Found by
    test_random_programs' tril_triu program, which crashed with a TypingError before."""
    def build():
        x = pd.data("x", [])
        x.stop_gradient = False
        keep = pd.data("keep", [], "bool")
        y = pd.op.masked_select(X=x, Mask=keep)
        return [y, pd.gradients([pd.layers.reduce_sum(y * y)], [x])[0]]
    feeds = [{"x": np.array(v, np.float32), "keep": np.array(k)}
             for v, k in ((2.0, True), (3.0, True), (-1.0, False), (4.0, True))]
    main, startup, fetch = build_program(build)
    run_programs(main, startup, fetch, feeds)
