"""What the op table cannot check of the layer and sampling ops (ops/random_activations.py,
sampling.py, data_norm.py): the distributions the random ops draw from, their seeding,
and the gradients of rrelu, gumbel_softmax and data_norm.

rrelu's and gumbel_softmax's noise is drawn anew each run unless the program has a
``random_seed`` (they have no seed attribute in Fluid): with one, a run draws what the last
run drew, so central differences see the same noise on both sides and judge the gradient
in training mode too. data_norm's gradient op also writes the running statistics'
"gradients" (this batch's count, sums and centred square sums, Paddle's design), which
are not derivatives: only X@GRAD is judged by central differences.
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core.errors import PaddleNBError

PLACES = {"cpu": pd.CPUPlace(), "cuda": pd.CUDAPlace(0)}


def one_op(op_type, inputs: dict, attrs: dict, outputs=("Out",), seed=0):
    """A program of one op: its inputs fed by name (the slot, lower case), its outputs
    ``<slot>_out``; the program's random_seed ``seed``."""
    prog = pd.Program()
    prog.random_seed = seed
    blk = prog.global_block()
    ins = {slot: [blk.create_var(slot.lower(), list(a.shape), a.dtype.name,
                                 stop_gradient=a.dtype.kind != "f")]
           for slot, a in inputs.items()}
    outs = {slot: [blk.create_var(f"{slot.lower()}_out")] for slot in outputs}
    blk.append_op(op_type, inputs=ins, outputs=outs, attrs=attrs)
    feed = {slot.lower(): a for slot, a in inputs.items()}
    return prog, ins, outs, feed


def run(prog, feed, fetch, place="cpu"):
    return pd.Executor(PLACES[place]).run(prog, feed=feed, fetch_list=fetch, scope=pd.Scope())


def central_differences(loss_of, x, eps=1e-6):
    numeric = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        for sign in (1, -1):
            moved = x.copy()
            moved[idx] += sign * eps
            numeric[idx] += sign * loss_of(moved)
    return numeric / (2 * eps)


def check_gradient(op_type, inputs, attrs, wrt="X", out="Out", seed=5, outputs=("Out",)):
    """dL/d(wrt) of L = sum(Out * W) by the op's gradient and by central differences."""
    prog, ins, outs, feed = one_op(op_type, inputs, attrs, outputs, seed=seed)
    forward = prog.clone()
    blk = prog.global_block()
    w = np.random.default_rng(3).uniform(-1, 1, inputs[wrt].shape)
    wv = blk.create_var("w", list(w.shape), "float64")
    (grad,) = pd.gradients([outs[out][0]], [ins[wrt][0]], target_gradients=[wv])
    (analytic,) = run(prog, {**feed, "w": w}, [grad.name])

    def loss_of(moved):
        (o,) = run(forward, {**feed, wrt.lower(): moved}, [f"{out.lower()}_out"])
        return float((o * w).sum())
    np.testing.assert_allclose(analytic, central_differences(loss_of, inputs[wrt]),
                               rtol=1e-5, atol=1e-6)
    return prog, feed, grad


# --- seeding ---------------------------------------------------------------------------------
@pytest.mark.parametrize("op_type, inputs, attrs", [
    ("bernoulli", {"X": np.full((4, 5), 0.5)}, {}),
    ("poisson", {"X": np.full((4, 5), 12.0)}, {}),
    ("multinomial", {"X": np.ones((3, 6))}, {"num_samples": 4}),
    ("rrelu", {"X": -np.ones((4, 5))}, {}),
    ("gumbel_softmax", {"X": np.zeros((4, 5))}, {})])
def test_a_seeded_program_draws_the_same_values_each_run_and_on_cuda(op_type, inputs, attrs):
    prog, _, _, feed = one_op(op_type, inputs, attrs, seed=11)
    first, = run(prog, feed, ["out_out"])
    again, = run(prog, feed, ["out_out"])
    on_cuda, = run(prog, feed, ["out_out"], "cuda")
    np.testing.assert_array_equal(first, again)
    np.testing.assert_array_equal(first, on_cuda)
    unseeded, _, _, _ = one_op(op_type, inputs, attrs, seed=0)
    draws = [run(unseeded, feed, ["out_out"])[0] for _ in range(3)]
    assert any(not np.array_equal(draws[0], d) for d in draws[1:])   # new each run


