"""The random ops' lowered forms draw what the interpreter draws, at the same point of a run.

Every draw is a function of a seed (kernels/cpu/random.py, sampling.py): an op's own seed,
its program's random_seed mixed with its place, or (neither) a new seed each run from
numpy's global generator, which a compiled block takes in object mode where the interpreter
takes it. So each test here runs a program plainly for some steps and compiled for the same
steps, each from the same start and after the same ``np.random.seed``, and asserts the same
fetched values and parameters bit for bit: the compiled runs took as many seeds from numpy's
generator, in the same order, as the plain ones (a step's seeds differ from the last
step's: the masks change every step in both).
"""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd
from paddle_nb.core import dtypes
from test_lowered_forms import (assert_compiled, assert_near, assert_refused_and_kept,
                                build_program, compiled_after_learning, data, floats,
                                interpreted_because, reorders_sums)

UNSEEDED, SEEDED = 0, 11      # an op's seed attribute: 0 = a new one from numpy each run


def run_from_one_start(main, startup, fetch, feeds: list, numpy_seed: int = 5):
    """Run ``main`` plainly once per feed, then compiled once per feed (the first
    compiled run learns), each from one start of ``startup`` and ``np.random.seed(numpy_seed)``;
    assert every fetched value and every parameter equal, bit for bit, and no failed
    compiled run. Returns (the CompiledProgram, the plain runs' fetched values)."""
    exe = pd.Executor()

    def runs(program):
        scope = pd.Scope()
        exe.run(startup, scope=scope)
        np.random.seed(numpy_seed)
        fetched = [exe.run(program, feed=feed, fetch_list=fetch, scope=scope)
                   for feed in feeds]
        params = {p.name: np.array(scope.find_var(p.name).get())
                  for p in main.global_block().all_parameters()}
        return fetched, params
    want, want_params = runs(main)
    compiled = pd.CompiledProgram(main)
    got, got_params = runs(compiled)
    exact = not reorders_sums(main)
    for k, (g_run, w_run) in enumerate(zip(got, want)):
        for var, g, w in zip(fetch, g_run, w_run):
            assert g.shape == w.shape and g.dtype == w.dtype, f"{var.name}, run {k}"
            same(g, w, f"{var.name}, run {k}", exact)
    for name, value in want_params.items():
        same(got_params[name], value, name, exact)
    assert compiled.failures == []
    return compiled, want


def same(got, want, where: str, exact: bool):
    """Bit for bit, or (a program whose compiled sums are reordered) to 1e-6 of the scale:
    the masks drawn stay bit for bit either way (integers)."""
    if exact or got.dtype.kind not in "fc":
        assert np.array_equal(got, want, equal_nan=True), where
    else:
        assert_near(got, want, where)


def changes_between_runs(values: list, i: int = 0) -> bool:
    """Did fetched value ``i`` differ between the first two runs of one shape?"""
    return not np.array_equal(values[0][i], values[1][i])


def output_of(op_type: str, slot: str):
    """The Variable of ``slot`` of the last ``op_type`` op built (an intermediate output,
    which pd.op does not return)."""
    block = pd.default_main_program().global_block()
    op = next(op for op in reversed(block.ops) if op.type == op_type)
    return block.var(op.output(slot)[0])


def sgd(loss):
    pd.optimizer.SGD(0.1).minimize(loss)


# --- dropout in training ------------------------------------------------------------------
@pytest.mark.parametrize("implementation", ["upscale_in_train", "downgrade_in_infer"])
@pytest.mark.parametrize("seed", [None, 3])
def test_an_mlp_with_dropout_trains_as_the_interpreter_trains_it(implementation, seed):
    """nn.Dropout(p=0.5)'s op in an MLP trained by SGD: each step drops other units (a new
    mask from numpy's generator, or fix_seed's mask); a second batch size learns again."""
    def build():
        x = pd.data("x", [None, 12])
        label = pd.data("label", [None, 1], "int64")
        hidden = pd.op.dropout(X=pd.layer.fc(x, 16, act="relu"), dropout_prob=0.5,
                               fix_seed=seed is not None, seed=seed or 0,
                               dropout_implementation=implementation)
        loss = pd.layers.cross_entropy(pd.layer.fc(hidden, 3), label)
        sgd(loss)
        return [loss, output_of("dropout", "Mask")]
    main, startup, fetch = build_program(build)
    rng = np.random.default_rng(3)
    feeds = [{"x": floats(n, 12), "label": rng.integers(0, 3, (n, 1))}
             for n in (8, 8, 8, 5, 5)]
    compiled, plain = run_from_one_start(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "dropout", "dropout_grad", "sgd")
    assert changes_between_runs(plain, 1) == (seed is None)    # a new mask each step


