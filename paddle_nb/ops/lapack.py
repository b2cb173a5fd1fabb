"""What the spectral linear-algebra ops share: checks of their matrix inputs, and the trip
of a batch of matrices to the host's LAPACK (numpy.linalg) and back to the op's place. The
math itself is kernels/cpu's (eigen.py, svd.py, qr.py, lstsq.py, matrix_rank.py, with the
run-time checks they share in linalg.py): functions of host arrays.

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


def host(value):
    """``value`` on the host (a device array copied; None stays None): what kernels/cpu's
    LAPACK functions take."""
    return None if value is None else arrays.host(value)


def gradient_reads(info, slots) -> tuple[tuple, tuple] | None:
    """What a gradient op's lowered form reads for the gradients of ``slots``: (the slots,
    which gradients came), or None where none came. A Call reads slots that exist, so a
    gradient that nobody wrote is read as its forward value in its place, and passed on
    as None (kernels/cpu/linalg.written)."""
    came = tuple(info.has_input(f"{slot}@GRAD") for slot in slots)
    if not any(came):
        return None
    return tuple(f"{slot}@GRAD" if c else slot for slot, c in zip(slots, came)), came


def set_results(ctx, slots, values) -> None:
    """Each of ``values`` (host results) as the output in its slot, on the op's place."""
    for slot, value in zip(slots, values):
        ctx.set_output(slot, arrays.to_place(ctx.place, value))
