"""The fused ``rnn`` op's time loop on the CPU: one direction of one layer, the cell math
of kernels/rnn_cells.py unit by unit, in one compiled loop over the time steps.

Why the whole loop is compiled: a step is a [B, H] x [H, G*H] product and G*H*B cell
updates, a few microseconds; a Python loop calling a product and a cell kernel per step
would spend more time between the steps than in them. The input's share of every gate
(x @ W_ih^T, one large product for all steps) is computed before, by ops/rnn.py.

Arrays (ops/rnn.py makes them): ``xg`` [T, B, G*H] the input's gate shares, ``live``
[T, B] whether step t is inside sequence b (t < its length), ``order`` the time steps in
the order this direction runs them, ``hprev``/``cprev`` [T, B, H] the state each step
started from (what the gradient reads; ``hprev[order[0]]`` holds the initial state on
entry), ``h``/``c`` [B, H] the final state, ``saved`` [T, B, S*H] what each step saves
for the gradient (rnn_cells.SAVED), ``out`` [T, B, D*H] the layer's output, this
direction's units from column ``col``. A padded step (not live) outputs 0 and passes the
state on unchanged, as Paddle's kernel does.

``forward`` runs steps ``order[k0:k1]`` only, so the stepper can run one step at a time
and show it; ``backward`` runs all of them, last first.
"""
import numpy as np
from numba import njit

from .. import rnn_cells as cells
from .fastmath32 import FASTMATH32

_JIT = dict(cache=True, fastmath=FASTMATH32, error_model="numpy")
_lstm = njit(inline="always", **_JIT)(cells.lstm_cell)
_lstm_grad = njit(inline="always", **_JIT)(cells.lstm_cell_grad)
_gru = njit(inline="always", **_JIT)(cells.gru_cell)
_gru_grad = njit(inline="always", **_JIT)(cells.gru_cell_grad)
_simple = njit(inline="always", **_JIT)(cells.simple_cell)
_simple_grad = njit(inline="always", **_JIT)(cells.simple_cell_grad)
LSTM, GRU = cells.LSTM, cells.GRU


def forward(mode, xg, b_ih, w_hh, b_hh, live, order, k0, k1, hprev, cprev, h, c, saved,
            out, col):
    """Steps ``order[k0:k1]`` (see the module docstring); ``w_hh`` is [G*H, H]."""
    # scratch arrays made here, not inside the compiled loop: an array allocated there kept
    # LLVM from vectorising the cell math that reads it (measured: 3.5x slower)
    dtype, width = hprev.dtype, w_hh.shape[0]
    hw = np.empty((hprev.shape[1], width), dtype)     # a step's recurrent product
    xs = np.empty(width, dtype)                       # the GRU's x_r, x_z, x_c of one row
    hn = np.empty(hprev.shape[2], dtype)              # one row's new h
    _forward(mode, xg, b_ih, np.ascontiguousarray(w_hh.T), b_hh, b_ih + b_hh, live, order,
             k0, k1, hprev, cprev, h, c, saved, hw, xs, hn, out, col)


# One sequence's row of units per call: the pre-activations summed into ``pre`` (the
# recurrent product's row, overwritten), then the cell math from ``pre`` into ``saved``
# and ``h``, each gate's units a view of its own. Why views: indexed as pre[n + j] with n
# known only at run time, LLVM cannot rule out that the gate it reads overlaps the one it
# writes, keeps the loop scalar, and the cell math takes 10x longer (measured: 0.67 vs
# 0.07 ms for 16 x 32 rows of 64 LSTM units).
@njit(inline="always", **_JIT)
def _gates(row, n: int):
    """The first five gates' views of a row of n-unit gates (fewer where the row is shorter)."""
    return row[:n], row[n:2 * n], row[2 * n:3 * n], row[3 * n:4 * n], row[4 * n:5 * n]


@njit(inline="always", **_JIT)
def _lstm_row(xg, bias, pre, c_prev, saved, h):
    for j in range(pre.shape[0]):
        pre[j] += xg[j] + bias[j]
    n = c_prev.shape[0]
    pi, pf, pc, po, _ = _gates(pre, n)
    si, sf, sc, so, s_c = _gates(saved, n)
    for j in range(n):
        si[j], sf[j], sc[j], so[j], s_c[j], h[j] = _lstm(pi[j], pf[j], pc[j], po[j],
                                                         c_prev[j])


@njit(inline="always", **_JIT)
def _gru_row(xg, b_ih, pre, b_hh, xs, h_prev, saved, h):
    for j in range(pre.shape[0]):
        pre[j] += b_hh[j]
        xs[j] = xg[j] + b_ih[j]
    n = h_prev.shape[0]
    xr, xz, xc, _, _ = _gates(xs, n)
    hr, hz, hc, _, _ = _gates(pre, n)
    sr, sz, sc, s_hc, _ = _gates(saved, n)
    for j in range(n):
        sr[j], sz[j], sc[j], h[j] = _gru(xr[j], xz[j], xc[j], hr[j], hz[j], hc[j], h_prev[j])
        s_hc[j] = hc[j]


