"""``@ufunc(signatures)``: a numba ufunc with an explicit loop list, built on first call,
with an optional ``prange`` twin for large contiguous arrays.

Why each part:
- explicit signatures, listed integer loops first, because numpy picks the first loop the
  inputs cast to safely (int32 -> float64 is "safe"): a dynamic ufunc that has compiled a
  float64 loop would then run int32 inputs in float64, and which loops exist depends on
  what ran before. A fixed list makes every dtype run its own loop, always.
- built on first call, because loading every loop of every ufunc at import took 2.9 s;
  now a process loads (from numba's on-disk cache) only the ufuncs it uses. Calls go to
  the plain numpy ufunc inside numba's DUFunc (whose Python ``__call__`` costs ~1 us); its
  loop over contiguous arrays vectorises like an ``@njit`` loop, so it is the serial
  variant, at 0.5 us a call for 1,000 elements.
- the twin (``parallel=``, ``min_parallel=``): a module-level ``@njit(parallel=True)`` loop
  over flat arrays, ``twin(*inputs, out)``, calling the same scalar ``@njit`` function as
  the ufunc (so both give the same bits). It runs when ``out`` has ``min_parallel``
  elements or more (the measured crossover), no BLAS call ran just before (threads.py),
  and every operand is a C-contiguous array of ``out``'s shape and dtype (a dtype the
  signature list has as ``t(t, ..., t)``: the loop numpy would pick), ``out`` itself or
  sharing no memory with it. The checks cost ~1.5 us, so they are made only for sizes
  where the twin can win. numba's own ``vectorize(target="parallel")`` was measured
  instead and is far slower here: add of 1e6 float32 took 2.9 ms, the serial ufunc
  0.10 ms (1e5: 0.29 ms, 0.011).
The wrapped function is the module-level Python function, so numba's cache finds it.
numpy checks the FP flags after a ufunc loop: a NaN input to relu / sigmoid / tanh on the
ufunc path warns "invalid value" (vector compares flag NaN); the twin never warns.
"""
from __future__ import annotations

import threading

import numpy as np
from numba import vectorize

from .threads import parallel_ok

INT_AND_FLOAT_1 = ["int32(int32)", "int64(int64)", "float32(float32)", "float64(float64)"]
FLOAT_1 = ["float32(float32)", "float64(float64)"]
FLOAT_2 = ["float32(float32, float32)", "float64(float64, float64)"]
FLOAT_3 = ["float32(float32, float32, float32)", "float64(float64, float64, float64)"]
INT_2 = ["int32(int32, int32)", "int64(int64, int64)"]
INT_AND_FLOAT_2 = INT_2 + FLOAT_2
COMPARE_2 = ["boolean(boolean, boolean)", "boolean(int32, int32)", "boolean(int64, int64)",
             "boolean(float32, float32)", "boolean(float64, float64)"]
BOOL_1 = ["boolean(boolean)"]
BOOL_2 = ["boolean(boolean, boolean)"]


def _uniform_dtypes(signatures) -> frozenset:
    """The dtypes ``t`` for which the list has a loop ``t(t, ..., t)``."""
    out = set()
    for sig in signatures:
        ret, args = sig.rstrip(")").split("(", 1)
        names = {ret.strip()} | {a.strip() for a in args.split(",")}
        if len(names) == 1:
            out.add(np.dtype(names.pop()))
    return frozenset(out)


class LazyUfunc:
    def __init__(self, py_func, signatures, parallel=None, min_parallel=None, params=0):
        self.py_func = py_func
        self.signatures = signatures
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        self.__wrapped__ = py_func        # inspect.getsource(kernel) shows the scalar code
        self.parallel = parallel
        self.min_parallel = min_parallel if parallel is not None else float("inf")
        self._twin_dtypes = _uniform_dtypes(signatures) if parallel is not None else frozenset()
        self.params = params      # trailing scalar arguments (pow's factor): the twin's too
        self._ufunc = None
        self._lock = threading.Lock()

    @property
    def ufunc(self):
        """The numpy ufunc (built, from numba's cache, on first use)."""
        if self._ufunc is None:
            with self._lock:
                if self._ufunc is None:
                    built = vectorize(self.signatures, cache=True)(self.py_func)
                    self._ufunc = getattr(built, "ufunc", built)    # DUFunc -> np.ufunc
        return self._ufunc

    def _twin_fits(self, args, out) -> bool:
        if (type(out) is not np.ndarray or out.dtype not in self._twin_dtypes
                or not out.flags.c_contiguous):
            return False
        for a in args:
            if (type(a) is not np.ndarray or a.shape != out.shape or a.dtype != out.dtype
                    or not a.flags.c_contiguous
                    or (a is not out and np.may_share_memory(a, out))):
                return False
        return True

    def __call__(self, *args, out=None, **kwargs):
        ufunc = self._ufunc or self.ufunc
        if out is None:
            return ufunc(*args, **kwargs)
        if getattr(out, "size", 0) >= self.min_parallel and not kwargs and parallel_ok():
            arrays = args[:len(args) - self.params]
            if self._twin_fits(arrays, out):
                self.parallel(*[a.reshape(-1) for a in arrays], *args[len(arrays):],
                              out.reshape(-1))
                return out
        return ufunc(*args, out=out, **kwargs)

    def __repr__(self):
        return f"<ufunc {self.__name__} ({'built' if self._ufunc else 'not built yet'})>"


def ufunc(signatures, parallel=None, min_parallel=None):
    """Decorator: ``@ufunc(FLOAT_1) def tanh(x): ...``. With ``parallel=twin`` and
    ``min_parallel=n``, large contiguous same-shape calls run ``twin(*inputs, out)``."""
    if (parallel is None) != (min_parallel is None):
        raise ValueError("a parallel twin needs min_parallel (the measured crossover)")
    return lambda py_func: LazyUfunc(py_func, signatures, parallel, min_parallel)
