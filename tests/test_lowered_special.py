"""The lowered forms of the order statistics, the Bessel functions and polygamma, and the
small ops (searchsorted, gather_tree, allclose, equal_all, is_empty, size, the complex
views, conj, shard_index, empty) compute what their kernels compute.

Programs as users hold them: a median / k-th value pooling in a small model trained by
SGD, a beam search's gather_tree, a feature bucketized by searchsorted, a von-Mises-like
loss through i0e, a loss through polygamma, allclose / equal_all fetched as checks, a
complex view pipeline. Each runs plainly and through ``pd.CompiledProgram`` from one start
(tests/test_lowered_forms.py's helpers), bit for bit: the order statistics call the
interpreter's own sort and row loops, the special functions are their @pointwise scalar
functions (no scipy on either path), the counts of allclose / equal_all are exact, and
gather_tree, searchsorted and shard_index are the interpreter's loops. A bad parent, an
unsorted sequence and an id out of range raise the interpreter's errors, and no parameter
moves.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from test_lowered_forms import (assert_compiled, assert_refused_and_kept, build_program,
                                compiled_after_learning, data, floats, interpreted_because,
                                run_both, run_programs)

RNG = np.random.default_rng(31)


def _trained_fc(x, size, act=None):
    return pd.layer.fc(x, size, act=act)


# --- order statistics as pooling --------------------------------------------------------
def _pooled(op_type, h, keepdim):
    if op_type == "kthvalue":
        out, _ = pd.op.kthvalue(X=h, k=2, axis=2, keepdim=keepdim)
    elif op_type == "mode":
        out, _ = pd.op.mode(X=h, axis=-1, keepdim=keepdim)
    else:
        out = pd.op.nanmedian(X=h, axis=[2], keepdim=keepdim)
    return out


@pytest.mark.parametrize("op_type", ["kthvalue", "mode", "nanmedian"])
@pytest.mark.parametrize("keepdim", [False, True])
def test_a_pooling_by_rank_trained_by_sgd(op_type, keepdim):
    """fc -> [N, 3, 4] -> the k-th / most frequent / median value of each group of 4 ->
    fc -> loss, three SGD steps over batches of other sizes."""
    def build():
        x, y = pd.data("x", [None, 8]), pd.data("y", [None, 1])
        h = pd.layers.reshape(_trained_fc(x, 12, "tanh"), [-1, 3, 4])
        pooled = pd.layers.reshape(_pooled(op_type, h, keepdim), [-1, 3])
        loss = pd.mean(pd.layers.square(_trained_fc(pooled, 1) - y))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, pooled]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 8), "y": floats(n, 1)} for n in (16, 16, 9, 21)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, op_type, op_type + "_grad")


def test_ranks_with_ties_and_nans_along_the_first_axis():
    """Integer ties (the first position of equal values), NaNs counted last and a
    NaN-ignoring median over every axis; the Indices fetched."""
    def build():
        x = data("x", [5, 6])
        xi = pd.data("xi", [5, 6], "int64")
        kth, kth_at = pd.op.kthvalue(X=x, k=3, axis=0)
        mode, mode_at = pd.op.mode(X=xi, axis=1, keepdim=True)
        median = pd.op.nanmedian(X=x, axis=[], keepdim=False)
        loss = pd.mean(kth) + median
        pd.append_backward(loss)
        return [kth, kth_at, mode, mode_at, median, loss]
    x = floats(5, 6)
    x[1, 2] = x[3, 2] = np.nan
    x[0, 4] = x[2, 4]
    xi = RNG.integers(0, 3, (5, 6)).astype(np.int64)
    main, compiled = run_both(build, {"x": x, "xi": xi})
    assert_compiled(main, compiled, "kthvalue", "mode", "nanmedian", "kthvalue_grad",
                    "nanmedian_grad")


# --- Bessel functions and polygamma in losses ---------------------------------------------
def test_a_von_mises_like_loss_through_i0e():
    """-kappa cos(theta - mu) + log I0(kappa), written with i0e (log I0 = log i0e + kappa),
    kappa and mu predicted by an MLP, trained by SGD."""
    def build():
        x, theta = pd.data("x", [None, 5]), pd.data("theta", [None, 1])
        h = _trained_fc(x, 8, "tanh")
        kappa = pd.op.softplus(X=_trained_fc(h, 1)) + 0.1
        mu = _trained_fc(h, 1)
        log_norm = pd.layers.log(pd.op.i0e(x=kappa)) + kappa
        loss = pd.mean(log_norm - kappa * pd.op.cos(X=theta - mu))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, kappa]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 5), "theta": floats(n, 1)} for n in (12, 12, 7)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "i0e", "i0e_grad")


@pytest.mark.parametrize("op_type", ["i0", "i0e", "i1", "i1e"])
def test_each_bessel_function_and_its_gradient(op_type):
    """Arguments around 0 and, shifted, past |x| = 30 (the asymptotic expansion)."""
    def build():
        x, shift = pd.data("x", [None, 6]), pd.data("shift", [None, 4])
        # (I0(40) is 1e16: the loss scaled so that the steps of SGD stay small)
        loss = pd.mean(getattr(pd.op, op_type)(x=_trained_fc(x, 4) + shift)) * 1e-16
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss]
    main, startup, fetch = build_program(build)
    shift = np.zeros((10, 4), np.float32)
    shift[2], shift[5] = 35.0, -40.0
    compiled = run_programs(main, startup, fetch, [{"x": floats(10, 6), "shift": shift}] * 3)
    assert_compiled(main, compiled, op_type, op_type + "_grad")


@pytest.mark.parametrize("n", [0, 1, 3])
def test_a_loss_through_polygamma(n):
    def build():
        x = pd.data("x", [None, 4])
        a = pd.op.softplus(X=_trained_fc(x, 3)) + 0.5
        loss = pd.mean(pd.op.polygamma(x=a, n=n))
        pd.optimizer.SGD(0.01).minimize(loss)
        return [loss, a]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [{"x": floats(k, 4)} for k in (8, 8, 5)])
    assert_compiled(main, compiled, "polygamma", "polygamma_grad")


# --- checks fetched each step ---------------------------------------------------------------
def test_allclose_equal_all_is_empty_and_size_fetched_as_checks():
    """A model's prediction checked against a target with allclose, ids against a copy
    with equal_all, and the batch's emptiness and size."""
    def build():
        x, target = pd.data("x", [None, 4]), pd.data("target", [None, 2])
        ids, other = pd.data("ids", [None, 3], "int64"), pd.data("other", [None, 3], "int64")
        pred = _trained_fc(x, 2)
        loss = pd.mean(pd.layers.square(pred - target))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, pd.op.allclose(Input=pred, Other=target, rtol="0.5", atol="0.5"),
                pd.op.allclose(Input=target, Other=target, equal_nan=True),
                pd.op.equal_all(X=ids, Y=other), pd.op.equal_all(X=ids, Y=ids),
                pd.op.is_empty(X=pred), pd.op.size(Input=pred)]
    main, startup, fetch = build_program(build)
    feeds = []
    for n in (6, 6, 11):
        target = floats(n, 2)
        target[0, 1] = np.nan
        ids = RNG.integers(0, 5, (n, 3)).astype(np.int64)
        other = ids.copy()
        other[-1, 0] += 1 if n == 6 else 0
        feeds.append({"x": floats(n, 4), "target": target, "ids": ids, "other": other})
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "allclose", "equal_all", "is_empty", "size")


