"""Timing helpers: warm-up, median of repeats, threads fixed."""
from __future__ import annotations

import os
import statistics
import time

# Fix the thread count before numpy/numba start their pools, so runs are comparable.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS"):
    os.environ.setdefault(_var, "2")


def median_time(fn, repeats: int = 7, warmup: int = 2, inner: int = 1) -> float:
    """Median seconds of one call of ``fn`` (each sample averages ``inner`` calls)."""
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(max(repeats, 7)):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


def fmt(seconds: float) -> str:
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "
