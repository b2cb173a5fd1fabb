"""The fused ``rnn`` op (what ``paddle.nn.LSTM``, ``GRU`` and ``SimpleRNN`` save) and its
gradient, with Paddle 2.6.2's slots and attributes.

It is the design docs' recurrent op with the step block fixed to one cell: where ``recurrent``
runs a block of ordinary ops per time step (ops/recurrent.py), ``rnn`` runs the cell
math of kernels/rnn_cells.py in one compiled loop. The numbers are the same as the step
block's; notebook 9 shows both.

Layout (Paddle's, time-major):

- Input [T, B, I]; Out [T, B, D*H], D = 2 directions with ``is_bidirec`` (the forward
  direction's units first), else 1.
- PreState / State: [L*D, B, H] each, h (and for the LSTM then c), one row per layer and
  direction: layer 0 forward, layer 0 backward, layer 1 forward...
- WeightList: every (layer, direction)'s W_ih [G*H, in] and W_hh [G*H, H], in that order,
  then every one's b_ih and b_hh [G*H]; G gates (LSTM 4: i f c~ o, GRU 3: r z c~,
  RNN_TANH/RNN_RELU 1); ``in`` is I for layer 0 and D*H above it.
- SequenceLength [B] (optional): a step t >= a sequence's length outputs 0 and passes
  its state on unchanged, so State is each sequence's state after its last real step,
  and the backward direction starts at its last real step.
- Reserve: what the gradient reads, packed in one 1-D array of Input's type (Paddle
  declares it uint8 and fills it with cuDNN's workspace; the gradient op is the only
  reader either way): per layer and direction each step's gates and starting state, and
  each layer's output but the last. DropoutState: empty (no dropout mask is made).

Dropout between layers (``dropout_prob``) runs in test mode only: training a multi-layer
rnn with dropout_prob > 0 is refused with a clear error, not run without it.

Stepping: under the debugger (``ctx.stepping``) the op runs one time step at a time and
yields a step per (layer, direction, time step), in a kid scope that holds what that cell
saw and made (x_t, h_prev, the gates, h): a learner sees the LSTM's gates as they open.
Otherwise each direction of each layer is one call of the compiled loop.

In a compiled block (paddle_nb/compiler) the op and its gradient are one call each of
kernels/cpu/rnn.py's ``rnn`` / ``rnn_grad``: the layers and directions as the kernels
below run them, through the same loops and products, Reserve laid out by _Shape.reserve.
Training dropout between layers and types other than float32/float64 stay here.
"""
from __future__ import annotations

import math

import numpy as np

from ..core import attrs as A
from ..core.dtypes import to_code
from ..core.errors import ExecutionError
from ..core.executor import Frame, Step
from ..core.grad_maker import Grad
from ..core.registry import Attr, OpDef, Slot, register
from ..kernels import check
from ..kernels import rnn_cells as cells
from ..kernels.cpu import rnn as CPU_RNN
from ..kernels.cuda import rnn as CUDA_RNN
from ..kernels.cuda.device import to_device
from ..kernels.lowered import Call
from . import arrays
from ..backends import CPU, CUDA
from .common import in_unit_interval

_STATES = {"LSTM": ("h", "c")}            # the others carry h alone


# --- the attributes, checked once ------------------------------------------------------------
class _Shape:
    """What the attributes say: mode, layers L, directions D, hidden size H, gates G."""

    def __init__(self, attr):
        self.mode_name = attr("mode")
        self.mode = cells.MODES.get(self.mode_name)
        self.layers, self.hidden = attr("num_layers"), attr("hidden_size")
        self.dirs = 2 if attr("is_bidirec") else 1
        self.gates = cells.GATES.get(self.mode, 1)
        self.saved = cells.SAVED.get(self.mode, 1)
        self.n_states = len(_STATES.get(self.mode_name, ("h",)))

    @property
    def cells(self) -> int:
        return self.layers * self.dirs

    def weight_positions(self, k: int) -> tuple[int, int, int, int]:
        """Where (layer, direction) number k's W_ih, W_hh, b_ih and b_hh sit in
        WeightList: every cell's two matrices first, then every cell's two biases."""
        return 2 * k, 2 * k + 1, 2 * self.cells + 2 * k, 2 * self.cells + 2 * k + 1

    def layer_input(self, layer: int, input_size: int) -> int:
        return input_size if layer == 0 else self.dirs * self.hidden

    def reserve(self, steps: int, batch: int) -> list[tuple[tuple, tuple]]:
        """Reserve's parts in order: ((kind, layer, direction), shape)."""
        parts, H = [], self.hidden
        for layer in range(self.layers):
            for d in range(self.dirs):
                parts.append((("saved", layer, d), (steps, batch, self.saved * H)))
                parts.append((("hprev", layer, d), (steps, batch, H)))
                if self.mode == cells.LSTM:
                    parts.append((("cprev", layer, d), (steps, batch, H)))
            if layer < self.layers - 1:
                parts.append((("out", layer, 0), (steps, batch, self.dirs * H)))
        return parts

    def reserve_size(self, steps: int, batch: int) -> int:
        return sum(math.prod(shape) for _, shape in self.reserve(steps, batch))