# --- renorm of an embedding weight -----------------------------------------------------------
@pytest.mark.parametrize("p, axis", [(2.0, 0), (1.5, 1)])
def test_an_embedding_weight_renormed_before_its_lookup(p, axis):
    """Each row (axis 0) or column of an embedding table scaled to a norm of at most 1,
    then looked up and trained by SGD (the gradient flows through renorm)."""
    def build():
        ids, y = pd.data("ids", [None, 1], "int64"), pd.data("y", [None, 4])
        table = pd.layers.create_parameter([10, 4], "float32")
        renormed = pd.op.renorm(X=table * 3.0, p=p, axis=axis, max_norm=1.0)
        looked_up = pd.op.lookup_table_v2(W=renormed, Ids=ids)
        loss = pd.mean(pd.layers.square(pd.layers.reshape(looked_up, [-1, 4]) - y))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, renormed]
    main, startup, fetch = build_program(build)
    feeds = [{"ids": RNG.integers(0, 10, (n, 1)).astype(np.int64), "y": floats(n, 4)}
             for n in (6, 6, 9)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "renorm", "renorm_grad")


# --- histogram ------------------------------------------------------------------------------
def test_a_histogram_of_predictions_fetched_each_step():
    """Predictions counted into 8 bins over [-2, 2] (compiled: NaN, out-of-range values
    and 2 itself in the last bin, as the kernel counts them), and over their own range,
    which is read from the data in the interpreter."""
    def build():
        x, z = pd.data("x", [None, 4]), pd.data("z", [None, 2], "float64")
        pred = _trained_fc(x, 3)
        loss = pd.mean(pd.layers.square(pred))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, pd.op.histogram(X=pred, bins=8, min=-2, max=2),
                pd.op.histogram(X=z, bins=5, min=-1, max=3),
                pd.op.histogram(X=pred, bins=4)]
    main, startup, fetch = build_program(build)
    feeds = []
    for n in (5, 5, 12):
        z = floats(n, 2, dtype=np.float64) * 2
        z[0] = [np.nan, 3.0]
        feeds.append({"x": floats(n, 4) * 3, "z": z})
    compiled = run_programs(main, startup, fetch, feeds)
    histograms = [i for i, op in enumerate(main.global_block().ops) if op.type == "histogram"]
    assert histograms[:2] == [i for i in histograms if i in compiled.segments()]
    assert interpreted_because(compiled, "histogram").startswith("no lowered form")


