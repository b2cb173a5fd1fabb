"""The executor: results, steps, scopes, prepared blocks, feeds and fetches."""
import os
import subprocess
import sys

import numpy as np
import pytest

import paddle_nb as pd


def _mlp(seed=3):
    startup = pd.default_startup_program()
    startup.random_seed = seed
    x = pd.data("x", [None, 4])
    h = pd.layer.fc(x, 8, act="relu")
    return x, pd.layer.fc(h, 3, act="softmax")


def _numpy_mlp(scope, x):
    p = {n: scope.find_var(n).get() for n in ("fc_0.w_0", "fc_0.b_0", "fc_1.w_0", "fc_1.b_0")}
    h = np.maximum(x @ p["fc_0.w_0"] + p["fc_0.b_0"], 0)
    z = h @ p["fc_1.w_0"] + p["fc_1.b_0"]
    e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_mlp_matches_numpy(exe):
    x, prob = _mlp()
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    xs = np.random.default_rng(0).standard_normal((16, 4)).astype(np.float32)
    out, = exe.run(feed={"x": xs}, fetch_list=[prob], scope=scope)
    assert out.dtype == np.float32 and out.shape == (16, 3)
    np.testing.assert_allclose(out, _numpy_mlp(scope, xs), atol=1e-5)


def test_startup_seed_makes_parameters_reproducible(exe):
    _mlp(seed=7)
    a, b = pd.Scope(), pd.Scope()
    exe.run(pd.default_startup_program(), scope=a)
    exe.run(pd.default_startup_program(), scope=b)
    np.testing.assert_array_equal(a.find_var("fc_0.w_0").get(), b.find_var("fc_0.w_0").get())


def test_persistables_stay_and_temporaries_are_dropped(exe):
    x, prob = _mlp()
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    exe.run(feed={"x": np.ones((2, 4), np.float32)}, fetch_list=[prob], scope=scope)
    assert sorted(scope.local_var_names()) == ["fc_0.b_0", "fc_0.w_0", "fc_1.b_0", "fc_1.w_0"]
    assert scope.kids == []          # the run scope is gone


def test_steps_yield_one_step_per_op_and_run_drains_them(exe):
    x, prob = _mlp()
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    xs = np.ones((2, 4), np.float32)
    gen = exe.steps(feed={"x": xs}, fetch_list=[prob], scope=scope)
    seen = []
    while True:
        try:
            step = next(gen)
        except StopIteration as done:
            fetched = done.value
            break
        seen.append(step)
        # each step ran its real kernel: its output is already in the run scope
        assert step.scope.find_var(step.op.output_arg_names[0]).is_initialized()
        assert step.scope.parent is scope
    ops = pd.default_main_program().global_block().ops
    assert [s.op for s in seen] == ops
    assert [s.op_index for s in seen] == list(range(len(ops)))
    assert seen[0].block_path == "block 0" and "op 0 mul" in repr(seen[0])
    np.testing.assert_allclose(fetched[0], exe.run(feed={"x": xs}, fetch_list=[prob],
                                                   scope=scope)[0])
    assert scope.kids == []


def test_abandoned_stepping_cleans_up_its_scope(exe):
    x, prob = _mlp()
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    gen = exe.steps(feed={"x": np.ones((2, 4), np.float32)}, scope=scope)
    next(gen)
    assert len(scope.kids) == 1
    gen.close()
    assert scope.kids == []


def test_prepared_block_is_reused_until_the_block_changes(exe):
    x, prob = _mlp()
    main = pd.default_main_program()
    exe.run(pd.default_startup_program())
    first = exe.prepare(main)
    exe.run(feed={"x": np.ones((1, 4), np.float32)}, fetch_list=[prob])
    assert exe.prepare(main) is first
    extra = pd.relu(prob)
    assert exe.prepare(main) is not first
    out, = exe.run(feed={"x": np.ones((1, 4), np.float32)}, fetch_list=[extra])
    assert out.shape == (1, 3)


def test_value_variables_run_without_feed_and_feed_overrides(exe):
    x = pd.minibatch([10, 20, 30])
    y = pd.var(1)
    s = pd.layer.add_scalar(x, y)
    got, = exe.run(fetch_list=[s])
    np.testing.assert_allclose(got, [[11], [21], [31]])
    got, = exe.run(feed={x.name: np.float32([[5]])}, fetch_list=[s])
    np.testing.assert_allclose(got, [[6]])
    got, = exe.run(feed={x.name: [[1], [2]], y.name: np.float32([100])}, fetch_list=[s])
    np.testing.assert_allclose(got, [[101], [102]])


def test_program_from_bytes_runs_without_feed_and_fetch_ops(exe):
    x, prob = _mlp()
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    loaded = pd.Program.from_bytes(pd.default_main_program().to_bytes())
    assert "feed" not in [op.type for op in loaded.global_block().ops]
    xs = np.ones((3, 4), np.float32)
    a, = exe.run(loaded, feed={"x": xs}, fetch_list=[prob.name], scope=scope)
    b, = exe.run(feed={"x": xs}, fetch_list=[prob], scope=scope)
    np.testing.assert_array_equal(a, b)