def _int_attr_check(name, low):
    def check_value(value):
        if isinstance(value, int) and not isinstance(value, bool) and value < low:
            return f"{name} must be an integer >= {low}"
        return None
    return check_value


# (a value of the wrong type is the attribute's type check's to name: these return None)
def _mode_check(value):
    if isinstance(value, str) and value not in cells.MODES:
        return f"mode must be one of {sorted(cells.MODES)}"
    return None


# --- shapes -------------------------------------------------------------------------------------
def _check_weights(ctx, s: _Shape, input_size: int) -> None:
    names = ctx.input_names("WeightList")
    if len(names) != 4 * s.cells:
        ctx.fail(f"WeightList holds W_ih and W_hh of each of the {s.cells} (layer, "
                 f"direction) pairs, then b_ih and b_hh of each", slot="WeightList",
                 expected=f"{4 * s.cells} tensors (num_layers={s.layers}, "
                          f"{s.dirs} direction{'s' if s.dirs > 1 else ''})",
                 given=f"{len(names)}")
    GH, H = s.gates * s.hidden, s.hidden
    for k in range(s.cells):
        layer, d = divmod(k, s.dirs)
        where = f"layer {layer} {'backward' if d else 'forward'}"
        want = zip(s.weight_positions(k), ("W_ih", "W_hh", "b_ih", "b_hh"),
                   ([GH, s.layer_input(layer, input_size)], [GH, H], [GH], [GH]))
        for i, what, shape in want:
            given = ctx.shape("WeightList", i)
            if len(given) != len(shape) or any(g >= 0 and w >= 0 and g != w
                                               for g, w in zip(given, shape)):
                ctx.fail(f"WeightList[{i}] is {where}'s {what} ({s.mode_name}: {s.gates} "
                         f"gate{'s' if s.gates > 1 else ''} of hidden_size {H})",
                         slot="WeightList", expected=f"{shape}",
                         given=f"{names[i]}: {given}")


def _rnn_infer(ctx):
    s = _Shape(ctx.attr)
    if s.mode is None:
        ctx.fail("mode names the cell", slot="Input", expected=f"one of {sorted(cells.MODES)}",
                 given=repr(s.mode_name))
    for name, value in (("num_layers", s.layers), ("hidden_size", s.hidden)):
        if value < 1:
            ctx.fail(f"{name} must be at least 1", slot="Input", expected=f"{name} >= 1",
                     given=f"{name}={value}")
    ctx.require_dtype("Input", "float")
    xs = ctx.require_rank("Input", 3)
    if len(xs) != 3:
        ctx.fail("Input is time-major [T, batch, input_size] (Paddle's layers transpose a "
                 "batch-major input first)", slot="Input", expected="rank 3",
                 given=ctx.describe_input("Input"))
    steps, batch, input_size = xs
    if input_size >= 0 and ctx.attr("input_size") > 0 and ctx.attr("input_size") != input_size:
        ctx.fail("input_size must be Input's last dim", slot="Input",
                 expected=f"input_size={input_size}",
                 given=f"input_size={ctx.attr('input_size')}, {ctx.describe_input('Input')}")
    _check_weights(ctx, s, input_size)
    for i, name in enumerate(ctx.input_names("WeightList")):
        if ctx.dtype("WeightList", i) != ctx.dtype("Input"):
            ctx.fail("the weights have Input's element type", slot="WeightList",
                     expected=ctx.describe_input("Input"),
                     given=ctx.describe_input("WeightList", i))
    states = ctx.input_names("PreState")
    if len(states) != s.n_states:
        ctx.fail(f"PreState holds the initial {' and '.join(_STATES.get(s.mode_name, ('h',)))}"
                 f" of the {s.mode_name} cell", slot="PreState", expected=f"{s.n_states} tensors",
                 given=f"{len(states)}")
    want = [s.cells, batch, s.hidden]
    for i in range(s.n_states):
        given = ctx.shape("PreState", i)
        if len(given) != 3 or any(g >= 0 and w >= 0 and g != w for g, w in zip(given, want)):
            ctx.fail("each initial state is [num_layers * directions, batch, hidden_size]",
                     slot="PreState", expected=f"{want}", given=f"{states[i]}: {given}")
    if ctx.has_input("SequenceLength"):
        ctx.require_dtype("SequenceLength", "int")
        ls = ctx.shape("SequenceLength")
        if len(ls) != 1 or (ls[0] >= 0 and batch >= 0 and ls[0] != batch):
            ctx.fail("SequenceLength holds one length per sequence", slot="SequenceLength",
                     expected=f"[{batch}]", given=ctx.describe_input("SequenceLength"))
    dtype = ctx.dtype("Input")
    ctx.set_output("Out", [steps, batch, s.dirs * s.hidden], dtype)
    for i in range(len(ctx.output_names("State"))):
        ctx.set_output("State", want, dtype, i=i)
    known = steps >= 0 and batch >= 0
    ctx.set_output("Reserve", [s.reserve_size(steps, batch) if known else -1], dtype)
    if ctx.has_output("DropoutState"):
        ctx.set_output("DropoutState", [0], to_code(np.uint8))