def test_a_compiled_run_that_fails_gives_its_fresh_seeds_back():
    """A compiled run that drew a new mask and then failed is undone and run again in the
    interpreter: the rerun draws the mask a plain run draws (numpy's generator as it was
    before the failed run), so the training stays the plain one, step for step."""
    def build():
        x = pd.data("x", [None, 12])
        hidden = pd.op.dropout(X=pd.layer.fc(x, 16, act="relu"), dropout_prob=0.5)
        loss = pd.mean(pd.layer.fc(hidden, 3))
        sgd(loss)
        return [loss, output_of("dropout", "Mask")]
    main, startup, fetch = build_program(build)
    feed = {"x": floats(8, 12)}
    exe = pd.Executor()
    compiled = pd.CompiledProgram(main)
    results = {}
    for program in (main, compiled):
        scope = pd.Scope()
        exe.run(startup, scope=scope)
        np.random.seed(5)
        runs = [exe.run(program, feed=feed, fetch_list=fetch, scope=scope) for _ in range(2)]
        if program is compiled:
            segment = compiled._latest[0].segments[0]
            drawn = segment.fn

            def draws_then_fails(*args):
                drawn(*args)                # a new mask drawn, then a compiler bug
                raise RuntimeError("a compiler bug")
            segment.fn = draws_then_fails
        runs += [exe.run(program, feed=feed, fetch_list=fetch, scope=scope)
                 for _ in range(2)]
        results[program is compiled] = runs, scope
    (want, plain_scope), (got, compiled_scope) = results[False], results[True]
    assert len(compiled.failures) == 1 and "a compiler bug" in compiled.failures[0]
    exact = not reorders_sums(main)        # (the masks, uint8, are compared bit for bit)
    for k, (g_run, w_run) in enumerate(zip(got, want)):
        for g, w in zip(g_run, w_run):
            same(g, w, f"run {k}", exact)
    for p in main.global_block().all_parameters():
        same(compiled_scope.find_var(p.name).get(), plain_scope.find_var(p.name).get(),
             p.name, exact)


def test_a_dropout_mask_from_a_seed_tensor_stays_interpreted():
    """A Seed input gives the seed at run time: an attribute given by a tensor."""
    def build():
        x = data("x", [4, 6])
        s = pd.var(np.int32([9]), dtype="int32")
        out = pd.op.dropout(X=x, Seed=s, dropout_prob=0.5, fix_seed=True)
        return [out, *pd.gradients(pd.mean(out), [x])]
    main, startup, fetch = build_program(build)
    compiled, _ = run_from_one_start(main, startup, fetch, [{"x": floats(4, 6)}] * 3)
    assert interpreted_because(compiled, "dropout").startswith("an attribute given by a")
    assert_compiled(main, compiled, "dropout_grad")


# --- value ops in the main program ----------------------------------------------------------
@pytest.mark.parametrize("seed", [UNSEEDED, SEEDED])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_noise_injection_draws_as_the_interpreter_draws(seed, dtype):
    """x + gaussian noise, times a uniform_random gate, trained through an fc."""
    def build():
        x = pd.data("x", [6, 5], dtype)
        noise = pd.op.gaussian_random(shape=[6, 5], mean=0.0, std=0.3, seed=seed,
                                      dtype=dtypes.to_code(dtype))
        gate = pd.op.uniform_random(shape=[6, 5], min=0.5, max=1.5, seed=seed,
                                    dtype=dtypes.to_code(dtype))
        loss = pd.mean(pd.layer.fc((x + noise) * gate, 2))
        sgd(loss)
        return [loss, noise, gate]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(6, 5, dtype=np.dtype(dtype))}] * 4
    compiled, plain = run_from_one_start(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "gaussian_random", "uniform_random")
    assert changes_between_runs(plain, 1) == (seed == UNSEEDED)


