"""Programs saved by real PaddlePaddle 3.3 (legacy IR) run on our executor.

The fixtures were made by tests/fixtures/paddle/make_fixtures.py in a scratch virtualenv
with paddlepaddle installed; paddlepaddle is not a dependency of this project.
"""
import json
import os

import numpy as np
import pytest

import paddle_nb as pd

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")
META = json.load(open(os.path.join(FIXTURES, "meta.json")))


def _load(name):
    return pd.Program.from_bytes(open(os.path.join(FIXTURES, name), "rb").read())


def _scope_with_paddle_params():
    scope = pd.Scope()
    for name, value in np.load(os.path.join(FIXTURES, "params.npz")).items():
        scope.var(name).set(value)
    return scope


def test_training_program_parses_with_forward_backward_and_sgd_ops():
    prog = _load("mlp_train.pdesc")
    assert [op.type for op in prog.global_block().ops] == META["op_types_main"]
    assert sorted(p.name for p in prog.all_parameters()) == sorted(META["parameters"])


def test_forward_part_pruned_to_the_output_matches_paddle(exe):
    prog = _load("mlp_train.pdesc")
    forward = pd.prune(prog, [META["fetch"]])
    assert [op.type for op in forward.global_block().ops] == [
        "mul", "elementwise_add", "relu", "mul", "elementwise_add", "softmax"]
    x = np.load(os.path.join(FIXTURES, "x.npy"))
    prob, = exe.run(forward, feed={"x": x}, fetch_list=[META["fetch"]],
                    scope=_scope_with_paddle_params())
    np.testing.assert_allclose(prob, np.load(os.path.join(FIXTURES, "prob.npy")), atol=1e-5)


def test_an_op_type_we_do_not_have_is_named_with_its_block_path(exe):
    prog = _load("mlp_train.pdesc")
    prog.global_block().ops[2].desc.type = "relu_v9"      # as if Paddle had a newer op
    with pytest.raises(pd.ExecutionError, match=r"block 0 > op 2 relu_v9: unknown op type "
                                                r"'relu_v9'; did you mean relu"):
        exe.run(prog, feed={"x": np.load(os.path.join(FIXTURES, "x.npy"))},
                scope=_scope_with_paddle_params())


def test_missing_label_feed_is_named(exe):
    prog = _load("mlp_train.pdesc")
    with pytest.raises(pd.ExecutionError, match=r"op 6 softmax_with_cross_entropy: input slot "
                                                r"Label: variable 'label' has no value"):
        exe.run(prog, feed={"x": np.load(os.path.join(FIXTURES, "x.npy"))},
                scope=_scope_with_paddle_params())


def test_inference_model_with_feed_and_fetch_ops_runs(exe):
    prog = _load("mlp_infer.pdmodel")
    types = [op.type for op in prog.global_block().ops]
    assert types[0] == "feed" and types[-1] == "fetch"
    x = np.load(os.path.join(FIXTURES, "x.npy"))
    scope = _scope_with_paddle_params()
    prob, = exe.run(prog, feed={"x": x}, fetch_list=[META["fetch"]], scope=scope)
    np.testing.assert_allclose(prob, np.load(os.path.join(FIXTURES, "prob.npy")), atol=1e-5)
    # the program's own fetch op filled the fetch list, as in Paddle
    np.testing.assert_allclose(scope.find_var("fetch").get()[0], prob)


def test_misc_ops_match_paddle(exe):
    """scale, reshape2, transpose2, concat, reduce_sum, matmul_v2 (with trans_x),
    elementwise_add/mul as Paddle wrote them, pruned away from its control flow."""
    prog = _load("ops_misc.pdesc")
    want = np.load(os.path.join(FIXTURES, "misc_out.npz"))
    names = [META["misc_names"][k] for k in ("y", "z", "t", "c", "s", "m", "m2", "e", "e2")]
    pruned = pd.prune(prog, names)
    assert "conditional_block" not in [op.type for op in pruned.global_block().ops]
    got = exe.run(pruned, feed={"x": np.load(os.path.join(FIXTURES, "x.npy"))},
                  fetch_list=names, scope=pd.Scope())
    for name, value in zip(names, got):
        np.testing.assert_allclose(value, want[name], rtol=1e-5, atol=1e-5, err_msg=name)


