"""Calling a Python function from numba code: numba's object mode, in one place.

Some work is best left to Python even inside a compiled block: numpy's threaded BLAS for
a large product, numpy's strided copies for im2col, LAPACK through numpy's own
``np.linalg`` (numba's ``np.linalg`` calls SciPy's LAPACK, whose last bits may differ from
numpy's), a numpy generator's draws. ``in_python(fn, result)`` gives a function that numba
code calls like any other; inside it, numba leaves machine code for a moment (object mode,
~3 us a call), calls ``fn`` with the arguments as Python objects and converts what it
returns to ``result``'s numba type. So the compiled code computes with the interpreter's
own functions, bit for bit, with one home for each.

``result(*argument_types)`` says the type of what ``fn`` returns, from the numba types of
the arguments (a dtype and ndim are known when numba types the call, not the shape):
``like(0, ndim=2)`` is "a C-contiguous array of argument 0's dtype, of two dimensions".
``fn`` must be a module-level function (cached compiled code refers to it by name), and
must return exactly that type: an array of another dtype or layout is an error at run time.
Called from Python, the function simply calls ``fn``.
"""
from __future__ import annotations

import numpy as np
from numba import objmode, types
from numba.extending import overload
from numba.np.numpy_support import from_dtype


def in_python(fn, result):
    """A function that numba code may call: ``fn(*args)`` run in object mode, its value of
    the numba type ``result(*argument_types)``."""
    def call(*args):
        return fn(*args)
    call.__name__ = call.__qualname__ = f"{fn.__name__}_in_python"
    call.__module__ = fn.__module__
    call.__doc__ = f"{fn.__name__}(*args), from numba code in object mode (in_python.py)."

    @overload(call)
    def _typed(*args):
        result_type = result(*args)

        def run(*args):
            with objmode(value=result_type):
                value = fn(*args)
            return value
        return run
    return call


def like(i: int, change: int = 0, dtype=None, ndim: int | None = None, layout: str = "C"):
    """A result type: an array of argument ``i``'s dtype (or ``dtype``, a numpy dtype) and
    rank plus ``change`` (or ``ndim``), ``layout`` contiguous."""
    def result(*args):
        arg = args[i]
        item = arg.dtype if dtype is None else from_dtype(np.dtype(dtype))
        return types.Array(item, arg.ndim + change if ndim is None else ndim, layout)
    return result


def several(*results):
    """A result type: a tuple of one value per result type of ``results``."""
    def result(*args):
        return types.Tuple([r(*args) for r in results])
    return result

