"""How long the block compiler takes: ``python -m benchmarks.compile_time``.

For the MLP and the tanh RNN training steps, a new process with an empty segment cache
(``PADDLE_NB_CACHE_DIR`` a new folder; numba's kernel cache as it is) runs the program
plainly once, then as a ``pd.CompiledProgram`` twice: the first compiled run learns the
block (it runs in the interpreter), the second compiles the segments and runs them. A
second process with the same folder does it again: the warm cache. Times are taken inside
each child, so the interpreter's start and the imports are not in them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import json, sys, time
sys.path.insert(0, sys.argv[2])
import paddle_nb as pd
from benchmarks import mlp, rnn
case = {"mlp": mlp, "rnn": rnn}[sys.argv[1]]
main, startup, loss = case.build()
feed = case.batch() if case is mlp else case.sequence()
exe, scope = pd.Executor(), pd.Scope()
exe.run(startup, scope=scope)
exe.run(main, feed=feed, fetch_list=[loss], scope=scope)      # the kernels, loaded
compiled = pd.CompiledProgram(main)
t0 = time.perf_counter()
exe.run(compiled, feed=feed, fetch_list=[loss], scope=scope)  # learns (interpreted)
t1 = time.perf_counter()
exe.run(compiled, feed=feed, fetch_list=[loss], scope=scope)  # compiles, runs compiled
t2 = time.perf_counter()
print(json.dumps({"learn_s": t1 - t0, "compile_s": t2 - t1}))
"""

TARGETS = {"mlp": 3.0, "rnn": 5.0}     # seconds, cold; warm: 0.3 s for both
WARM_TARGET = 0.3


def measure(case: str, cache: str) -> dict:
    root = str(Path(__file__).resolve().parent.parent)
    env = dict(os.environ, PADDLE_NB_CACHE_DIR=cache)
    done = subprocess.run([sys.executable, "-c", CHILD, case, root], env=env,
                          capture_output=True, text=True, timeout=600, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    for case in ("mlp", "rnn"):
        with tempfile.TemporaryDirectory() as cache:
            cold, warm = measure(case, cache), measure(case, cache)
        total = {k: v["learn_s"] + v["compile_s"] for k, v in (("cold", cold), ("warm", warm))}
        print(f"{case}: cold {cold['learn_s']:.2f} s learning + {cold['compile_s']:.2f} s "
              f"compiling = {total['cold']:.2f} s (target <= {TARGETS[case]:g} s: "
              f"{'yes' if total['cold'] <= TARGETS[case] else 'NO'}); warm "
              f"{total['warm']:.2f} s (target <= {WARM_TARGET:g} s: "
              f"{'yes' if total['warm'] <= WARM_TARGET else 'NO'})")


if __name__ == "__main__":
    main()
