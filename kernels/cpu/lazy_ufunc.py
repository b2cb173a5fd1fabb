"""``@ufunc(signatures)``: a numba ufunc with an explicit loop list, built on first call.

Why both halves:
- explicit signatures, listed integer loops first, because numpy picks the first loop the
  inputs cast to safely (int32 -> float64 is "safe"): a dynamic ufunc that has compiled a
  float64 loop would then run int32 inputs in float64, and which loops exist depends on
  what ran before. A fixed list makes every dtype run its own loop, always.
- built on first call, because loading every loop of every ufunc at import took 2.9 s;
  now a process loads (from numba's on-disk cache) only the ufuncs it uses.
The wrapped function is the module-level Python function, so numba's cache finds it.
"""
from __future__ import annotations

import threading

from numba import vectorize

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


class LazyUfunc:
    def __init__(self, py_func, signatures):
        self.py_func = py_func
        self.signatures = signatures
        self.__name__ = py_func.__name__
        self.__doc__ = py_func.__doc__
        self._ufunc = None
        self._lock = threading.Lock()

    @property
    def ufunc(self):
        if self._ufunc is None:
            with self._lock:
                if self._ufunc is None:
                    self._ufunc = vectorize(self.signatures, cache=True)(self.py_func)
        return self._ufunc

    def __call__(self, *args, **kwargs):
        return self.ufunc(*args, **kwargs)

    def __repr__(self):
        return f"<ufunc {self.__name__} ({'built' if self._ufunc else 'not built yet'})>"


def ufunc(signatures):
    """Decorator: ``@ufunc(FLOAT_1) def tanh(x): ...``."""
    return lambda py_func: LazyUfunc(py_func, signatures)
