"""numba's thread pool: when the ``prange`` kernels may run (not within ``BLAS_QUIET_S`` of a
BLAS call), and how the pool is started without touching other libraries' threads.

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
The matmul kernels call ``note_blas()`` after a product OpenBLAS threads (a smaller one
runs on the calling thread and wakes no worker); numpy's own BLAS calls are not seen.
(Separately, a prange region after the pool has idled ~0.1 s pays ~8 ms to wake its
worker on this VM, whatever ran before: nothing here can avoid that.)
"""
import ctypes
import os
import site
import sys
import threading
import time

import numba
from numba.np.ufunc import parallel

BLAS_QUIET_S = 0.1

_last_blas = float("-inf")

# A program whose heaviest kernels split across the cores (a CNN's direct convolutions)
# runs its medium products on the calling thread instead (kernels/cpu/matmul.py: row
# blocks too small for OpenBLAS to wake a worker), so no BLAS worker holds the second
# core when a convolution wants it. The executor sets this per run from the program's
# ops (OpDef.uses_cores); a program of products (an MLP, a transformer) keeps BLAS's
# threads. Measured in docs/performance.md ("Products on the calling thread").
_products_serial = False


def keep_products_serial(flag: bool) -> None:
    global _products_serial
    _products_serial = flag


def products_serial() -> bool:
    return _products_serial


def note_blas() -> None:
    """Record that a BLAS call just ran (its pool may now be spinning)."""
    global _last_blas
    _last_blas = time.perf_counter()


def parallel_ok() -> bool:
    """False within BLAS_QUIET_S of the last BLAS call."""
    return time.perf_counter() - _last_blas > BLAS_QUIET_S


# --- numba's pool: started without touching any other library's threads -------------------
# Two facts on Linux decide this:
# - numba's default threading layer is OpenMP (GNU libgomp) unless TBB can be loaded, and
#   libgomp reads OMP_WAIT_POLICY once, when it is loaded. Its idle workers spin for a few
#   ms after each parallel region, and beside BLAS's spinning threads, on a small machine
#   the pools starve each other (an MLP step went from 0.64 ms to 1.2-8 ms;
#   docs/performance.md), so paddle_nb once set OMP_WAIT_POLICY=passive for the process.
# - PyTorch ships its own libgomp under the same soname, so the dynamic loader hands it
#   the copy numba already loaded: PyTorch ran on a passive pool and its RNN step took
#   2.6x as long after ``import paddle_nb`` (scikit-learn's copy went passive too).
# So numba's pool runs on TBB where the ``tbb`` wheel is installed (a dependency on
# x86_64): no OpenMP runtime is shared, nothing is set in the environment, and TBB's
# idle workers spin only about 1 ms. The wheel puts libtbb in <prefix>/lib, which the
# loader does not search for a virtualenv, so it is loaded here by path first; numba's own
# default order (tbb, omp, workqueue) then picks it. Where TBB cannot be had, the
# OpenMP pool is started with the passive policy set only while libgomp loads.
# A user's own NUMBA_THREADING_LAYER or OMP_WAIT_POLICY wins either way.
_pool_lock = threading.Lock()
_pool_started = False


def start_pool() -> None:
    """Load numba's thread pool now (see above); once per process."""
    global _pool_started
    if _pool_started:
        return
    with _pool_lock:
        if _pool_started:
            return
        if not parallel._is_initialized:      # a user's numba code may have started it
            _load_tbb()
            _start_numba_pool()
        _pool_started = True


def _load_tbb() -> bool:
    """Make libtbb (from the ``tbb`` wheel) loadable for numba's TBB layer."""
    # a virtualenv or the system (sys.prefix), or `pip install --user` (the user base)
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix, site.getuserbase())):
        path = os.path.join(prefix, "lib", "libtbb.so.12")
        if os.path.exists(path):
            try:
                ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
                return True
            except OSError:
                return False
    return False


def _start_numba_pool() -> None:
    users = os.environ.get("OMP_WAIT_POLICY")
    if users is None:                     # read by libgomp if numba falls back to OpenMP
        os.environ["OMP_WAIT_POLICY"] = "passive"
    try:
        numba.get_num_threads()           # loads the threading layer
    finally:
        if users is None:
            del os.environ["OMP_WAIT_POLICY"]


def layer() -> str:
    """The threading layer numba's pool runs on: "tbb", "omp" or "workqueue"."""
    start_pool()
    return numba.threading_layer()
