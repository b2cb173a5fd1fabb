"""CPU kernels (numba)."""
