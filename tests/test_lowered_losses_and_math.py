"""The lowered forms of the losses and the elementwise math compute what their kernels do.

Programs as users write them (a binary classifier trained on BCEWithLogits, a regression
on a Huber loss, smoothed labels, a rounded prediction, a mask's bitwise ops), run plainly
and through ``pd.CompiledProgram`` from one start: the same fetched values bit for bit (the
compiled forms call the kernels' own scalar functions and loops, in the kernels' order),
no failed compiled run, and the ops inside compiled segments. A label out of range fed to
the compiled nll_loss raises the interpreter's error, and the parameters stay as they were.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.kernels.cpu import nll_loss as KN
from test_lowered_forms import (assert_compiled, assert_refused_and_kept, build_program,
                                compiled_after_learning, data, floats, interpreted_because,
                                run_both, run_programs)

RNG = np.random.default_rng(11)


def _trained(build_loss, feeds, *ops, runs_each: int = 1):
    """``build_loss()`` -> (the loss, its ops' other outputs to fetch); trained by SGD,
    compiled and plain, once per feed; the parameters fetched too."""
    def build():
        loss, *more = build_loss()
        pd.optimizer.SGD(0.2).minimize(loss)
        block = pd.default_main_program().global_block()
        params = [v for v in block.vars.values() if v.persistable and "@" not in v.name
                  and v.name.endswith((".w_0", ".b_0"))]
        return [loss, *more, *params]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [f for f in feeds for _ in range(runs_each)])
    assert_compiled(main, compiled, *ops, "sgd")
    return main, compiled


# --- losses of a prediction and a label ------------------------------------------------------
def test_a_binary_classifier_trained_on_bce_with_logits():
    """fc -> sigmoid_cross_entropy_with_logits (labels of -100 ignored) -> mean, by SGD."""
    def build_loss():
        x, label = pd.data("x", [None, 6]), pd.data("label", [None, 1])
        logits = pd.layer.fc(x, 1)
        loss = pd.op.sigmoid_cross_entropy_with_logits(X=logits, Label=label)
        return pd.mean(loss), loss
    label = RNG.integers(0, 2, (8, 1)).astype(np.float32)
    label[3] = -100
    feeds = [{"x": floats(8, 6), "label": label}, {"x": floats(5, 6), "label": label[:5]}]
    _trained(build_loss, feeds, "sigmoid_cross_entropy_with_logits",
             "sigmoid_cross_entropy_with_logits_grad", runs_each=2)


@pytest.mark.parametrize("loss_type", ["bce_loss", "log_loss"])
def test_a_classifier_on_probabilities(loss_type):
    """fc -> sigmoid -> bce_loss (Paddle's BCELoss) or log_loss -> mean, by SGD."""
    def build_loss():
        x, label = pd.data("x", [None, 4]), pd.data("label", [None, 1])
        p = pd.layer.fc(x, 1, act="sigmoid")
        if loss_type == "bce_loss":
            loss = pd.op.bce_loss(X=p, Label=label)
        else:
            loss = pd.op.log_loss(Predicted=p, Labels=label, epsilon=1e-4)
        return pd.mean(loss), loss
    feed = {"x": floats(6, 4), "label": RNG.integers(0, 2, (6, 1)).astype(np.float32)}
    _trained(build_loss, [feed], loss_type, loss_type + "_grad", runs_each=3)


def test_bce_loss_refuses_a_probability_outside_0_1_when_compiled():
    """bce_loss's scalar function raises in compiled code on an X outside [0, 1]; the
    interpreter's rerun gives the op's error naming the element."""
    main, startup, fetch = build_program(lambda: [pd.op.bce_loss(
        X=pd.data("p", [3]), Label=pd.data("label", [3]))])
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main)
    good = {"p": np.array([0.0, 0.5, 1.0], np.float32), "label": np.ones(3, np.float32)}
    for _ in range(2):
        exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    assert 0 in compiled.segments()
    with pytest.raises(pd.ExecutionError, match=r"op 0 bce_loss: ValueError: bce_loss: input "
                       r"slot X: expected probabilities in \[0, 1\], given X\[1\] = 1.5 "):
        exe.run(compiled, feed=dict(good, p=np.array([0.5, 1.5, 0.2], np.float32)),
                fetch_list=fetch, scope=scope)
    exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    assert compiled.failures == [] and compiled.disabled_because is None


# --- regression -----------------------------------------------------------------------------
def test_a_regression_trained_on_a_huber_loss():
    """fc -> huber_loss against a fixed target (F.smooth_l1_loss saves it): Residual and
    Out from one compiled loop, dX alone fused into the gradient's loop."""
    def build_loss():
        x, y = pd.data("x", [None, 5]), pd.data("y", [None, 1])
        pred = pd.layer.fc(x, 1)
        loss = pd.op.huber_loss(X=pred, Y=y, delta=0.5)
        return pd.mean(loss), loss
    feeds = [{"x": floats(7, 5), "y": 2 * floats(7, 1)}, {"x": floats(3, 5), "y": floats(3, 1)}]
    _trained(build_loss, feeds, "huber_loss", "huber_loss_grad", runs_each=2)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_huber_gradients_of_both_operands(dtype):
    """Both X@GRAD and Y@GRAD: the gradient op stays in the interpreter (one of its two
    outputs is the other negated), the forward runs compiled."""
    def build():
        x, y = data("x", [4, 3], dtype), data("y", [4, 3], dtype)
        out = pd.op.huber_loss(X=x, Y=y, delta=1.0)
        return [out, *pd.gradients(pd.mean(out * out), [x, y])]
    feed = {"x": floats(4, 3, dtype=dtype), "y": 2 * floats(4, 3, dtype=dtype)}
    main, compiled = run_both(build, feed)
    assert_compiled(main, compiled, "huber_loss")
    assert interpreted_because(compiled, "huber_loss_grad").startswith("both X@GRAD and Y@GRAD")


# --- smoothed labels ----------------------------------------------------------------------
@pytest.mark.parametrize("with_prior", [False, True])
def test_a_classifier_on_smoothed_labels(with_prior):
    """one-hot labels -> label_smooth -> softmax_with_cross_entropy(soft_label), by SGD;
    epsilon / classes is divided at run time, so another batch reuses the machine code."""
    def build_loss():
        x, onehot = pd.data("x", [None, 6]), pd.data("onehot", [None, 4])
        prior = pd.data("prior", [1, 4]) if with_prior else None
        smooth = pd.op.label_smooth(X=onehot, PriorDist=prior, epsilon=0.1)
        loss = pd.layers.softmax_with_cross_entropy(pd.layer.fc(x, 4), smooth, soft_label=True)
        return pd.mean(loss), smooth

    def feed(n):
        f = {"x": floats(n, 6), "onehot": np.eye(4, dtype=np.float32)[RNG.integers(0, 4, n)]}
        if with_prior:
            f["prior"] = np.array([[0.1, 0.2, 0.3, 0.4]], np.float32)
        return f
    _trained(build_loss, [feed(8), feed(5)], "label_smooth", runs_each=2)


def test_label_smooth_gradient():
    def build():
        x = data("x", [5, 3])
        out = pd.op.label_smooth(X=x, epsilon=0.2)
        return [out, *pd.gradients(pd.mean(out * out), [x])]
    main, compiled = run_both(build, {"x": floats(5, 3)})
    assert_compiled(main, compiled, "label_smooth", "label_smooth_grad")


# --- losses on log-probabilities ------------------------------------------------------------
@pytest.mark.parametrize("reduction", ["none", "sum", "mean", "batchmean"])
@pytest.mark.parametrize("log_target", [False, True])
def test_kldiv_loss_and_its_gradient(reduction, log_target):
    """A reduced loss sums with the kernel's own row sum and divides by a count made at
    run time: batches of two sizes run the same compiled code."""
    def build():
        x, target = data("x", [None, 4]), pd.data("target", [None, 4])
        loss = pd.op.kldiv_loss(X=x, Target=target, reduction=reduction,
                                log_target=log_target)
        return [loss, *pd.gradients(pd.mean(loss * loss), [x])]

    def feed(n):
        t = np.abs(floats(n, 4))
        t[0, 1] = 0                                    # 0 log 0 = 0
        return {"x": floats(n, 4), "target": np.log(t + 0.1) if log_target else t}
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [feed(6), feed(6), feed(3), feed(3)])
    assert_compiled(main, compiled, "kldiv_loss", "kldiv_loss_grad")


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("weighted", [False, True])
def test_a_classifier_trained_on_nll_loss(reduction, weighted):
    """fc -> log_softmax -> nll_loss (a label ignored; class weights or none), by SGD."""
    def build_loss():
        x, label = pd.data("x", [None, 5]), pd.data("label", [None], "int64")
        logp = pd.op.log_softmax(X=pd.layer.fc(x, 3), axis=-1)
        weight = pd.layers.assign(np.array([1.0, 2.0, 0.5], np.float32)) if weighted else None
        out, total = pd.op.nll_loss(X=logp, Label=label, Weight=weight, ignore_index=-100,
                                    reduction=reduction)
        return pd.mean(out), out, total
    label = RNG.integers(0, 3, 6)
    label[2] = -100
    feeds = [{"x": floats(6, 5), "label": label}, {"x": floats(4, 5), "label": label[:4]}]
    _trained(build_loss, feeds, "nll_loss", "nll_loss_grad", runs_each=2)


