"""dropout in training mode, where the mask is random (the op table checks the
deterministic cases against numpy: test mode, p = 0, p = 1).

What must hold of a random mask: about p of the elements dropped, Out = X * Mask / (1 - p)
(upscale_in_train) or X * Mask (downgrade_in_infer) exactly, dX = dOut * Mask times the
same factor; with fix_seed (or a Seed input) the same mask every run and on both places,
without it a new mask every run.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd

PLACES = {"cpu": pd.CPUPlace(), "cuda": pd.CUDAPlace(0)}


def _program(shape, dtype, attrs, seed_input=None):
    """dropout of a fed X, with the gradient of sum(Out * W) for a fed W."""
    prog = pd.Program()
    blk = prog.global_block()
    x = blk.create_var("x", list(shape), dtype, stop_gradient=False)
    inputs = {"X": [x]}
    if seed_input is not None:
        inputs["Seed"] = [blk.create_var("seed", [1], "int32")]
    out, mask = blk.create_var("out"), blk.create_var("mask")
    blk.append_op("dropout", inputs, {"Out": [out], "Mask": [mask]}, attrs)
    w = blk.create_var("w", list(shape), dtype)
    dx, = pd.gradients([out], [x], target_gradients=[w])
    return prog, dx.name


def _run(place, shape=(64, 50), dtype="float32", seed_input=None, **attrs):
    rng = np.random.default_rng(3)
    x = rng.uniform(0.5, 1.5, shape).astype(dtype)
    w = rng.uniform(-1, 1, shape).astype(dtype)
    prog, dx = _program(shape, dtype, attrs, seed_input)
    feed = {"x": x, "w": w}
    if seed_input is not None:
        feed["seed"] = np.int32([seed_input])
    out, mask, grad = pd.Executor(PLACES[place]).run(
        prog, feed=feed, fetch_list=["out", "mask", dx], scope=pd.Scope())
    return x, w, out, mask, grad


@pytest.mark.parametrize("implementation", ["upscale_in_train", "downgrade_in_infer"])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.9])
def test_training_drops_about_p_and_scales_what_it_keeps(p, implementation):
    x, w, out, mask, grad = _run("cpu", (100, 100), dropout_prob=p,
                                 dropout_implementation=implementation)
    assert mask.dtype == np.uint8 and set(np.unique(mask)) <= {0, 1}
    assert abs((mask == 0).mean() - p) < 0.02           # 10,000 draws: sd ~0.005
    # Paddle divides by 1 - p, rounded to float32 first ("1.0f - dropout_prob")
    keep = np.float32(1) - np.float32(p) if implementation == "upscale_in_train" else 1
    np.testing.assert_array_equal(out, np.where(mask == 1, x / keep, 0))
    np.testing.assert_array_equal(grad, w * mask / keep)


def test_the_mask_is_not_correlated_with_position():
    """Rows and columns drop alike (a counter hash with a weak mix would stripe)."""
    _, _, _, mask, _ = _run("cpu", (200, 200), dropout_prob=0.5, fix_seed=True, seed=11)
    for axis in (0, 1):
        assert np.abs(mask.mean(axis=axis) - 0.5).max() < 0.15
    assert abs(np.corrcoef(mask[:, :-1].ravel(), mask[:, 1:].ravel())[0, 1]) < 0.05


def test_without_fix_seed_each_run_draws_a_new_mask():
    masks = [_run("cpu", dropout_prob=0.5)[3] for _ in range(3)]
    assert not np.array_equal(masks[0], masks[1]) and not np.array_equal(masks[1], masks[2])


def test_fix_seed_gives_the_same_mask_every_run_and_another_seed_another():
    first = _run("cpu", dropout_prob=0.3, fix_seed=True, seed=42)[3]
    np.testing.assert_array_equal(first, _run("cpu", dropout_prob=0.3, fix_seed=True,
                                              seed=42)[3])
    assert not np.array_equal(first, _run("cpu", dropout_prob=0.3, fix_seed=True, seed=43)[3])


def test_a_seed_input_wins_over_the_attributes():
    by_input = _run("cpu", seed_input=5, dropout_prob=0.5, fix_seed=True, seed=99)[3]
    by_attr = _run("cpu", dropout_prob=0.5, fix_seed=True, seed=5)[3]
    np.testing.assert_array_equal(by_input, by_attr)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_the_same_seed_gives_the_same_mask_on_cpu_and_cuda(dtype):
    """Both places draw kernels/cpu/random.py's counter_uniform: one seed, one mask (small
    here: CUDA runs in numba's simulator)."""
    attrs = dict(dropout_prob=0.4, fix_seed=True, seed=1234,
                 dropout_implementation="upscale_in_train")
    cpu = _run("cpu", (6, 7), dtype, **attrs)
    cuda = _run("cuda", (6, 7), dtype, **attrs)
    for a, b in zip(cpu, cuda):
        np.testing.assert_array_equal(a, b)
    assert 0 < (cpu[3] == 0).sum() < cpu[3].size


def test_clone_for_test_stops_dropping():
    """clone(for_test=True) sets is_test: nothing dropped, X * (1 - p) for
    downgrade_in_infer."""
    prog, _ = _program((4, 5), "float32", {"dropout_prob": 0.5})
    test_prog = prog.clone(for_test=True)
    x = np.random.default_rng(0).uniform(-1, 1, (4, 5)).astype(np.float32)
    out, mask = pd.Executor().run(test_prog, feed={"x": x}, fetch_list=["out", "mask"],
                                  scope=pd.Scope())
    np.testing.assert_array_equal(out, x * np.float32(0.5))
    assert (mask == 1).all()
