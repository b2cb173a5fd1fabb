"""Matrix products: a tiled shared-memory matmul, 2-D or batched 3-D, with transposes and
a scale ``alpha`` folded in.

Why tiles: each output element needs a whole row of A and column of B. Read straight from
global memory, every element of A and B is fetched by many threads. Instead a block of
TILE x TILE threads computes a TILE x TILE piece of the output: in each round the block
copies one TILE x TILE tile of A and one of B into shared memory (every thread copies one
element of each), waits (``cuda.syncthreads``), and each thread adds the TILE products it
needs from the fast shared copies; then the next pair of tiles. Global reads drop by a
factor TILE.

Transposes are not materialised: ``trans_a`` swaps the two indices a thread uses to read
its tile element. Batches are the grid's third dimension; an operand with a batch of 1 is
reused for every batch item (numpy's broadcasting of batch dims, the rest is done by the
caller with copy.broadcast_to).

Shared arrays need their dtype at compile time, so there is one small kernel per
accumulator type, all calling the same device function: float32 tiles for float32 (summed
in float64), float64 tiles for float64 and for integers (exact below 2**53).
"""
from __future__ import annotations

import numpy as np
from numba import cuda, float32, float64

from .copy import fill
from .device import empty, simulated

# 16 x 16 = 256 threads per block on a GPU; in the simulator every thread is a Python
# thread, so small tiles keep tests fast while still spanning several tiles.
TILE = 4 if simulated() else 16


@cuda.jit(device=True)
def _tiled_product(a, b, out, trans_a, trans_b, alpha, sa, sb):
    """out[z] = alpha * op(a[z or 0]) @ op(b[z or 0]) for this block's tile; a, b, out 3-D."""
    tx = cuda.threadIdx.x
    ty = cuda.threadIdx.y
    col = cuda.blockIdx.x * TILE + tx          # output column (n)
    row = cuda.blockIdx.y * TILE + ty          # output row (m)
    z = cuda.blockIdx.z                        # batch item
    za = z if a.shape[0] > 1 else 0
    zb = z if b.shape[0] > 1 else 0
    m = out.shape[1]
    n = out.shape[2]
    k_len = a.shape[1] if trans_a else a.shape[2]
    acc = 0.0
    for t in range((k_len + TILE - 1) // TILE):
        ka = t * TILE + tx                     # the k this thread loads for A's tile
        kb = t * TILE + ty                     # ... and for B's tile
        if row < m and ka < k_len:
            sa[ty, tx] = a[za, ka, row] if trans_a else a[za, row, ka]
        else:
            sa[ty, tx] = 0
        if col < n and kb < k_len:
            sb[ty, tx] = b[zb, col, kb] if trans_b else b[zb, kb, col]
        else:
            sb[ty, tx] = 0
        cuda.syncthreads()                     # the tiles are complete
        for j in range(TILE):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()                     # everyone is done before they are replaced
    if row < m and col < n:
        out[z, row, col] = alpha * acc


@cuda.jit(cache=True)
def _matmul_f32(a, b, out, trans_a, trans_b, alpha):
    sa = cuda.shared.array((TILE, TILE), float32)
    sb = cuda.shared.array((TILE, TILE), float32)
    _tiled_product(a, b, out, trans_a, trans_b, alpha, sa, sb)


@cuda.jit(cache=True)
def _matmul_f64(a, b, out, trans_a, trans_b, alpha):
    sa = cuda.shared.array((TILE, TILE), float64)
    sb = cuda.shared.array((TILE, TILE), float64)
    _tiled_product(a, b, out, trans_a, trans_b, alpha, sa, sb)


def matmul(a, b, trans_a: bool = False, trans_b: bool = False, alpha: float = 1.0):
    """``alpha * op(a) @ op(b)`` for 2-D matrices or 3-D batches (a batch of 1 broadcasts);
    ``op`` transposes the last two dims when asked. Returns a new array in a's dtype."""
    if a.ndim != b.ndim or a.ndim not in (2, 3):
        raise ValueError(f"matmul takes two 2-D or two 3-D arrays, got {a.shape}, {b.shape}")
    two_d = a.ndim == 2
    if two_d:
        a, b = a.reshape((1,) + a.shape), b.reshape((1,) + b.shape)
    m = a.shape[2] if trans_a else a.shape[1]
    k = a.shape[1] if trans_a else a.shape[2]
    kb = b.shape[2] if trans_b else b.shape[1]
    n = b.shape[1] if trans_b else b.shape[2]
    if k != kb:
        raise ValueError(f"matmul: inner dims differ ({k} and {kb})")
    batch = max(a.shape[0], b.shape[0])
    if a.shape[0] not in (1, batch) or b.shape[0] not in (1, batch):
        raise ValueError(f"matmul: batch dims {a.shape[0]} and {b.shape[0]} do not broadcast")
    out = empty((batch, m, n), a.dtype)
    if out.size:
        if k == 0:                             # an empty sum: zeros
            out = fill(out.shape, 0, a.dtype)
        else:
            kernel = _matmul_f32 if a.dtype == np.float32 else _matmul_f64
            grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE, batch)
            kernel[grid, (TILE, TILE)](a, b, out, bool(trans_a), bool(trans_b), float(alpha))
    return out.reshape((m, n)) if two_d else out
