"""gather_tree on the device: one thread per (batch entry, beam) walks its beam back from
the last step to the first (ops/gather_tree.py says what the op computes). The steps are
read one after another, as the walk needs the parent found at the step after; the beams
are independent, so they run side by side. The parents were range-checked by the op first.
"""
from __future__ import annotations

from numba import cuda

from .device import empty, flat, launch


@cuda.jit(cache=True)
def _gather_tree(ids, parents, steps, batch, beam, out):
    lanes = batch * beam
    for lane in range(cuda.grid(1), lanes, cuda.gridsize(1)):
        b, k = lane // beam, lane % beam
        last = (steps - 1) * lanes + b * beam
        out[last + k] = ids[last + k]
        parent = parents[last + k]
        for t in range(steps - 2, -1, -1):
            row = t * lanes + b * beam
            out[row + k] = ids[row + parent]
            parent = parents[row + parent]


def gather_tree(ids, parents):
    """Out of [steps, batch, beam] device arrays ``ids`` and (checked) ``parents``."""
    steps, batch, beam = (int(d) for d in ids.shape)
    out = empty((steps, batch, beam), ids.dtype)
    if out.size:
        launch(_gather_tree, batch * beam, flat(ids), flat(parents), steps, batch, beam, flat(out))
    return out