@njit(inline="always", **_JIT)
def _simple_row(mode, xg, bias, pre, saved, h):
    for j in range(pre.shape[0]):
        hn = _simple(mode, pre[j] + xg[j] + bias[j])
        saved[j] = hn
        h[j] = hn


@njit(**_JIT)
def _forward(mode, xg, b_ih, w_hhT, b_hh, bias, live, order, k0, k1, hprev, cprev, h, c,
             saved, hw, xs, hn, out, col):
    steps, batch, hidden = hprev.shape
    for k in range(k0, k1):
        t = order[k]
        last = k + 1 == steps
        nxt = order[k + 1] if not last else t
        h_to = h if last else hprev[nxt]          # where this step's state goes
        c_to = c if last else cprev[nxt]
        np.dot(hprev[t], w_hhT, hw)
        for b in range(batch):
            if not live[t, b]:                    # padding: output 0, state passed on
                h_to[b] = hprev[t, b]
                c_to[b] = cprev[t, b]
                out[t, b, col:col + hidden] = 0
                saved[t, b] = 0
                continue
            if mode == LSTM:
                _lstm_row(xg[t, b], bias, hw[b], cprev[t, b], saved[t, b], hn)
                c_to[b] = saved[t, b, 4 * hidden:]
            elif mode == GRU:
                _gru_row(xg[t, b], b_ih, hw[b], b_hh, xs, hprev[t, b], saved[t, b], hn)
            else:
                _simple_row(mode, xg[t, b], bias, hw[b], saved[t, b], hn)
            h_to[b] = hn
            out[t, b, col:col + hidden] = hn


def backward(mode, saved, w_hh, hprev, cprev, live, order, dout, col, dh, dc, dxg, dhg):
    """From dL/d(final h, c) in ``dh``/``dc`` (State@GRAD) and dL/dOut, last step first:
    the pre-activation gradients into ``dxg`` (the input's share) and ``dhg`` (the
    recurrent share: the same array except for the GRU), and on return ``dh``/``dc`` hold
    dL/d(initial state)."""
    tmp = np.empty(dh.shape, dh.dtype)            # a step's product through W_hh
    g = np.empty(dh.shape[1], dh.dtype)           # one row's dL/dh (scratch: see forward)
    _backward(mode, saved, np.ascontiguousarray(w_hh), hprev, cprev, live, order, dout, col,
              dh, dc, dxg, dhg, tmp, g)


@njit(inline="always", **_JIT)
def _lstm_grad_row(g, dc, saved, c_prev, dxg):
    n = g.shape[0]
    si, sf, sc, so, s_c = _gates(saved, n)
    di, df, dpc, do, _ = _gates(dxg, n)
    for j in range(n):
        di[j], df[j], dpc[j], do[j], dc[j] = _lstm_grad(g[j], dc[j], si[j], sf[j], sc[j],
                                                        so[j], s_c[j], c_prev[j])


@njit(inline="always", **_JIT)
def _gru_grad_row(g, saved, h_prev, dxg, dhg, direct):
    n = g.shape[0]
    sr, sz, sc, s_hc, _ = _gates(saved, n)
    dxr, dxz, dxc, _, _ = _gates(dxg, n)
    dhr, dhz, dhc, _, _ = _gates(dhg, n)
    for j in range(n):
        dxr[j], dxz[j], dxc[j], dhc[j], direct[j] = _gru_grad(g[j], sr[j], sz[j], sc[j],
                                                              s_hc[j], h_prev[j])
        dhr[j] = dxr[j]
        dhz[j] = dxz[j]


@njit(inline="always", **_JIT)
def _simple_grad_row(mode, g, saved, dxg):
    for j in range(g.shape[0]):
        dxg[j] = _simple_grad(mode, g[j], saved[j])


@njit(**_JIT)
def _backward(mode, saved, w_hh, hprev, cprev, live, order, dout, col, dh, dc, dxg, dhg, tmp,
              g):
    steps, batch, hidden = hprev.shape
    for k in range(steps - 1, -1, -1):
        t = order[k]
        for b in range(batch):
            if not live[t, b]:                    # the state passed through untouched
                dxg[t, b] = 0
                dhg[t, b] = 0
                continue
            for j in range(hidden):               # (a loop: an array expression allocates)
                g[j] = dh[b, j] + dout[t, b, col + j]
                dh[b, j] = 0
            if mode == LSTM:
                _lstm_grad_row(g, dc[b], saved[t, b], cprev[t, b], dxg[t, b])
            elif mode == GRU:
                _gru_grad_row(g, saved[t, b], hprev[t, b], dxg[t, b], dhg[t, b], dh[b])
            else:
                _simple_grad_row(mode, g, saved[t, b], dxg[t, b])
        np.dot(dhg[t], w_hh, tmp)                 # dL/dh_prev through W_hh
        for b in range(batch):
            if live[t, b]:
                for j in range(hidden):
                    dh[b, j] += tmp[b, j]