# --- distributions ---------------------------------------------------------------------------
def test_bernoulli_draws_ones_with_probability_x():
    p = np.repeat(np.float32([[0.1, 0.5, 0.9]]), 4000, axis=0)
    prog, _, _, feed = one_op("bernoulli", {"X": p}, {}, seed=2)
    out, = run(prog, feed, ["out_out"])
    assert out.dtype == np.float32 and set(np.unique(out)) == {0.0, 1.0}
    np.testing.assert_allclose(out.mean(axis=0), [0.1, 0.5, 0.9], atol=0.03)


@pytest.mark.parametrize("lam", [3.0, 40.0])       # Knuth's product and PTRS's rejection
def test_poisson_has_mean_and_variance_lambda(lam):
    prog, _, _, feed = one_op("poisson", {"X": np.full((100, 100), lam)}, {}, seed=3)
    out, = run(prog, feed, ["out_out"])
    assert (out == np.round(out)).all() and out.min() >= 0
    assert abs(out.mean() - lam) < 0.05 * lam and abs(out.var() - lam) < 0.1 * lam


def test_multinomial_with_replacement_follows_the_weights():
    weights = np.float32([[1, 0, 3], [0, 2, 2]])
    prog, _, _, feed = one_op("multinomial", {"X": weights},
                              {"num_samples": 4000, "replacement": True}, seed=4)
    out, = run(prog, feed, ["out_out"])
    assert out.dtype == np.int64 and out.shape == (2, 4000)
    freq = np.stack([np.bincount(r, minlength=3) for r in out]) / 4000
    np.testing.assert_allclose(freq, weights / weights.sum(axis=1, keepdims=True), atol=0.03)


def test_multinomial_without_replacement_draws_each_category_once_heavier_first():
    weights = np.tile(np.float64([[8, 1, 1, 0]]), (3000, 1))
    prog, _, _, feed = one_op("multinomial", {"X": weights}, {"num_samples": 3}, seed=6)
    out, = run(prog, feed, ["out_out"])
    assert all(sorted(r) == [0, 1, 2] for r in out)           # never the zero weight
    assert abs((out[:, 0] == 0).mean() - 0.8) < 0.03         # first: category 0 w.p. 8/10


def test_gumbel_softmax_samples_categories_with_softmax_probabilities():
    logits = np.log(np.float64([0.2, 0.3, 0.5]))
    x = np.tile(logits, (4000, 1))
    prog, _, _, feed = one_op("gumbel_softmax", {"X": x}, {"hard": True}, seed=7)
    hard, = run(prog, feed, ["out_out"])
    assert set(np.unique(hard)) == {0.0, 1.0} and (hard.sum(axis=1) == 1).all()
    np.testing.assert_allclose(hard.mean(axis=0), [0.2, 0.3, 0.5], atol=0.03)
    prog, _, _, feed = one_op("gumbel_softmax", {"X": x[:50]}, {"temperature": 0.5}, seed=7)
    soft, = run(prog, feed, ["out_out"])
    assert (soft > 0).all() and np.allclose(soft.sum(axis=1), 1.0)


def test_rrelu_training_draws_slopes_between_lower_and_upper():
    x = np.where(np.arange(2000) % 2, -2.0, 3.0).reshape(40, 50)
    prog, _, _, feed = one_op("rrelu", {"X": x}, {"lower": 0.1, "upper": 0.4},
                              outputs=("Out", "Noise"), seed=8)
    out, noise = run(prog, feed, ["out_out", "noise_out"])
    slopes = noise[x < 0]
    assert (noise[x >= 0] == 1).all() and 0.1 <= slopes.min() and slopes.max() <= 0.4
    assert abs(slopes.mean() - 0.25) < 0.02
    np.testing.assert_allclose(out, x * noise)


