"""Random fills with numba's own generator, seeded per call so a nonzero op seed gives
the same values every run; and the counter-based draws of dropout's mask (below)."""
import numpy as np
from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def uniform(n, low, high, seed):
    np.random.seed(seed)
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        out[i] = low + (high - low) * np.random.random()
    return out


@njit(cache=True, fastmath=False, error_model="numpy")
def gaussian(n, mean, std, seed):
    np.random.seed(seed)
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        out[i] = mean + std * np.random.standard_normal()
    return out


# --- counter-based draws, the same on both places ---------------------------------------
# Element i's value is a hash of (seed, i): kernels/cuda/random.py says why, and uses the
# same hash. These are plain @njit functions, which numba's CUDA target also compiles into
# a kernel (kernels/cuda/random.py's dropout mask calls counter_uniform), so one seed gives
# the same dropout mask on the CPU and on a GPU.
_MASK32 = np.uint64(0xFFFFFFFF)
_C1 = np.uint64(0x85EBCA6B)
_C2 = np.uint64(0xC2B2AE35)
_GOLDEN = np.uint64(0x9E3779B9)


@njit(cache=True, fastmath=False, error_model="numpy")
def fmix32(h):
    """murmur3's 32-bit finaliser on a uint64 holding 32 bits (products stay < 2**64)."""
    h = h ^ (h >> np.uint64(16))
    h = (h * _C1) & _MASK32
    h = h ^ (h >> np.uint64(13))
    h = (h * _C2) & _MASK32
    return h ^ (h >> np.uint64(16))


@njit(cache=True, fastmath=False, error_model="numpy")
def counter_uniform(seed, counter):
    """A value in (0, 1) from (seed, counter), both uint64: (32 random bits + 0.5) / 2**32."""
    h = fmix32((counter & _MASK32) ^ fmix32((seed & _MASK32) ^ _GOLDEN))
    h = fmix32((h + (counter >> np.uint64(32)) + (seed >> np.uint64(32)) * _GOLDEN) & _MASK32)
    return (h + 0.5) * (1.0 / 4294967296.0)


@njit(cache=True, fastmath=False, error_model="numpy")
def dropout_mask(n, seed, p):
    """uint8 [n]: 0 where element i is dropped (its draw < p), 1 where it is kept."""
    mask = np.empty(n, dtype=np.uint8)
    s = np.uint64(seed)
    for i in range(n):
        mask[i] = 0 if counter_uniform(s, np.uint64(i)) < p else 1
    return mask
