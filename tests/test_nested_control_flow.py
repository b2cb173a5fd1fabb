"""Control flow inside control flow, forward and backward."""
import numpy as np

import paddle_nb as pd
from gradcheck import check_gradients


def _ifelse_in_rnn():
    """Each step: rows whose input is positive take tanh(x W), the others x W * 0.5."""
    T, B, D = 3, 4, 2
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [T, B, D], "float64")
        x.stop_gradient = False
        W = pd.create_parameter([D, D], "float64", name="W", initializer=pd.Normal(0, 0.8, 7))
        h0 = pd.layers.fill_constant([B, D], "float64", 0.0)
        rnn = pd.StaticRNN()
        with rnn.step():
            x_t = rnn.step_input(x)
            h_pre = rnn.memory(init=h0)
            z = pd.matmul(x_t + h_pre, W)
            ie = pd.ifelse()
            with ie.true_block():
                ie.output(pd.tanh(z))
            with ie.false_block():
                ie.output(z * 0.5)
            h, = ie(pd.layers.reduce_sum(x_t, dim=1, keep_dim=True) > 0.0)
            rnn.update_memory(h_pre, h)
            rnn.output(h)
        hs = rnn()
        loss = pd.mean(hs * hs)
    return main, startup, hs, loss


def test_ifelse_inside_an_rnn_step():
    main, startup, hs, loss = _ifelse_in_rnn()
    xs = np.random.default_rng(0).standard_normal((3, 4, 2))
    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    got, = exe.run(main, feed={"x": xs}, fetch_list=[hs], scope=scope)
    W = scope.find_var("W").get()
    h, want = np.zeros((4, 2)), []
    for x_t in xs:
        z = (x_t + h) @ W
        h = np.where((x_t.sum(axis=1) > 0)[:, None], np.tanh(z), z * 0.5)
        want.append(h)
    np.testing.assert_allclose(got, np.stack(want), rtol=1e-12)
    check_gradients(main, startup, loss, {"x": xs}, ["x", "W"])


def _while_in_ifelse():
    """If mean(x) > 0: h = x, three times h = tanh(h W); else h = x * 2."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 2], "float64")
        x.stop_gradient = False
        W = pd.create_parameter([2, 2], "float64", name="W", initializer=pd.Normal(0, 0.8, 9))

        def looped():
            i = pd.layers.fill_constant([1], "int64", 0)
            n = pd.layers.fill_constant([1], "int64", 3)
            h = pd.layers.scale(x, 1.0)
            _, h = pd.while_loop(lambda i, h: pd.layers.less_than(i, n),
                                 lambda i, h: [pd.increment(i, in_place=False),
                                               pd.tanh(pd.matmul(h, W))], [i, h])
            return h

        out = pd.cond(pd.mean(x) > 0.0, looped, lambda: x * 2.0)
        loss = pd.mean(out * out)
    return main, startup, out, loss


def test_while_inside_a_cond_branch():
    main, startup, out, loss = _while_in_ifelse()
    for xs in (np.array([[0.3, 0.2], [0.5, -0.1]]), np.array([[-0.3, 0.2], [-0.5, -0.1]])):
        exe = pd.Executor()
        scope = pd.Scope()
        exe.run(startup, scope=scope)
        got, = exe.run(main, feed={"x": xs}, fetch_list=[out], scope=scope)
        W = scope.find_var("W").get()
        if xs.mean() > 0:
            want = xs
            for _ in range(3):
                want = np.tanh(want @ W)
        else:
            want = xs * 2
        np.testing.assert_allclose(got, want, rtol=1e-12)
        check_gradients(main, startup, loss, {"x": xs}, ["x", "W"])
        main, startup, out, loss = _while_in_ifelse()


def test_while_inside_a_row_wise_ifelse_branch():
    """Rows with a positive sum loop three times through tanh(h W); the others double."""
    main, startup = pd.Program(), pd.Program()
    with pd.program_guard(main, startup):
        x = pd.data("x", [None, 2], "float64")
        x.stop_gradient = False
        W = pd.create_parameter([2, 2], "float64", name="W", initializer=pd.Normal(0, 0.8, 9))
        ie = pd.ifelse()
        with ie.true_block():
            i = pd.layers.fill_constant([1], "int64", 0)
            n = pd.layers.fill_constant([1], "int64", 3)
            h = pd.layers.scale(x, 1.0)                   # this branch's rows of x
            _, h = pd.while_loop(lambda i, h: pd.layers.less_than(i, n),
                                 lambda i, h: [pd.increment(i, in_place=False),
                                               pd.tanh(pd.matmul(h, W))], [i, h])
            ie.output(h)
        with ie.false_block():
            ie.output(x * 2.0)
        out, = ie(pd.layers.reduce_sum(x, dim=1, keep_dim=True) > 0.0)
        loss = pd.mean(out * out)
    xs = np.array([[0.3, 0.2], [-0.5, -0.1], [0.4, -0.1]])
    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    got, = exe.run(main, feed={"x": xs}, fetch_list=[out], scope=scope)
    W_ = scope.find_var("W").get()
    want = xs * 2
    for r in (0, 2):
        h = xs[r:r + 1]
        for _ in range(3):
            h = np.tanh(h @ W_)
        want[r] = h[0]
    np.testing.assert_allclose(got, want, rtol=1e-12)
    check_gradients(main, startup, loss, {"x": xs}, ["x", "W"])
