"""``@ufunc(signatures)``: a numba ufunc with an explicit loop list, built on first call,
with optional ``@njit`` twins (serial and ``prange``) for contiguous arrays.

Why each part:
- explicit signatures, listed integer loops first, because numpy picks the first loop the
  inputs cast to safely (int32 -> float64 is "safe"): a dynamic ufunc that has compiled a
  float64 loop would then run int32 inputs in float64, and which loops exist depends on
  what ran before. A fixed list makes every dtype run its own loop, always.
- built on first call, because loading every loop of every ufunc at import took 2.9 s;
  now a process loads (from numba's on-disk cache) only the ufuncs it uses. The call goes
  to the plain numpy ufunc inside numba's DUFunc (its Python ``__call__`` costs ~1 us).
- the twins (``serial=``, ``parallel=``): module-level ``@njit`` loops over flat arrays,
  ``twin(*inputs, out)``, calling the same scalar ``@njit`` function as the ufunc, so every
  path gives the same values. They run when ``out=`` is given and every operand is a
  C-contiguous array of ``out``'s shape and dtype (a dtype the signature list has as
  ``t(t, ..., t)``: the loop numpy would pick), ``out`` itself or sharing no memory with it:
  the ``prange`` one from ``min_parallel`` elements (the measured crossover) unless a BLAS
  call ran just before (threads.py), the serial one otherwise (an njit call costs less
  than a ufunc call). Anything else (broadcasting, strides, scalars) takes the ufunc.
  numba's own ``vectorize(target="parallel")`` was measured instead and is far slower
  here: add of 1e6 float32 took 2.9 ms, the serial ufunc 0.10 ms (1e5: 0.29 ms, 0.011).
The wrapped function is the module-level Python function, so numba's cache finds it.
numpy checks the FP flags after a ufunc loop: a NaN input to relu / sigmoid / tanh on the
ufunc path warns "invalid value" (vector compares flag NaN); the twins never warn.
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
    def __init__(self, py_func, signatures, serial=None, parallel=None, min_parallel=None):
        self.py_func = py_func
        self.signatures = signatures
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        self.serial = serial
        self.parallel = parallel
        self.min_parallel = min_parallel
        self._twin_dtypes = _uniform_dtypes(signatures) if serial is not None else frozenset()
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
        if out is None:
            return self.ufunc(*args, **kwargs)
        if self.serial is not None and not kwargs and self._twin_fits(args, out):
            big = out.size >= self.min_parallel and parallel_ok()
            twin = self.parallel if big else self.serial
            twin(*[a.reshape(-1) for a in args], out.reshape(-1))
            return out
        return self.ufunc(*args, out=out, **kwargs)

    def __repr__(self):
        return f"<ufunc {self.__name__} ({'built' if self._ufunc else 'not built yet'})>"


def ufunc(signatures, serial=None, parallel=None, min_parallel=None):
    """Decorator: ``@ufunc(FLOAT_1) def tanh(x): ...``. With ``serial=``, ``parallel=`` and
    ``min_parallel=n``, contiguous same-shape calls run ``twin(*inputs, out)`` instead."""
    if (serial is None) != (parallel is None) or (serial is not None and min_parallel is None):
        raise ValueError("give both twins and min_parallel (the measured crossover), or none")
    return lambda py_func: LazyUfunc(py_func, signatures, serial, parallel, min_parallel)
