"""assert inside a compiled block: the check alone.

The interpreter's assert (ops/assert_op.py) raises an error that shows the Data tensors'
values, which a cached numba function cannot build (its exceptions keep constant
arguments only). So compiled code checks the condition and raises a constant message;
the executor undoes the run and runs it again in the interpreter, whose error is the one
the user sees.
"""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def condition_holds(cond):
    """Raise unless Cond holds one element, and it is true."""
    if cond.size != 1 or not np.ascontiguousarray(cond).ravel()[0]:
        raise AssertionError("assert: the condition is false")
