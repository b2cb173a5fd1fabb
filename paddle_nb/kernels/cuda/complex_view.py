"""as_complex and as_real on the device (ops/complex_view.py): one grid-stride kernel per
direction moves each element's two halves (the CPU's are numpy views of the same bytes).
"""
from __future__ import annotations

from numba import cuda


@cuda.jit(cache=True)
def pairs_to_complex(pairs, out):
    for i in range(cuda.grid(1), out.size, cuda.gridsize(1)):
        out[i] = complex(pairs[2 * i], pairs[2 * i + 1])


@cuda.jit(cache=True)
def complex_to_pairs(values, out):
    for i in range(cuda.grid(1), values.size, cuda.gridsize(1)):
        out[2 * i] = values[i].real
        out[2 * i + 1] = values[i].imag
