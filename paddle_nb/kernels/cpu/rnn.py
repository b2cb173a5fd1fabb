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
    hw = np.empty((hprev.shape[1], w_hh.shape[0]), hprev.dtype)
    _forward(mode, xg, b_ih, np.ascontiguousarray(w_hh.T), b_hh, live, order, k0, k1,
             hprev, cprev, h, c, saved, hw, out, col)


@njit(**_JIT)
def _forward(mode, xg, b_ih, w_hhT, b_hh, live, order, k0, k1, hprev, cprev, h, c, saved,
             hw, out, col):
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
                for j in range(hidden):
                    h_to[b, j] = hprev[t, b, j]
                    out[t, b, col + j] = 0
                    if mode == LSTM:
                        c_to[b, j] = cprev[t, b, j]
                for j in range(saved.shape[2]):
                    saved[t, b, j] = 0
                continue
            for j in range(hidden):
                if mode == LSTM:
                    u, v, w = hidden + j, 2 * hidden + j, 3 * hidden + j
                    i, f, cand, o, cn, hn = _lstm(
                        xg[t, b, j] + b_ih[j] + hw[b, j] + b_hh[j],
                        xg[t, b, u] + b_ih[u] + hw[b, u] + b_hh[u],
                        xg[t, b, v] + b_ih[v] + hw[b, v] + b_hh[v],
                        xg[t, b, w] + b_ih[w] + hw[b, w] + b_hh[w], cprev[t, b, j])
                    saved[t, b, j] = i
                    saved[t, b, hidden + j] = f
                    saved[t, b, 2 * hidden + j] = cand
                    saved[t, b, 3 * hidden + j] = o
                    saved[t, b, 4 * hidden + j] = cn
                    c_to[b, j] = cn
                elif mode == GRU:
                    hr = hw[b, j] + b_hh[j]
                    hz = hw[b, hidden + j] + b_hh[hidden + j]
                    hc = hw[b, 2 * hidden + j] + b_hh[2 * hidden + j]
                    r, z, cand, hn = _gru(xg[t, b, j] + b_ih[j],
                                          xg[t, b, hidden + j] + b_ih[hidden + j],
                                          xg[t, b, 2 * hidden + j] + b_ih[2 * hidden + j],
                                          hr, hz, hc, hprev[t, b, j])
                    saved[t, b, j] = r
                    saved[t, b, hidden + j] = z
                    saved[t, b, 2 * hidden + j] = cand
                    saved[t, b, 3 * hidden + j] = hc
                else:
                    hn = _simple(mode, xg[t, b, j] + b_ih[j] + hw[b, j] + b_hh[j])
                    saved[t, b, j] = hn
                h_to[b, j] = hn
                out[t, b, col + j] = hn


def backward(mode, saved, w_hh, hprev, cprev, live, order, dout, col, dh, dc, dxg, dhg):
    """From dL/d(final h, c) in ``dh``/``dc`` (State@GRAD) and dL/dOut, last step first:
    the pre-activation gradients into ``dxg`` (the input's share) and ``dhg`` (the
    recurrent share: the same array except for the GRU), and on return ``dh``/``dc`` hold
    dL/d(initial state)."""
    tmp = np.empty(dh.shape, dh.dtype)
    _backward(mode, saved, np.ascontiguousarray(w_hh), hprev, cprev, live, order, dout, col,
              dh, dc, dxg, dhg, tmp)


@njit(**_JIT)
def _backward(mode, saved, w_hh, hprev, cprev, live, order, dout, col, dh, dc, dxg, dhg, tmp):
    steps, batch, hidden = hprev.shape
    for k in range(steps - 1, -1, -1):
        t = order[k]
        for b in range(batch):
            if not live[t, b]:                    # the state passed through untouched
                for j in range(dxg.shape[2]):
                    dxg[t, b, j] = 0
                    dhg[t, b, j] = 0
                continue
            for j in range(hidden):
                g = dh[b, j] + dout[t, b, col + j]
                if mode == LSTM:
                    di, df, dpc, do, dcp = _lstm_grad(
                        g, dc[b, j], saved[t, b, j], saved[t, b, hidden + j],
                        saved[t, b, 2 * hidden + j], saved[t, b, 3 * hidden + j],
                        saved[t, b, 4 * hidden + j], cprev[t, b, j])
                    dxg[t, b, j] = di
                    dxg[t, b, hidden + j] = df
                    dxg[t, b, 2 * hidden + j] = dpc
                    dxg[t, b, 3 * hidden + j] = do
                    dc[b, j] = dcp
                    dh[b, j] = 0
                elif mode == GRU:
                    dr, dz, dpc, dhc, direct = _gru_grad(
                        g, saved[t, b, j], saved[t, b, hidden + j],
                        saved[t, b, 2 * hidden + j], saved[t, b, 3 * hidden + j],
                        hprev[t, b, j])
                    dxg[t, b, j] = dr
                    dxg[t, b, hidden + j] = dz
                    dxg[t, b, 2 * hidden + j] = dpc
                    dhg[t, b, j] = dr
                    dhg[t, b, hidden + j] = dz
                    dhg[t, b, 2 * hidden + j] = dhc
                    dh[b, j] = direct
                else:
                    dxg[t, b, j] = _simple_grad(mode, g, saved[t, b, j])
                    dh[b, j] = 0
        np.dot(dhg[t], w_hh, tmp)                 # dL/dh_prev through W_hh
        for b in range(batch):
            if live[t, b]:
                for j in range(hidden):
                    dh[b, j] += tmp[b, j]
