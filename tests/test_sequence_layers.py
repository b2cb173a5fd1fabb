"""pd.layer.embedding and pd.layer.layer_norm (paddle_nb/layers/lookup.py, norm.py): the ops and
parameters they build (as paddle.static.nn builds them in Paddle 2.6.2), what training
does to them, and the errors for arguments that cannot work."""
import numpy as np
import pytest

import paddle_nb as pd


def _build(fn):
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        out = fn()
    return main, startup, out


def test_embedding_builds_lookup_table_v2_with_paddles_padding_row_and_initialiser():
    def fn():
        return pd.layer.embedding(pd.data("ids", [4, 3], "int64"), size=[10, 5],
                                  padding_idx=-2)
    main, startup, out = _build(fn)
    (lookup,) = main.global_block().ops
    # Paddle 2.6.2 saves padding_idx -2 of a 10-row table as 8, and initialises the table
    # U(-a, a) with a = sqrt(6 / (10 + 5)) (paddle.static.nn.embedding)
    assert lookup.type == "lookup_table_v2" and lookup.attrs["padding_idx"] == 8
    assert list(out.shape) == [4, 3, 5]
    (init,) = startup.global_block().ops
    assert init.type == "uniform_random"
    assert init.attrs["max"] == pytest.approx(np.sqrt(6 / 15), rel=1e-6)
    assert lookup.input("W") == ["embedding_0.w_0"]


def test_the_padding_row_reads_zeros_and_is_never_trained():
    def fn():
        ids = pd.data("ids", [2, 3], "int64")
        e = pd.layer.embedding(ids, size=[6, 4], padding_idx=0)
        loss = pd.mean(e * e)
        pd.optimizer.SGD(0.5).minimize(loss)
        return e
    main, startup, e = _build(fn)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    before = scope.find_var("embedding_0.w_0").get().copy()
    ids = np.array([[0, 1, 2], [2, 0, 5]])
    (got,) = exe.run(main, feed={"ids": ids}, fetch_list=[e], scope=scope)
    assert np.all(got[ids == 0] == 0)
    np.testing.assert_allclose(got[ids != 0], before[ids[ids != 0]])
    after = scope.find_var("embedding_0.w_0").get()
    np.testing.assert_array_equal(after[[0, 3, 4]], before[[0, 3, 4]])   # no gradient
    assert not np.allclose(after[[1, 2, 5]], before[[1, 2, 5]])


def test_layer_norm_builds_scale_and_bias_over_the_normalised_dims_then_act():
    def fn():
        x = pd.data("x", [4, 3, 8])
        return pd.layer.layer_norm(x, begin_norm_axis=2, act="relu")
    main, startup, y = _build(fn)
    norm, relu = main.global_block().ops
    assert (norm.type, relu.type) == ("layer_norm", "relu")
    assert norm.input("Scale") == ["layer_norm_0.w_0"]
    assert norm.input("Bias") == ["layer_norm_0.b_0"]
    assert norm.attrs["begin_norm_axis"] == 2
    shapes = {p.name: list(p.shape) for p in main.global_block().all_parameters()}
    assert shapes == {"layer_norm_0.w_0": [8], "layer_norm_0.b_0": [8]}
    assert [op.attrs["value"] for op in startup.global_block().ops] == [1.0, 0.0]
    x = np.random.default_rng(0).standard_normal((4, 3, 8)).astype(np.float32)
    exe = pd.Executor()
    exe.run(startup)
    (got,) = exe.run(main, feed={"x": x}, fetch_list=[y])
    want = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got, np.maximum(want, 0), rtol=1e-5, atol=1e-5)


def test_layer_norm_without_scale_or_shift_has_no_parameters():
    main, _, _ = _build(lambda: pd.layer.layer_norm(pd.data("x", [2, 6]), scale=False,
                                                    shift=False))
    (norm,) = main.global_block().ops
    assert not norm.input("Scale") and not norm.input("Bias")
    assert not main.global_block().all_parameters()


@pytest.mark.parametrize("build, pattern", [
    (lambda: pd.layer.embedding(pd.data("ids", [2], "int64"), size=[5]), r"size"),
    (lambda: pd.layer.embedding(pd.data("ids", [2], "int64"), size=[5, 3], padding_idx=5),
     r"padding_idx.*-5 <= padding_idx < 5"),
    (lambda: pd.layer.embedding(pd.data("x", [2]), size=[5, 3]), r"input"),
    (lambda: pd.layer.layer_norm(pd.data("x", [2, 3]), begin_norm_axis=2),
     r"begin_norm_axis.*< 2"),
    (lambda: pd.layer.layer_norm(pd.data("x", [2, 3]), epsilon=0.5), r"epsilon"),
])
def test_arguments_that_cannot_work_are_refused_by_name(build, pattern):
    with pytest.raises(pd.BuildError, match=pattern):
        _build(build)