# --- gradients -------------------------------------------------------------------------------
def test_rrelu_gradient_in_training_and_test_mode():
    x = np.random.default_rng(1).uniform(-1, 1, (3, 4))
    x = np.where(np.abs(x) < 0.1, 0.5, x)                  # off the kink
    for is_test in (False, True):
        check_gradient("rrelu", {"X": x}, {"is_test": is_test, "lower": 0.1, "upper": 0.3},
                       outputs=("Out", "Noise"))


@pytest.mark.parametrize("attrs", [{"temperature": 1.0}, {"temperature": 0.3, "axis": 0}])
def test_gumbel_softmax_gradient_with_the_noise_held(attrs):
    x = np.random.default_rng(2).uniform(-1, 1, (3, 4))
    prog, feed, grad = check_gradient("gumbel_softmax", {"X": x}, attrs)
    want, = run(prog, {**feed, "w": np.random.default_rng(3).uniform(-1, 1, (3, 4))},
                [grad.name], "cuda")
    got, = run(prog, {**feed, "w": np.random.default_rng(3).uniform(-1, 1, (3, 4))},
               [grad.name])
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_data_norm_x_gradient_and_the_statistics_it_writes():
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (4, 3))
    stats = {"BatchSize": rng.uniform(5, 10, 3), "BatchSum": rng.uniform(-1, 1, 3),
             "BatchSquareSum": rng.uniform(5, 10, 3)}
    check_gradient("data_norm", {"X": x, **stats}, {"epsilon": 1e-4}, out="Y",
                   outputs=("Y", "Means", "Scales"))
    # the statistics' "gradients", as Paddle's backward asks for them
    prog, ins, outs, feed = one_op("data_norm", {"X": x, **stats}, {"epsilon": 1e-4},
                                   outputs=("Y", "Means", "Scales"))
    blk = prog.global_block()
    dy = blk.create_var("dy", [4, 3], "float64")
    made = {s: blk.create_var(f"d_{s}") for s in stats}
    blk.append_op("data_norm_grad",
                  {"X": ins["X"], "Means": outs["Means"], "Scales": outs["Scales"],
                   "Y@GRAD": [dy]},
                  {"X@GRAD": [blk.create_var("dx")],
                   **{f"{s}@GRAD": [v] for s, v in made.items()}}, {"epsilon": 1e-4})
    for place in PLACES:
        size, total, squares = run(prog, {**feed, "dy": np.ones((4, 3))},
                                   [f"d_{s}" for s in stats], place)
        means = stats["BatchSum"] / stats["BatchSize"]
        np.testing.assert_allclose(size, [4, 4, 4])
        np.testing.assert_allclose(total, x.sum(axis=0))
        np.testing.assert_allclose(squares, ((x - means) ** 2).sum(axis=0) + 4 * 1e-4)


# --- refusals ---------------------------------------------------------------------------------
@pytest.mark.parametrize("op_type, inputs, attrs, words", [
    ("bernoulli", {"X": np.float32([0.5, 1.5])}, {}, "probability"),
    ("poisson", {"X": np.float32([1.0, -1.0])}, {}, "mean"),
    ("multinomial", {"X": np.float32([[0, 0, 0]])}, {"num_samples": 1}, "all zeros"),
    ("multinomial", {"X": np.float32([[1, 0, 0]])}, {"num_samples": 2}, "positive weights"),
    ("data_norm", {"X": np.ones((2, 3)), "BatchSize": np.ones(3), "BatchSum": np.ones(3),
                   "BatchSquareSum": np.ones(3)}, {"slot_dim": 2}, "slot_dim")])
def test_values_an_op_cannot_draw_from_are_refused_with_the_reason(op_type, inputs, attrs,
                                                                    words):
    outputs = ("Y", "Means", "Scales") if op_type == "data_norm" else ("Out",)
    with pytest.raises(PaddleNBError, match=words):
        prog, _, outs, feed = one_op(op_type, inputs, attrs, outputs)
        run(prog, feed, [outs[outputs[0]][0].name])