def _train_fixture(name):
    return dict(np.load(os.path.join(FIXTURES, name)))


@pytest.mark.parametrize("program,steps", [
    ("mlp_train.pdesc", "train_steps.npz"),
    ("mlp_momentum.pdesc", "train_momentum.npz"),
    ("mlp_adam.pdesc", "train_adam.npz"),
])
def test_paddle_training_program_runs_three_steps_like_paddle(exe, program, steps):
    """fc -> softmax -> loss -> append_backward -> optimizer, saved by Paddle, trained here
    from Paddle's initial parameters: losses, gradients and final parameters match."""
    prog = _load(program)
    ref = _train_fixture(steps)
    scope = _scope_with_paddle_params()
    for key, value in ref.items():            # optimizer accumulators as the startup left them
        if key.startswith("init_acc__"):
            scope.var(key[len("init_acc__"):]).set(value)
    if "learning_rate_0" not in scope.local_var_names():
        scope.var("learning_rate_0").set(np.asarray(ref["learning_rate"], np.float32))
    params = META["parameters"]
    for k in range(3):
        fetched = exe.run(prog, feed={"x": ref[f"x_{k}"], "label": ref[f"label_{k}"]},
                          fetch_list=[META["loss"]] + [p + "@GRAD" for p in params],
                          scope=scope)
        np.testing.assert_allclose(fetched[0], ref[f"loss_{k}"], atol=1e-5)
        for p, g in zip(params, fetched[1:]):
            np.testing.assert_allclose(g, ref[f"grad_{k}__{p}"], atol=1e-5, err_msg=p)
    for p in params:
        np.testing.assert_allclose(scope.find_var(p).get(), ref[f"final__{p}"], atol=1e-5,
                                   err_msg=p)
    for key in ref:
        if key.startswith("acc__"):
            np.testing.assert_allclose(scope.find_var(key[5:]).get(), ref[key], atol=1e-5,
                                       err_msg=key)


# Values Paddle 2.6.2 saved that are wrong, each checked on its own below against the
# analytic value (and by central differences in the op's gradient row).
PADDLE_WRONG = {"gather_cols_x@GRAD", "gn_plain_float32_x@GRAD", "gn_plain_float64_x@GRAD"}


@pytest.mark.parametrize("stem", ["gelu", "cross_entropy", "math", "squeeze", "reduce", "gather",
                                  "pointwise_loss",
                                  "stack", "slice", "scatter", "conv", "pool", "cnn_act",
                                  "dropout", "batched_matmul", "embedding",
                                  "layer_norm", "transformer", "rnn",
                                  "metrics_losses",   # accuracy, nll_loss, kldiv_loss
                                  # argsort, masked_select, roll, meshgrid, tril_triu
                                  "manipulation",
                                  # mish, logsigmoid, logsumexp, celu, selu, softsign,
                                  # tanh_shrink, hard_shrink, softshrink, thresholded_relu,
                                  # brelu, maxout
                                  "activations",
                                  # trunc, floor, ceil, round, log1p, log2, log10, logit,
                                  # lgamma, digamma, conj, cumprod
                                  "math_tail",
                                  # greater_equal, less_equal, reduce_all/_any, isnan_v2,
                                  # isinf_v2, isfinite_v2, logical_* on numbers, bitwise_*,
                                  # size, sequence_mask
                                  "compare_logic",
                                  # repeat_interleave, crop_tensor, take_along_axis,
                                  # index_sample, multiplex, broadcast_tensors, unbind,
                                  # shard_index, gather_tree (their attribute tensors too)
                                  "by_index",
                                  # set_value (steps, a tensor start), index_put (a mask,
                                  # accumulate), put_along_axis (add)
                                  "write_by_index",
                                  # nce's gradient, negatives fixed (custom_neg_classes)
                                  "nce"])
