"""Whole programs on CUDAPlace (numba's simulator here; tiny shapes): training and control
flow give what they give on CPUPlace, tensors stay on the device between ops, and only
fetched values come back as numpy arrays.

Each model starts from the same parameters on both places: the startup program runs once
on the CPU and its values are copied into a second scope (on CUDA they move to the device
on first read and stay there).
"""
import numpy as np
import pytest

import paddle_nb as pd
from models import tanh_rnn, while_running_sum
from paddle_nb.kernels.cuda import device

CPU, CUDA = pd.CPUPlace(), pd.CUDAPlace(0)


def _twin_scopes(startup):
    """Two scopes holding the same freshly initialised persistables (as host arrays)."""
    a, b = pd.Scope(), pd.Scope()
    pd.Executor(CPU).run(startup, scope=a)
    for name in a.local_var_names():
        value = a.find_var(name).get()
        b.var(name).set(np.array(value) if isinstance(value, np.ndarray) else value)
    return a, b


def _run_checking_residency(program, feed, fetch_list, scope, training=False):
    """Run on CUDA one op at a time: every tensor an op writes (or an item of a tensor
    array) must be a device array. Returns the fetched values, which must be numpy."""
    steps = pd.Executor(CUDA).steps(program, feed=feed, fetch_list=fetch_list, scope=scope,
                                    training=training)
    seen = 0
    while True:
        try:
            step = next(steps)
        except StopIteration as done:
            fetched = done.value
            break
        for name in step.op.output_arg_names:
            var = step.scope.find_var(name)
            value = var.get() if var is not None and var.is_initialized() else None
            for item in value if isinstance(value, list) else [value]:
                assert not isinstance(item, np.ndarray), \
                    f"{step.block_path} op {step.op.type} left {name} on the host"
                seen += device.is_device_array(item)
    assert seen, "no op wrote a device array"
    assert all(isinstance(v, np.ndarray) for v in fetched)
    return fetched


def _train(main, feed, loss, scope, place, steps):
    exe = pd.Executor(place)
    return [float(exe.run(main, feed=feed, fetch_list=[loss], scope=scope)[0])
            for _ in range(steps)]


# --- an MLP: fc + relu + fc + softmax_with_cross_entropy + mean, SGD / Adam ------------------
def _mlp(optimizer):
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 3
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 5])
        label = pd.data("label", [None, 1], "int64")
        h = pd.layer.fc(x, 7, act="relu")
        logits = pd.layer.fc(h, 3)
        loss = pd.mean(pd.layers.softmax_with_cross_entropy(logits, label))
        optimizer.minimize(loss)
    return main, startup, loss


def _mlp_feed(batch=3, seed=0):
    rng = np.random.default_rng(seed)
    return {"x": rng.standard_normal((batch, 5)).astype(np.float32),
            "label": rng.integers(0, 3, (batch, 1)).astype(np.int64)}


@pytest.mark.parametrize("optimizer", [lambda: pd.optimizer.SGD(0.5),
                                       lambda: pd.optimizer.Adam(0.05),
                                       lambda: pd.optimizer.Momentum(0.2, 0.9)],
                         ids=["sgd", "adam", "momentum"])
def test_mlp_training_on_cuda_matches_cpu(optimizer):
    main, startup, loss = _mlp(optimizer())
    feed = _mlp_feed()
    cpu_scope, cuda_scope = _twin_scopes(startup)
    cpu = _train(main, feed, loss, cpu_scope, CPU, 3)
    cuda = _train(main, feed, loss, cuda_scope, CUDA, 3)
    np.testing.assert_allclose(cuda, cpu, rtol=1e-5)
    assert cuda[-1] < cuda[0]                       # it learns
    for param in main.all_parameters():             # parameters live on the device now
        assert device.is_device_array(cuda_scope.find_var(param.name).get())
        np.testing.assert_allclose(device.to_host(cuda_scope.find_var(param.name).get()),
                                   cpu_scope.find_var(param.name).get(), rtol=1e-4, atol=1e-6)


def test_mlp_intermediates_stay_on_the_device_and_fetches_are_numpy():
    main, startup, loss = _mlp(pd.optimizer.SGD(0.1))
    _, cuda_scope = _twin_scopes(startup)
    got, = _run_checking_residency(main, _mlp_feed(), [loss], cuda_scope)
    assert got.shape == () and got.dtype == np.float32


