"""The thread-pool clash in isolation: ``python -m benchmarks.threads``.

A BLAS call (``np.dot`` inside njit: scipy's OpenBLAS, as paddle_nb's matmul kernels do)
followed by a small ``parallel=True`` numba kernel, in a loop, against each of them alone.
Both pools keep their threads spinning after a call (OpenBLAS about 100 ms, libgomp
10-20 ms), so on few cores the pair can cost far more than its parts. Run it with thread
variables set to compare (``OMP_WAIT_POLICY=passive python -m benchmarks.threads``).
Independent of paddle_nb's kernels, which change; only numba and numpy."""
from __future__ import annotations

import os

from . import timing  # noqa: F401  (threads fixed first)

import numpy as np  # noqa: E402
from numba import njit, prange  # noqa: E402


@njit(fastmath=True)
def blas_dot(a, b):
    return np.dot(a, b)


@njit(fastmath=True, parallel=True)
def parallel_row_scale(a):
    """A trivially small parallel loop, like a row kernel on a 64x10 batch of logits."""
    out = np.empty_like(a)
    for i in prange(a.shape[0]):
        for j in range(a.shape[1]):
            out[i, j] = a[i, j] * 2
    return out


def run() -> dict:
    r = np.random.default_rng(0)
    x, w = r.random((64, 784), np.float32), r.random((784, 256), np.float32)
    logits = r.random((64, 10), np.float32)
    return {"BLAS 64x784 @ 784x256 alone": timing.measure(lambda: blas_dot(x, w)),
            "parallel kernel on 64x10 alone": timing.measure(lambda: parallel_row_scale(logits)),
            "BLAS then parallel kernel": timing.measure(
                lambda: (blas_dot(x, w), parallel_row_scale(logits)))}


def main() -> int:
    timing.steady_allocator()
    keys = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS",
            "OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER")
    print(" ".join(f"{k}={os.environ.get(k, '(unset)')}" for k in keys))
    for name, seconds in run().items():
        print(f"  {name:34s} {timing.fmt(seconds)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
