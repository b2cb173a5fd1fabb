"""What the spectral linear-algebra ops share: checks of their matrix inputs, and the trip
of a batch of matrices to the host's LAPACK (numpy.linalg) and back to the op's place.

svd, qr, eigh, eigvalsh, eig, eigvals, matrix_rank and lstsq (ops/svd.py, ops/qr.py,
ops/eigh.py, ops/eig.py, ops/matrix_rank.py, ops/lstsq.py) take a batch of matrices: the
last two dims are one matrix, any dims before them are the batch. Paddle 2.6.2's CPU
kernels call LAPACK (gesdd, geqrf/orgqr, syevd, geev, gels*), and the signs of singular
vectors and eigenvectors, and the order of complex eigenvalues, are those routines'
choices, not properties of the math. numpy.linalg calls the same routines, so the CPU
kernels here give Paddle's numbers, signs included.

On CUDA the same computation runs on the host: the matrices are copied to the host, LAPACK
decomposes them, and the results are copied back to the device. A device-side Jacobi
kernel would give other (equally valid) signs, and a program must give the same numbers on
both places (tests/test_op_gradients.py compares them to 1e-10); Paddle 2.6.2 itself runs
eig, eigvals and lstsq on the host's LAPACK even for a GPU tensor.

Decompositions are computed in float64 and cast back to the input's type, so a float32
program loses nothing to the decomposition itself.
"""
from __future__ import annotations

import numpy as np

from ..core import dtypes
from . import arrays

FLOATS = ("float32", "float64")


def one_of(choices: tuple, what: str):
    """An Attr check: the value must be one of ``choices``."""
    def check(value) -> str | None:
        return None if value in choices else f"{what} must be one of {list(choices)}"
    return check


def check_matrices(ctx, op_type: str, slot: str = "X", square: bool = False,
                   kinds=FLOATS) -> list[int]:
    """Shape inference's check of a batch of matrices in ``slot``: rank >= 2, one of
    ``kinds``, square if asked (unknown dims pass). Returns the shape."""
    if dtypes.name(ctx.dtype(slot)) not in kinds:
        ctx.fail(f"{op_type} needs {' or '.join(kinds)} elements (Paddle's kernels)",
                 slot=slot, expected="one of those", given=ctx.describe_input(slot))
    shape = list(ctx.shape(slot))
    if len(shape) < 2:
        ctx.fail(f"{op_type} needs a matrix or a batch of matrices", slot=slot,
                 expected="rank >= 2 (the last two dims are one matrix)",
                 given=ctx.describe_input(slot))
    if square and shape[-1] >= 0 and shape[-2] >= 0 and shape[-1] != shape[-2]:
        ctx.fail(f"{op_type} needs square matrices", slot=slot,
                 expected="the last two dims equal", given=ctx.describe_input(slot))
    return shape


def host_matrices(x, op_type: str, slot: str = "X", square: bool = False) -> np.ndarray:
    """``x`` on the host in float64, after the checks a kernel makes at run time: a batch
    of matrices (square if asked) of finite values (LAPACK's results on NaN or infinity
    are not defined)."""
    a = np.asarray(arrays.host(x))
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
    """The gradient ``g`` (of ``slot``) on the host in float64, zeros where nobody wrote
    one (None); it must have the shape of the forward value ``like``."""
    if g is None:
        return np.zeros(like.shape)
    g = np.asarray(arrays.host(g))
    if g.size != like.size:
        raise ValueError(f"{op_type}: slot {slot}: the gradient must have the shape of "
                         f"its output; expected {list(like.shape)}, given {list(g.shape)}")
    return g.astype(np.float64).reshape(like.shape)


def host_value(value) -> np.ndarray:
    """A forward value a gradient reads, on the host in float64."""
    return np.asarray(arrays.host(value)).astype(np.float64)


def result(array: np.ndarray, dtype) -> np.ndarray:
    """A host result as the op's output: C-contiguous ``dtype`` (the kernels put it on their
    place; a compiled block takes it as it is: kernels/cpu/linalg.py)."""
    return np.asarray(array, dtype=dtype, order="C")


def gradient_reads(info, slots) -> tuple[tuple, tuple] | None:
    """What a gradient op's lowered form reads for the gradients of ``slots``: (the slots,
    which gradients came), or None where none came. A Call reads slots that exist, so a
    gradient that nobody wrote is read as its forward value in its place, and passed on
    as None (``written``)."""
    came = tuple(info.has_input(f"{slot}@GRAD") for slot in slots)
    if not any(came):
        return None
    return tuple(f"{slot}@GRAD" if c else slot for slot, c in zip(slots, came)), came


def written(grads, came) -> list:
    """The gradients of ``gradient_reads``, None where none came."""
    return [g if c else None for g, c in zip(grads, came)]


def set_results(ctx, slots, values) -> None:
    """Each of ``values`` (host results) as the output in its slot, on the op's place."""
    for slot, value in zip(slots, values):
        ctx.set_output(slot, arrays.to_place(ctx.place, value))


def transpose(a: np.ndarray) -> np.ndarray:
    """Each matrix of a batch transposed."""
    return np.swapaxes(a, -1, -2)


def eye_like(a: np.ndarray, n: int) -> np.ndarray:
    """The n x n identity, broadcast over ``a``'s batch."""
    return np.broadcast_to(np.eye(n), a.shape[:-2] + (n, n))