# --- complex views ------------------------------------------------------------------------
def test_a_complex_view_pipeline_trained():
    """fc -> [N, 3, 2] pairs -> as_complex -> as_real -> conj (of the real pairs: a copy)
    -> loss; the gradients flow back through as_real and as_complex."""
    def build():
        x = pd.data("x", [None, 5])
        pairs = pd.layers.reshape(_trained_fc(x, 6), [-1, 3, 2])
        z = pd.op.as_complex(X=pairs)
        back = pd.op.conj(X=pd.op.as_real(X=z))
        loss = pd.mean(pd.layers.square(back))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, back]
    main, startup, fetch = build_program(build)
    compiled = run_programs(main, startup, fetch, [{"x": floats(n, 5)} for n in (4, 4, 7)])
    assert_compiled(main, compiled, "as_complex", "as_real", "conj")


# --- beam search: gather_tree ---------------------------------------------------------------
def _beam_program():
    """A decoder's scores trained by SGD beside the beam's back-tracking."""
    x = pd.data("x", [None, 4])
    ids = pd.data("ids", [3, None, 2], "int64")
    parents = pd.data("parents", [3, None, 2], "int64")
    tree = pd.op.gather_tree(Ids=ids, Parents=parents)     # (before the update)
    loss = pd.mean(pd.layers.square(_trained_fc(x, 2)))
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss, tree]


def _beams(batch):
    return {"x": floats(batch, 4),
            "ids": RNG.integers(0, 50, (3, batch, 2)).astype(np.int64),
            "parents": RNG.integers(0, 2, (3, batch, 2)).astype(np.int64)}


def test_a_beam_search_decode_gathers_its_tree():
    main, startup, fetch = build_program(_beam_program)
    compiled = run_programs(main, startup, fetch, [_beams(b) for b in (4, 4, 6)])
    assert_compiled(main, compiled, "gather_tree")


