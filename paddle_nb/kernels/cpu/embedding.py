"""Embedding rows: ``out[i] = w[ids[i]]`` (a row of zeros where ``ids[i]`` is the padding
id) and its gradient, ``dw[ids[i]] += dout[i]`` over every i that is not padding.

``ids`` is flat (n,), ``w`` and ``dw`` are (V, D), ``out`` and ``dout`` (n, D). The ids
were range-checked by the op before these run (kernels/check.py): they read and write
where the ids say, unchecked. ``padding_idx`` is -1 for none (a checked id is never -1).

Each picks a serial or a ``prange`` kernel by size. The forward's threads split the rows
of ``out``. The gradient's must not share an element of dw (two ids alike add into one
row), so each thread owns a band of dw's rows: it zeroes them and walks every id, adding
only the rows of its band, in the order of the ids (so both variants give the same
bits). That pays for rows of 64 values and more (0.55-0.85x the serial time from 256k
elements); with shorter rows each thread's skipping walk costs more than the adding it
saves (1.5-2.3x, D = 8 to 32), so those stay serial. The other race-free layout, a
``prange`` over bands of D-columns, measured 2.5-4x the serial time (numba's parallel
loop body loses the vectorized row addition).
"""
import time

import numba
import numpy as np
from numba import literally, njit, prange
from numba.np.unsafe.ndarray import to_fixed_tuple

from .check import first_outside
from .threads import parallel_ok
from .twins import twins

# From where the prange variants run (2 threads, float32, V = 1000, D = 64 and 512; the
# table: python -m paddle_nb.kernels.cpu.embedding): the first measured power of 2 where
# they took <= ~0.8x the serial time.
MIN_PARALLEL_LOOKUP = 131_072         # out elements (n * D): 0.76-0.84x there, 0.6x above
MIN_PARALLEL_LOOKUP_GRAD = 262_144    # dout + dw elements, and rows of D >= 64:
MIN_PARALLEL_GRAD_ROW = 64            # 0.55-0.85x at D = 64 to 512, 1.5-2.3x at D <= 32


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _lookup_row(w, ids, padding_idx, out, i):
    r = ids[i]
    if r == padding_idx:
        for j in range(out.shape[1]):
            out[i, j] = 0
    else:
        for j in range(out.shape[1]):
            out[i, j] = w[r, j]


_lookup_serial, _lookup_parallel = twins(_lookup_row, "_lookup", items="ids.shape[0]")


def lookup(w, ids, padding_idx: int, out=None):
    """``out`` (n, D; a new array if None) filled with the rows of ``w`` (V, D) at the
    flat ``ids`` (n,) (checked), zeros where an id is ``padding_idx``."""
    if out is None:
        out = np.empty((ids.shape[0], w.shape[1]), w.dtype)
    if out.size >= MIN_PARALLEL_LOOKUP and parallel_ok():
        _lookup_parallel(w, ids, padding_idx, out)
    else:
        _lookup_serial(w, ids, padding_idx, out)
    return out


@njit(cache=True, fastmath=False, error_model="numpy", inline="always")
def _grad_rows(dout, ids, padding_idx, dw, lo, hi):
    """dw's rows lo..hi-1 set to the sum of the rows of dout whose id falls among them."""
    for r in range(lo, hi):
        for j in range(dw.shape[1]):
            dw[r, j] = 0
    for i in range(ids.shape[0]):
        r = ids[i]
        if r != padding_idx and lo <= r and r < hi:
            for j in range(dw.shape[1]):
                dw[r, j] += dout[i, j]


# (not twins.py's pair: the serial variant is one band, all of dw's rows, not a loop over
# the parallel one's items)
@njit(cache=True, fastmath=False, error_model="numpy")
def _lookup_grad_serial(dout, ids, padding_idx, dw):
    _grad_rows(dout, ids, padding_idx, dw, 0, dw.shape[0])


