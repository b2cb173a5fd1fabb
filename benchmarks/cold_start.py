"""Cold start: ``import paddle_nb`` + building and running the MLP training step once, in a
fresh Python process, timed inside it (so interpreter start-up is not counted).

With a cold numba cache (NUMBA_CACHE_DIR a new empty folder) every kernel the step uses
is compiled; with a warm cache (the same folder again) numba loads them from disk. The
cold run is one sample (each needs a new folder, and compiling is what it measures);
the warm runs reuse the folder the cold run filled."""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .common import row

TARGET_WARM_S, TARGET_COLD_S = 1.0, 4.0
ROOT = Path(__file__).resolve().parents[1]

CHILD = """
import time
t0 = time.perf_counter()
import paddle_nb as pd
t_import = time.perf_counter() - t0
from benchmarks import mlp
from benchmarks.common import runner
main, startup, loss = mlp.build()
runner(main, startup, mlp.batch(), [loss])()
import json
print(json.dumps({"import_s": t_import, "total_s": time.perf_counter() - t0}))
"""


def one_process(cache_dir: str) -> dict:
    """Run CHILD with ``cache_dir`` as numba's cache; its timings and the process's wall."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    t0 = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", CHILD], cwd=ROOT, env=env, check=True,
                          capture_output=True, text=True)
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["wall_s"] = time.perf_counter() - t0
    return result


def run(quick: bool = False) -> list[dict]:
    with tempfile.TemporaryDirectory(prefix="paddle_nb_numba_cache_") as cache:
        cold = one_process(cache)
        warm = [one_process(cache) for _ in range(3 if quick else 7)]
    med = {k: statistics.median(w[k] for w in warm) for k in warm[0]}
    return [row("cold start, cold numba cache: import + first MLP step", cold["total_s"],
                max_s=TARGET_COLD_S, note=f"1 sample; import {cold['import_s']:.2f} s, "
                     f"process wall {cold['wall_s']:.1f} s"),
            row("cold start, warm numba cache: import + first MLP step", med["total_s"],
                max_s=TARGET_WARM_S,
                note=f"median of {len(warm)}; import {med['import_s']:.2f} s, "
                     f"process wall {med['wall_s']:.2f} s")]
