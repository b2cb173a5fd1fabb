"""Random fills with numba's own generator, seeded per call so a nonzero op seed gives
the same values every run; and the counter-based draws of dropout's mask (below).

Every draw here is a function of a seed, so a compiled block (paddle_nb/compiler) draws what
the interpreter draws by calling these functions with the seed the interpreter's kernel
would use. An op without a seed of its own takes a new one each run from numpy's global
generator (``fresh_seed``); numba's own generator state (per thread, apart from numpy's) is
never what decides a value, because ``uniform`` and ``gaussian`` seed it on every call. So
compiled code draws an op's new seed through ``chosen_seed``: numpy's generator, called in
object mode (in_python.py), at the same point of the run as the interpreter draws it.
"""
import threading

import numpy as np
from numba import njit, types

from .in_python import in_python

# the attempt (UndoableDraws) open on this thread: a list that keeps numpy's generator
# state from before the attempt's first fresh seed
_attempt = threading.local()


def fresh_seed() -> int:
    """A new seed from numpy's global generator: what an op draws each run when neither it
    nor its program has a seed (np.random.seed makes a run of such ops repeatable)."""
    before = getattr(_attempt, "before", None)
    if before is not None and not before:
        before.append(np.random.get_state())          # ~35 us: only for an unseeded op
    return int(np.random.randint(1, 2**31 - 1))


class UndoableDraws:
    """A run the executor may undo (a compiled or rewritten run that fails and runs again
    in the interpreter) gives back the fresh seeds it drew: while this is open, the
    generator's state before the first draw is kept, and ``give_back`` restores it, so the
    interpreter's run draws what a plain run would have drawn."""

    def __enter__(self):
        self.outer = getattr(_attempt, "before", None)
        _attempt.before = self.before = []
        return self

    def __exit__(self, *exc):
        _attempt.before = self.outer

    def give_back(self) -> None:
        if self.before:
            np.random.set_state(self.before.pop())


fresh_seed_in_python = in_python(fresh_seed, lambda *args: types.int64)


@njit(cache=True, fastmath=False, error_model="numpy")
def chosen_seed(seed):
    """``seed``, or (0: none fixed) a new one from numpy's generator (``fresh_seed``)."""
    return seed if seed != 0 else fresh_seed_in_python()


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


# --- in a compiled block: the ops' Out from the draws above ----------------------------
@njit(cache=True, fastmath=False, error_model="numpy")
def _shaped(values, shape, zero):
    """The float64 ``values`` in the dtype of ``zero`` (numpy's astype: each rounded to
    nearest), of ``shape``."""
    out = np.full(values.size, zero)
    for i in range(values.size):
        out[i] = values[i]
    return out.reshape(shape)


@njit(cache=True, fastmath=False, error_model="numpy")
def uniform_filled(shape, n, low, high, seed, zero):
    """uniform_random's Out in a compiled block: ``uniform``'s ``n`` values (``shape``'s
    size) for ``seed`` (0: a new one, chosen_seed), of ``shape``, in the dtype of ``zero``."""
    return _shaped(uniform(n, low, high, chosen_seed(seed)), shape, zero)


@njit(cache=True, fastmath=False, error_model="numpy")
def gaussian_filled(shape, n, mean, std, seed, zero):
    """gaussian_random's Out in a compiled block (as uniform_filled)."""
    return _shaped(gaussian(n, mean, std, chosen_seed(seed)), shape, zero)


@njit(cache=True, fastmath=False, error_model="numpy")
def valued(values, shape, zero):
    """assign_value's Out: the op's constants (a tuple, already in Out's dtype's values)
    of ``shape`` in the dtype of ``zero``."""
    out = np.full(len(values), zero)
    for i in range(len(values)):
        out[i] = values[i]
    return out.reshape(shape)


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