# --- the places --------------------------------------------------------------------------------
def _assign(dst, src) -> None:
    if arrays.on_device(dst):
        dst.copy_to_device(src)
    else:
        dst[...] = src


def _live(ctx, steps: int, batch: int, on_device: bool):
    """[T, B] 0/1: is step t inside sequence b (t < its length)? Lengths are checked to
    be in [0, T] first: a longer one would silently read as T."""
    lengths = ctx.input("SequenceLength")
    if lengths is None:
        live = np.ones((steps, batch), np.uint8)
    else:
        check.indices(lengths, steps + 1, slot="SequenceLength", what="sequence length",
                      counted=f"Input has {steps} time steps, so 0..{steps}")
        lengths = arrays.host(lengths).reshape(-1).astype(np.int64)
        live = (np.arange(steps)[:, None] < lengths[None, :]).astype(np.uint8)
    return to_device(live) if on_device else live


def _order(steps: int, direction: int) -> np.ndarray:
    return np.arange(steps - 1, -1, -1) if direction else np.arange(steps)


def _views(reserve, s: _Shape, steps: int, batch: int) -> dict:
    """Reserve's parts as arrays of their shapes (views into it, on its place)."""
    views, at = {}, 0
    for key, shape in s.reserve(steps, batch):
        n = math.prod(shape)
        views[key] = reserve[at:at + n].reshape(shape)
        at += n
    return views


def _attributes(ctx) -> _Shape:
    """The attributes, read once per prepared op (a training step runs the op every time)."""
    return ctx.resolved("rnn", lambda: _Shape(ctx.attr))


def _split_weights(weights, s: _Shape, k: int):
    """(W_ih, W_hh, b_ih, b_hh) of (layer, direction) number k."""
    return tuple(weights[i] for i in s.weight_positions(k))


def _refuse_training_dropout(ctx, s: _Shape) -> None:
    if s.layers > 1 and ctx.attr("dropout_prob") > 0 and not ctx.attr("is_test"):
        raise ExecutionError(
            f"rnn: dropout_prob={ctx.attr('dropout_prob')} between the {s.layers} layers "
            "is not implemented for training here (it runs in test mode: is_test=True, or "
            "a clone(for_test=True) of the program); train with dropout_prob=0")


def _inputs(ctx):
    """(Input, WeightList, on the device?), host arrays made contiguous for the loops."""
    x, weights = ctx.input("Input"), ctx.inputs("WeightList")
    device = arrays.on_device(x)
    if not device:
        x, weights = np.ascontiguousarray(x), [np.ascontiguousarray(w) for w in weights]
    return x, weights, device


