"""The lowered forms of the losses, the fused ops and LAMB compute what their kernels compute.

Programs as users write them, each run plainly and through ``pd.CompiledProgram`` from one
start (tests/test_lowered_forms.py's helpers): a classifier whose loss is cross_entropy2 of
its softmax (as Paddle's layers built ``cross_entropy``), an inference program's fused fc,
an MLP trained by LAMB, a binary classifier's streaming AUC fetched while it trains, a CTC
loss and an RNN-T loss over generated sequences, hsigmoid and NCE over a small
vocabulary, and fused elementwise activations trained through. The label-indexed forms
check their labels: a bad one fed to the compiled program raises the interpreter's error,
and no parameter moves.

Bit for bit where the compiled forms call the kernels' own loops on the same operands;
the trained programs that hold a layer's bias compare to 1e-6, because the bias gradient
(elementwise_add_grad) is a vectorised sum whose order LLVM picks per function
(REORDERED_SUMS in test_compiler.py), so later steps may differ in the last bit.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from test_lowered_forms import (assert_compiled, assert_refused_and_kept, build_program,
                                compiled_after_learning, data, floats, interpreted_because,
                                run_both, run_programs)

RNG = np.random.default_rng(31)


def _labels(classes, n, width=1):
    return RNG.integers(0, classes, (n, width)).astype(np.int64)


def _bad_label(feed, slot, value):
    """``feed`` with one label of ``slot`` replaced by ``value``."""
    bad = dict(feed)
    bad[slot] = feed[slot].copy()
    bad[slot].reshape(-1)[1] = value
    return bad


# --- cross_entropy2: a classifier trained by SGD ------------------------------------------------
def _ce2_classifier(ignore_index=-100):
    x, label = pd.data("x", [None, 12]), pd.data("label", [None, 1], "int64")
    prob = pd.softmax(pd.layer.fc(pd.layer.fc(x, 16, act="tanh"), 5))
    loss = pd.mean(pd.op.cross_entropy2(X=prob, Label=label, ignore_index=ignore_index))
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss, prob]


@pytest.mark.parametrize("ignore_index", [-100, 2])
def test_a_classifier_trained_through_cross_entropy2(ignore_index):
    """Batches of three sizes (one machine code); with ignore_index 2, rows labelled 2
    cost 0 and get no gradient."""
    main, startup, fetch = build_program(lambda: _ce2_classifier(ignore_index))
    feeds = [{"x": floats(n, 12), "label": _labels(5, n)} for n in (16, 16, 9, 21)]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, "cross_entropy2", "cross_entropy_grad2", "sgd")


def test_cross_entropy2_alone_is_bit_for_bit():
    """Probabilities with a 0 (1e20, Paddle's TolerableValue) and an ignored row."""
    def build():
        x = data("x", [None, 4], "float64")
        y = pd.op.cross_entropy2(X=x, Label=pd.data("label", [None, 1], "int64"),
                                 ignore_index=3)
        grad, = pd.gradients([pd.mean(y)], [x])
        return [y, grad]
    x = np.abs(floats(6, 4, dtype=np.float64))
    x[0, 1] = 0.0
    label = np.array([[1], [3], [0], [2], [3], [1]], np.int64)
    main, compiled = run_both(build, {"x": x, "label": label})
    assert_compiled(main, compiled, "cross_entropy2", "cross_entropy_grad2")


def test_cross_entropy2_refuses_a_label_out_of_range():
    feed = {"x": floats(8, 12), "label": _labels(5, 8)}
    main, exe, scope, compiled, fetch = compiled_after_learning(_ce2_classifier, feed)
    assert_refused_and_kept(exe, compiled, main, scope, _bad_label(feed, "label", 5), fetch,
                            pd.IndexRangeError, "cross_entropy2: slot Label")


# --- fc: a fused inference program -------------------------------------------------------------
@pytest.mark.parametrize("act, padded, bias", [("", False, True), ("relu", False, True),
                                               ("relu", True, True), ("", False, False)])
def test_a_fused_fc(act, padded, bias):
    """Input [N, 2, 3] flattened at 1 (another batch size reuses the code)."""
    pad = 4 if padded else 0

    def build():
        x = pd.data("x", [None, 2, 3])
        w = pd.data("w", [6 + pad, 5 + pad])
        extra = {"Bias": pd.data("b", [5])} if bias else {}
        return [pd.op.fc(Input=x, W=w, activation_type=act, padding_weights=padded,
                         in_num_col_dims=1, **extra)]
    main, startup, fetch = build_program(build)
    w, b = floats(6 + pad, 5 + pad), floats(5)
    feeds = [{"x": floats(n, 2, 3), "w": w, **({"b": b} if bias else {})} for n in (7, 7, 3)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "fc")


# --- LAMB ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("decay", [0.01, 0.0])
def test_an_mlp_trained_by_lamb(decay):
    """Three steps; without decay the trust ratio is not applied (Paddle's rule)."""
    def build():
        x = pd.data("x", [None, 6])
        loss = pd.mean(pd.layers.square(pd.layer.fc(pd.layer.fc(x, 8, act="tanh"), 3)))
        pd.optimizer.Lamb(0.01, lamb_weight_decay=decay).minimize(loss)
        return [loss]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [{"x": floats(8, 6)} for _ in range(4)],
                            exact=False)
    assert_compiled(main, compiled, "lamb")


