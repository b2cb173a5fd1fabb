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
