"""The linear-algebra ops' LAPACK work on the host, and the numba types of what it gives
back inside a compiled block (kernels/cpu/in_python.py).

The interpreter's kernels of cholesky, lu, solve, eigh, svd, qr... compute with numpy's
``np.linalg`` (LAPACK) and BLAS. numba's own ``np.linalg`` calls SciPy's LAPACK, whose last
bits may differ, so a compiled block calls each op's own host function (a module-level
function: eigen.py, svd.py, qr.py, lstsq.py, matrix_rank.py here; ops/ for the ops written
over the places' batches of matrices) in object mode: the same numbers by construction,
one home for each op's math. Those functions return C-contiguous arrays of the op's
output dtypes; the result types below say which, from the arguments' types (an
argument's dtype, its rank plus a change, or a fixed rank).

Below them, what the host functions here share: the run-time checks of their matrices
(LAPACK's results on NaN or infinity are not defined), the trip to float64 and back to
the op's dtype. Their arguments are host arrays (the ops' kernels copy a device operand to
the host first, and put the results back on their place).
"""
from __future__ import annotations

import numpy as np
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



# --- the host functions' shared steps -------------------------------------------------------
def host_matrices(x, op_type: str, slot: str = "X", square: bool = False) -> np.ndarray:
    """``x`` in float64, after the checks a kernel makes at run time: a batch of matrices
    (square if asked) of finite values (LAPACK's results on NaN or infinity are not
    defined)."""
    a = np.asarray(x)
    if a.ndim < 2 or (square and a.shape[-1] != a.shape[-2]):
        want = "a batch of square matrices" if square else "rank >= 2"
        raise ValueError(f"{op_type}: slot {slot}: expected {want}, given shape "
                         f"{list(a.shape)}")
    a = a.astype(np.float64)
    if not np.isfinite(a).all():
        raise ValueError(f"{op_type}: slot {slot}: the matrices must hold finite values "
                         f"(LAPACK's result is not defined for NaN or infinity); given "
                         f"{int((~np.isfinite(a)).sum())} non-finite values")
    return a


def host_gradient(g, op_type: str, slot: str, like: np.ndarray) -> np.ndarray:
    """The gradient ``g`` (of ``slot``) in float64, zeros where nobody wrote one (None); it
    must have the shape of the forward value ``like``."""
    if g is None:
        return np.zeros(like.shape)
    g = np.asarray(g)
    if g.size != like.size:
        raise ValueError(f"{op_type}: slot {slot}: the gradient must have the shape of "
                         f"its output; expected {list(like.shape)}, given {list(g.shape)}")
    return g.astype(np.float64).reshape(like.shape)


def host_value(value) -> np.ndarray:
    """A forward value a gradient reads, in float64."""
    return np.asarray(value).astype(np.float64)


def result(array: np.ndarray, dtype) -> np.ndarray:
    """A result as the op's output: C-contiguous ``dtype`` (the kernels put it on their
    place; a compiled block takes it as it is)."""
    return np.asarray(array, dtype=dtype, order="C")


def written(grads, came) -> list:
    """The gradients a compiled form passes (every slot read, ops/lapack.gradient_reads),
    None where none came."""
    return [g if c else None for g, c in zip(grads, came)]


def transpose(a: np.ndarray) -> np.ndarray:
    """Each matrix of a batch transposed."""
    return np.swapaxes(a, -1, -2)


def eye_like(a: np.ndarray, n: int) -> np.ndarray:
    """The n x n identity, broadcast over ``a``'s batch."""
    return np.broadcast_to(np.eye(n), a.shape[:-2] + (n, n))
