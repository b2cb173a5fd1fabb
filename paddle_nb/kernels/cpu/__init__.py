"""CPU kernels (numba), installed as ``paddle_nb.kernels.cpu``.

Every kernel is a module-level ``@njit(cache=True, fastmath=..., error_model="numpy")``
function (or a ufunc built from one, lazy_ufunc.py), so numba's on-disk cache serves every
process after the first (tests/test_kernel_cache.py). The entry points the ops call pick a
serial or a ``prange`` variant by size (thresholds from measured crossovers, beside each;
threads.py keeps prange back just after BLAS); the two are generated from one body
(twins.py). float32 exp / tanh / sigmoid are fast
approximations (fastmath32.py); float64 keeps libm. A change to any file here invalidates
the cache of every kernel here (cache.py: kernels inline code from sibling files).
"""
from . import cache, threads

cache.install()
threads.start_pool()      # before any kernel: its idle workers sleep (threads.py says why)
