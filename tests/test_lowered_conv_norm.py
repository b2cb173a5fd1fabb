"""The lowered forms of a CNN's ops compute what their kernels compute: conv2d (and
depthwise_conv2d), batch_norm and their gradients, in programs as users write them, run
plainly and through ``pd.CompiledProgram`` from one start.

The compiled forms call the CPU kernels' own serial loops (kernels/cpu/direct_conv.py,
conv.py's col2im, norm.py) and BLAS the way the kernels call it. Where a loop's sums are
vectorised with fastmath "reassoc" (batch_norm's statistics and gradient, the direct
convolution's filter gradient) the results are compared to float rounding, not to the
bit: LLVM picks the order of a vectorised sum for the function the loop lands in, the
interpreter's kernel or the compiled segment it is inlined into, and on some CPUs the two
orders differ (as tests/test_lowered_forms.py says of layer_norm). Everything else is
compared bit for bit.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from test_lowered_forms import (assert_compiled, assert_refused_and_kept, build_program,
                                compiled_after_learning, data, floats, interpreted_because,
                                run_both, run_programs)

RNG = np.random.default_rng(11)


def _lenet():
    """conv2d -> batch_norm -> relu -> pool2d, a strided conv2d, then fc to 10 classes,
    softmax_with_cross_entropy, SGD (as a LeNet with batch norm is written)."""
    image = pd.data("image", [None, 1, 12, 12])
    label = pd.data("label", [None, 1], "int64")
    # (no bias: batch_norm takes the mean out, so its gradient would be rounding noise)
    h = pd.layers.conv2d(image, num_filters=4, filter_size=3, padding=1,     # direct loops
                         bias_attr=False)
    h = pd.layers.batch_norm(h, act="relu")
    h = pd.layers.pool2d(h, pool_size=2, pool_type="max", pool_stride=2)
    h = pd.layers.conv2d(h, num_filters=6, filter_size=3, stride=2, act="relu")  # im2col
    logits = pd.layer.fc(h, 10)
    loss = pd.mean(pd.layers.softmax_with_cross_entropy(logits, label))
    pd.optimizer.SGD(0.1).minimize(loss)
    return [loss, *main_params()]


def main_params():
    return pd.default_main_program().global_block().all_parameters()


def _lenet_feed(n: int):
    return {"image": floats(n, 1, 12, 12), "label": RNG.integers(0, 10, (n, 1))}


def test_a_lenet_with_batch_norm_trains_the_same_compiled_and_plainly():
    """3 SGD steps: the same losses, parameters and running statistics (to float rounding:
    the module docstring says why); the convolutions, the batch norm and their gradients
    ran compiled, the first convolution by the direct loops, the strided one by im2col."""
    main, startup, fetch = build_program(_lenet)
    compiled = run_programs(main, startup, fetch, [_lenet_feed(8)] * 3, exact=False)
    assert_compiled(main, compiled, "conv2d", "conv2d_grad", "batch_norm", "batch_norm_grad")
    source = compiled.source()
    assert "conv2d_direct(" in source and "conv2d_by_columns(" in source
    assert "conv2d_direct_grads(" in source and "conv2d_by_columns_grads(" in source


def test_a_new_batch_size_runs_the_same_compiled_code():
    """The compiled segments are not specialised on sizes: a batch of 5 after batches of 8
    runs compiled (no failed run) and gives the interpreter's results."""
    main, startup, fetch = build_program(_lenet)
    compiled = run_programs(main, startup, fetch,
                            [_lenet_feed(8), _lenet_feed(8), _lenet_feed(5), _lenet_feed(3)],
                            exact=False)
    assert_compiled(main, compiled, "conv2d", "conv2d_grad", "batch_norm", "batch_norm_grad")