def test_single_op_fixtures_match_paddle_forward_and_gradients(exe, stem):
    """Programs of one op type, each followed by the gradient ops Paddle's own backward
    appended, and the numbers Paddle's CPU kernels computed (make_<stem>_fixture.py).
    What no op writes is a feed, or for a parameter (the transformer's layers) set in the
    scope as its startup program would; everything else Paddle computed is compared."""
    program = _load(f"{stem}_ops.pdesc")
    saved = np.load(os.path.join(FIXTURES, f"{stem}_io.npz"))
    block = program.global_block()
    written = {name for op in block.ops for names in op.outputs.values() for name in names}
    scope = pd.Scope()
    for k in saved.files:
        if k not in written and k in block.vars and block.var(k).persistable:
            scope.var(k).set(saved[k])
    feed = {k: saved[k] for k in saved.files if k not in written and scope.find_var(k) is None}
    fetch = [k for k in saved.files if k in written]
    assert feed and fetch and any(k.endswith("@GRAD") for k in fetch)
    got = exe.run(program, feed=feed, fetch_list=fetch, scope=scope)
    for name, value in zip(fetch, got):
        if name not in PADDLE_WRONG:
            np.testing.assert_allclose(value, saved[name], rtol=1e-5, atol=1e-6, err_msg=name)


def test_paddles_gather_gradient_along_axis_1_is_wrong_and_ours_is_not(exe):
    """Paddle 2.6.2's gather_grad with axis=1 on X [2, 4, 3] adds every outer row's dOut
    from outer row 0's: dX[1, Index[j]] = W[0, j], where d/dX of sum(gather(X) * W) is
    W[1, j] there. Ours gives the analytic value."""
    program = _load("gather_ops.pdesc")
    saved = np.load(os.path.join(FIXTURES, "gather_io.npz"))
    w, index = saved["gather_cols_w"], saved["gather_cols_index"]
    analytic = np.zeros_like(saved["gather_cols_x"])
    np.add.at(analytic, (slice(None), index), w)
    paddle = saved["gather_cols_x@GRAD"]
    assert not np.allclose(paddle, analytic)
    np.testing.assert_allclose(paddle[1, index[1]], w[0, 1], rtol=1e-6)    # row 0's W
    written = {name for op in program.global_block().ops
               for names in op.outputs.values() for name in names}
    feed = {k: saved[k] for k in saved.files if k not in written}
    got, = exe.run(program, feed=feed, fetch_list=["gather_cols_x@GRAD"], scope=pd.Scope())
    np.testing.assert_allclose(got, analytic, rtol=1e-6)


# --- normalization and dropout (make_norm_fixture.py, make_dropout_fixture.py) ---------------
def _run_norm_fixture(exe, fetch=None):
    """The norm fixture's program, batch_norm's running statistics set in the scope to
    the values they held before Paddle's run (``init__<name>``): batch_norm updates them
    in place (MeanOut is Mean's variable), so a feed cannot give them."""
    program = _load("norm_ops.pdesc")
    saved = np.load(os.path.join(FIXTURES, "norm_io.npz"))
    written = {name for op in program.global_block().ops
               for names in op.outputs.values() for name in names}
    scope = pd.Scope()
    kept = {}
    for key in saved.files:
        if key.startswith("init__"):
            kept[key[6:]] = saved[key].copy()
            scope.var(key[6:]).set(kept[key[6:]])
    feed = {k: saved[k] for k in saved.files if k not in written and k not in kept
            and not k.startswith("init__")}
    fetch = fetch or [k for k in saved.files if k in written]
    return saved, fetch, exe.run(program, feed=feed, fetch_list=fetch, scope=scope), kept


