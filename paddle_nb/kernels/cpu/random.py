"""Random fills with numba's own generator, seeded per call so a nonzero op seed gives
the same values every run."""
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
