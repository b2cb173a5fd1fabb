"""Timing helpers: contenders timed in turns (median, fastest and slowest round), warm-up,
threads fixed."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import statistics
import sys
import time

# Fix the thread counts before numpy/numba/torch start their pools, so runs are comparable:
# 2, this machine's cores, what each library picks by itself here. Variables already set
# win (``OPENBLAS_NUM_THREADS=1 python -m benchmarks`` to see the effect of one).
THREADS = "2"
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "NUMBA_NUM_THREADS")
for _var in THREAD_VARS:
    os.environ.setdefault(_var, THREADS)


def steady_allocator() -> bool:
    """Keep arrays up to 32 MB on glibc's heap, as in a process that has run a while.

    A fresh process gets every allocation of 128 kB or more from mmap, so each new array
    is fresh pages the kernel must zero and fault in; glibc raises that threshold only
    after a large free, and returns memory to the system when the heap top passes twice
    it. So the same numpy softmax of 1000x1000 took 4.3 ms or 1.2 ms depending on what the
    process had freed before. Fixing both thresholds makes every case, for every library,
    run in the warmed-up state whatever ran before it. Called by the command lines, not
    on import (a test process keeps its allocator). Returns False where it cannot (not
    glibc)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 32 << 20)) and \
            bool(libc.mallopt(m_trim_threshold, 256 << 20))
    except (OSError, AttributeError):
        return False


def _cpu_snapshot():
    """(wall s, CPU seconds all processes spent, CPU seconds this one and its children did),
    or None where /proc/stat is missing."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:8]]
    except (OSError, ValueError):
        return None
    busy = sum(fields) - fields[3] - fields[4]           # all but idle and iowait
    mine = os.times()
    return (time.perf_counter(), busy / os.sysconf("SC_CLK_TCK"),
            mine.user + mine.system + mine.children_user + mine.children_system)


class OthersWatch:
    """How many cores *other* processes kept busy between ``start()`` and ``cores()``.
    On a shared machine a measurement is only as good as this number is small."""
    def __init__(self):
        self.t0 = _cpu_snapshot()

    def cores(self) -> float | None:
        t1 = _cpu_snapshot()
        if self.t0 is None or t1 is None or t1[0] <= self.t0[0]:
            return None
        others = (t1[1] - self.t0[1]) - (t1[2] - self.t0[2])
        return max(0.0, others / (t1[0] - self.t0[0]))


def busy_cores(seconds: float = 0.5) -> float | None:
    """Cores other processes keep busy, watched for ``seconds`` while this one sleeps."""
    watch = OthersWatch()
    time.sleep(seconds)
    return watch.cores()


def wait_quiet(limit_s: float, below: float = 0.15) -> float | None:
    """Wait (up to ``limit_s``) until other processes use less than ``below`` cores over
    half a second; returns the last reading."""
    deadline = time.perf_counter() + limit_s
    while True:
        busy = busy_cores(0.5)
        if busy is None or busy < below or time.perf_counter() >= deadline:
            return busy


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


# After a call, OpenBLAS's worker threads spin for about 100 ms (torch's and numba's OpenMP
# workers for about 10 ms) before they sleep. On 2 cores, a pool still spinning from the
# previous measurement halves the next one's CPU (torch's 256 matmul went from 0.2 to
# 12 ms right after numpy's), so each measurement starts after the others have gone idle.
SETTLE_S = 0.2


def measure(fn, quick: bool = False) -> float:
    """``median_time`` with the settings of a run: 7 samples (quick) or 15, each sample
    long enough (about 2 or 10 ms, by repeating ``fn``) that the clock's resolution and
    one-off hiccups do not decide a microsecond-scale median."""
    time.sleep(SETTLE_S)
    fn()                                   # warm-up (and compiles / loads what it needs)
    t0 = time.perf_counter()
    fn()
    once = max(time.perf_counter() - t0, 1e-7)
    inner = max(1, int((0.002 if quick else 0.010) / once))
    return median_time(fn, repeats=7 if quick else 15, warmup=1, inner=inner)


class Timing(float):
    """Seconds per call: the median over rounds (the float itself), with ``low`` and
    ``high`` (the fastest and slowest round) and every round's ``samples``."""
    low: float
    high: float
    samples: list

    def __new__(cls, samples):
        t = super().__new__(cls, statistics.median(samples))
        t.low, t.high, t.samples = min(samples), max(samples), list(samples)
        return t


def compare(contenders: dict, quick: bool = False) -> dict:
    """Seconds per call of each contender (name -> no-argument function, or None for
    "not available"), measured in turns: every round times each contender once, in an
    order that rotates from round to round, so a slow moment of the machine or a pool
    still spinning from the one before falls on all of them alike. Each sample repeats
    its function to last about 2 ms (quick) or 10 ms, and at least 3 (quick) or 5 times,
    so a call of several ms is not timed right after the settle's sleep alone (the
    1000-op chain measured 3.2 us per op in a loop and 5.4-6.3 us in samples of two
    calls); 7 or 15 rounds. Returns name ->
    :class:`Timing` (or None); ``ratios(a, b)`` of two results pairs them round by round."""
    live = {k: f for k, f in contenders.items() if f is not None}
    inner = {}
    for name, fn in live.items():
        time.sleep(SETTLE_S)                   # not right after another one's pools ran
        fn()                                   # warm-up (and compiles what it needs)
        # the fastest of three: a call slowed by a pool waking up must not make the
        # samples so short that the wake-up is all they measure
        once = max(min(_seconds(fn) for _ in range(3)), 1e-7)
        inner[name] = max(3 if quick else 5, int((0.002 if quick else 0.010) / once))
    samples = {k: [] for k in live}
    names = list(live)
    for r in range(7 if quick else 15):
        order = names[r % len(names):] + names[:r % len(names)] if names else []
        for name in order:
            fn, n = live[name], inner[name]
            time.sleep(SETTLE_S)               # let the last contender's pools go idle
            for _ in range(n):                 # then run hot, as in a loop of calls:
                fn()                           # threads awake, caches and clock warm
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            samples[name].append((time.perf_counter() - t0) / n)
    return {k: Timing(samples[k]) if k in live else None for k in contenders}


def _seconds(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def ratios(a: Timing | None, b: Timing | None) -> tuple | None:
    """(median, lowest, highest) of a / b over the rounds both were timed in."""
    if a is None or b is None or not hasattr(a, "samples") or not hasattr(b, "samples"):
        return None
    per_round = [x / y for x, y in zip(a.samples, b.samples)]
    return statistics.median(per_round), min(per_round), max(per_round)


def fmt(seconds: float | None) -> str:
    if seconds is None:
        return " " * 11
    if seconds < 1e-3:
        return f"{seconds * 1e6:8.1f} us"
    if seconds < 1:
        return f"{seconds * 1e3:8.2f} ms"
    return f"{seconds:8.2f} s "
