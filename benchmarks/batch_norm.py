"""batch_norm in training mode on a [64, 16, 28, 28] float32 batch (an MNIST-sized conv
layer's output), forward and backward: the op and its gradient op in one program through
``Executor.run`` (Y, dX, dScale and dBias fetched, the running statistics updated in the
scope), the three kernels alone (per-channel moments, normalize, the gradient:
kernels/cpu/norm.py), hand-written numpy and, when installed, PyTorch
(``F.batch_norm(training=True)`` and ``backward``)."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd
from paddle_nb.kernels.cpu import norm as K

from .common import rng, row, runner, torch
from .timing import compare

TARGET = 1.0      # paddle_nb / numpy
EPS = 1e-5
AXES = (0, 2, 3)


def numpy_batch_norm(x, scale, bias, dy, eps=EPS):
    """(Y, dX, dScale, dBias) of training-mode batch norm over N, H, W, as one would
    write it in numpy: the batch's mean and biased variance, then the usual gradient."""
    along = (1, -1, 1, 1)
    mean = x.mean(axis=AXES, keepdims=True)
    xc = x - mean
    inv = 1 / np.sqrt((xc * xc).mean(axis=AXES, keepdims=True) + eps)
    x_hat = xc * inv
    y = x_hat * scale.reshape(along) + bias.reshape(along)
    h = dy * scale.reshape(along)
    dx = inv * (h - h.mean(axis=AXES, keepdims=True)
                - x_hat * (h * x_hat).mean(axis=AXES, keepdims=True))
    return y, dx, (dy * x_hat).sum(axis=AXES), dy.sum(axis=AXES)


def kernels_alone(x, scale, bias, dy, eps=EPS):
    """The same through kernels/cpu/norm.py directly (the op's (N, C, 1, H*W) view)."""
    n, c = x.shape[:2]
    x4, dy4 = x.reshape(n, c, 1, -1), dy.reshape(n, c, 1, -1)
    mean, var = K.moments(x4)
    inv = 1 / np.sqrt(var + eps)
    s2 = scale.astype(np.float64).reshape(c, 1)
    y = K.normalize(x4, mean, inv, s2, bias.astype(np.float64).reshape(c, 1),
                    np.empty_like(x4))
    dx, dscale, dbias = K.normalize_grad(x4, dy4, mean, inv, s2, True, np.empty_like(x4))
    return y.reshape(x.shape), dx.reshape(x.shape), dscale.reshape(c), dbias.reshape(c)


def build(shape=(64, 16, 28, 28)):
    """(main, feed, fetch names, running statistics): batch_norm of a fed X, Scale, Bias
    and its gradient for a fed dY; Mean and Variance live in the scope (persistable, as
    a layer makes them) and are updated in place."""
    r = rng()
    c = shape[1]
    feed = {"x": r.standard_normal(shape, np.float32) * 2 + 1,
            "scale": r.uniform(0.5, 1.5, c).astype(np.float32),
            "bias": r.uniform(-1, 1, c).astype(np.float32),
            "dy": r.standard_normal(shape, np.float32)}
    stats = {"mean": np.zeros(c, np.float32), "var": np.ones(c, np.float32)}
    main = pd.Program()
    blk = main.global_block()
    x, scale, bias = (blk.create_var(n, list(feed[n].shape), "float32", stop_gradient=False)
                      for n in ("x", "scale", "bias"))
    mean, var = (blk.create_var(n, [c], "float32", persistable=True) for n in stats)
    y = blk.create_var("y")
    blk.append_op("batch_norm", {"X": [x], "Scale": [scale], "Bias": [bias], "Mean": [mean],
                                 "Variance": [var]},
                  {"Y": [y], "MeanOut": [mean], "VarianceOut": [var],
                   "SavedMean": [blk.create_var("saved_mean")],
                   "SavedVariance": [blk.create_var("saved_var")]},
                  {"momentum": 0.9, "epsilon": EPS})
    dy = blk.create_var("dy", list(shape), "float32")
    grads = pd.gradients([y], [x, scale, bias], target_gradients=[dy])
    return main, feed, ["y"] + [g.name for g in grads], stats


def run(quick: bool = False) -> list[dict]:
    main, feed, fetch, stats = build()
    go = runner(main, None, feed, fetch)
    for name, value in stats.items():
        go.scope.var(name).set(value)
    x, scale, bias, dy = (feed[n] for n in ("x", "scale", "bias", "dy"))
    t = torch()
    torch_fn = None
    if t:
        tx = t.from_numpy(x).requires_grad_(True)
        tw, tb = (t.from_numpy(a).requires_grad_(True) for a in (scale, bias))
        rm, rv, tdy = t.zeros(x.shape[1]), t.ones(x.shape[1]), t.from_numpy(dy)

        def torch_fn():
            tx.grad = tw.grad = tb.grad = None
            out = t.nn.functional.batch_norm(tx, rm, rv, tw, tb, training=True, eps=EPS)
            out.backward(tdy)
            return out
    s = compare({"run": go, "kernels": lambda: kernels_alone(x, scale, bias, dy),
                 "numpy": lambda: numpy_batch_norm(x, scale, bias, dy),
                 "torch": torch_fn}, quick)
    return [row("batch_norm 64x16x28x28 fwd+bwd: Executor.run", s["run"], s["numpy"],
                s["torch"], vs_numpy=TARGET),
            row("batch_norm 64x16x28x28 fwd+bwd: kernels alone", s["kernels"], s["numpy"],
                s["torch"], vs_numpy=TARGET, note="kernels.cpu.norm")]
