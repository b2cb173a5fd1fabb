"""Small models several test files train (built here once)."""
import paddle_nb as pd


def tanh_rnn(T, B, D, H, seed=1):
    """x [T, B, D] -> StaticRNN with h = tanh(fc(x_t) + fc(h_prev)), h0 = 0 -> hs [T, B, H].
    Returns (main, startup, hs); add a loss under ``pd.program_guard(main, startup)``."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = seed
    with pd.program_guard(main, startup):
        x = pd.data("x", [T, B, D])
        h0 = pd.layers.fill_constant([B, H], "float32", 0.0)
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_pre = rnn.memory(init=h0)
            h = pd.tanh(pd.layer.fc(x_t, H, bias_attr=False) + pd.layer.fc(h_pre, H))
            rnn.update_memory(h_pre, h)
            rnn.output(h)
        hs = rnn()
    return main, startup, hs


def digits_mlp(optimizer="sgd", hidden=64, seed=1):
    """A digits MLP trained with ``optimizer`` (the distributed tests' model): x [N, 64] ->
    fc hidden relu -> fc 10 -> softmax cross entropy; (main, startup, loss)."""
    main, startup = pd.Program(), pd.Program()
    startup.random_seed = seed
    with pd.program_guard(main, startup), pd.unique_name.guard():
        x = pd.data("x", [None, 64])
        label = pd.data("label", [None, 1], "int64")
        h = pd.layer.fc(x, hidden, act="relu")
        logits = pd.layer.fc(h, 10)
        loss = pd.mean(pd.layers.softmax_with_cross_entropy(logits, label))
        make = {"sgd": lambda: pd.optimizer.SGD(0.1),
                "adam": lambda: pd.optimizer.Adam(0.01),
                "momentum": lambda: pd.optimizer.Momentum(0.1, 0.9),
                "adamw": lambda: pd.optimizer.AdamW(0.01, weight_decay=0.1),
                "adagrad": lambda: pd.optimizer.Adagrad(0.05),
                "rmsprop": lambda: pd.optimizer.RMSProp(0.01, momentum=0.5, centered=True),
                "sgd_decay_clip": lambda: pd.optimizer.SGD(
                    0.1, weight_decay=pd.regularizer.L2Decay(0.01),
                    grad_clip=pd.ClipGradByValue(0.05)),
                "global_norm": lambda: pd.optimizer.SGD(
                    0.1, grad_clip=pd.ClipGradByGlobalNorm(1.0)),
                "lamb": lambda: pd.optimizer.Lamb(0.01)}[optimizer]
        make().minimize(loss)
    return main, startup, loss


def while_running_sum(steps: int, width: int = 3):
    """In the current program: i = 0; while i < steps: acc += x[i] * 2; out[i] = acc;
    i += 1 (tensor arrays in and out, a counter and an accumulator updated in place).
    Returns (x [steps, width], i, the outputs array, the outputs stacked)."""
    x = pd.data("x", [steps, width])
    i = pd.layers.fill_constant([1], "int64", 0)
    n = pd.layers.fill_constant([1], "int64", steps)
    acc = pd.layers.fill_constant([width], "float32", 0.0)
    inputs = pd.create_array("float32")
    for k in range(steps):
        row = pd.layers.reshape(pd.layers.split(x, steps, dim=0)[k], [width])
        pd.array_write(row, pd.layers.fill_constant([1], "int64", k), inputs)
    outputs = pd.create_array("float32")
    cond = pd.layers.less_than(i, n)
    w = pd.While(cond)
    with w.block():
        item = pd.array_read(inputs, i)
        pd.layers.assign(acc + item * 2.0, output=acc)
        pd.array_write(acc, i, outputs)
        pd.increment(i)
        pd.layers.less_than(i, n, cond=cond)
    stacked, _ = pd.tensor_array_to_tensor(outputs, axis=0, use_stack=True)
    return x, i, outputs, stacked


def while_powers():
    """In the current program: total = sum over the steps of p, where p = p * x each step
    and arr[i] = p: with 3 steps, x + x^2 + x^3; the counter i is updated in place by
    increment. Returns (x, i, total)."""
    x = pd.data("x", [1], "float64")
    x.stop_gradient = False
    i = pd.layers.fill_constant([1], "int64", 0)
    n = pd.layers.fill_constant([1], "int64", 3)
    p = pd.layers.fill_constant([1], "float64", 1.0)
    arr = pd.create_array("float64")
    cond = pd.layers.less_than(i, n)
    w = pd.While(cond)
    with w.block():
        pd.layers.assign(p * x, output=p)
        pd.array_write(p, i, arr)
        pd.increment(i)
        pd.layers.less_than(i, n, cond=cond)
    total = pd.layers.reduce_sum(pd.tensor_array_to_tensor(arr)[0])
    return x, i, total
