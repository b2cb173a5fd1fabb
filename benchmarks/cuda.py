"""The CUDA place: matmul, the MLP step and the RNN step with ``pd.CUDAPlace(0)``, PyTorch
CUDA beside them when it has a GPU. The numpy column is the CPU reference, for scale.

Only on a real GPU (numba.cuda.is_available() and not numba's simulator, which would
time Python emulating a GPU). Otherwise, or when an op has no CUDA kernel yet, each row
says why it was skipped instead of a time."""
from __future__ import annotations

import os

from . import matmul, mlp, rnn
from .common import params_of, row, runner, torch
from .timing import compare


def why_no_gpu() -> str | None:
    """None when a real CUDA GPU is usable; else the reason, for the rows' notes."""
    if os.environ.get("NUMBA_ENABLE_CUDASIM") == "1":
        return "numba's CUDA simulator is on (NUMBA_ENABLE_CUDASIM=1)"
    try:
        from numba import cuda   # noqa: PLC0415
        if not cuda.is_available():
            return "no CUDA GPU (numba.cuda.is_available() is False)"
    except Exception as e:   # noqa: BLE001  (a broken driver is a reason, not a crash)
        return f"numba.cuda unusable: {type(e).__name__}: {e}"
    return None


def _torch_device(device: str):
    t = torch()
    if t is None or (device == "cuda" and not t.cuda.is_available()):
        return None

    def timed(fn):
        """Synchronize after each call: CUDA calls return before the GPU is done."""
        def call():
            fn()
            if device == "cuda":
                t.cuda.synchronize()
        return call
    return t, timed


# sizes: matmul n; MLP (in, hidden, classes, batch); RNN (T, B, D, H). "tiny" only checks
# that the path runs (tests, in numba's simulator).
_MLP = (mlp.IN, mlp.HIDDEN, mlp.CLASSES, mlp.BATCH)
_RNN = (rnn.T, rnn.B, rnn.D, rnn.H)
SIZES = {"full": (1024, _MLP, _RNN), "quick": (512, _MLP, _RNN),
         "tiny": (8, (12, 8, 4, 4), (3, 2, 4, 5))}


def _cases(size: str):
    """(name, build -> (main, startup, feed, fetch), parameter names, numpy timer,
    torch timer) for each case."""
    n, (m_in, m_hidden, m_classes, m_batch), (r_t, r_b, r_d, r_h) = SIZES[size]

    def mm_build():
        main, feed, out = matmul.build(n)
        return main, None, feed, [out]

    def mm_numpy(feed, start):
        a, b = feed["a"], feed["b"]
        return lambda: a @ b

    def mm_torch(t, dev, feed, start):
        a, b = (t.from_numpy(feed[k]).to(dev) for k in "ab")
        return lambda: a @ b

    def mlp_build():
        main, startup, loss = mlp.build(m_in, m_hidden, m_classes)
        return main, startup, mlp.batch(m_batch, m_in, m_classes), [loss]

    def mlp_numpy(feed, start):
        p = {k: v.copy() for k, v in start.items()}
        return lambda: mlp.numpy_step(p, feed["x"], feed["label"])

    def mlp_torch(t, dev, feed, start):
        p = {k: t.tensor(v, requires_grad=True, device=dev) for k, v in start.items()}
        x, lab = t.from_numpy(feed["x"]).to(dev), t.from_numpy(feed["label"].ravel()).to(dev)
        return lambda: mlp.torch_step(t, p, x, lab)

    def rnn_build():
        main, startup, loss = rnn.build(r_t, r_b, r_d, r_h)
        return main, startup, rnn.sequence(r_t, r_b, r_d), [loss]

    def rnn_numpy(feed, start):
        p = {k: v.copy() for k, v in start.items()}
        return lambda: rnn.numpy_step(p, feed["x"])

    def rnn_torch(t, dev, feed, start):
        p = {k: t.tensor(v, requires_grad=True, device=dev) for k, v in start.items()}
        x = t.from_numpy(feed["x"]).to(dev)
        return lambda: rnn.torch_step(t, p, x)

    return [(f"matmul {n}", mm_build, (), mm_numpy, mm_torch),
            (f"MLP {m_in}-{m_hidden}-{m_classes} b{m_batch} step", mlp_build, mlp.PARAMS,
             mlp_numpy, mlp_torch),
            (f"tanh RNN T={r_t} B={r_b} H={r_h} step", rnn_build, rnn.PARAMS, rnn_numpy,
             rnn_torch)]


def time_place(place, device: str, quick: bool, label: str, size: str | None = None):
    """Every case on ``place``, as rows (tests run it on the CPU place and, tiny, on the
    CUDA simulator, to keep the path alive where no GPU is)."""
    rows = []
    for name, build, params, numpy_fn, torch_fn in _cases(size or ("quick" if quick else
                                                                  "full")):
        case = f"{label} {name}"
        main, startup, feed, fetch = build()
        try:
            go = runner(main, startup, feed, fetch, place=place)
            start = params_of(go.scope, params)
            go()
        except Exception as e:   # noqa: BLE001  (no kernel yet, a driver error: a note)
            msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
            rows.append(row(case, None, note=f"skipped: {type(e).__name__}: {msg[:120]}"))
            continue
        td = _torch_device(device)
        torch_go = td[1](torch_fn(td[0], device, feed, start)) if td else None
        s = compare({"paddle_nb": go, "numpy": numpy_fn(feed, start), "torch": torch_go},
                    quick)
        rows.append(row(case, s["paddle_nb"], s["numpy"], s["torch"],
                        note=f"numpy on the CPU; torch on {device}"))
    return rows


def run(quick: bool = False) -> list[dict]:
    reason = why_no_gpu()
    if reason:
        return [row(f"CUDA {name}", None, note=f"skipped: {reason}")
                for name, *_ in _cases("quick" if quick else "full")]
    import paddle_nb as pd   # noqa: PLC0415
    return time_place(pd.CUDAPlace(0), "cuda", quick, "CUDA")
