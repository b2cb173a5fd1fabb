"""CUDA kernels (numba ``cuda.jit``), installed as ``paddle_nb.kernels.cuda``.

Each kernel is a module-level ``@cuda.jit`` function with a launcher beside it that
computes the grid and allocates the result on the device. Inputs and results are device
arrays: tensors placed on CUDA stay there between ops; only feed and fetch copy.
Without a GPU, numba's simulator runs them (``NUMBA_ENABLE_CUDASIM=1``, set before numba
is imported; slow, about 90 µs per simulated thread, so tests use tiny odd shapes).
"""
