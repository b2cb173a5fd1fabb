"""gather_tree's walk on the CPU (ops/gather_tree.py), one loop for the interpreter and a
compiled block: each beam's chain of parents followed back from the last step."""
import numpy as np
from numba import njit

from .check import first_outside


@njit(cache=True, fastmath=False, error_model="numpy")
def walk(ids, parents):
    """Out[:, b, k]: the ids along beam k's chain of parents, back from the last step.
    Every parent must be in [0, beam) (the interpreter checks first and names the bad
    one; here the same check raises, and the compiler reruns the op in the interpreter)."""
    if first_outside(np.ascontiguousarray(parents).reshape(parents.size), 0,
                     ids.shape[2], False, 0) >= 0:
        raise IndexError("gather_tree: a parent index is out of range")
    out = np.empty_like(ids)
    steps, batch, beam = ids.shape
    for b in range(batch):
        for k in range(beam):
            if steps == 0:
                break
            out[steps - 1, b, k] = ids[steps - 1, b, k]
            parent = parents[steps - 1, b, k]
            for t in range(steps - 2, -1, -1):
                out[t, b, k] = ids[t, b, parent]
                parent = parents[t, b, parent]
    return out
