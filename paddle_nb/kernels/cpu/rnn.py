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

``rnn`` and ``rnn_grad`` (the end of the file) are the whole op inside a compiled block
(paddle_nb/compiler): the layers and directions as ops/rnn.py runs them, through the same
``forward``/``backward`` loops, matmul.product (the interpreter's BLAS calls) and
``column_sums``, so the numbers are the interpreter's, bit for bit.
"""
import numpy as np
from numba import njit, types
from numba.extending import overload

from .. import rnn_cells as cells
from .fastmath32 import FASTMATH32
from .matmul import product

_JIT = dict(cache=True, fastmath=FASTMATH32, error_model="numpy")
_lstm = njit(inline="always", **_JIT)(cells.lstm_cell)
_lstm_grad = njit(inline="always", **_JIT)(cells.lstm_cell_grad)
_gru = njit(inline="always", **_JIT)(cells.gru_cell)
_gru_grad = njit(inline="always", **_JIT)(cells.gru_cell_grad)
_simple = njit(inline="always", **_JIT)(cells.simple_cell)
_simple_grad = njit(inline="always", **_JIT)(cells.simple_cell_grad)
LSTM, GRU = cells.LSTM, cells.GRU


@njit(**_JIT)
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


@njit(**_JIT)
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


@njit(cache=True, fastmath=False, error_model="numpy")
def column_sums(rows):
    """[n, m] -> [m], row after row: a bias's gradient (the interpreter's and the compiled
    form's, so both add in one order)."""
    out = np.zeros(rows.shape[1], rows.dtype)
    for i in range(rows.shape[0]):
        for j in range(rows.shape[1]):
            out[j] += rows[i, j]
    return out


# --- the whole op in a compiled block --------------------------------------------------------
# WeightList arrives as one tuple of matrices and vectors (a numba Tuple of two types, which
# a loop cannot index), and the gradients leave as one: ``split_matrices`` and ``packed``
# turn it into two uniform halves and back, unrolled at compile time (a tuple's length is
# part of its type).
def split_matrices(items):
    """(the leading 2-D arrays, the rest) of a tuple (numba code only)."""
    raise NotImplementedError("split_matrices is called from numba code only")


@overload(split_matrices)
def _split_matrices(items):
    at = 0
    while at < len(items.types) and getattr(items.types[at], "ndim", 0) == 2:
        at += 1
    return lambda items: (items[:at], items[at:])


def packed(items, like):
    """The tuple (items[0], ..., items[len(like) - 1]) of a list (numba code only)."""
    raise NotImplementedError("packed is called from numba code only")


@overload(packed)
def _packed(items, like):
    count = len(like.types)
    return lambda items, like: _packed_from(items, 0, count)


def _packed_from(items, start, stop):
    raise NotImplementedError("_packed_from is called from numba code only")


@overload(_packed_from, prefer_literal=True)
def _packed_from_overload(items, start, stop):
    if not (isinstance(start, types.IntegerLiteral) and isinstance(stop, types.IntegerLiteral)):
        return None
    k, following = start.literal_value, start.literal_value + 1
    if k >= stop.literal_value:
        return lambda items, start, stop: ()
    return lambda items, start, stop: (items[k],) + _packed_from(items, following, stop)


# Reserve's layout comes from ops/rnn.py (_Shape.reserve) as ``layout``: one (kind, layer,
# direction, width) per part, in order, each part [T, B, width]; kinds:
SAVED, HPREV, CPREV, OUT = 0, 1, 2, 3


@njit(cache=True, fastmath=False, error_model="numpy")
def _starts(layout, layers, dirs, rows):
    """Where each part starts in Reserve and its width ([layer, direction, kind] each), and
    Reserve's size."""
    at = np.zeros((layers, dirs, 4), np.int64)
    widths = np.zeros((layers, dirs, 4), np.int64)
    size = 0
    for kind, layer, d, width in layout:
        at[layer, d, kind] = size
        widths[layer, d, kind] = width
        size += rows * width
    return at, widths, size


@njit(cache=True, fastmath=False, error_model="numpy")
def _part(reserve, start, steps, batch, width):
    return reserve[start:start + steps * batch * width].reshape((steps, batch, width))


@njit(cache=True, fastmath=False, error_model="numpy")
def _step_parts(reserve, at, widths, layer, d, mode, steps, batch, hidden, dtype):
    """(each step's previous h, the gates saved for the gradient, the previous c: an
    unused array but for LSTM) of one (layer, direction) in Reserve."""
    hprev = _part(reserve, at[layer, d, HPREV], steps, batch, hidden)
    saved = _part(reserve, at[layer, d, SAVED], steps, batch, widths[layer, d, SAVED])
    if mode == LSTM:
        cprev = _part(reserve, at[layer, d, CPREV], steps, batch, hidden)
    else:
        cprev = np.empty((steps, batch, hidden), dtype)
    return hprev, saved, cprev


@njit(cache=True, fastmath=False, error_model="numpy")
def _order(steps, direction):
    return np.arange(steps - 1, -1, -1) if direction else np.arange(steps)


@njit(cache=True, fastmath=False, error_model="numpy")
def _live(lengths, steps, batch):
    """[T, B] 0/1 as ops/rnn.py's _live: lengths checked to be in [0, T] first."""
    live = np.ones((steps, batch), np.uint8)
    if lengths is not None:
        if lengths.size != batch:
            raise ValueError("rnn: SequenceLength has another size than the batch")
        for b in range(batch):
            if lengths[b] < 0 or lengths[b] > steps:
                raise IndexError("rnn: a sequence length is out of range")
            for t in range(steps):
                live[t, b] = t < lengths[b]
    return live


@njit(cache=True, fastmath=False, error_model="numpy")
def rnn(x, pre, weights, lengths, mode, layers, dirs, hidden, n_states, layout):
    """The rnn op's (Out, State, Reserve, DropoutState) as ops/rnn.py's kernel makes them;
    ``lengths`` SequenceLength or None, ``layout`` Reserve's parts (above)."""
    x = np.ascontiguousarray(x)
    steps, batch, size = x.shape
    n_cells = layers * dirs
    mats, vecs = split_matrices(weights)
    live = _live(lengths, steps, batch)
    at, widths, total = _starts(layout, layers, dirs, steps * batch)
    reserve = np.empty(total, x.dtype)
    gh = mats[0].shape[0]
    finals = [np.empty((n_cells, batch, hidden), x.dtype) for _ in range(n_states)]
    layer_in = x
    out = np.empty((steps, batch, dirs * hidden), x.dtype)
    for layer in range(layers):
        if layer < layers - 1:
            out = _part(reserve, at[layer, 0, OUT], steps, batch, dirs * hidden)
        else:
            out = np.empty((steps, batch, dirs * hidden), x.dtype)
        rows = layer_in.reshape((steps * batch, layer_in.shape[2]))
        for d in range(dirs):
            k = layer * dirs + d
            w_ih = np.ascontiguousarray(mats[2 * k])
            w_hh = np.ascontiguousarray(mats[2 * k + 1])
            b_ih = np.ascontiguousarray(vecs[2 * k])
            b_hh = np.ascontiguousarray(vecs[2 * k + 1])
            xg = product(rows, w_ih, False, True, 1.0).reshape((steps, batch, gh))
            hprev, saved, cprev = _step_parts(reserve, at, widths, layer, d, mode, steps,
                                              batch, hidden, x.dtype)
            order = _order(steps, d)
            if steps:
                hprev[order[0]] = pre[0][k]
                if n_states == 2:
                    cprev[order[0]] = pre[n_states - 1][k]
            h = finals[0][k]
            c = finals[n_states - 1][k] if n_states == 2 else \
                np.empty((batch, hidden), x.dtype)
            if not steps:
                for i in range(n_states):
                    finals[i][k] = pre[i][k]
            forward(mode, xg, b_ih, w_hh, b_hh, live, order, 0, steps, hprev, cprev, h, c,
                    saved, out, d * hidden)
        layer_in = out
    return out, packed(finals, pre), reserve, np.zeros(0, np.uint8)


@njit(cache=True, fastmath=False, error_model="numpy")
def rnn_grad(x, pre, weights, reserve, dout, dstate, lengths, mode, layers, dirs, hidden,
             n_states, layout):
    """rnn_grad's (Input@GRAD, PreState@GRAD, WeightList@GRAD) as ops/rnn.py's kernel makes
    them; ``dstate`` State@GRAD or None (no final state was used), ``lengths`` likewise."""
    x = np.ascontiguousarray(x)
    steps, batch, size = x.shape
    n_cells = layers * dirs
    mats, vecs = split_matrices(weights)
    at, widths, total = _starts(layout, layers, dirs, steps * batch)
    if reserve.size != total:
        raise ValueError("rnn_grad: Reserve holds another number of values than the "
                         "forward rnn op saves for this Input")
    live = _live(lengths, steps, batch)
    d_out = np.ascontiguousarray(dout)
    gh = mats[0].shape[0]
    d_pre = [np.zeros((n_cells, batch, hidden), x.dtype) for _ in range(n_states)]
    if dstate is not None:
        for i in range(n_states):
            if dstate[i].shape != (n_cells, batch, hidden):
                raise ValueError("rnn_grad: a State@GRAD has another shape than its state")
    d_mats = [np.empty((0, 0), x.dtype) for _ in range(2 * n_cells)]
    d_vecs = [np.empty(0, x.dtype) for _ in range(2 * n_cells)]
    for layer in range(layers - 1, -1, -1):
        if layer == 0:
            layer_in = x
        else:
            layer_in = _part(reserve, at[layer - 1, 0, OUT], steps, batch, dirs * hidden)
        width = layer_in.shape[2]
        rows_in = layer_in.reshape((steps * batch, width))
        d_in = np.empty((0, 0), x.dtype)
        for d in range(dirs):
            k = layer * dirs + d
            w_ih = np.ascontiguousarray(mats[2 * k])
            w_hh = np.ascontiguousarray(mats[2 * k + 1])
            hprev, saved, cprev = _step_parts(reserve, at, widths, layer, d, mode, steps,
                                              batch, hidden, x.dtype)
            dh = d_pre[0][k]
            if dstate is not None:
                dh[...] = dstate[0][k]
            if n_states == 2:
                dc = d_pre[n_states - 1][k]
                if dstate is not None:
                    dc[...] = dstate[n_states - 1][k]
            else:
                dc = np.zeros((batch, hidden), x.dtype)
            dxg = np.empty((steps, batch, gh), x.dtype)
            dhg = np.empty((steps, batch, gh), x.dtype) if mode == GRU else dxg
            backward(mode, saved, w_hh, hprev, cprev, live, _order(steps, d), d_out,
                     d * hidden, dh, dc, dxg, dhg)
            dx_rows = dxg.reshape((steps * batch, gh))
            dh_rows = dhg.reshape((steps * batch, gh))
            d_mats[2 * k] = product(dx_rows, rows_in, True, False, 1.0)
            d_mats[2 * k + 1] = product(dh_rows, hprev.reshape((steps * batch, hidden)),
                                        True, False, 1.0)
            d_vecs[2 * k] = column_sums(dx_rows)
            # (b_ih and b_hh are added together but for the GRU's candidate)
            d_vecs[2 * k + 1] = column_sums(dh_rows) if mode == GRU else d_vecs[2 * k].copy()
            part = product(dx_rows, w_ih, False, False, 1.0)
            d_in = part if d == 0 else d_in + part
        d_out = d_in.reshape((steps, batch, width))
    return (d_out, packed(d_pre, pre),
            packed(d_mats, mats) + packed(d_vecs, vecs))


@njit(cache=True, fastmath=False, error_model="numpy")
def rnn_grad_of_out(x, pre, weights, reserve, dout, lengths, mode, layers, dirs, hidden,
                    n_states, layout):
    """rnn_grad where no final state's gradient came (State@GRAD absent)."""
    return rnn_grad(x, pre, weights, reserve, dout, None, lengths, mode, layers, dirs,
                    hidden, n_states, layout)
