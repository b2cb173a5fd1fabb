"""as_complex and as_real (ops/complex_view.py): each is the other's gradient. The
gradient table's central differences weigh real outputs, so the pair is differentiated
here through a real loss: as_real(as_complex(x) * 1) weighted by W has dX = W exactly, and
the loss's central differences agree, on both places."""
from __future__ import annotations

import numpy as np
import pytest

import paddle_nb as pd

PLACES = {"cpu": pd.CPUPlace(), "cuda": pd.CUDAPlace(0)}


def _program():
    prog = pd.Program()
    blk = prog.global_block()
    x = blk.create_var("x", [2, 3, 2], "float64", stop_gradient=False)
    w = blk.create_var("w", [2, 3, 2], "float64")
    c = blk.create_var("c")
    r = blk.create_var("r")
    blk.append_op("as_complex", inputs={"X": [x]}, outputs={"Out": [c]}, attrs={})
    blk.append_op("as_real", inputs={"X": [c]}, outputs={"Out": [r]}, attrs={})
    weighted = blk.create_var("weighted")
    blk.append_op("elementwise_mul", inputs={"X": [r], "Y": [w]}, outputs={"Out": [weighted]},
                  attrs={"axis": -1})
    loss = blk.create_var("loss")
    blk.append_op("reduce_sum", inputs={"X": [weighted]}, outputs={"Out": [loss]},
                  attrs={"dim": [0], "reduce_all": True})
    return prog, x, loss


@pytest.mark.parametrize("place", list(PLACES))
def test_the_pair_round_trips_and_its_gradient_is_the_weights(place):
    rng = np.random.default_rng(7)
    xv, wv = rng.normal(size=(2, 3, 2)), rng.normal(size=(2, 3, 2))
    prog, x, loss = _program()
    forward = prog.clone()
    (dx,) = pd.gradients([loss], [x])
    exe = pd.Executor(PLACES[place])
    got_loss, got_dx = exe.run(prog, feed={"x": xv, "w": wv}, fetch_list=[loss.name, dx.name],
                               scope=pd.Scope())
    np.testing.assert_allclose(got_loss, (xv * wv).sum(), rtol=1e-12)
    np.testing.assert_allclose(got_dx, wv, rtol=1e-12)

    def f(v):
        return float(np.asarray(pd.Executor().run(forward, feed={"x": v, "w": wv},
                                                  fetch_list=[loss.name],
                                                  scope=pd.Scope())[0]))
    h, numeric = 1e-6, np.zeros_like(xv)
    for idx in np.ndindex(xv.shape):
        up, down = xv.copy(), xv.copy()
        up[idx] += h
        down[idx] -= h
        numeric[idx] = (f(up) - f(down)) / (2 * h)
    np.testing.assert_allclose(got_dx, numeric, rtol=1e-6, atol=1e-8)
