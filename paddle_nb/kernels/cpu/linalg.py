"""The linear-algebra ops inside a compiled block: the numba types of what their LAPACK work
gives back (kernels/cpu/in_python.py).

The interpreter's kernels of cholesky, lu, solve, eigh, svd, qr... compute with numpy's
``np.linalg`` (LAPACK) and BLAS. numba's own ``np.linalg`` calls SciPy's LAPACK, whose last
bits may differ, so a compiled block calls each op's own host function (a module-level
function of ops/, the one its interpreter kernel calls) in object mode: the same numbers by
construction, one home for each op's math. Those functions return C-contiguous arrays of
the op's output dtypes; the result types below say which, from the arguments' types (an
argument's dtype, its rank plus a change, or a fixed rank).
"""
from __future__ import annotations

from numba import types

COMPLEX = {types.float32: types.complex64, types.float64: types.complex128}


def _array(item, ndim: int):
    return types.Array(item, ndim, "C")


def complex_array(i: int, change: int = 0):
    """A result type: the complex type of argument ``i``'s float dtype (eig's), its rank
    plus ``change``."""
    def result(*args):
        return _array(COMPLEX[args[i].dtype], args[i].ndim + change)
    return result


def batch_count(i: int):
    """A result type: int32 with argument ``i``'s batch dims, or [1] for one matrix (lu's
    Infos, as Paddle shapes it)."""
    def result(*args):
        return _array(types.int32, max(args[i].ndim - 2, 1))
    return result


def broadcast_solution(vector_ok: bool):
    """A result type: a linear system's solution, A (argument 0) and B (argument 1) of one
    dtype broadcast over their batch dims; with ``vector_ok`` a B of rank 1 is one vector
    (solve's)."""
    def result(a, b, *_):
        if vector_ok and b.ndim == 1:
            return _array(a.dtype, a.ndim - 1)
        return _array(a.dtype, max(a.ndim, b.ndim))
    return result


def chain_product(xs, *_):
    """A result type: multi_dot's product of the tuple ``xs`` (a vector at either end
    drops that dim)."""
    items = list(xs)
    return _array(items[0].dtype, (items[0].ndim == 2) + (items[-1].ndim == 2))


def like_each(xs, *_):
    """A result type: a tuple of one array like each array of the tuple ``xs`` (multi_dot's
    gradients)."""
    return types.Tuple([_array(x.dtype, x.ndim) for x in xs])

