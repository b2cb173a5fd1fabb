"""CNNs saved by real PaddlePaddle 2.6.2 run here to Paddle's numbers
(tests/fixtures/paddle/make_cnn_fixture.py).

- A LeNet with batch norm in training mode, trained 2 Adam steps from Paddle's initial
  values: every loss, gradient and parameter after each step, and the batch norm's moving
  statistics and Adam's accumulators at the end, within 1e-5.
- A ``clone(for_test=True)`` of a program with strided, grouped, dilated and depthwise
  convolutions, ceil_mode avg pooling with exclusive=False, adaptive pooling, batch norm
  and both dropout implementations: its output.
- A CNN saved with ``save_inference_model``, loaded with pd.io.load_inference_model.
"""
import os

import numpy as np
import pytest

import paddle_nb as pd

FIXTURES = os.path.join(os.path.dirname(__file__), "fixtures", "paddle")


def _fixture(stem):
    program = pd.Program.from_bytes(open(os.path.join(FIXTURES, f"{stem}.pdesc"), "rb").read())
    return program, dict(np.load(os.path.join(FIXTURES, f"{stem}.npz")))


def _scope(saved):
    scope = pd.Scope()
    for key, value in saved.items():
        if key.startswith("init__"):
            scope.var(key[len("init__"):]).set(value)
    return scope


def test_paddle_lenet_with_batch_norm_trains_two_adam_steps_like_paddle(exe):
    program, saved = _fixture("cnn_lenet")
    scope = _scope(saved)
    params = [str(p) for p in saved["params"]]
    for k in range(2):
        out = exe.run(program, feed={"x": saved[f"x_{k}"], "y": saved[f"y_{k}"]},
                      fetch_list=[str(saved["loss_name"])] + [p + "@GRAD" for p in params]
                      + params, scope=scope)
        np.testing.assert_allclose(out[0], saved[f"loss_{k}"], rtol=1e-5, atol=1e-6)
        grads, values = out[1:1 + len(params)], out[1 + len(params):]
        for p, g, v in zip(params, grads, values):
            np.testing.assert_allclose(g, saved[f"grad_{k}__{p}"], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{p}@GRAD, step {k}")
            np.testing.assert_allclose(v, saved[f"after_{k}__{p}"], rtol=1e-5, atol=1e-6,
                                       err_msg=f"{p} after step {k}")
    for key, value in saved.items():
        if key.startswith("final__"):       # moving mean and variance, Adam's moments
            got = np.asarray(scope.find_var(key[len("final__"):]).get())
            np.testing.assert_allclose(got.reshape(value.shape), value, rtol=1e-5, atol=1e-6,
                                       err_msg=key)


def test_paddle_for_test_clone_of_a_cnn_gives_paddles_output(exe):
    program, saved = _fixture("cnn_test")
    types = {op.type for op in program.global_block().ops}
    assert {"depthwise_conv2d", "dropout", "max_pool2d_with_index", "batch_norm"} <= types
    out, = exe.run(program, feed={"x": saved["x"]}, fetch_list=[str(saved["out_name"])],
                   scope=_scope(saved))
    np.testing.assert_allclose(out, saved["out"], rtol=1e-5, atol=1e-6)


def test_paddle_inference_cnn_loads_and_predicts_like_paddle(exe):
    scope = pd.Scope()
    program, feeds, fetches = pd.io.load_inference_model(
        FIXTURES, exe, model_filename="cnn_infer.pdmodel",
        params_filename="cnn_infer.pdiparams", scope=scope)
    saved = np.load(os.path.join(FIXTURES, "cnn_infer_io.npz"))
    prob, = exe.run(program, feed={feeds[0]: saved["image"]}, fetch_list=fetches, scope=scope)
    np.testing.assert_allclose(prob, saved["prob"], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("stem", ["cnn_lenet", "cnn_test"])
def test_every_op_of_the_paddle_cnns_is_registered(stem):
    program, _ = _fixture(stem)
    missing = {op.type for b in program.blocks for op in b.ops
               if not pd.core.registry.is_registered(op.type)}
    assert not missing