def test_a_bad_parent_raises_the_interpreters_error_and_moves_nothing():
    good = _beams(3)
    main, exe, scope, compiled, fetch = compiled_after_learning(_beam_program, good)
    index = next(i for i, op in enumerate(main.global_block().ops) if op.type == "gather_tree")
    assert index in compiled.segments()
    bad = dict(good, parents=good["parents"].copy())
    bad["parents"][1, 2, 0] = 2
    assert_refused_and_kept(exe, compiled, main, scope, bad, fetch, Exception,
                            r"gather_tree: .*Parents")
    exe.run(compiled, feed=good, fetch_list=fetch, scope=scope)
    assert compiled.failures == [] and compiled.disabled_because is None


# --- searchsorted: bucketizing a feature ------------------------------------------------------
def _bucketized():
    """A feature's bucket (by fed boundaries, and by per-row boundaries) as the input of a
    model trained on it."""
    x, bounds = pd.data("x", [None, 3]), pd.data("bounds", [5])
    rows = pd.data("rows", [None, 4])
    buckets = [pd.op.searchsorted(SortedSequence=bounds, Values=x),
               pd.op.searchsorted(SortedSequence=bounds, Values=x, right=True,
                                  out_int32=True),
               pd.op.searchsorted(SortedSequence=rows, Values=x)]
    loss = pd.mean(pd.layers.square(_trained_fc(pd.layers.cast(buckets[0], "float32"), 1)))
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss, *buckets]


def _bucket_feed(n):
    x = floats(n, 3)
    x[0, 0] = np.nan
    x[1, 1] = 0.5                           # on a boundary: right decides
    return {"x": x, "bounds": np.float32([-1, -0.25, 0.5, 0.5, 1.5]),
            "rows": np.sort(floats(n, 4), axis=1)}


def test_a_feature_bucketized_by_searchsorted():
    main, startup, fetch = build_program(_bucketized)
    compiled = run_programs(main, startup, fetch, [_bucket_feed(n) for n in (5, 5, 8)])
    assert_compiled(main, compiled, "searchsorted")


def test_an_unsorted_sequence_raises_the_interpreters_error_and_moves_nothing():
    good = _bucket_feed(4)
    main, exe, scope, compiled, fetch = compiled_after_learning(_bucketized, good)
    bad = dict(good, bounds=np.float32([-1, 0.5, -0.25, 0.5, 1.5]))
    assert_refused_and_kept(exe, compiled, main, scope, bad, fetch, Exception,
                            r"searchsorted: .*sorted")


# --- shard_index and empty ------------------------------------------------------------------
def _sharded():
    x, label = pd.data("x", [None, 4]), pd.data("label", [None, 1], "int64")
    local = pd.op.shard_index(X=label, index_num=20, nshards=3, shard_id=1,
                              ignore_value=-1)                 # (before the update)
    loss = pd.mean(pd.layers.square(_trained_fc(x, 2)))
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss, local, pd.op.empty(shape=[2, 3], dtype=5)]


def test_labels_sharded_and_an_empty_buffer():
    main, startup, fetch = build_program(_sharded)
    feeds = [{"x": floats(n, 4), "label": RNG.integers(0, 20, (n, 1)).astype(np.int64)}
             for n in (6, 6, 9)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "shard_index", "empty")


def test_a_label_out_of_range_raises_the_interpreters_error_and_moves_nothing():
    good = {"x": floats(5, 4), "label": RNG.integers(0, 20, (5, 1)).astype(np.int64)}
    main, exe, scope, compiled, fetch = compiled_after_learning(_sharded, good)
    bad = dict(good, label=good["label"].copy())
    bad["label"][3, 0] = 20
    assert_refused_and_kept(exe, compiled, main, scope, bad, fetch, Exception,
                            r"shard_index: .*X")
