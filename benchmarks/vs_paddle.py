"""paddle_nb against PaddlePaddle 2.6.2's own CPU Executor, on the ProgramDesc Paddle made.

benchmarks/paddle26/ holds four training steps (forward, backward, SGD) that Paddle built
in static-graph mode: the MLP, an ``nn.SimpleRNN`` (Paddle's fused ``rnn`` op), an
``nn.RNN(SimpleRNNCell)`` (a ``while`` loop over tensor arrays) and
``paddle.vision.models.LeNet``. For each: the main and startup programs as Paddle
serialized them (each op's traceback trimmed to the maker's frames), the parameters
Paddle's startup program made, the feed, the loss's name, and ``paddle26.json`` with
Paddle's seconds per ``Executor.run`` step and the losses of its first steps.
``paddle26/make_programs.py`` made them (its docstring says how to re-run it); Paddle is
never imported here.

Each row runs a saved program in paddle_nb from Paddle's parameters: through
``Executor.run`` as written, and through ``pd.CompiledProgram`` when the block compiler
can be imported (the two timed in turns). The row's target is Paddle's committed time,
and its note gives the ratio, the ratio measured when the data was made (Paddle and
paddle_nb in turns, in two processes: the two cannot share one, as both register
``paddle.framework.proto`` in protobuf's one descriptor pool), and whether paddle_nb's
losses equal Paddle's. ``python -m benchmarks.vs_paddle --serve`` is the paddle_nb side of
that turn-taking: it answers make_programs.py's requests, one JSON line each."""
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from . import timing   # noqa: F401  (threads fixed before numpy and numba load)

import numpy as np

import paddle_nb as pd

from .common import row
from .timing import compare, fmt

DATA = Path(__file__).resolve().parent / "paddle26"
RECORD = DATA / "paddle26.json"
# paddle_nb's losses equal Paddle's within this, relative to the largest of Paddle's
# (float32 sums in another order: the MLP's and LeNet's agree to the last bit or one, the
# RNNs', near 5e-3, by about 3e-6 of it)
LOSS_RTOL = 1e-4
VARIANTS = ("Executor.run", "CompiledProgram")
SHORT = {"Executor.run": "run", "CompiledProgram": "compiled"}     # in the row's name
BUSY = 0.2     # cores other processes used while Paddle was timed above which we say so


def recorded() -> dict:
    """What make_programs.py wrote: the environment, and per case its files and Paddle's
    numbers."""
    return json.loads(RECORD.read_text())


def load(case: dict):
    """(main program, feed, loss name, parameters) of one case of the record."""
    main = pd.Program.from_bytes((DATA / case["main"]).read_bytes())
    with np.load(DATA / case["feed"]["file"]) as saved:
        feed = {k: saved[k].reshape(shape) for k, shape in case["feed"]["shapes"].items()}
    with np.load(DATA / case["params"]) as saved:
        params = dict(saved)
    return main, feed, case["fetch"][0], params


def stepper(case: dict, variant: str = "Executor.run"):
    """A no-argument function running one training step of ``case`` in its own scope,
    started from Paddle's parameters; returns the loss. The startup program is not run:
    every persistable variable of the main program is among Paddle's saved ones."""
    main, feed, loss, params = load(case)
    exe, scope = pd.Executor(pd.CPUPlace()), pd.Scope()
    for name, value in params.items():
        scope.var(name).set(value.copy())
    program = pd.CompiledProgram(main) if variant == "CompiledProgram" else main

    def step():
        return exe.run(program, feed=feed, fetch_list=[loss], scope=scope)[0]
    return step


def losses(case: dict, variant: str, steps: int) -> list:
    """The losses of the first ``steps`` steps from Paddle's parameters."""
    step = stepper(case, variant)
    return [float(np.asarray(step()).reshape(())) for _ in range(steps)]


def loss_check(case: dict, variant: str = "Executor.run") -> dict:
    """paddle_nb's first losses from Paddle's parameters against Paddle's: their largest
    difference relative to the largest of Paddle's, and whether that is within
    LOSS_RTOL."""
    paddles = case["paddle"]["losses"]
    ours = losses(case, variant, len(paddles))
    diff = max(abs(a - b) for a, b in zip(ours, paddles)) / max(abs(v) for v in paddles)
    return {"losses": ours, "loss_rel_diff": diff, "losses_agree": diff <= LOSS_RTOL}


def _case_rows(case: dict, quick: bool) -> list[dict]:
    steps = {v: stepper(case, v) for v in VARIANTS}
    agree = {v: loss_check(case, v) for v in VARIANTS}
    times = compare(steps, quick)
    paddle_s = case["paddle"]["step_s"]
    rows = []
    for v in VARIANTS:
        title = f"vs Paddle: {case['title']}, {SHORT[v]}"
        made = case["paddle_nb"].get(v, {}).get("vs_paddle")
        busy = case.get("others_busy_cores") or 0
        r = row(title, times[v], max_s=paddle_s,
                note=(f"{times[v] / paddle_s:.2f}x Paddle's {fmt(paddle_s).strip()}"
                      + (f" (timed while others used {busy:.1f} cores)" if busy > BUSY else "")
                      + (f"; in turns when made: {made[0]:.2f}x" if made else "")
                      + ("; losses = Paddle's" if agree[v]["losses_agree"] else
                         f"; LOSSES DIFFER from Paddle's by {agree[v]['loss_rel_diff']:.1e}")))
        r.update(target=f"<= Paddle ({fmt(paddle_s).strip()})", paddle_s=paddle_s,
                 vs_paddle=times[v] / paddle_s, loss_rel_diff=agree[v]["loss_rel_diff"])
        rows.append(r)
    return rows


def run(quick: bool = False) -> list[dict]:
    return [r for case in recorded()["cases"].values() for r in _case_rows(case, quick)]


# --- the paddle_nb side of make_programs.py's turns -----------------------------------------
def serve(lines=sys.stdin, out=sys.stdout) -> None:
    """Answer make_programs.py, one JSON line per request, until the input ends:

    ``{"about": true}`` -> versions and whether the compiler is there;
    ``{"case": {...}, "variant": v, "losses": true}`` -> ``loss_check``'s answer;
    ``{"case": {...}, "variant": v, "time": n}`` -> seconds per step of n
    steps run right after n others (a sample of timing.compare), the stepper made once
    per case and variant."""
    steppers = {}
    for line in lines:
        ask = json.loads(line)
        if ask.get("about"):
            import numba
            answer = {"python": sys.version.split()[0], "numpy": np.__version__,
                      "numba": numba.__version__}
        elif "losses" in ask:
            answer = loss_check(ask["case"], ask["variant"])
        else:
            key = (ask["case"]["main"], ask["variant"])
            if key not in steppers:
                steppers[key] = stepper(ask["case"], ask["variant"])
            step, n = steppers[key], ask["time"]
            for _ in range(n):
                step()
            t0 = time.perf_counter()
            for _ in range(n):
                step()
            answer = {"seconds": (time.perf_counter() - t0) / n}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    if sys.argv[1:] != ["--serve"]:
        raise SystemExit("python -m benchmarks.vs_paddle --serve (for make_programs.py); "
                         "the rows: python -m benchmarks --only vs_paddle")
    timing.steady_allocator()
    serve()