def test_a_program_random_seed_fixes_the_unseeded_ops():
    """With the main program's random_seed set, an unseeded op's seed is fixed (a constant
    of the compiled code), and numpy's generator is not drawn from. An inference program:
    Executor.run runs a copy with the fc fused (other op indices), which draws as the
    program as written (the seed mixes in the op's output names, not its index)."""
    def build():
        x = pd.data("x", [3, 4])
        h = pd.layer.fc(x, 4)
        return [x * pd.op.bernoulli(X=pd.layers.sigmoid(h)),
                pd.op.gaussian_random(shape=[2, 2], seed=0)]
    main, startup, fetch = build_program(build)
    main.random_seed = 21
    _, plain = run_from_one_start(main, startup, fetch, [{"x": floats(3, 4)}] * 3)
    assert not changes_between_runs(plain)   # bernoulli: its program's seed


def test_assign_value_constants_compile():
    def build():
        x = pd.data("x", [2, 3])
        c32 = pd.var(np.float32([[0.1, -2.5, 3.0], [1e-8, 7.0, -0.0]]))
        c64 = pd.var(np.float64([0.1, 0.2, 0.3]), dtype="float64")
        i64 = pd.var(np.int64([[3, -4, 2**40]]), dtype="int64")
        flags = pd.var(np.array([True, False, True]), dtype="bool")
        return [x * c32 + pd.op.cast(X=c64, in_dtype=6, out_dtype=5), c64, i64, flags]
    main, startup, fetch = build_program(build)
    compiled, _ = run_from_one_start(main, startup, fetch, [{"x": floats(2, 3)}] * 3)
    assert_compiled(main, compiled, "assign_value")


# --- rrelu, gumbel_softmax -------------------------------------------------------------------
@pytest.mark.parametrize("is_test", [False, True])
def test_rrelu_activation_trains_as_the_interpreter_trains_it(is_test):
    def build():
        x = pd.data("x", [None, 6])
        hidden = pd.op.rrelu(X=pd.layer.fc(x, 8), lower=0.1, upper=0.3, is_test=is_test)
        loss = pd.mean(pd.layer.fc(hidden, 1))
        sgd(loss)
        return [loss, hidden]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 6)} for n in (5, 5, 5, 3, 3)]
    compiled, _ = run_from_one_start(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "rrelu", "rrelu_grad")


@pytest.mark.parametrize("hard", [False, True])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_gumbel_softmax_sampling_trains_as_the_interpreter_trains_it(hard, axis):
    """Soft and hard samples along each axis (float32 along axis 1: the gradient's
    1 / temperature rounded to float32 as numpy rounds it)."""
    dtype = np.float32 if axis == 1 else np.float64

    def build():
        x = pd.data("x", [None, 4, 5], np.dtype(dtype).name)
        logits = pd.layer.fc(x, 5, num_flatten_dims=2)
        sample = pd.op.gumbel_softmax(X=logits, temperature=0.3, hard=hard, axis=axis)
        loss = pd.mean(sample * logits)
        sgd(loss)
        return [loss, sample]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 4, 5, dtype=dtype)} for n in (3, 3, 3, 2)]
    compiled, plain = run_from_one_start(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "gumbel_softmax", "gumbel_softmax_grad")
    assert changes_between_runs(plain, 1)


# --- sampling ops ------------------------------------------------------------------------
def test_bernoulli_masks_and_poisson_counts_draw_as_the_interpreter_draws():
    def build():
        x = data("x", [None, 6])
        keep = pd.op.bernoulli(X=pd.layers.sigmoid(x))
        counts = pd.op.poisson(X=pd.op.abs(X=x) * 3.0)
        loss = pd.mean(pd.layer.fc(x * keep + counts, 2))
        sgd(loss)
        return [loss, keep, counts]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 6)} for n in (4, 4, 4, 7, 7)]
    compiled, plain = run_from_one_start(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "bernoulli", "poisson")
    assert changes_between_runs(plain, 1)