# --- conv2d on its own ----------------------------------------------------------------------
@pytest.mark.parametrize("dtype, stride, window, padding, groups, layout, algorithm", [
    ("float64", 1, 3, [1, 1], 1, "NCHW", "EXPLICIT"),      # the direct loops
    ("float32", 1, 3, [0, 1, 2, 0], 2, "NHWC", "EXPLICIT"),  # direct, channels last, groups
    ("float64", 2, 3, [1, 1], 1, "NCHW", "SAME"),          # im2col, pads from the sizes
    ("float32", 1, 1, [0, 0], 1, "NCHW", "EXPLICIT"),      # a 1x1 window: im2col, one product
    ("float64", 2, 2, [1, 0], 2, "NHWC", "VALID"),         # im2col, channels last, groups
])
def test_conv2d_and_its_gradients(dtype, stride, window, padding, groups, layout, algorithm):
    """Output, Input@GRAD and Filter@GRAD; bit for bit but for the direct loops' filter
    gradient (its sums are reordered: module docstring)."""
    shape = [2, 4, 7, 6] if layout == "NCHW" else [2, 7, 6, 4]

    def build():
        x, w = data("x", shape, dtype), data("w", [6, 4 // groups, window, window], dtype)
        out = pd.op.conv2d(Input=x, Filter=w, strides=[stride, stride], paddings=padding,
                           groups=groups, data_format=layout, padding_algorithm=algorithm)
        return [out, *pd.gradients(pd.mean(out * out), [x, w])]
    direct = stride == 1 and window > 1
    feed = {"x": floats(*shape, dtype=np.dtype(dtype).type),
            "w": floats(6, 4 // groups, window, window, dtype=np.dtype(dtype).type)}
    main, compiled = run_both(build, feed, exact=not direct)
    assert_compiled(main, compiled, "conv2d", "conv2d_grad")


def test_depthwise_conv2d_and_its_gradients():
    """A depthwise convolution (groups == channels) as the layer builds it, trained."""
    def build():
        x = data("x", [3, 4, 6, 6])
        h = pd.layers.conv2d(x, num_filters=8, filter_size=3, padding=1, groups=4)
        loss = pd.mean(h * h)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, h]
    main, compiled = run_both(build, {"x": floats(3, 4, 6, 6)}, exact=False)
    assert_compiled(main, compiled, "depthwise_conv2d", "depthwise_conv2d_grad")


def test_a_large_convolution_stays_with_the_interpreters_parallel_loops():
    def build():
        x, w = data("x", [16, 8, 24, 24]), data("w", [16, 8, 3, 3])
        return [pd.op.conv2d(Input=x, Filter=w, paddings=[1, 1])]
    _, compiled = run_both(build, {"x": floats(16, 8, 24, 24), "w": floats(16, 8, 3, 3)},
                           runs=2)
    assert interpreted_because(compiled, "conv2d").startswith("large: the interpreter splits")


def test_images_of_the_wrong_channels_raise_the_interpreters_error():
    """A compiled conv2d checks the channels before its loops index by them (images of
    any channels may be fed: [N, ?, H, W]); the interpreter's rerun names the op, and the
    parameter stays as it was."""
    def build():
        x = pd.data("x", [None, None, 6, 6])
        w = pd.create_parameter([4, 2, 3, 3], "float32", name="w")
        loss = pd.mean(pd.op.conv2d(Input=x, Filter=w, paddings=[1, 1]))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss]
    main, exe, scope, compiled, fetch = compiled_after_learning(
        build, {"x": floats(3, 2, 6, 6)})
    assert_compiled(main, compiled, "conv2d", "conv2d_grad")
    assert_refused_and_kept(exe, compiled, main, scope, {"x": floats(3, 3, 6, 6)}, fetch,
                            Exception, "conv2d")


# --- batch_norm on its own --------------------------------------------------------------------
@pytest.mark.parametrize("dtype, shape, layout, is_test, global_stats", [
    ("float32", [4, 3, 5, 6], "NCHW", False, False),      # training: the batch's statistics
    ("float64", [4, 5, 6, 3], "NHWC", False, False),
    ("float32", [6, 5], "NCHW", False, False),            # [N, C] (after an fc)
    ("float32", [4, 3, 5, 6], "NCHW", True, False),       # inference: the running ones
    ("float64", [4, 3, 5, 6], "NCHW", False, True),       # use_global_stats in training
])
def test_batch_norm_and_its_gradient(dtype, shape, layout, is_test, global_stats):
    """Y, the running mean and variance (MeanOut is the Mean variable), and the gradients
    SGD applies to X's producer, Scale and Bias, over 3 steps."""
    def build():
        x = data("x", shape, dtype)
        h = pd.layer.fc(x, shape[-1], num_flatten_dims=len(shape) - 1)
        y = pd.layers.batch_norm(h, is_test=is_test, use_global_stats=global_stats,
                                 data_layout=layout, momentum=0.8)
        loss = pd.mean(y * y * h)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, y, *main_params()]
    main, startup, fetch = build_program(build)
    bn = next(op for op in main.global_block().ops if op.type == "batch_norm")
    fetch += [main.global_block().var(bn.output("MeanOut")[0]),
              main.global_block().var(bn.output("VarianceOut")[0])]
    compiled = run_programs(main, startup, fetch,
                            [{"x": floats(*shape, dtype=np.dtype(dtype).type)}] * 3,
                            exact=False)
    assert_compiled(main, compiled, "batch_norm", "batch_norm_grad")


# --- instance_norm and group_norm ----------------------------------------------------------
@pytest.mark.parametrize("op, shape, attrs", [
    ("instance_norm", [3, 4, 5, 6], {}),
    ("group_norm", [3, 6, 5, 4], dict(groups=3)),
    ("group_norm", [3, 5, 4, 6], dict(groups=2, data_layout="NHWC")),
])
def test_instance_and_group_norm_and_their_gradients(op, shape, attrs):
    """After a convolution, trained by SGD: Y's gradient reaches X, Scale and Bias."""
    def build():
        x = data("x", shape, "float64")
        w = pd.create_parameter([shape[1], shape[1], 1, 1], "float64", name="w")
        h = pd.op.conv2d(Input=x, Filter=w) if "data_layout" not in attrs else x
        c = shape[-1] if "data_layout" in attrs else shape[1]
        scale = pd.create_parameter([c], "float64", name="scale")
        bias = pd.create_parameter([c], "float64", name="bias")
        y = getattr(pd.op, op)(X=h, Scale=scale, Bias=bias, **attrs)
        loss = pd.mean(y * h)
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss, y, *main_params()]
    main, compiled = run_both(build, {"x": floats(*shape, dtype=np.float64)}, exact=False)
    assert_compiled(main, compiled, op, op + "_grad")
