"""Convolution beyond the op table's rows: the batches the CPU kernels take the images in
(ops/conv.py: ``batches``; the table's tiny rows fit one), the im2col workspace reused
from run to run, and the shape rules' messages."""
import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.errors import PaddleNBError
from paddle_nb.kernels.cpu import conv as KV


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