def test_norm_fixture_matches_paddle_running_statistics_included(exe):
    """batch_norm (training NCHW, 2-D, NHWC; test mode), instance_norm and group_norm,
    forward and Paddle's backward; MeanOut and VarianceOut are the running statistics
    Paddle left (momentum 0.8, the biased batch variance), SavedVariance 1/sqrt(var + eps).
    The arrays the scope held before the run are not changed: new ones replace them."""
    saved, fetch, got, kept = _run_norm_fixture(exe)
    assert {"batch_norm_grad", "instance_norm_grad", "group_norm_grad"} <= {
        op.type for op in _load("norm_ops.pdesc").global_block().ops}
    for name, value in zip(fetch, got):
        if name not in PADDLE_WRONG:
            np.testing.assert_allclose(value, saved[name], rtol=1e-5, atol=1e-6, err_msg=name)
    for name, before in kept.items():
        np.testing.assert_array_equal(before, saved[f"init__{name}"], err_msg=name)
        if "test" not in name:
            assert not np.allclose(saved[name], before), name      # it did move


def test_paddles_group_norm_gradient_without_scale_is_wrong_and_ours_is_not(exe):
    """Paddle 2.6.2's group_norm_grad without Scale and Bias gives a wrong X@GRAD (off by
    up to 0.5 here); central differences of sum(Y * W) agree with ours."""
    saved, fetch, got, _ = _run_norm_fixture(exe, ["gn_plain_float64_x@GRAD"])
    x, w = saved["gn_plain_float64_x"], saved["gn_plain_float64_w0"]

    def loss(a):
        g = a.reshape(a.shape[0], 2, -1)
        y = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + 1e-4)
        return float((y.reshape(a.shape) * w).sum())
    numeric = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = 1e-6
        numeric[idx] = (loss(x + step) - loss(x - step)) / 2e-6
    assert not np.allclose(saved["gn_plain_float64_x@GRAD"], numeric, atol=1e-3)
    np.testing.assert_allclose(got[0], numeric, rtol=1e-5, atol=1e-6)


def test_dropout_training_fixture_matches_paddles_mask_structurally(exe):
    """Paddle's random mask cannot be drawn again: Out is X * Mask (/ (1 - p) for
    upscale_in_train) for Paddle's own Mask, and our dropout_grad fed Paddle's Mask and
    dOut (= W) gives Paddle's X@GRAD."""
    program = _load("dropout_train_ops.pdesc")
    saved = np.load(os.path.join(FIXTURES, "dropout_train_io.npz"))
    ops = program.global_block().ops
    drops, grads = ([op for op in ops if op.type == t] for t in ("dropout", "dropout_grad"))
    assert len(drops) == len(grads) == 4
    for op in drops:
        gop = next(g for g in grads if g.input("Mask") == op.output("Mask"))
        x, mask = saved[op.input("X")[0]], saved[op.output("Mask")[0]]
        p = op.attr("dropout_prob")
        upscale = op.attr("dropout_implementation") == "upscale_in_train"
        factor = x.dtype.type(1 / (1 - np.float32(p))) if upscale else 1
        assert mask.dtype == np.uint8 and 0 < (mask == 0).mean() < 1
        np.testing.assert_allclose(saved[op.output("Out")[0]], x * mask * factor, rtol=1e-6)
        alone = pd.Program()
        blk = alone.global_block()
        w = saved[op.input("X")[0].replace("_x", "_w")]
        m = blk.create_var("mask", list(mask.shape), "uint8")
        d = blk.create_var("dout", list(w.shape), w.dtype.name)
        dx = blk.create_var("dx")
        blk.append_op("dropout_grad", {"Mask": [m], "Out@GRAD": [d]}, {"X@GRAD": [dx]},
                      dict(gop.attrs))
        got, = exe.run(alone, feed={"mask": mask, "dout": w}, fetch_list=["dx"],
                       scope=pd.Scope())
        np.testing.assert_allclose(got, saved[gop.output("X@GRAD")[0]], rtol=1e-6)
