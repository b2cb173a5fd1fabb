"""The fused ``rnn`` op's time loop on the device: kernels/cpu/rnn.py's ``forward`` and
``backward`` with the same arguments (its docstring describes them), as a host loop over
the time steps that launches, per step, the recurrent product (kernels/cuda/matmul.py)
and one cell kernel of a thread per (sequence, unit), calling the cell math of
kernels/rnn_cells.py compiled for the device.

A step depends on the one before, so the steps cannot run side by side; within a step
every unit is independent. The host keeps ``order`` (the time steps in this direction's
order); ``live`` is a device [T, B] array of 0/1.
"""
from __future__ import annotations

from numba import cuda

from .. import rnn_cells as cells
from .device import launch_1d
from .matmul import matmul

_lstm = cuda.jit(device=True)(cells.lstm_cell)
_lstm_grad = cuda.jit(device=True)(cells.lstm_cell_grad)
_gru = cuda.jit(device=True)(cells.gru_cell)
_gru_grad = cuda.jit(device=True)(cells.gru_cell_grad)
_simple = cuda.jit(device=True)(cells.simple_cell)
_simple_grad = cuda.jit(device=True)(cells.simple_cell_grad)
LSTM, GRU = cells.LSTM, cells.GRU


@cuda.jit
def _forward_step(mode, t, xg, b_ih, hw, b_hh, live, hprev, cprev, h_to, c_to, saved, out,
                  col):
    batch, hidden = h_to.shape[0], h_to.shape[1]
    for n in range(cuda.grid(1), batch * hidden, cuda.gridsize(1)):
        b, j = n // hidden, n % hidden
        if live[t, b] == 0:                   # padding: output 0, state passed on
            h_to[b, j] = hprev[t, b, j]
            out[t, b, col + j] = 0
            if mode == LSTM:
                c_to[b, j] = cprev[t, b, j]
            for s in range(saved.shape[2] // hidden):
                saved[t, b, s * hidden + j] = 0
            continue
        if mode == LSTM:
            u, v, w = hidden + j, 2 * hidden + j, 3 * hidden + j
            i, f, cand, o, cn, hn = _lstm(
                xg[t, b, j] + b_ih[j] + hw[b, j] + b_hh[j],
                xg[t, b, u] + b_ih[u] + hw[b, u] + b_hh[u],
                xg[t, b, v] + b_ih[v] + hw[b, v] + b_hh[v],
                xg[t, b, w] + b_ih[w] + hw[b, w] + b_hh[w], cprev[t, b, j])
            saved[t, b, j] = i
            saved[t, b, u] = f
            saved[t, b, v] = cand
            saved[t, b, w] = o
            saved[t, b, 4 * hidden + j] = cn
            c_to[b, j] = cn
        elif mode == GRU:
            hc = hw[b, 2 * hidden + j] + b_hh[2 * hidden + j]
            r, z, cand, hn = _gru(xg[t, b, j] + b_ih[j],
                                  xg[t, b, hidden + j] + b_ih[hidden + j],
                                  xg[t, b, 2 * hidden + j] + b_ih[2 * hidden + j],
                                  hw[b, j] + b_hh[j], hw[b, hidden + j] + b_hh[hidden + j],
                                  hc, hprev[t, b, j])
            saved[t, b, j] = r
            saved[t, b, hidden + j] = z
            saved[t, b, 2 * hidden + j] = cand
            saved[t, b, 3 * hidden + j] = hc
        else:
            hn = _simple(mode, xg[t, b, j] + b_ih[j] + hw[b, j] + b_hh[j])
            saved[t, b, j] = hn
        h_to[b, j] = hn
        out[t, b, col + j] = hn


@cuda.jit
def _backward_step(mode, t, saved, hprev, cprev, live, dout, col, dh, dc, dxg, dhg):
    batch, hidden = dh.shape[0], dh.shape[1]
    for n in range(cuda.grid(1), batch * hidden, cuda.gridsize(1)):
        b, j = n // hidden, n % hidden
        if live[t, b] == 0:                   # the state passed through untouched
            for s in range(dxg.shape[2] // hidden):
                dxg[t, b, s * hidden + j] = 0
                dhg[t, b, s * hidden + j] = 0
            continue
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
                g, saved[t, b, j], saved[t, b, hidden + j], saved[t, b, 2 * hidden + j],
                saved[t, b, 3 * hidden + j], hprev[t, b, j])
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


@cuda.jit
def _add_live(t, live, tmp, dh):
    batch, hidden = dh.shape[0], dh.shape[1]
    for n in range(cuda.grid(1), batch * hidden, cuda.gridsize(1)):
        b, j = n // hidden, n % hidden
        if live[t, b] != 0:
            dh[b, j] += tmp[b, j]


def forward(mode, xg, b_ih, w_hh, b_hh, live, order, k0, k1, hprev, cprev, h, c, saved,
            out, col):
    steps = hprev.shape[0]
    grid = launch_1d(h.shape[0] * h.shape[1])
    for k in range(k0, k1):
        t = int(order[k])
        last = k + 1 == steps
        nxt = t if last else int(order[k + 1])
        hw = matmul(hprev[t], w_hh, trans_b=True)
        _forward_step[grid](mode, t, xg, b_ih, hw, b_hh, live, hprev, cprev,
                            h if last else hprev[nxt], c if last else cprev[nxt], saved,
                            out, col)


def backward(mode, saved, w_hh, hprev, cprev, live, order, dout, col, dh, dc, dxg, dhg):
    grid = launch_1d(dh.shape[0] * dh.shape[1])
    for k in range(hprev.shape[0] - 1, -1, -1):
        t = int(order[k])
        _backward_step[grid](mode, t, saved, hprev, cprev, live, dout, col, dh, dc, dxg, dhg)
        _add_live[grid](t, live, matmul(dhg[t], w_hh), dh)