@pytest.mark.parametrize("seed", [UNSEEDED, SEEDED])
def test_randint_and_randperm_shuffles_draw_as_the_interpreter_draws(seed):
    def build():
        x = pd.data("x", [8, 3])
        order = pd.op.randperm(n=8, seed=seed)
        picks = pd.op.randint(low=0, high=8, shape=[5], seed=seed, dtype=3)
        perm32 = pd.op.randperm(n=6, seed=seed, dtype=2)
        return [pd.op.gather(X=x, Index=order), order, picks, perm32]
    main, startup, fetch = build_program(build)
    compiled, plain = run_from_one_start(main, startup, fetch, [{"x": floats(8, 3)}] * 3)
    assert_compiled(main, compiled, "randperm", "randint")
    assert changes_between_runs(plain, 1) == (seed == UNSEEDED)


@pytest.mark.parametrize("replacement", [False, True])
def test_multinomial_sampling_draws_as_the_interpreter_draws(replacement):
    def build():
        x = pd.data("x", [None, 6])
        probs = pd.layers.softmax(x)
        rows = pd.op.multinomial(X=probs, num_samples=4, replacement=replacement)
        one = pd.op.multinomial(X=pd.op.abs(X=pd.op.reduce_sum(X=x, dim=[0])),
                                num_samples=2, replacement=replacement)
        return [rows, one]
    main, startup, fetch = build_program(build)
    feeds = [{"x": floats(n, 6)} for n in (3, 3, 3, 5, 5)]
    compiled, plain = run_from_one_start(main, startup, fetch, feeds)
    assert_compiled(main, compiled, "multinomial")
    assert changes_between_runs(plain)


# --- bad inputs: the interpreter's error, nothing changed -----------------------------------
@pytest.mark.parametrize("op_type, feed_x, match", [
    ("bernoulli", [[0.2, 1.5]], "each probability must be in"),
    ("poisson", [[1.0, np.nan]], "each mean must be in"),
    ("multinomial", [[0.0, 0.0]], "a row of weights is all zeros"),
])
def test_a_bad_input_is_the_interpreters_error_and_changes_nothing(op_type, feed_x, match):
    def build():
        x = pd.data("x", [None, 2])
        w = pd.create_parameter([2, 2], "float32")
        drawn = pd.op.cast(X=getattr(pd.op, op_type)(X=x), in_dtype=3, out_dtype=5) \
            if op_type == "multinomial" else getattr(pd.op, op_type)(X=x)
        loss = pd.mean(pd.layers.matmul(x, w) + pd.mean(drawn))
        sgd(loss)
        return [loss]
    good = {"x": np.float32([[0.3, 0.6], [0.5, 0.25]])}
    main, exe, scope, compiled, fetch = compiled_after_learning(build, good)
    assert_compiled(main, compiled, op_type)
    assert_refused_and_kept(exe, compiled, main, scope, {"x": np.float32(feed_x)}, fetch,
                            pd.ExecutionError, match)


def test_the_edge_shapes_and_seeds_draw_as_the_interpreter_draws():
    """0-d and empty Outs, a negative seed, rank-1 rows, Poisson means on both sides of 10
    (the product of uniforms and the rejection loop)."""
    def build():
        x = pd.data("x", [5], "float64")
        return [pd.op.uniform_random(shape=[], seed=0), pd.op.uniform_random(shape=[3], seed=-5),
                pd.op.gaussian_random(shape=[0, 3], seed=4),
                pd.op.randint(low=-3, high=4, shape=[], seed=0), pd.op.randperm(n=0),
                pd.op.gumbel_softmax(X=x, hard=True),
                pd.op.multinomial(X=pd.op.abs(X=x), num_samples=3, replacement=True),
                pd.op.rrelu(X=x), pd.op.poisson(X=pd.op.abs(X=x) * 40.0),
                pd.var(np.float32(2.5), dtype="float32")]
    main, startup, fetch = build_program(build)
    compiled, _ = run_from_one_start(main, startup, fetch, [{"x": np.linspace(-1, 1, 5)}] * 3)
    assert_compiled(main, compiled, "uniform_random", "gaussian_random", "randint", "randperm",
                    "gumbel_softmax", "multinomial", "rrelu", "poisson", "assign_value")
