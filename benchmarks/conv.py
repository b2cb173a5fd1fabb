"""conv2d on a float32 batch [64, 16, 28, 28] with a [16, 16, 3, 3] filter (stride 1,
padding 1): a one-op program through ``Executor.run``, forward alone and forward with the
gradients of sum(Output) w.r.t. Input and Filter (``pd.gradients``: fill, conv2d_grad).

paddle_nb runs it with its direct stride-1 loops (kernels/cpu/direct_conv.py); numpy's
contender is im2col + one sgemm (what paddle_nb did before them), written with
``np.lib.stride_tricks.sliding_window_view`` (its backward: two products and the window
sums added back tap by tap); torch's is ``torch.nn.functional.conv2d`` (and autograd)."""
from __future__ import annotations

import numpy as np

import paddle_nb as pd

from .common import rng, row, runner, torch
from .timing import compare

N, C, H, W, COUT, K = 64, 16, 28, 28, 16, 3
TARGET_VS_TORCH = 1.5


def build(backward: bool, n: int = N, c: int = C, hw: int = H, cout: int = COUT):
    """(main, feed, fetch): conv2d of fed x [n, c, hw, hw] and w [cout, c, 3, 3] (padding
    1); with the gradients of sum(Output) w.r.t. x and w."""
    r = rng()
    feed = {"x": r.standard_normal((n, c, hw, hw), np.float32),
            "w": r.standard_normal((cout, c, K, K), np.float32) / 12}
    main = pd.Program()
    with pd.program_guard(main, pd.Program()):
        x, w = pd.data("x", [n, c, hw, hw]), pd.data("w", [cout, c, K, K])
        out = pd.op.conv2d(Input=x, Filter=w, paddings=[1, 1])
        fetch = [out] + (pd.gradients([out], [x, w]) if backward else [])
    return main, feed, fetch


def numpy_conv(x, w):
    """(out, cols): im2col by sliding windows of the padded input, then one product."""
    (n, c, h, wd), cout = x.shape, w.shape[0]
    xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    win = np.lib.stride_tricks.sliding_window_view(xp, (K, K), axis=(2, 3))  # n c i j a b
    cols = np.ascontiguousarray(win.transpose(1, 4, 5, 0, 2, 3)).reshape(c * K * K, -1)
    out = w.reshape(cout, -1) @ cols                                  # [Cout, N*H*W]
    return np.ascontiguousarray(out.reshape(cout, n, h, wd).transpose(1, 0, 2, 3)), cols


def numpy_conv_backward(x, w):
    """(out, dx, dw) for the gradient of sum(out)."""
    (n, c, h, wd), cout = x.shape, w.shape[0]
    out, cols = numpy_conv(x, w)
    dy = np.ones_like(out).transpose(1, 0, 2, 3).reshape(cout, -1)
    dw = (dy @ cols.T).reshape(w.shape)
    dcols = (w.reshape(cout, -1).T @ dy).reshape(c, K, K, n, h, wd)
    dxp = np.zeros((n, c, h + 2, wd + 2), np.float32)
    for a in range(K):
        for b in range(K):
            dxp[:, :, a:a + h, b:b + wd] += dcols[:, a, b].transpose(1, 0, 2, 3)
    return out, dxp[:, :, 1:-1, 1:-1], dw


def run(quick: bool = False) -> list[dict]:
    t = torch()
    rows = []
    for backward in (False, True):
        main, feed, fetch = build(backward)
        x, w = feed["x"], feed["w"]
        tf = None
        if t:
            tx, tw = t.from_numpy(x), t.from_numpy(w)
            if backward:
                tx, tw = tx.clone().requires_grad_(), tw.clone().requires_grad_()

                def tf():
                    y = t.nn.functional.conv2d(tx, tw, padding=1)
                    tx.grad = tw.grad = None
                    y.backward(t.ones_like(y))
                    return y
            else:
                def tf():
                    return t.nn.functional.conv2d(tx, tw, padding=1)
        np_fn = (lambda: numpy_conv_backward(x, w)) if backward else (lambda: numpy_conv(x, w))
        s = compare({"run": runner(main, None, feed, fetch), "numpy": np_fn, "torch": tf},
                    quick)
        what = "forward+backward" if backward else "forward"
        rows.append(row(f"conv2d {N}x{C}x{H}x{W} * {COUT}x{C}x3x3: {what}", s["run"],
                        s["numpy"], s["torch"], vs_torch=TARGET_VS_TORCH,
                        note="Executor.run (feed+fetch); direct stride-1 loops"))
    return rows
