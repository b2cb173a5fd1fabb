"""Check a program's gradients against central differences (used by the control-flow tests).

``check_gradients(main, startup, loss, feed, wrt)`` appends ``pd.gradients(loss, wrt)`` to
``main``, runs it once, then perturbs each element of each ``wrt`` variable (a fed input or
a parameter) by +-eps and reruns a copy of the forward program. Build in float64.
"""
from __future__ import annotations

import numpy as np

import paddle_nb as pd

EPS = 1e-6


def _loss(exe, forward, feed, scope, loss_name):
    value, = exe.run(forward, feed=feed, fetch_list=[loss_name], scope=scope)
    return float(np.sum(value))


def check_gradients(main, startup, loss, feed, wrt, rtol=1e-5, atol=1e-6):
    forward = main.clone()
    gb = main.global_block()
    with pd.program_guard(main, startup):
        grads = pd.gradients([loss], [gb.var(n) for n in wrt])
    assert all(g is not None for g in grads), [n for n, g in zip(wrt, grads) if g is None]
    exe = pd.Executor()
    scope = pd.Scope()
    exe.run(startup, scope=scope)
    analytic = exe.run(main, feed=feed, fetch_list=[g.name for g in grads], scope=scope)
    for name, got in zip(wrt, analytic):
        base = feed[name] if name in feed else scope.find_var(name).get()
        numeric = np.zeros_like(base, dtype=np.float64)
        for idx in np.ndindex(base.shape):
            for sign in (1, -1):
                value = base.copy()
                value[idx] += sign * EPS
                if name in feed:
                    numeric[idx] += sign * _loss(exe, forward, {**feed, name: value}, scope,
                                                 loss.name)
                else:
                    scope.find_var(name).set(value)
                    numeric[idx] += sign * _loss(exe, forward, feed, scope, loss.name)
                    scope.find_var(name).set(base)
        numeric /= 2 * EPS
        np.testing.assert_allclose(got, numeric, rtol=rtol, atol=atol,
                                   err_msg=f"d loss / d {name}")
    return analytic
