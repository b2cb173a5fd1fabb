"""Device memory: is a CUDA device (or numba's simulator) there, and moving arrays to it.

Everything here is cheap to import: numba.cuda does not touch the driver until asked.
"""
from __future__ import annotations

import os

import numpy as np
from numba import cuda

HOW_TO_SIMULATE = ("to run the CUDA kernels without a GPU, use numba's simulator: set "
                   "NUMBA_ENABLE_CUDASIM=1 in the environment before numba is imported "
                   "(e.g. `NUMBA_ENABLE_CUDASIM=1 python ...`, or os.environ[...] as the "
                   "first line of a notebook); it is slow, so keep tensors tiny")


def simulated() -> bool:
    """True when numba's CUDA simulator stands in for a GPU."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def available() -> bool:
    """A GPU numba can use, or the simulator."""
    try:
        return bool(cuda.is_available())
    except Exception:                 # noqa: BLE001 (a broken driver means: not available)
        return False


def why_unavailable() -> str | None:
    """None when CUDA kernels can run; otherwise what is missing and how to simulate."""
    if available():
        return None
    return f"no CUDA GPU is available to numba here; {HOW_TO_SIMULATE}"


def is_device_array(value) -> bool:
    """A numba device array (real or simulated)."""
    # (the simulator's arrays lack __cuda_array_interface__, so ask for copy_to_host)
    return hasattr(value, "copy_to_host") and not isinstance(value, np.ndarray)


def to_device(array):
    """A device copy of a host array (a device array is returned as it is)."""
    if is_device_array(array):
        return array
    # np.asarray(order="C"), not np.ascontiguousarray: the latter makes a 0-d array 1-d
    return cuda.to_device(np.asarray(array, order="C"))


def to_host(value):
    """A host (numpy) copy of a device array; anything else is returned as it is."""
    if is_device_array(value):
        return value.copy_to_host()
    return value


def empty(shape, dtype):
    return cuda.device_array(tuple(int(d) for d in shape), dtype=np.dtype(dtype))


def device_count() -> int:
    """How many CUDA devices numba sees (the simulator shows one)."""
    try:
        return len(cuda.gpus)
    except Exception:                 # noqa: BLE001
        return 0


# --- launch configuration ------------------------------------------------------------------
# Every 1-D kernel here is a grid-stride loop (``for i in range(cuda.grid(1), n,
# cuda.gridsize(1))``), so any grid covers any size; the grid only sets how much runs at
# once. On a GPU: 256 threads per block and enough blocks to fill it. In the simulator each
# thread is a Python thread (about 0.1 ms to start), so a few threads in two blocks: still
# more than one block and more than one element per thread, so the indexing is exercised.
GPU_THREADS, GPU_MAX_BLOCKS = 256, 4096
SIM_THREADS, SIM_MAX_BLOCKS = 8, 2


def launch_1d(n: int) -> tuple[int, int]:
    """(blocks, threads per block) for a grid-stride kernel over ``n`` items (n > 0)."""
    threads, max_blocks = (SIM_THREADS, SIM_MAX_BLOCKS) if simulated() else \
        (GPU_THREADS, GPU_MAX_BLOCKS)
    threads = max(1, min(threads, n))
    return max(1, min(max_blocks, -(-n // threads))), threads


def launch(kernel, n: int, *args) -> None:
    """Run the grid-stride ``kernel`` over ``n`` items with ``args``, on launch_1d's grid;
    nothing when there are none (CUDA refuses a grid of 0 blocks). Every launcher here
    goes through it, so the grid rule above is the only one."""
    if n > 0:
        kernel[launch_1d(n)](*args)


def flat(array):
    """A 1-D view of a C-contiguous device array (kernels index flat element offsets).

    Every array these kernels make is C-contiguous; a strided view is refused rather than
    read wrongly."""
    if array.ndim == 1:
        return array
    if not array.is_c_contiguous():
        raise ValueError(f"expected a C-contiguous device array, got strides {array.strides}")
    return array.reshape(array.size)


def int_array(values):
    """A small int64 device array (shapes, strides, row indices passed to a kernel)."""
    return cuda.to_device(np.asarray(values, dtype=np.int64).reshape(-1))


def c_strides(shape) -> list[int]:
    """Element (not byte) strides of a C-contiguous array of ``shape``."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= int(d)
    return strides[::-1]


# Broadcasting is numpy's: ranks are aligned from the right, and an operand's dim of size 1
# is read with stride 0, so every output element finds its inputs from its own multi-index
# (copy.py explains the stride idea); @pointwise's broadcast loop reads operands so.
def broadcast_strides(shape, out_shape) -> list[int]:
    """Element strides of a C-contiguous ``shape`` read as ``out_shape`` (numpy rules:
    aligned from the right; a missing or size-1 dim gets stride 0)."""
    lead = len(out_shape) - len(shape)
    own = c_strides(shape)
    return [0 if d < lead or shape[d - lead] == 1 else own[d - lead]
            for d in range(len(out_shape))]