# --- auc fetched while training ----------------------------------------------------------------
def _auc_classifier(slide_steps):
    x, label = pd.data("x", [None, 6]), pd.data("label", [None, 1], "int64")
    prob = pd.softmax(pd.layer.fc(x, 2))
    stats = [pd.create_parameter([1, 101] if not slide_steps else [(1 + slide_steps) * 101 + 1],
                                 "int64", initializer=pd.Constant(0), trainable=False)
             for _ in range(2)]
    auc, _, _ = pd.op.auc(Predict=prob, Label=label, StatPos=stats[0], StatNeg=stats[1],
                          num_thresholds=100, slide_steps=slide_steps,
                          outputs={"StatPosOut": [stats[0]], "StatNegOut": [stats[1]]})
    loss = pd.mean(pd.op.cross_entropy2(X=prob, Label=label))
    pd.optimizer.SGD(0.5).minimize(loss)
    return [loss, auc]


@pytest.mark.parametrize("slide_steps", [0, 2])
def test_a_streaming_auc_fetched_while_training(slide_steps):
    """The statistics grow run by run (compiled: the same AUC each step)."""
    main, startup, fetch = build_program(lambda: _auc_classifier(slide_steps))
    feeds = [{"x": floats(n, 6), "label": _labels(2, n)} for n in (12, 12, 7, 12)]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, "auc", "cross_entropy2", "sgd")


# --- CTC and RNN-T over generated sequences ----------------------------------------------------
def _ctc_program(norm_by_times):
    x = pd.data("x", [6, None, 4])                    # [max_T, B, features]
    logits = pd.layer.fc(x, 5, num_flatten_dims=2)    # 5 classes, blank 0
    loss = pd.op.warpctc(Logits=logits, Label=pd.data("label", [None, 3], "int32"),
                         LogitsLength=pd.data("steps", [None], "int64"),
                         LabelLength=pd.data("symbols", [None], "int64"), blank=0,
                         norm_by_times=norm_by_times)
    loss = pd.mean(loss)
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss]


def _ctc_feed(batch):
    steps = RNG.integers(3, 7, batch).astype(np.int64)
    symbols = np.minimum(RNG.integers(0, 4, batch), (steps - 1) // 2).astype(np.int64)
    return {"x": floats(6, batch, 4), "label": RNG.integers(1, 5, (batch, 3)).astype(np.int32),
            "steps": steps, "symbols": symbols}


@pytest.mark.parametrize("norm_by_times", [False, True])
def test_a_ctc_loss_trained_by_sgd(norm_by_times):
    main, startup, fetch = build_program(lambda: _ctc_program(norm_by_times))
    feeds = [_ctc_feed(b) for b in (4, 4, 3)]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, "warpctc", "warpctc_grad", "sgd")


def test_a_ctc_loss_refuses_the_blank_as_a_label():
    feed = _ctc_feed(4)
    feed["symbols"] = np.full(4, 2, np.int64)
    feed["steps"] = np.full(4, 6, np.int64)
    main, exe, scope, compiled, fetch = compiled_after_learning(lambda: _ctc_program(False),
                                                                feed)
    assert_refused_and_kept(exe, compiled, main, scope, _bad_label(feed, "label", 0), fetch,
                            pd.IndexRangeError, "warpctc: slot Label")


def test_an_rnnt_loss_trained_by_sgd():
    """Joint log probabilities [B, T, U + 1, V] from an fc and a log_softmax."""
    def build():
        x = pd.data("x", [None, 4, 3, 5])
        acts = pd.op.log_softmax(X=pd.layer.fc(x, 6, num_flatten_dims=3), axis=-1)
        loss = pd.op.warprnnt(input=acts, label=pd.data("label", [None, 2], "int32"),
                              input_lengths=pd.data("steps", [None], "int32"),
                              label_lengths=pd.data("symbols", [None], "int32"), blank=0,
                              fastemit_lambda=0.0)
        loss = pd.mean(loss)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(b, 4, 3, 5), "label": RNG.integers(1, 6, (b, 2)).astype(np.int32),
              "steps": RNG.integers(1, 5, b).astype(np.int32),
              "symbols": RNG.integers(0, 3, b).astype(np.int32)} for b in (3, 3, 2)]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, "warprnnt", "warprnnt_grad", "sgd")


# --- hsigmoid and nce over a small vocabulary ---------------------------------------------------
def _hsigmoid_program(custom):
    x = pd.data("x", [None, 6])
    h = pd.layer.fc(x, 8, act="tanh")
    w = pd.create_parameter([6, 8], "float32")
    bias = pd.create_parameter([6, 1], "float32", is_bias=True)
    tree = {}
    if custom:
        tree = {"PathTable": pd.data("table", [None, 3], "int64"),
                "PathCode": pd.data("code", [None, 3], "int64")}
    loss = pd.op.hierarchical_sigmoid(X=h, W=w, Label=pd.data("label", [None, 1], "int64"),
                                      Bias=bias, num_classes=7, **tree)
    loss = pd.mean(loss)
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss]