@njit(cache=True, fastmath=False, error_model="numpy", parallel=True)
def _lookup_grad_parallel(dout, ids, padding_idx, dw, bands):
    v = dw.shape[0]
    for b in prange(bands):
        _grad_rows(dout, ids, padding_idx, dw, b * v // bands, (b + 1) * v // bands)


def lookup_grad(dout, ids, padding_idx: int, shape, out=None):
    """``out`` (``shape`` = (V, D); a new array if None) set to the sum of the rows of
    ``dout`` (n, D) at the flat ``ids`` (n,) (checked), rows whose id is ``padding_idx``
    left out, added in the order of the ids."""
    if out is None:
        out = np.empty(shape, dout.dtype)
    bands = min(numba.get_num_threads(), out.shape[0])
    if dout.size + out.size >= MIN_PARALLEL_LOOKUP_GRAD and bands > 1 \
            and out.shape[1] >= MIN_PARALLEL_GRAD_ROW and parallel_ok():
        _lookup_grad_parallel(dout, ids, padding_idx, out, bands)
    else:
        _lookup_grad_serial(dout, ids, padding_idx, out)
    return out


# --- inside a compiled block (paddle_nb/compiler) -----------------------------------------
# The serial loops above (a compiled block cannot ask threads.parallel_ok; the parallel
# gradient adds in the same order), the ids checked first: one outside W's rows raises, and
# the interpreter's run of the block names the op and the id.
@njit(cache=True, fastmath=False, error_model="numpy")
def _checked_flat_ids(ids, rows, padding_idx):
    flat = np.ascontiguousarray(ids).reshape(ids.size)
    if first_outside(flat, 0, rows, padding_idx >= 0, padding_idx) >= 0:
        raise ValueError("an id of Ids is out of range")
    return flat


@njit(cache=True, fastmath=False, error_model="numpy")
def looked_up(ids, w, padding_idx, out_rank):
    """Out: W's rows at Ids, shape Ids' first ``out_rank - 1`` dims + [D] (``out_rank``, a
    literal: lookup_table drops Ids' last dim of 1)."""
    literally(out_rank)
    flat = _checked_flat_ids(ids, w.shape[0], padding_idx)
    out = np.empty((flat.size, w.shape[1]), w.dtype)
    _lookup_serial(np.ascontiguousarray(w), flat, padding_idx, out)
    dims = np.empty(out_rank, np.int64)
    for k in range(out_rank - 1):
        dims[k] = ids.shape[k]
    dims[out_rank - 1] = w.shape[1]
    return out.reshape(to_fixed_tuple(dims, out_rank))


@njit(cache=True, fastmath=False, error_model="numpy")
def looked_up_grad(ids, w, dout, padding_idx):
    """The dense W@GRAD: dOut's rows (of W's dtype) added at their ids."""
    flat = _checked_flat_ids(ids, w.shape[0], padding_idx)
    d = np.ascontiguousarray(dout).reshape((flat.size, w.shape[1]))
    dw = np.empty(w.shape, w.dtype)
    _lookup_grad_serial(d, flat, padding_idx, dw)
    return dw


def _measure():  # pragma: no cover (by hand: python -m paddle_nb.kernels.cpu.embedding)
    """The parallel/serial time ratios by size (run it on an otherwise idle machine)."""

    def best(f, *args):
        f(*args)
        times = []
        for _ in range(9):
            t = time.perf_counter()
            f(*args)
            times.append(time.perf_counter() - t)
        return min(times)

    rng = np.random.default_rng(0)
    bands = numba.get_num_threads()
    print("     V     n    D   lookup par/ser   grad par/ser   (float32)")
    for v, d, sizes in ((1000, 16, (2**16, 2**18, 2**20)),
                        (1000, 64, (2**14, 2**16, 2**17, 2**18, 2**20, 2**22)),
                        (1000, 512, (2**14, 2**16, 2**17, 2**18, 2**20, 2**22)),
                        (50_000, 128, (2**10, 2**13))):
        for size in sizes:
            n = max(size // d, 1)
            w = rng.standard_normal((v, d)).astype(np.float32)
            ids = rng.integers(0, v, n).astype(np.int64)
            out, dw = np.empty((n, d), np.float32), np.empty_like(w)
            forward = best(_lookup_parallel, w, ids, 3, out) / best(_lookup_serial, w, ids, 3,
                                                                    out)
            grad = best(_lookup_grad_parallel, out, ids, 3, dw, bands) / \
                best(_lookup_grad_serial, out, ids, 3, dw)
            print(f"{v:6d} {n:5d} {d:4d}     {forward:5.2f}           {grad:5.2f}")


if __name__ == "__main__":
    _measure()