def _make_rnn(place, seq):
    def run(ctx):
        s = _attributes(ctx)
        _refuse_training_dropout(ctx, s)
        x, weights, device = _inputs(ctx)
        steps, batch, input_size = (int(d) for d in x.shape)
        pre = ctx.inputs("PreState")
        H, GH, dtype = s.hidden, s.gates * s.hidden, x.dtype
        live = _live(ctx, steps, batch, device)
        # (empty: the loops write every element, padded steps included)
        reserve = arrays.empty((s.reserve_size(steps, batch),), dtype, x)
        parts = _views(reserve, s, steps, batch)
        final = [arrays.empty((s.cells, batch, H), dtype, x) for _ in range(s.n_states)]
        layer_in, out = x, None
        for layer in range(s.layers):
            out = parts[("out", layer, 0)] if layer < s.layers - 1 else \
                arrays.empty((steps, batch, s.dirs * H), dtype, x)
            width = s.layer_input(layer, input_size)
            for d in range(s.dirs):
                k = layer * s.dirs + d
                w_ih, w_hh, b_ih, b_hh = _split_weights(weights, s, k)
                xg = place.product(layer_in.reshape((steps * batch, width)), w_ih,
                                   tb=True).reshape((steps, batch, GH))
                hprev, saved = parts[("hprev", layer, d)], parts[("saved", layer, d)]
                cprev = parts.get(("cprev", layer, d))
                if cprev is None:                    # no cell state: a scratch array
                    cprev = arrays.empty((steps, batch, H), dtype, x)
                order = _order(steps, d)
                if steps:
                    _assign(hprev[int(order[0])], pre[0][k])
                    if s.n_states == 2:
                        _assign(cprev[int(order[0])], pre[1][k])
                h = final[0][k]
                c = final[1][k] if s.n_states == 2 else arrays.empty((batch, H), dtype, x)
                if not steps:
                    for st, p in zip(final, pre):
                        _assign(st[k], p[k])
                args = (s.mode, xg, b_ih, w_hh, b_hh, live, order)
                state = (hprev, cprev, h, c, saved, out, d * H)
                if not ctx.stepping:
                    seq.forward(*args, 0, steps, *state)
                    continue
                for i in range(steps):
                    seq.forward(*args, i, i + 1, *state)
                    yield _step(ctx, s, layer, d, int(order[i]), layer_in, saved, hprev,
                                cprev, out, live)
            layer_in = out
        ctx.set_output("Out", out)
        ctx.set_outputs("State", final)
        ctx.set_output("Reserve", reserve)
        if ctx.has_output("DropoutState"):
            ctx.set_output("DropoutState", arrays.full((0,), 0, np.uint8, x))
    return run


# --- stepping: one cell at a time ----------------------------------------------------------------
_GATE_NAMES = {cells.LSTM: ("input_gate", "forget_gate", "candidate", "output_gate", "c"),
               cells.GRU: ("reset_gate", "update_gate", "candidate", "h_prev @ W_hc + b_hc")}


def _step(ctx, s: _Shape, layer, d, t, layer_in, saved, hprev, cprev, out, live):
    """The Step of one cell: a kid scope named for it, holding what it read and made."""
    direction = "backward" if d else "forward"
    name = f"layer {layer} {direction}/step {t}"
    scope = ctx.new_scope(name)
    H, host = s.hidden, arrays.host      # host copies: they are there to be looked at
    shown = {"x_t": host(layer_in[t]), "h_prev": host(hprev[t])}
    if s.mode == cells.LSTM:
        shown["c_prev"] = host(cprev[t])
    gates = host(saved[t])
    for g, gate in enumerate(_GATE_NAMES.get(s.mode, ())):
        shown[gate] = gates[:, g * H:(g + 1) * H].copy()
    shown["h"] = host(out[t])[:, d * H:(d + 1) * H].copy()
    shown["live"] = host(live[t]).astype(bool)
    for n, value in shown.items():
        scope.var(n).set(np.array(value))
    where = f"{ctx.frames[-1].block_path} > rnn@{ctx.op.index} {name}" if ctx.frames \
        else name
    op = ctx.op.op
    frame = Frame(op.block.idx, where, scope, op)
    # the kid scope lives until the next cell's: the stepper shows one at a time
    for kid in ctx.scope.kids:
        if kid is not scope and kid.name.startswith(f"rnn@{ctx.op.index}/"):
            ctx.scope.delete_scope(kid)
    return Step(where, ctx.op.index, op, scope, ctx.frames + (frame,), wrote=tuple(shown))


# --- the gradient ------------------------------------------------------------------------------
def _device_column_sums(rows):
    return CUDA.sum_to(rows, (rows.shape[1],))