# --- control flow ------------------------------------------------------------------------------
def _ifelse_program():
    """The Block and Scope design's IfElse: rows split by a mask, two branches, merged back."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = 5
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 3])
        cond = pd.layers.reduce_sum(x, dim=1, keep_dim=True) > 0.0
        ie = pd.ifelse()
        with ie.true_block():
            ie.output(pd.tanh(pd.layer.fc(x, 2, param_attr="w_true", bias_attr=False)))
        with ie.false_block():
            ie.output(pd.layer.fc(x, 2, param_attr="w_false", bias_attr=False) * 2.0)
        out, = ie(cond)
        loss = pd.mean(out * out)
        pd.optimizer.SGD(0.3).minimize(loss)
    return main, startup, out, loss


@pytest.mark.parametrize("xs", [
    np.float32([[1.0, 0.2, -0.3], [-1.0, -0.5, 0.1], [0.3, 0.3, 0.3]]),
    np.float32([[1.0, 0.2, 0.3], [0.5, 0.5, 0.1]]),       # the false branch gets no rows
], ids=["mixed", "all_true"])
def test_ifelse_training_on_cuda_matches_cpu(xs):
    main, startup, out, loss = _ifelse_program()
    cpu_scope, cuda_scope = _twin_scopes(startup)
    cpu = _train(main, {"x": xs}, loss, cpu_scope, CPU, 2)
    got_out, got_loss = _run_checking_residency(main, {"x": xs}, [out, loss], cuda_scope,
                                                training=True)
    cuda = [float(got_loss)] + _train(main, {"x": xs}, loss, cuda_scope, CUDA, 1)
    np.testing.assert_allclose(cuda, cpu, rtol=1e-5)
    assert got_out.shape == (len(xs), 2)


def test_static_rnn_training_on_cuda_matches_cpu():
    main, startup, hs = tanh_rnn(T=3, B=2, D=3, H=4, seed=2)
    with pd.program_guard(main, startup):
        loss = pd.mean(hs * hs)
        pd.optimizer.SGD(0.5).minimize(loss)
    xs = np.random.default_rng(1).standard_normal((3, 2, 3)).astype(np.float32)
    cpu_scope, cuda_scope = _twin_scopes(startup)
    cpu = _train(main, {"x": xs}, loss, cpu_scope, CPU, 2)
    first, = _run_checking_residency(main, {"x": xs}, [loss], cuda_scope, training=True)
    cuda = [float(first)] + _train(main, {"x": xs}, loss, cuda_scope, CUDA, 1)
    np.testing.assert_allclose(cuda, cpu, rtol=1e-5)


def test_while_loop_gradients_on_cuda_match_cpu():
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 2], "float64")
        x.stop_gradient = False
        w = pd.create_parameter([2, 2], "float64", name="W", initializer=pd.Normal(0, 0.7, 4))
        i = pd.layers.fill_constant([1], "int64", 0)
        n = pd.layers.fill_constant([1], "int64", 3)
        i, h = pd.while_loop(lambda i, h: pd.layers.less_than(i, n),
                             lambda i, h: [pd.increment(i, in_place=False),
                                           pd.tanh(pd.matmul(h, w) + x)],
                             [i, pd.layers.scale(x, 1.0)])
        loss = pd.mean(h * h)
        grads = pd.gradients([loss], [x, w])
    xs = np.array([[0.1, -0.2], [0.3, 0.4], [-0.5, 0.25]])
    cpu_scope, cuda_scope = _twin_scopes(startup)
    fetch = [h, loss] + grads
    cpu = pd.Executor(CPU).run(main, feed={"x": xs}, fetch_list=fetch, scope=cpu_scope)
    cuda = _run_checking_residency(main, {"x": xs}, fetch, cuda_scope, training=True)
    for want, got in zip(cpu, cuda):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


def test_while_with_tensor_arrays_on_cuda():
    """i = 0; while i < 3: acc += x[i] * 2; out[i] = acc; i += 1 (arrays hold device
    arrays; the loop reads its condition on the host each step)."""
    x, i, outputs, stacked = while_running_sum(3)
    length = pd.array_length(outputs)
    xs = np.arange(9, dtype=np.float32).reshape(3, 3)
    got, got_len, got_i = _run_checking_residency(pd.default_main_program(), {"x": xs},
                                                  [stacked, length, i], pd.Scope())
    np.testing.assert_allclose(got, np.cumsum(xs * 2, axis=0))
    assert got_len.tolist() == [3] and got_i.tolist() == [3]


@pytest.mark.parametrize("xs", [np.array([[0.5, 0.2], [0.1, -0.3]]),
                                np.array([[-0.5, 0.2], [0.1, -0.3]])], ids=["true", "false"])
def test_cond_with_gradients_on_cuda_matches_cpu(xs):
    """cond lowers to two scalar conditional_blocks and select_input on a host-read mask."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 2], "float64")
        x.stop_gradient = False
        w = pd.create_parameter([2, 2], "float64", name="w",
                                initializer=pd.Uniform(-1, 1, seed=2))
        out = pd.cond(pd.mean(x) > 0.0, lambda: pd.matmul(x, w) * 2.0,
                      lambda: pd.tanh(pd.matmul(x, w)) - 1.0)
        loss = pd.mean(out * out)
        grads = pd.gradients([loss], [x, w])
    cpu_scope, cuda_scope = _twin_scopes(startup)
    fetch = [out, loss] + grads
    cpu = pd.Executor(CPU).run(main, feed={"x": xs}, fetch_list=fetch, scope=cpu_scope)
    cuda = _run_checking_residency(main, {"x": xs}, fetch, cuda_scope, training=True)
    for want, got in zip(cpu, cuda):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# --- a real GPU only (skipped here): larger shapes ------------------------------------------------
@pytest.mark.gpu
def test_mlp_step_on_a_gpu_matches_cpu():
    main, startup, loss = _mlp(pd.optimizer.Adam(0.01))
    feed = _mlp_feed(batch=512, seed=4)
    cpu_scope, cuda_scope = _twin_scopes(startup)
    cpu = _train(main, feed, loss, cpu_scope, CPU, 5)
    cuda = _train(main, feed, loss, cuda_scope, CUDA, 5)
    np.testing.assert_allclose(cuda, cpu, rtol=1e-4)
