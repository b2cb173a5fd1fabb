"""The lowered forms of the image ops beside the convolutions compute what their kernels
compute: conv2d_transpose and depthwise_conv2d_transpose (upsampling),
max_pool2d_with_index and unpool (max_pool2d(return_mask=True), max_unpool2d),
bilinear_interp_v2 and nearest_interp_v2 (F.interpolate with a size or a scale), unfold
and fold (F.unfold, F.fold), and their gradients.

Programs as users hold them (a U-Net-ish decoder), run plainly and through
``pd.CompiledProgram`` from one start (tests/test_lowered_forms.py's helpers). The forms
call the kernels' own serial loops (kernels/cpu/pool.py, unpool.py, interp.py, conv.py's
im2col and col2im), so the results are compared bit for bit; only the program trained
with a conv2d compares to float rounding, for conv2d_grad's sake (tests/test_compiler.py
REORDERED_SUMS says why). An unpool Indices value out of range, fed to a compiled
program, raises the interpreter's error naming the op, and the parameters do not move.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from test_lowered_forms import build_program, assert_compiled, data, floats, run_programs

RNG = np.random.default_rng(13)

IMAGE_OPS = ("max_pool2d_with_index", "unpool", "bilinear_interp_v2", "nearest_interp_v2",
             "unfold", "fold")
GRADS = tuple(t + "_grad" for t in IMAGE_OPS)


def _decoder(h):
    """Pool with the mask, unpool back, resize up and down, cut into patches and put them
    back: each of IMAGE_OPS once, on [N, C, 8, 8] images."""
    pooled, mask = pd.op.max_pool2d_with_index(X=h, ksize=[2, 2], strides=[2, 2],
                                               paddings=[0, 0])
    h = pd.op.unpool(X=pooled, Indices=mask, ksize=[2, 2], strides=[2, 2],
                     paddings=[0, 0], output_size=[8, 8])
    h = pd.op.bilinear_interp_v2(X=h, out_h=12, out_w=10, align_corners=False,
                                 align_mode=0)
    h = pd.op.nearest_interp_v2(X=h, scale=[0.5], align_corners=False)    # [6, 5]
    patches = pd.op.unfold(X=h, kernel_sizes=[3, 2], strides=[1, 1], paddings=[1, 0, 1, 0])
    return pd.op.fold(X=patches, output_sizes=[6, 5], kernel_sizes=[3, 2], strides=[1, 1],
                      paddings=[1, 0, 1, 0])


def test_a_decoder_and_its_input_gradient_run_compiled_bit_for_bit():
    """The decoder's output and the loss's gradient w.r.t. the images: every op and
    gradient compiled, bit for bit, for batches of 3, then 5 (the same compiled code)."""
    def build():
        x = data("x", [None, 2, 8, 8])
        y = _decoder(x)
        loss = pd.mean(pd.layers.square(y))
        return [y, loss, *pd.gradients(loss, [x])]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 2, 8, 8)} for n in (3, 3, 3, 5, 5)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, *IMAGE_OPS, *GRADS)


def test_a_channels_last_resize_in_float64():
    def build():
        x = data("x", [None, 5, 4, 3], "float64")
        up = pd.op.bilinear_interp_v2(X=x, scale=[1.5, 2.0], data_layout="NHWC",
                                      align_corners=True)
        near = pd.op.nearest_interp_v2(X=up, out_h=4, out_w=5, data_layout="NHWC",
                                       align_corners=True)
        loss = pd.mean(pd.layers.square(near))
        return [up, near, *pd.gradients(loss, [x])]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 5, 4, 3, dtype=np.float64)} for n in (2, 2, 4)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "bilinear_interp_v2", "nearest_interp_v2",
                    "bilinear_interp_v2_grad", "nearest_interp_v2_grad")


def test_a_conv_decoder_trains_the_same_compiled_and_plainly():
    """conv2d, then the decoder, a loss and SGD: the same losses over steps and batch
    sizes (to float rounding: conv2d_grad's filter sums; the parameters are compared by
    the losses they give, a filter tap near 0 having no useful relative rounding)."""
    def build():
        x = pd.data("x", [None, 1, 8, 8])
        h = pd.layers.conv2d(x, num_filters=2, filter_size=3, padding=1, act="relu")
        loss = pd.mean(pd.layers.square(_decoder(h)))
        pd.optimizer.SGD(0.1).minimize(loss)
        return [loss]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 1, 8, 8)} for n in (4, 4, 4, 2, 2)]
    compiled = run_programs(main, startup, fetch, feeds, exact=False)
    assert_compiled(main, compiled, *IMAGE_OPS, *GRADS, "sgd")


def _unpooled_parameter():
    w = pd.layers.create_parameter([1, 2, 2, 2], "float32", name="w")
    ids = pd.data("ids", [1, 2, 2, 2], "int32")
    out = pd.op.unpool(X=w, Indices=ids, ksize=[2, 2], strides=[2, 2], paddings=[0, 0],
                       output_size=[4, 4])
    loss = pd.mean(pd.layers.square(out))
    pd.optimizer.SGD(0.5).minimize(loss)
    return [loss]


@pytest.mark.parametrize("bad", [16, -1])
def test_an_unpool_index_out_of_range_raises_the_interpreters_error(bad):
    """After compiled steps, an Indices position outside the 4x4 plane raises the
    interpreter's error (naming the op and the slot) and no parameter moves; good indices
    still run compiled."""
    main, startup, fetch = build_program(_unpooled_parameter)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(startup, scope=scope)
    compiled = pd.CompiledProgram(main)
    good = np.array([0, 5, 10, 15, 3, 2, 12, 9], np.int32).reshape(1, 2, 2, 2)
    for _ in range(2):
        exe.run(compiled, feed={"ids": good}, fetch_list=fetch, scope=scope)
    assert_compiled(main, compiled, "unpool", "unpool_grad")
    index = next(i for i, op in enumerate(main.global_block().ops) if op.type == "unpool")
    before = scope.find_var("w").get().copy()
    bad_ids = good.copy()
    bad_ids[0, 1, 1, 0] = bad
    with pytest.raises(pd.IndexRangeError, match=f"op {index} unpool: slot Indices"):
        exe.run(compiled, feed={"ids": bad_ids}, fetch_list=fetch, scope=scope)
    assert np.array_equal(scope.find_var("w").get(), before)
    exe.run(compiled, feed={"ids": good}, fetch_list=fetch, scope=scope)
    assert compiled.failures == [] and compiled.disabled_because is None


@pytest.mark.parametrize("op_type, groups, layout, attrs", [
    ("conv2d_transpose", 1, "NCHW", {"output_padding": [1, 1]}),
    ("conv2d_transpose", 2, "NHWC", {"output_size": [9, 9], "paddings": [1, 1]}),
    ("depthwise_conv2d_transpose", 4, "NCHW", {"dilations": [2, 1]})])
def test_a_transposed_convolution_upsamples_compiled_bit_for_bit(op_type, groups, layout,
                                                                 attrs):
    """A stride-2 upsampling and the gradients of its input and filter: compiled, bit
    for bit (the same BLAS calls and col2im loop), for batches of 2, then 3."""
    def build():
        shape = [None, 4, 5, 5] if layout == "NCHW" else [None, 5, 5, 4]
        x = data("x", shape)
        w = pd.layers.create_parameter([4, 4 // groups, 3, 3], "float32", name="w")
        up = getattr(pd.op, op_type)(Input=x, Filter=w, strides=[2, 2], groups=groups,
                                     data_format=layout, **attrs)
        loss = pd.mean(pd.layers.square(up))
        return [up, *pd.gradients(loss, [x, w])]
    main, startup, fetch = build_program(build)
    shape = (4, 5, 5) if layout == "NCHW" else (5, 5, 4)
    feeds = [{"x": floats(n, *shape)} for n in (2, 2, 2, 3)]
    compiled = run_programs(main, startup, fetch, feeds)
    assert_compiled(main, compiled, op_type, op_type + "_grad")