def test_nll_loss_of_pixels():
    """X [N, C, H, W], Label [N, H, W]: a segmentation's loss and its gradient."""
    def build():
        x, label = data("x", [2, 3, 2, 2]), pd.data("label", [2, 2, 2], "int64")
        out, _ = pd.op.nll_loss(X=x, Label=label, reduction="mean")
        return [out, *pd.gradients(out, [x])]
    main, compiled = run_both(build, {"x": floats(2, 3, 2, 2),
                                      "label": RNG.integers(0, 3, (2, 2, 2))})
    assert_compiled(main, compiled, "nll_loss", "nll_loss_grad")


@pytest.mark.parametrize("bad_label", [3, -1])
def test_nll_loss_out_of_range_label_raises_the_interpreters_error(bad_label):
    """The compiled range check raises, the block reruns in the interpreter, whose error
    names the op, the slot and the label; SGD did not run: the parameters are unchanged."""
    def build():
        x, label = pd.data("x", [None, 4]), pd.data("label", [None], "int64")
        out, _ = pd.op.nll_loss(X=pd.layer.fc(x, 3), Label=label, reduction="mean")
        pd.optimizer.SGD(0.1).minimize(out)
        return [out]
    good = {"x": floats(4, 4), "label": np.array([0, 1, 2, 1])}
    main, exe, scope, compiled, fetch = compiled_after_learning(build, good)
    index = next(i for i, op in enumerate(main.global_block().ops) if op.type == "nll_loss")
    assert index in compiled.segments()
    assert_refused_and_kept(exe, compiled, main, scope,
                            dict(good, label=np.array([0, bad_label, 2, 1])), fetch,
                            pd.IndexRangeError, f"op {index} nll_loss: slot Label")
    exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    assert compiled.failures == [] and compiled.disabled_because is None
    with pytest.raises(IndexError, match="nll_loss: a class index of Label is out of range"):
        KN.nll_reduced(floats(2, 3), np.array([0, bad_label]), None, -100, True)