def _state(scope):
    return {n: np.array(scope.find_var(n).get()) for n in scope.local_var_names()}


@pytest.mark.parametrize("feed,pattern", [
    ({"x": np.ones((2, 5), np.float32)}, r"feed 'x': expected shape \[-1, 4\].*given \[2, 5\]"),
    ({"x": np.ones((2, 4), np.float64)}, r"expected dtype float32, given float64.*astype"),
    ({"x": np.ones(4, np.float32)}, r"expected shape \[-1, 4\]"),
    ({"y": np.ones((2, 4), np.float32)}, r"cannot feed 'y'.*no such variable"),
    ({"x": "text"}, r"cannot convert str"),
])
def test_bad_feeds_are_clear_and_change_nothing(exe, feed, pattern):
    x, prob = _mlp()
    scope = pd.Scope()
    exe.run(pd.default_startup_program(), scope=scope)
    before = _state(scope)
    with pytest.raises(pd.FeedError, match=pattern):
        exe.run(feed=feed, fetch_list=[prob], scope=scope)
    after = _state(scope)
    assert before.keys() == after.keys() and scope.kids == []
    for k in before:
        np.testing.assert_array_equal(before[k], after[k])


def test_fetching_an_undeclared_name(exe):
    x, prob = _mlp()
    with pytest.raises(pd.FetchError, match=r"no block of this program declares it; did you "
                                            r"mean fc_1.tmp_2"):
        exe.run(feed={"x": np.ones((1, 4), np.float32)}, fetch_list=["fc_1.tmp_9"])


def test_fetching_a_name_that_lives_only_in_a_sub_block(exe):
    main = pd.default_main_program()
    sub = main.create_block()
    sub.create_var("inner", [1], "float32")
    main.rollback()
    with pytest.raises(pd.FetchError, match=r"declared only in .*block 1.*sub-block"):
        exe.run(fetch_list=["inner"])


def test_missing_parameter_is_a_clear_runtime_error(exe):
    x, prob = _mlp()
    with pytest.raises(pd.ExecutionError) as e:
        exe.run(feed={"x": np.ones((1, 4), np.float32)}, fetch_list=[prob], scope=pd.Scope())
    msg = str(e.value)
    assert "block 0 > op 0 mul" in msg and "slot Y" in msg and "fc_0.w_0" in msg
    assert "startup program" in msg and "test_executor.py" in msg


def test_cuda_place_without_a_gpu_or_the_simulator_says_how_to_simulate():
    # a fresh process: the simulator switch is read when numba is first imported
    code = ("import paddle_nb as pd\n"
            "try:\n    pd.Executor(pd.CUDAPlace(0))\n"
            "except pd.ExecutionError as e:\n    print('ERROR', e)\n")
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="0", CUDA_VISIBLE_DEVICES="")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120).stdout
    assert "ERROR cannot run on CUDAPlace(0)" in out and "NUMBA_ENABLE_CUDASIM=1" in out


def test_cuda_place_that_does_not_exist_is_a_clear_error():
    with pytest.raises(pd.ExecutionError, match=r"CUDAPlace\(7\).*1 CUDA device"):
        pd.Executor(pd.CUDAPlace(7))


def test_context_of_the_framework_design():
    ctx = pd.Context(pd.Scope(), [pd.CPUPlace()], training=True)
    kid = ctx.create_scope("step")
    assert kid.parent is ctx.scope and ctx.place == pd.CPUPlace() and ctx.training


def test_fetched_arrays_never_alias_parameters_or_feeds():
    # Large fetched arrays that a kernel made are handed over without a copy; one an op
    # passed on from a parameter, or a fed array, must still come back as a copy.
    main, start = pd.Program(), pd.Program()
    with pd.program_guard(main, start):
        w = pd.layers.create_parameter([200, 200], name="w")
        passed_on = pd.layers.assign(w)
        x = pd.data("x", [200, 200])
        doubled = pd.layers.scale(x, 2.0)
    exe, scope = pd.Executor(), pd.Scope()
    exe.run(start, scope=scope)
    w_before = scope.find_var("w").get().copy()
    fed = np.ones((200, 200), np.float32)
    got_w, got_x, got_doubled = exe.run(main, feed={"x": fed},
                                        fetch_list=[passed_on, x, doubled], scope=scope)
    got_w[:] = 5
    got_x[:] = 7
    assert np.array_equal(scope.find_var("w").get(), w_before)
    assert fed[0, 0] == 1
    np.testing.assert_array_equal(got_doubled, 2 * fed)


def test_feed_checks_still_apply_after_a_good_feed_of_the_same_name(exe):
    x = pd.data("x", [None, 3])
    y = pd.layers.relu(x)
    exe.run(feed={"x": np.ones((2, 3), np.float32)}, fetch_list=[y])    # cached spec
    with pytest.raises(pd.FeedError, match="expected dtype float32"):
        exe.run(feed={"x": np.ones((2, 3), np.float64)}, fetch_list=[y])
    with pytest.raises(pd.FeedError, match=r"expected shape \[-1, 3\]"):
        exe.run(feed={"x": np.ones((2, 4), np.float32)}, fetch_list=[y])