def _make_rnn_grad(place, seq, column_sums):
    def run(ctx):
        s = _attributes(ctx)
        x, weights, device = _inputs(ctx)
        steps, batch, input_size = (int(d) for d in x.shape)
        H, GH, dtype = s.hidden, s.gates * s.hidden, x.dtype
        reserve = ctx.input("Reserve")
        if int(reserve.size) != s.reserve_size(steps, batch):
            raise ExecutionError(
                f"rnn_grad: Reserve holds {int(reserve.size)} values, the forward rnn op "
                f"saves {s.reserve_size(steps, batch)} for Input {[steps, batch, input_size]}"
                " (was Reserve written by this rnn op, in this run?)")
        parts = _views(reserve, s, steps, batch)
        live = _live(ctx, steps, batch, device)
        d_out = ctx.input_or_none("Out@GRAD")
        if d_out is None:
            d_out = arrays.full((steps, batch, s.dirs * H), 0, dtype, x)
        elif not device:
            d_out = np.ascontiguousarray(d_out)
        d_final = [ctx.input_or_none("State@GRAD", i) for i in range(s.n_states)]
        for i, d in enumerate(d_final):     # each final state's gradient: its state's shape
            if d is not None and tuple(d.shape) != (s.cells, batch, H):
                raise ExecutionError(
                    f"rnn_grad: slot State@GRAD: gradient {i} must have its state's shape"
                    f"\n  expected: {[s.cells, batch, H]}\n  given:    {list(d.shape)}")
        d_pre = [arrays.full((s.cells, batch, H), 0, dtype, x) for _ in range(s.n_states)]
        d_weights = [None] * len(weights)
        for layer in range(s.layers - 1, -1, -1):
            layer_in = x if layer == 0 else parts[("out", layer - 1, 0)]
            width = s.layer_input(layer, input_size)
            rows_in = layer_in.reshape((steps * batch, width))
            d_in = None
            for d in range(s.dirs):
                k = layer * s.dirs + d
                w_ih, w_hh, _, _ = _split_weights(weights, s, k)
                hprev, saved = parts[("hprev", layer, d)], parts[("saved", layer, d)]
                cprev = parts.get(("cprev", layer, d))
                if cprev is None:
                    cprev = arrays.empty((steps, batch, H), dtype, x)
                dh = d_pre[0][k]
                if d_final[0] is not None:
                    _assign(dh, d_final[0][k])
                dc = d_pre[1][k] if s.n_states == 2 else arrays.full((batch, H), 0, dtype, x)
                if s.n_states == 2 and d_final[1] is not None:
                    _assign(dc, d_final[1][k])
                dxg = arrays.empty((steps, batch, GH), dtype, x)
                dhg = arrays.empty((steps, batch, GH), dtype, x) if s.mode == cells.GRU \
                    else dxg
                seq.backward(s.mode, saved, w_hh, hprev, cprev, live, _order(steps, d),
                             d_out, d * H, dh, dc, dxg, dhg)
                dx_rows = dxg.reshape((steps * batch, GH))
                dh_rows = dhg.reshape((steps * batch, GH))
                i_wih, i_whh, i_bih, i_bhh = s.weight_positions(k)
                d_weights[i_wih] = place.product(dx_rows, rows_in, ta=True)
                d_weights[i_whh] = place.product(
                    dh_rows, hprev.reshape((steps * batch, H)), ta=True)
                d_weights[i_bih] = column_sums(dx_rows)
                # (b_ih and b_hh are added together but for the GRU's candidate: the same
                # gradient, summed once)
                d_weights[i_bhh] = column_sums(dh_rows) if dhg is not dxg \
                    else arrays.copy(d_weights[i_bih])
                part = place.product(dx_rows, w_ih)
                d_in = part if d_in is None else arrays.add(d_in, part)
            d_out = d_in.reshape((steps, batch, width))
        ctx.set_output("Input@GRAD", d_out)
        ctx.set_outputs("PreState@GRAD", d_pre)
        ctx.set_outputs("WeightList@GRAD", d_weights)
    return run


# --- in a compiled block (kernels/lowered.py): the whole op in kernels/cpu/rnn.py --------------
_PART_KINDS = {"saved": CPU_RNN.SAVED, "hprev": CPU_RNN.HPREV, "cprev": CPU_RNN.CPREV,
               "out": CPU_RNN.OUT}


def _compiled_attributes(info):
    """(the attributes as kernels/cpu/rnn.py's rnn and rnn_grad take them, after the optional
    SequenceLength), or the reason the op stays in the interpreter."""
    s = _Shape(info.attr)
    if s.mode is None:
        return "an unknown mode"
    if info.dtype("Input").type not in (np.float32, np.float64):
        return "the loops are compiled for float32 and float64"
    if s.layers > 1 and info.attr("dropout_prob") > 0 and not info.attr("is_test"):
        return "training dropout between layers (the interpreter refuses it)"
    # Reserve's parts in ops' order, each [T, B, width]: the layout is _Shape.reserve's
    layout = tuple((_PART_KINDS[kind], layer, d, shape[2])
                   for (kind, layer, d), shape in s.reserve(1, 1))
    lengths = ("SequenceLength",) if _given(info, "SequenceLength") else ()
    return lengths, (None,) * (not lengths) + (s.mode, s.layers, s.dirs, s.hidden,
                                               s.n_states, layout)


