"""pd.layer.conv2d, pool2d, batch_norm and dropout (paddle_nb/layers/cnn.py, norm.py): the ops they
build (Fluid's), the parameters they make, what training and clone(for_test=True) do to
batch norm's moving statistics and dropout's mask, and the errors for arguments that
cannot work."""
import numpy as np
import pytest

import paddle_nb as pd


def _types(var):
    return [op.type for op in var.block.ops]


def test_conv2d_builds_a_weight_a_conv_a_channel_bias_and_the_activation():
    x = pd.data("x", [None, 3, 8, 8])
    y = pd.layer.conv2d(x, 4, 3, stride=2, padding=[1, 0, 1, 1], act="relu")
    assert _types(y) == ["conv2d", "elementwise_add", "relu"]
    conv, add = y.block.ops[0], y.block.ops[1]
    assert conv.attrs["strides"] == [2, 2] and conv.attrs["paddings"] == [1, 0, 1, 1]
    assert add.attrs["axis"] == 1
    shapes = {p.name: list(p.shape) for p in y.block.program.global_block().all_parameters()}
    assert shapes == {"conv2d_0.w_0": [4, 3, 3, 3], "conv2d_0.b_0": [4]}
    assert list(y.shape) == [-1, 4, 4, 4]


def test_conv2d_picks_depthwise_nhwc_bias_axis_and_same_padding():
    x = pd.data("x", [None, 6, 6, 4])                           # NHWC, 4 channels
    y = pd.layer.conv2d(x, 8, 3, groups=4, padding="SAME", data_format="NHWC")
    conv, add = y.block.ops[0], y.block.ops[1]
    assert conv.type == "depthwise_conv2d" and conv.attrs["padding_algorithm"] == "SAME"
    assert add.attrs["axis"] == 3 and list(y.shape) == [-1, 6, 6, 8]


@pytest.mark.parametrize("kwargs, pattern", [
    ({"num_filters": 4, "filter_size": 3, "groups": 2}, r"groups.*divisor of the input"),
    ({"num_filters": 0, "filter_size": 3}, r"num_filters"),
    ({"num_filters": 4, "filter_size": 3, "padding": "FULL"}, r"padding"),
    ({"num_filters": 4, "filter_size": [3, 3, 3]}, r"filter_size.*pair"),
])
def test_conv2d_refuses_arguments_that_cannot_work(kwargs, pattern):
    x = pd.data("x", [None, 3, 8, 8])
    with pytest.raises(pd.BuildError, match=pattern):
        pd.layer.conv2d(x, **kwargs)


def test_a_kernel_larger_than_the_input_is_refused_by_shape_inference():
    x = pd.data("x", [None, 3, 4, 4])
    with pytest.raises(pd.PaddleNBError, match="conv2d"):
        pd.layer.conv2d(x, 2, 5)


def test_pool2d_builds_fluids_op():
    x = pd.data("x", [None, 2, 7, 7])
    y = pd.layer.pool2d(x, 3, "avg", 2, pool_padding=1, ceil_mode=True, exclusive=False)
    op = y.block.ops[-1]
    assert op.type == "pool2d" and op.attrs["pooling_type"] == "avg"
    assert op.attrs["ksize"] == [3, 3] and op.attrs["ceil_mode"] and not op.attrs["exclusive"]
    assert list(y.shape) == [-1, 2, 4, 4]
    g = pd.layer.pool2d(x, global_pooling=True)
    assert list(g.shape) == [-1, 2, 1, 1]


def _bn_program(is_test=False):
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 3, 2, 2])
        y = pd.layer.batch_norm(x, momentum=0.5, is_test=is_test)
    return main, startup, y


def test_batch_norm_updates_its_moving_statistics_in_the_scope_and_for_test_uses_them(exe):
    main, startup, y = _bn_program()
    op = main.global_block().ops[0]
    mean, var = op.input("Mean")[0], op.input("Variance")[0]
    assert op.output("MeanOut") == [mean] and op.output("VarianceOut") == [var]
    gb = main.global_block()
    assert gb.var(mean).persistable and not gb.var(mean).trainable
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    x = np.random.default_rng(0).normal(2.0, 3.0, (8, 3, 2, 2)).astype(np.float32)
    out, = exe.run(main, feed={"x": x}, fetch_list=[y], scope=scope)
    batch_mean, batch_var = x.mean(axis=(0, 2, 3)), x.var(axis=(0, 2, 3))
    np.testing.assert_allclose(out.mean(axis=(0, 2, 3)), 0, atol=1e-5)       # normalized
    np.testing.assert_allclose(scope.find_var(mean).get(), 0.5 * batch_mean, rtol=1e-5)
    moved = scope.find_var(var).get()
    assert np.all(moved > 0.5) and np.all(moved < 0.5 + 0.5 * batch_var * 1.2)
    test = main.clone(for_test=True)
    assert test.global_block().ops[0].attrs["is_test"]
    got, = exe.run(test, feed={"x": x}, fetch_list=[y.name], scope=scope)
    m, v = scope.find_var(mean).get(), scope.find_var(var).get()
    want = (x - m[None, :, None, None]) / np.sqrt(v[None, :, None, None] + 1e-5)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(scope.find_var(mean).get(), m)            # not moved by a test


@pytest.mark.parametrize("implementation, test_scale", [("downgrade_in_infer", 0.75),
                                                         ("upscale_in_train", 1.0)])
def test_dropout_masks_in_training_and_clone_for_test_turns_it_off(exe, implementation,
                                                                   test_scale):
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 400])
        y = pd.layer.dropout(x, 0.25, seed=7, dropout_implementation=implementation)
    ones = np.ones((5, 400), np.float32)
    out, = exe.run(main, feed={"x": ones}, fetch_list=[y], scope=pd.Scope())
    kept = out != 0
    assert 0.65 < kept.mean() < 0.85
    np.testing.assert_allclose(out[kept], 1.0 if implementation == "downgrade_in_infer"
                               else 1 / 0.75, rtol=1e-6)
    again, = exe.run(main, feed={"x": ones}, fetch_list=[y], scope=pd.Scope())
    np.testing.assert_array_equal(again, out)                           # a fixed seed
    test = main.clone(for_test=True)
    got, = exe.run(test, feed={"x": ones}, fetch_list=[y.name], scope=pd.Scope())
    np.testing.assert_allclose(got, test_scale * ones, rtol=1e-6)