# --- rounding -------------------------------------------------------------------------------
@pytest.mark.parametrize("op_type", ["round", "floor", "ceil", "trunc", "sign"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_rounded_prediction_and_its_flat_gradient(op_type, dtype):
    """A prediction rounded (halves away from zero, -0.0 kept, NaN and inf through), used
    in a loss: the rounding's gradient is zeros (sign's a scale by 0)."""
    def build():
        x = data("x", [3, 4], dtype)
        rounded = getattr(pd.op, op_type)(X=x)
        return [rounded, *pd.gradients(pd.mean(rounded * x), [x])]
    x = (3 * floats(3, 4, dtype=np.float64)).astype(dtype)
    x.flat[:6] = [0.5, -0.5, 2.5, -0.3, np.nan, np.inf]
    main, compiled = run_both(build, {"x": x})
    assert_compiled(main, compiled, op_type, *([] if op_type == "sign" else [op_type + "_grad"]))


# --- binary math ----------------------------------------------------------------------------
@pytest.mark.parametrize("op_type, x_slot, y_slot, y_shape", [
    *[(t, "X", "Y", shape) for t in ("elementwise_fmax", "elementwise_fmin",
                                     "elementwise_heaviside") for shape in ((4, 3), (3,))],
    ("atan2", "X1", "X2", (4, 3))])                  # (atan2: X1 and X2 of one shape)
def test_binary_math_and_its_gradients(op_type, x_slot, y_slot, y_shape):
    """Y of X's shape, or one row (numpy's broadcasting, summed back over the rows)."""
    def build():
        x, y = data("x", [4, 3]), data("y", list(y_shape))
        out = getattr(pd.op, op_type)(**{x_slot: x, y_slot: y})
        return [out, *pd.gradients(pd.mean(out * out), [x, y])]
    x = floats(4, 3)
    x[0, :] = [0.0, np.nan, 1.0]                        # heaviside's 0, fmax's NaN
    main, compiled = run_both(build, {"x": x, "y": floats(*y_shape)})
    assert_compiled(main, compiled, op_type, op_type + "_grad")


def test_a_gradient_summed_over_trailing_dims_stays_in_the_interpreter():
    """Y [4, 1] broadcast along X's last dim: numpy sums its gradient pairwise, in another
    order than a compiled loop; the forward runs compiled."""
    def build():
        x, y = data("x", [4, 16]), data("y", [4, 1])
        out = pd.op.elementwise_fmax(X=x, Y=y)
        return [out, *pd.gradients(pd.mean(out * out), [x, y])]
    main, compiled = run_both(build, {"x": floats(4, 16), "y": floats(4, 1)})
    assert_compiled(main, compiled, "elementwise_fmax")
    assert interpreted_because(compiled, "elementwise_fmax_grad").startswith(
        "a broadcast operand's gradient")


def test_lerp_toward_a_target_and_its_gradients():
    def build():
        x, y, w = data("x", [5, 2]), data("y", [5, 2]), pd.data("w", [2])
        out = pd.op.lerp(X=x, Y=y, Weight=w)
        return [out, *pd.gradients(pd.mean(out * out), [x, y])]
    main, compiled = run_both(build, {"x": floats(5, 2), "y": floats(5, 2),
                                      "w": np.array([0.25, 0.75], np.float32)})
    assert_compiled(main, compiled, "lerp", "lerp_grad")


def test_nextafter_steps_both_ways():
    def build():
        return [pd.op.nextafter(x=pd.data("x", [4], "float64"), y=pd.data("y", [4], "float64"))]
    main, compiled = run_both(build, {"x": np.array([1.0, 0.0, -2.0, np.inf]),
                                      "y": np.array([2.0, -1.0, -2.0, 0.0])})
    assert_compiled(main, compiled, "nextafter")


# --- masks ----------------------------------------------------------------------------------
def test_a_mask_of_finite_values_combined_bitwise():
    """isfinite/isnan/isinf of a prediction, combined with bitwise and/or/xor/not (on
    bools: the logical ops), and integer flags combined the same way."""
    def build():
        x, flags = pd.data("x", [3, 4]), pd.data("flags", [3, 4], "int32")
        finite, nan, inf = (pd.op.isfinite_v2(X=x), pd.op.isnan_v2(X=x), pd.op.isinf_v2(X=x))
        keep = pd.op.bitwise_and(X=finite, Y=pd.op.bitwise_not(X=nan))
        odd = pd.op.bitwise_xor(X=pd.op.bitwise_or(X=keep, Y=inf), Y=nan)
        bits = pd.op.bitwise_not(X=pd.op.bitwise_and(X=flags, Y=pd.op.bitwise_or(X=flags,
                                                                                 Y=flags)))
        return [keep, odd, bits]
    x = floats(3, 4)
    x.flat[:3] = [np.nan, np.inf, -np.inf]
    main, compiled = run_both(build, {"x": x, "flags": RNG.integers(-8, 8, (3, 4), np.int32)})
    assert_compiled(main, compiled, "isfinite_v2", "isnan_v2", "isinf_v2", "bitwise_and",
                    "bitwise_or", "bitwise_xor", "bitwise_not")


@pytest.mark.parametrize("weighted", [False, True])
def test_a_regression_trained_on_fluids_smooth_l1_loss(weighted):
    """Fluid 1.x's smooth_l1_loss (summed per row; inside/outside weights or none): Diff
    and the row sums from the kernel's loops, both gradients from one loop."""
    def build_loss():
        x, y = pd.data("x", [None, 4]), pd.data("y", [None, 2])
        weights = {}
        if weighted:
            weights = {"InsideWeight": pd.data("inside", [None, 2]),
                       "OutsideWeight": pd.data("outside", [None, 2])}
        out = pd.op.smooth_l1_loss(X=pd.layer.fc(x, 2), Y=y, sigma=1.5, **weights)
        return pd.mean(out), out

    def feed(n):
        f = {"x": floats(n, 4), "y": floats(n, 2)}
        if weighted:
            f.update(inside=np.abs(floats(n, 2)), outside=np.abs(floats(n, 2)))
        return f
    _trained(build_loss, [feed(6), feed(3)], "smooth_l1_loss", "smooth_l1_loss_grad",
             runs_each=2)