def _lowered_rnn(info):
    found = _compiled_attributes(info)
    if isinstance(found, str):
        return found
    lengths, consts = found
    return Call(CPU_RNN.rnn, ("Input", "PreState", "WeightList") + lengths,
                ("Out", "State", "Reserve", "DropoutState"), consts)


def _given(info, slot: str) -> int:
    """How many of a gradient slot's inputs the op has (an unused output's is empty)."""
    return sum(i >= 0 for i in info.pop.in_ix.get(slot, ()))


def _lowered_rnn_grad(info):
    found = _compiled_attributes(info)
    if isinstance(found, str):
        return found
    lengths, consts = found
    if not _given(info, "Out@GRAD"):
        return "no gradient of Out"
    reads = ("Input", "PreState", "WeightList", "Reserve", "Out@GRAD")
    states = _given(info, "State@GRAD")
    if states == 0:
        return Call(CPU_RNN.rnn_grad_of_out, reads + lengths,
                    ("Input@GRAD", "PreState@GRAD", "WeightList@GRAD"), consts)
    if states != len(info.pop.in_ix["State@GRAD"]):
        return "the gradient of some final states but not all"
    return Call(CPU_RNN.rnn_grad, reads + ("State@GRAD",) + lengths,
                ("Input@GRAD", "PreState@GRAD", "WeightList@GRAD"), consts)


register(OpDef(
    "rnn",
    [Slot("Input", "the sequences, time-major [T, batch, input_size]"),
     Slot("PreState", "the initial states, each [num_layers * directions, batch, "
          "hidden_size]: h (and c for an LSTM)", duplicable=True),
     Slot("WeightList", "every (layer, direction)'s W_ih and W_hh, then every one's b_ih "
          "and b_hh", duplicable=True),
     Slot("SequenceLength", "each sequence's length [batch]; steps after it output 0 and "
          "keep the state", dispensable=True)],
    [Slot("Out", "every step's h, [T, batch, directions * hidden_size]"),
     Slot("DropoutState", "the dropout mask between layers (empty here)", dispensable=True),
     Slot("State", "the final states, as PreState", duplicable=True),
     Slot("Reserve", "what the gradient reads: the gates and starting states of every "
          "step", intermediate=True)],
    [Attr("dropout_prob", A.FLOAT, 0.0, "dropout between layers (test mode only here)",
          check=in_unit_interval("dropout_prob must be in [0, 1]")),
     Attr("is_bidirec", A.BOOLEAN, False, "run a second direction, last step first"),
     Attr("input_size", A.INT, 10, "Input's last dim"),
     Attr("hidden_size", A.INT, 100, "H, the units per direction",
          check=_int_attr_check("hidden_size", 1)),
     Attr("num_layers", A.INT, 1, "stacked layers, each reading the one below",
          check=_int_attr_check("num_layers", 1)),
     Attr("mode", A.STRING, "RNN_TANH", "the cell: LSTM, GRU, RNN_TANH or RNN_RELU",
          check=_mode_check),
     Attr("seed", A.INT, 0, "the dropout seed (no dropout is drawn here)"),
     Attr("is_test", A.BOOLEAN, False, "inference: dropout off")],
    comment="A multi-layer, optionally bidirectional LSTM, GRU or simple RNN over "
            "time-major sequences, one cell per time step, in one op.",
    infer_shape=_rnn_infer,
    kernels={"cpu": _make_rnn(CPU, CPU_RNN), "cuda": _make_rnn(CUDA, CUDA_RNN)},
    lowered=_lowered_rnn,
    grad=Grad(reads=["Input", "PreState", "WeightList", "SequenceLength", "Out", "Reserve",
                     "DropoutState"],
              grads_of=["Out", "State"], writes=["Input", "PreState", "WeightList"],
              kernel=_make_rnn_grad(CPU, CPU_RNN, CPU_RNN.column_sums),
              cuda_kernel=_make_rnn_grad(CUDA, CUDA_RNN, _device_column_sums),
              lowered=_lowered_rnn_grad)))
