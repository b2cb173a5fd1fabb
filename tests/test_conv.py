"""Convolution beyond the op table's rows: the batches the CPU kernels take the images in
(ops/conv.py: ``batches``; the table's tiny rows fit one), the im2col workspace reused
from run to run, the direct stride-1 loops against im2col, and the shape rules'
messages."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import paddle_nb as pd
from paddle_nb.core.errors import PaddleNBError
from paddle_nb.kernels.cpu import conv as KV
from paddle_nb.kernels.cpu import direct_conv as KD
from paddle_nb.backends import CPU

from property_settings import DETERMINISTIC


def _program(op_type, x, w, attrs):
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        xv, wv = pd.data("x", list(x.shape), x.dtype.name), pd.data("w", list(w.shape),
                                                                    w.dtype.name)
        out = getattr(pd.op, op_type)(Input=xv, Filter=wv, **attrs)
        grads = pd.gradients([pd.mean(out * out)], [xv, wv])
    return main, [out] + grads


CASES = [
    ("conv2d", (5, 4, 7, 6), (6, 2, 3, 3), {"groups": 2, "strides": [2, 1],
                                            "paddings": [1, 0, 2, 1], "dilations": [1, 2]}),
    ("conv2d", (3, 5, 5, 6), (4, 3, 2, 2), {"groups": 2, "data_format": "NHWC",
                                            "padding_algorithm": "SAME"}),
    ("conv2d_transpose", (4, 4, 3, 4), (4, 3, 3, 2), {"groups": 2, "strides": [2, 2],
                                                      "paddings": [1, 0],
                                                      "output_padding": [1, 0]}),
]


@pytest.mark.parametrize("op_type,xs,ws,attrs", CASES)
def test_batches_of_one_image_give_the_whole_batchs_values(monkeypatch, op_type, xs, ws,
                                                           attrs):
    rng = np.random.default_rng(7)
    x, w = rng.uniform(-1, 1, xs), rng.uniform(-1, 1, ws)   # float64: exact sums compare
    main, fetch = _program(op_type, x, w, attrs)
    exe = pd.Executor(pd.CPUPlace())
    whole = exe.run(main, feed={"x": x, "w": w}, fetch_list=fetch)
    monkeypatch.setattr(KV, "COLS_BATCH_BYTES", 1)        # one image per batch
    for _ in range(2):                                     # the workspace, reused
        apart = exe.run(main, feed={"x": x, "w": w}, fetch_list=fetch)
        for a, b in zip(apart, whole):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)
    stepped = pd.Executor(pd.CPUPlace()).steps(main, feed={"x": x, "w": w},
                                               fetch_list=fetch)
    try:
        while True:
            next(stepped)
    except StopIteration as done:
        for a, b in zip(done.value, whole):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@st.composite
def _stride_one_convs(draw):
    """(x shape, filter shape, attrs) of a stride-1 conv2d the direct loops take: odd and
    even channel counts per group, depthwise, dilation, asymmetric padding (also wider
    than the window, which the input's gradient crops), NHWC."""
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    cg, og = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    kh, kw = draw(st.integers(1, 4)), draw(st.integers(1, 3))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    pads = draw(st.lists(st.integers(0, 4), min_size=4, max_size=4))
    h = max(1, dh * (kh - 1) + 1 - pads[0] - pads[1]) + draw(st.integers(0, 3))
    w = max(1, dw * (kw - 1) + 1 - pads[2] - pads[3]) + draw(st.integers(0, 3))
    last = draw(st.booleans())
    n = draw(st.integers(1, 3))
    xs = (n, h, w, cg * groups) if last else (n, cg * groups, h, w)
    return xs, (og * groups, cg, kh, kw), {"groups": groups, "paddings": pads,
                                           "dilations": [dh, dw],
                                           "data_format": "NHWC" if last else "NCHW"}


@settings(max_examples=40, **DETERMINISTIC)
@given(_stride_one_convs())
def test_direct_loops_give_what_im2col_gives(monkeypatch_case):
    """Every stride-1 conv2d with a window of more than one tap runs the direct loops
    (kernels/cpu/direct_conv.py); with them switched off the same program goes through
    im2col and BLAS. Output and both gradients agree (float64)."""
    xs, ws, attrs = monkeypatch_case
    rng = np.random.default_rng(11)
    x, w = rng.uniform(-1, 1, xs), rng.uniform(-1, 1, ws)
    main, fetch = _program("conv2d", x, w, attrs)
    direct = pd.Executor(pd.CPUPlace()).run(main, feed={"x": x, "w": w}, fetch_list=fetch)
    original = CPU.conv_direct, CPU.conv_direct_grads
    try:
        CPU.conv_direct = staticmethod(lambda *a: None)
        CPU.conv_direct_grads = staticmethod(lambda *a: None)
        through_im2col = pd.Executor(pd.CPUPlace()).run(main, feed={"x": x, "w": w},
                                                        fetch_list=fetch)
    finally:
        CPU.conv_direct, CPU.conv_direct_grads = (staticmethod(original[0]),
                                                  staticmethod(original[1]))
    for a, b in zip(direct, through_im2col):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("xs,ws,groups,pads", [((3, 4, 7, 6), (6, 2, 3, 2), 2, (1, 0, 2, 1)),
                                               ((2, 3, 5, 5), (3, 1, 3, 3), 3, (1, 1, 1, 1)),
                                               ((2, 2, 6, 6), (5, 2, 5, 5), 1, (2, 2, 2, 2))])
def test_direct_loops_serial_and_parallel_give_the_same_bits(monkeypatch, xs, ws, groups,
                                                               pads):
    """Each item (an image and two output channels; two channels and four taps) sums in
    the same order on either variant, so the threads change nothing."""
    rng = np.random.default_rng(5)
    x, w = rng.standard_normal(xs).astype(np.float32), rng.standard_normal(ws).astype(
        np.float32)
    kh, kw = ws[2:]
    oh, ow = xs[2] + pads[0] + pads[1] - kh + 1, xs[3] + pads[2] + pads[3] - kw + 1
    geometry = (kh, kw, 1, 1, pads[0], pads[2], 1, 1, oh, ow)
    dy = rng.standard_normal((xs[0], ws[0], oh, ow)).astype(np.float32)
    buffer = lambda key, shape, dtype: np.empty(shape, dtype)   # noqa: E731
    runs = []
    for threshold in (1 << 62, 0):
        monkeypatch.setattr(KD, "MIN_PARALLEL_MACS", threshold)
        monkeypatch.setattr(KD, "parallel_ok", lambda: True)
        runs.append([KD.conv2d(x, w, geometry, groups, buffer),
                     *KD.conv2d_grads(x, w, dy, geometry, groups, True, True, buffer)])
    for serial, parallel in zip(*runs):
        np.testing.assert_array_equal(serial, parallel)


def test_direct_loops_take_stride_one_windows_of_more_than_one_tap():
    geometry = (3, 3, 1, 1, 1, 1, 1, 1, 8, 8)      # kh kw sh sw pt pl dh dw oh ow
    assert KD.fits(geometry)
    assert not KD.fits((3, 3, 2, 1) + geometry[4:])           # strided: im2col
    assert not KD.fits((1, 1) + geometry[2:])                  # 1x1: one product


@pytest.mark.parametrize("xs,ws,attrs,words", [
    ((1, 3, 5, 5), (4, 2, 3, 3), {"groups": 2}, "channels must be Filter's dim 1 times"),
    ((1, 4, 5, 5), (3, 2, 3, 3), {"groups": 2}, "multiple of groups"),
    ((1, 2, 2, 5), (4, 2, 3, 3), {}, "larger than the padded input"),
    ((1, 2, 1, 5), (4, 2, 3, 3), {"strides": [2, 1]}, "larger than the padded input"),
    ((1, 2, 5, 5), (4, 2, 3, 3), {"paddings": [1, 1, 1]}, "paddings must be 2 or 4"),
    ((1, 2, 5, 5), (4, 2, 3, 3), {"data_format": "NDHWC"}, "data_format must be one of"),
])
def test_conv2d_refuses_shapes_that_do_not_fit_and_says_why(xs, ws, attrs, words):
    with pytest.raises(PaddleNBError, match=words):
        _program("conv2d", np.zeros(xs, np.float32), np.zeros(ws, np.float32), attrs)


def test_conv2d_transpose_refuses_an_output_size_its_strides_cannot_reach():
    with pytest.raises(PaddleNBError, match="output_size along H"):
        _program("conv2d_transpose", np.zeros((1, 2, 3, 3), np.float32),
                 np.zeros((2, 1, 3, 3), np.float32), {"strides": [2, 2],
                                                      "output_size": [9, 7]})
