"""The math of one cell of the fused ``rnn`` op, for one hidden unit, written once for both
places: kernels/cpu/rnn.py compiles these functions with ``njit`` into its sequence loops,
kernels/cuda/rnn.py with ``cuda.jit(device=True)`` into its per-step kernels.

The arguments are *pre-activations*: the kernels have already added ``x @ W_ih^T + b_ih``
and ``h_prev @ W_hh^T + b_hh`` for this unit. The cells are Paddle's (``nn.LSTMCell``,
``nn.GRUCell``, ``nn.SimpleRNNCell``), gate order as in its WeightList:

- LSTM, gates i, f, c~, o:  c = f * c_prev + i * c~,  h = o * tanh(c)
- GRU, gates r, z, c~:      c~ = tanh(x_c + r * (h_prev @ W_hc^T + b_hc)),
                            h = (h_prev - c~) * z + c~   (so z keeps the old state)
- RNN_TANH / RNN_RELU:      h = act(pre)

Each ``*_grad`` is the chain rule of its cell, from dL/dh (and for the LSTM dL/dc of the
next step) to the gradients of the pre-activations, which the kernels then push through
the weights with matrix products. ``fsigmoid``/``ftanh`` are the fast float32 versions on
the CPU and libm's on CUDA (kernels/cpu/fastmath32.py).
"""
from __future__ import annotations

from .cpu.fastmath32 import fsigmoid, ftanh

# the ``mode`` attribute as the kernels see it (numba compiles one loop for all four)
LSTM, GRU, RNN_TANH, RNN_RELU = 0, 1, 2, 3
MODES = {"LSTM": LSTM, "GRU": GRU, "RNN_TANH": RNN_TANH, "RNN_RELU": RNN_RELU}
GATES = {LSTM: 4, GRU: 3, RNN_TANH: 1, RNN_RELU: 1}
# what a step saves per unit for the gradient: LSTM i, f, c~, o, c; GRU r, z, c~ and
# h_prev @ W_hc^T + b_hc (r multiplies it); the simple cells their output
SAVED = {LSTM: 5, GRU: 4, RNN_TANH: 1, RNN_RELU: 1}


def lstm_cell(pi, pf, pc, po, c_prev):
    i, f, o = fsigmoid(pi), fsigmoid(pf), fsigmoid(po)
    cand = ftanh(pc)
    c = f * c_prev + i * cand
    return i, f, cand, o, c, o * ftanh(c)


def lstm_cell_grad(dh, dc_next, i, f, cand, o, c, c_prev):
    """(d pre_i, d pre_f, d pre_c, d pre_o, dL/dc_prev) from dL/dh and the dL/dc the next
    step sent back."""
    tc = ftanh(c)
    dc = dc_next + dh * o * (1 - tc * tc)
    return (dc * cand * i * (1 - i), dc * c_prev * f * (1 - f), dc * i * (1 - cand * cand),
            dh * tc * o * (1 - o), dc * f)


def gru_cell(xr, xz, xc, hr, hz, hc, h_prev):
    r, z = fsigmoid(xr + hr), fsigmoid(xz + hz)
    cand = ftanh(xc + r * hc)
    return r, z, cand, (h_prev - cand) * z + cand


def gru_cell_grad(dh, r, z, cand, hc, h_prev):
    """(d x_r, d x_z, d x_c, d hc, dL/dh_prev through the z gate alone); the gradients of
    h_r and h_z are those of x_r and x_z (they are added), and the rest of dL/dh_prev is
    d(h_r, h_z, hc) @ W_hh, which the kernels' product adds."""
    dpc = dh * (1 - z) * (1 - cand * cand)
    dr = dpc * hc * r * (1 - r)
    dz = dh * (h_prev - cand) * z * (1 - z)
    return dr, dz, dpc, dpc * r, dh * z


def simple_cell(mode, pre):
    if mode == RNN_TANH:
        return ftanh(pre)
    return pre if pre > 0 else pre * 0


def simple_cell_grad(mode, dh, h):
    if mode == RNN_TANH:
        return dh * (1 - h * h)
    return dh if h > 0 else dh * 0
