"""When the ``prange`` kernels may run: not within ``BLAS_QUIET_S`` of a BLAS call.

Every size-dispatching entry point in this package runs its ``prange`` variant only if
the size is past its measured crossover *and* ``parallel_ok()``. Why the second test, on
this 2-core machine (numba's OpenMP pool, OpenBLAS's pthreads pool):
- after a threaded BLAS call OpenBLAS's worker keeps a core busy waiting for more work
  (its default thread timeout is 2**28 cycles, ~0.1 s), and numba's worker spins after a
  prange region; alternating the two, each call waits for the other pool's thread to
  leave the core: tanh of 262,144 float32 took 4-7 ms instead of 0.033 ms right after a
  256x256 matmul, and the matmul 4 ms instead of 0.25 ms right after the tanh;
- so in training, where every few ops are a matmul, the prange kernels lost: a 3-layer
  MLP step (batch 256, 1024 wide) took 74.5 ms with them, 41.7 ms serial.
The matmul kernels call ``note_blas()``; numpy's own BLAS calls are not seen.
(Separately, a prange region after the pool has idled ~0.1 s pays ~8 ms to wake its
worker on this VM, whatever ran before: nothing here can avoid that.)
"""
import time

BLAS_QUIET_S = 0.1

_last_blas = float("-inf")


def note_blas() -> None:
    """Record that a BLAS call just ran (its pool may now be spinning)."""
    global _last_blas
    _last_blas = time.perf_counter()


def parallel_ok() -> bool:
    """False within BLAS_QUIET_S of the last BLAS call."""
    return time.perf_counter() - _last_blas > BLAS_QUIET_S
