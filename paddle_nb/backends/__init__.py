"""The places' backends: the primitives op kernels call, once for the CPU and once for CUDA.

Where an op's math is the same on the CPU and on CUDA, its kernel is written once as
``make(place)`` returning ``run(ctx)``, and registered as
``kernels={"cpu": make(CPU), "cuda": make(CUDA)}`` (the elementwise, activation, matmul,
loss and reduction families). ``CPU`` (cpu.py) and ``CUDA`` (cuda.py) name the same
operations: the CPU's run numba ufuncs, the row kernels of kernels/cpu and BLAS, into the
array a kernel context's ``out`` gives where they can; CUDA's call the launchers in
kernels/cuda. products.py holds matmul's numpy rules on each place, shared.py what both
share. What needs no choice of place, because it only moves tensors or looks at the array
it is given (stack, split, transpose, ``unbroadcast``), is in ops/arrays.py.

A layer between the kernels (plain functions of arrays, importing only numba and numpy)
and the op families (ops/): it imports kernels and core (the size limits), never ops.
(``paddle_nb.ops.places``, this package's old home, re-exports it for notebooks.)

The triangular factorizations and solves (ops/triangular_factor.py, ops/linear_solve.py)
are written once too, over the places' batches of matrices (``to_matrices``,
``cholesky``, ``lu_solve``...: LAPACK on the CPU, one thread per matrix on CUDA); their
kernels are registered for both places and take the place's primitives with ``place_of``.
"""
from .cpu import CPU
from .cuda import CUDA
from .shared import batch_of

__all__ = ["CPU", "CUDA", "batch_of", "place_of"]


def place_of(ctx):
    """The primitives of the place a kernel context runs on."""
    return CUDA if ctx.place.kind == "cuda" else CPU
