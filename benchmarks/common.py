"""What every case shares: the result row (with its target), the optional PyTorch import,
and a runner that times a paddle_nb program through ``Executor.run``, as written or as a
``pd.CompiledProgram``."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .timing import ratios

# Every case draws its float32 inputs from this seed, so numpy, paddle_nb and torch see the
# same numbers.
SEED = 0


def rng():
    return np.random.default_rng(SEED)


def row(case: str, paddle_nb_s: float | None, numpy_s: float | None = None,
        torch_s: float | None = None, *, vs_numpy: float | None = None,
        vs_torch: float | None = None, max_s: float | None = None, note: str = "") -> dict:
    """One line of the table. ``vs_numpy`` / ``vs_torch`` are the issue's targets for the
    ratio paddle_nb / reference, ``max_s`` an absolute target for ``paddle_nb_s``; a row
    says which targets it has and whether they are met (None: nothing to compare)."""
    def ratio(ref):
        return paddle_nb_s / ref if paddle_nb_s and ref else None

    r = {"case": case, "paddle_nb_s": paddle_nb_s, "numpy_s": numpy_s, "torch_s": torch_s,
         "vs_numpy": ratio(numpy_s), "vs_torch": ratio(torch_s),
         "target_vs_numpy": vs_numpy, "target_vs_torch": vs_torch, "target_s": max_s}
    # Timed in turns (timing.compare): the ratios are paired round by round, and the
    # spread says how far one round's ratio went from another's.
    for key, ref in (("vs_numpy", numpy_s), ("vs_torch", torch_s)):
        paired = ratios(paddle_nb_s, ref)
        if paired is not None:
            r[key], r[f"{key}_low"], r[f"{key}_high"] = paired
    for key, t in (("paddle_nb", paddle_nb_s), ("numpy", numpy_s), ("torch", torch_s)):
        if hasattr(t, "low"):
            r[f"{key}_low_s"], r[f"{key}_high_s"] = t.low, t.high
    texts, met = [], []
    if vs_numpy is not None:
        texts.append(f"<={vs_numpy:g}x np")
        if r["vs_numpy"] is not None:
            met.append(r["vs_numpy"] <= vs_numpy)
    if vs_torch is not None:
        texts.append(f"<={vs_torch:g}x torch")
        if r["vs_torch"] is not None:
            met.append(r["vs_torch"] <= vs_torch)
    if max_s is not None:
        texts.append(f"<={_short(max_s)}")
        if paddle_nb_s is not None:
            met.append(paddle_nb_s <= max_s)
    r["target"] = ", ".join(texts)
    r["target_met"] = all(met) if met else None
    r["note"] = note
    return r


def _short(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:g} us"
    if seconds < 1:
        return f"{seconds * 1e3:g} ms"
    return f"{seconds:g} s"


_TORCH = []


def torch():
    """PyTorch if it is installed (never a dependency of the project), as a PyTorch user
    has it: imported before paddle_nb (``python -m benchmarks`` imports it first), its
    thread count its own default; else None, and the torch column stays empty."""
    if not _TORCH:
        try:
            import torch as t   # noqa: PLC0415
        except ImportError:
            t = None
        _TORCH.append(t)
    return _TORCH[0]


def runner(main, startup, feed: dict, fetch_list: list, place=None, compiled=False):
    """A no-argument function running ``main`` once (feed in, fetch out) in its own scope,
    after the startup program; with the executor and the scope, for tests to look into.
    ``compiled``: run it as ``pd.CompiledProgram(main)`` (the block compiler), compiled
    here by two runs (the first learns the block, the second compiles its segments)."""
    import paddle_nb as pd   # noqa: PLC0415
    exe = pd.Executor(place if place is not None else pd.CPUPlace())
    scope = pd.Scope()
    if startup is not None:
        exe.run(startup, scope=scope)
    program = pd.CompiledProgram(main) if compiled else main

    def run_once():
        return exe.run(program, feed=feed, fetch_list=fetch_list, scope=scope)
    if compiled:
        for _ in range(2):
            run_once()
        run_once.program = program
    run_once.exe, run_once.scope = exe, scope
    return run_once


def params_of(scope, names) -> dict:
    """Copies of parameters from a scope (numpy references start from the same values)."""
    def host(v):
        return v.copy_to_host() if hasattr(v, "copy_to_host") else np.array(v, copy=True)
    return {n: host(scope.find_var(n).get()) for n in names}


def torch_sgd(t, params: dict, loss, lr: float):
    """Backward from ``loss`` and one in-place SGD update of the leaf tensors ``params``."""
    loss.backward()
    with t.no_grad():
        for w in params.values():
            w -= lr * w.grad
            w.grad = None
    return loss


class StepTimes(NamedTuple):
    """Seconds per training step of each contender (None: not timed)."""
    interpreted: float          # Executor.run(main): the fast path
    compiled: float             # Executor.run(pd.CompiledProgram(main)): the block compiler
    numpy: float | None
    torch: float | None


def training_step_times(main, startup, loss, feed: dict, param_names, numpy_step,
                        torch_step, torch_inputs, quick: bool) -> StepTimes:
    """Seconds per training step of the program (run plainly and compiled), of
    ``numpy_step(params)`` (None: no numpy contender) and (when PyTorch is installed) of
    ``torch_step(t, params, *torch_inputs(t))``, all from the same initial parameters (the
    startup program's), timed in turns."""
    from .timing import compare   # noqa: PLC0415
    go = runner(main, startup, feed, [loss])
    compiled = runner(main, startup, feed, [loss], compiled=True)
    start = params_of(go.scope, param_names)
    p = {k: v.copy() for k, v in start.items()}
    t, torch_fn = torch(), None
    if t:
        tp = {k: t.tensor(v, requires_grad=True) for k, v in start.items()}
        inputs = torch_inputs(t)
        torch_fn = lambda: torch_step(t, tp, *inputs)   # noqa: E731
    numpy_fn = (lambda: numpy_step(p)) if numpy_step is not None else None   # noqa: E731
    times = compare({"paddle_nb": go, "compiled": compiled, "numpy": numpy_fn,
                     "torch": torch_fn}, quick)
    return StepTimes(times["paddle_nb"], times["compiled"], times["numpy"], times["torch"])