def _hsigmoid_feed(n, custom):
    feed = {"x": floats(n, 6), "label": _labels(7, n)}
    if custom:
        table = RNG.integers(0, 6, (n, 3)).astype(np.int64)
        table[0, 2] = -1                                        # a shorter path
        feed.update(table=table, code=RNG.integers(0, 2, (n, 3)).astype(np.int64))
    return feed


@pytest.mark.parametrize("custom", [False, True])
def test_hsigmoid_over_a_small_vocabulary(custom):
    main, startup, fetch = build_program(lambda: _hsigmoid_program(custom))
    feeds = [_hsigmoid_feed(n, custom) for n in (8, 8, 5)]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, "hierarchical_sigmoid", "hierarchical_sigmoid_grad", "sgd")


@pytest.mark.parametrize("custom, slot, value", [(False, "label", 7),
                                                 (True, "table", 6)])
def test_hsigmoid_refuses_a_class_or_node_out_of_range(custom, slot, value):
    feed = _hsigmoid_feed(8, custom)
    main, exe, scope, compiled, fetch = compiled_after_learning(
        lambda: _hsigmoid_program(custom), feed)
    assert_refused_and_kept(exe, compiled, main, scope, _bad_label(feed, slot, value), fetch,
                            pd.IndexRangeError, "hierarchical_sigmoid")


def _nce_program(seed, custom_neg=()):
    x = pd.data("x", [None, 6])
    h = pd.layer.fc(x, 8, act="tanh")
    w = pd.create_parameter([10, 8], "float32")
    bias = pd.create_parameter([10, 1], "float32", is_bias=True)
    cost = pd.op.nce(Input=h, Label=pd.data("label", [None, 1], "int64"), Weight=w, Bias=bias,
                     num_total_classes=10, num_neg_samples=3, sampler=1, seed=seed,
                     custom_neg_classes=list(custom_neg))
    loss = pd.mean(cost)
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss]


@pytest.mark.parametrize("seed, custom_neg", [(7, ()), (0, (1, 4, 8))])
def test_nce_with_known_draws_trains_the_same_compiled(seed, custom_neg):
    """A seed draws the same negatives in the compiled code (the kernel's counter-based
    draws); custom negatives draw none."""
    main, startup, fetch = build_program(lambda: _nce_program(seed, custom_neg))
    feeds = [{"x": floats(n, 6), "label": _labels(10, n)} for n in (8, 8, 5)]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, "nce", "nce_grad", "sgd")


def test_nce_drawing_with_a_new_seed_each_run_stays_interpreted():
    feed = {"x": floats(8, 6), "label": _labels(10, 8)}
    _, _, _, compiled, _ = compiled_after_learning(lambda: _nce_program(0), feed)
    assert interpreted_because(compiled, "nce").startswith("draws its negatives")


def test_nce_refuses_a_class_out_of_range():
    feed = {"x": floats(8, 6), "label": _labels(10, 8)}
    main, exe, scope, compiled, fetch = compiled_after_learning(lambda: _nce_program(7), feed)
    assert_refused_and_kept(exe, compiled, main, scope, _bad_label(feed, "label", 10), fetch,
                            pd.IndexRangeError, "nce")


# --- fused elementwise activations -------------------------------------------------------------
@pytest.mark.parametrize("functors", [["relu", "elementwise_add"], ["tanh", "elementwise_mul"],
                                      ["elementwise_add", "sigmoid"],
                                      ["elementwise_mul", "scale"]])
@pytest.mark.parametrize("save", [False, True])
def test_fused_elemwise_activation_trained_through(functors, save):
    """Two fc outputs of one shape fused, trained by SGD (both gradients)."""
    def build():
        x = pd.data("x", [None, 6])
        a, b = pd.layer.fc(x, 5), pd.layer.fc(x, 5)
        out = pd.op.fused_elemwise_activation(X=a, Y=b, functor_list=functors, scale=0.5,
                                              save_intermediate_out=save)
        loss = pd.mean(pd.layers.square(out))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, out]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 6)} for n in (7, 7, 4)]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, "fused_elemwise_activation",
                    "fused_elemwise_activation_grad")


@pytest.mark.parametrize("functors", [["relu", "elementwise_add"],
                                      ["elementwise_add", "tanh"]])
def test_a_fused_bias_add_is_bit_for_bit(functors):
    """Y [5] broadcast into X [N, 5] (a bias, as the fuse pass meets it): the forward
    compiled; its gradient sums Y's over the rows, which stays in the interpreter."""
    def build():
        x, y = data("x", [None, 5]), data("y", [5])
        out = pd.op.fused_elemwise_add_activation(X=x, Y=y, functor_list=functors, axis=-1)
        return [out]
    main, compiled = run_both(build, {"x": floats(6, 5), "y": floats(5)})
    assert_compiled(main, compiled, "fused_elemwise_add_activation")
