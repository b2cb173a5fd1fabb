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
    return cuda.to_device(np.ascontiguousarray(array))


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
