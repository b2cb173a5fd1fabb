"""The recurrent builders of ``pd.layer``: ``lstm``, ``gru`` and ``simple_rnn``, each one
fused ``rnn`` op (ops/rnn.py) with the ops around it that ``paddle.nn.LSTM`` / ``GRU`` /
``SimpleRNN`` append in a static program:

- a ``transpose2`` to time-major [T, B, I] when the input is batch-major (the default,
  ``time_major=False``), and one back after the op;
- zero initial states when none are given: ``fill_constant`` of [L*D, B, H] for a known
  batch, as Paddle, or ``fill_constant_batch_size_like`` when the batch is -1 (Paddle
  2.6.2's layer asks the static shape for a number there and fails);
- the weights of every (layer, direction) as their own parameters, named as Paddle names
  them (``lstm_cell_0.w_0`` W_ih, ``.w_1`` W_hh, ``.b_0`` b_ih, ``.b_1`` b_hh), uniform in
  [-1/sqrt(H), 1/sqrt(H)] as Paddle draws them. (Paddle also makes one flat weight per
  layer for cuDNN, which its CPU kernel never reads; there is none here.)

Each returns ``(outputs, final_states)`` as the Paddle layer's call does: the LSTM's final
states are ``(h, c)``, the others' ``h``; each [L*D, B, H].
"""
from __future__ import annotations

import math

from ..builders import arg_checks as check
from ..builders.initializer import Uniform
from ..builders.op_creators import op
from ..core import unique_name
from .base import fill_constant, parameter, transpose
from .param_attr import ParamAttr

_STATES = {"LSTM": 2, "GRU": 1, "RNN_TANH": 1, "RNN_RELU": 1}
_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}
_CELL = {"LSTM": "lstm_cell", "GRU": "gru_cell", "RNN_TANH": "simple_rnn_cell",
         "RNN_RELU": "simple_rnn_cell"}
_DIRECTIONS = {"forward": 1, "bidirect": 2, "bidirectional": 2}
# each cell's four parameters: the builders' arguments, and Paddle's name suffixes
_ATTRS = ("weight_ih_attr", "weight_hh_attr", "bias_ih_attr", "bias_hh_attr")
_SUFFIXES = ("w_0", "w_1", "b_0", "b_1")


def _weights(b, mode, size, hidden, layers, dirs, dtype, attrs):
    """Paddle's WeightList: every cell's W_ih and W_hh, then every cell's b_ih and b_hh."""
    for argument, attr in zip(_ATTRS, attrs):
        if attr is False:              # checked first: nothing is made for a refused layer
            raise check.refuse(b, argument, "parameters (the fused op has no option to "
                               "leave a weight or bias out)", attr)
    init = Uniform(-1.0 / math.sqrt(hidden), 1.0 / math.sqrt(hidden))
    rows = _GATES[mode] * hidden
    mats, biases = [], []
    for k in range(layers * dirs):
        cell = unique_name.generate(_CELL[mode])
        width = size if k < dirs else dirs * hidden
        made = [parameter(ParamAttr.of(attr, b, argument), shape, dtype, f"{cell}.{suffix}",
                          initializer=init)
                for argument, attr, shape, suffix in zip(
                    _ATTRS, attrs, ([rows, width], [rows, hidden], [rows], [rows]), _SUFFIXES)]
        mats += made[:2]
        biases += made[2:]
    return mats + biases


def _zero_states(b, x, count, shape, time_major):
    if shape[1] >= 0:                  # the batch is known: Paddle's fill_constant
        return [fill_constant(shape, x.dtype, 0.0) for _ in range(count)]
    code = check.data_type(b, "input", x.dtype)
    return [op.fill_constant_batch_size_like(
        Input=x, shape=shape, dtype=code, value=0.0,
        input_dim_idx=1 if time_major else 0, output_dim_idx=1) for _ in range(count)]


def _rnn(b, mode, input, hidden_size, num_layers, direction, sequence_length,  # noqa: A002
         initial_states, time_major, dropout, attrs, name):
    check.variable(b, "input", input, dtype="float")
    if len(input.shape) != 3 or input.shape[-1] is None or input.shape[-1] < 1:
        raise check.refuse(b, "input", "[batch, time, features] (time-major: [time, batch, "
                           "features]) with known features", input)
    hidden = check.integer(b, "hidden_size", hidden_size, low=1)
    layers = check.integer(b, "num_layers", num_layers, low=1)
    dirs = _DIRECTIONS[check.one_of(b, "direction", direction, tuple(_DIRECTIONS))]
    time_major = check.boolean(b, "time_major", time_major)
    dropout = check.number(b, "dropout", dropout, low=0, high=1)
    check.text(b, "name", name, optional=True)
    size = input.shape[-1]
    shape = [layers * dirs, -1, hidden]
    batch = input.shape[1 if time_major else 0]
    if batch is not None and batch >= 0:
        shape[1] = batch
    count = _STATES[mode]
    if initial_states is None:
        states = _zero_states(b, input, count, shape, time_major)
    else:
        given = list(initial_states) if isinstance(initial_states, (list, tuple)) \
            else [initial_states]
        states = check.variables(b, "initial_states", given)
        if len(states) != count:
            raise check.refuse(b, "initial_states", f"{count} state"
                               f"{'s (h, c)' if count == 2 else ' (h)'}, each "
                               f"[{layers * dirs}, batch, {hidden}]", initial_states)
    inputs = {"Input": input if time_major else transpose(input, [1, 0, 2]),
              "PreState": states,
              "WeightList": _weights(b, mode, size, hidden, layers, dirs, input.dtype, attrs)}
    if sequence_length is not None:
        inputs["SequenceLength"] = check.variable(b, "sequence_length", sequence_length,
                                                  dtype="int")
    out, _, state = op.rnn(**inputs, outputs={"State": count}, mode=mode,
                           input_size=size, hidden_size=hidden, num_layers=layers,
                           is_bidirec=dirs == 2, dropout_prob=dropout, is_test=False)
    out = out if time_major else transpose(out, [1, 0, 2])
    return out, (tuple(state) if count == 2 else state[0])


def lstm(input, hidden_size, num_layers=1, direction="forward",  # noqa: A002
         sequence_length=None, initial_states=None, time_major=False, dropout=0.0,
         weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None,
         name=None):
    """An LSTM over ``input`` ([B, T, I], or [T, B, I] with ``time_major``), as
    ``paddle.nn.LSTM(I, hidden_size, num_layers, direction, time_major, dropout)(input,
    initial_states, sequence_length)``: returns ``(outputs, (h, c))``. ``sequence_length``
    [B] ints: each sequence's real steps (the rest output 0 and keep the state)."""
    return _rnn("lstm", "LSTM", input, hidden_size, num_layers, direction, sequence_length,
                initial_states, time_major, dropout,
                (weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr), name)


def gru(input, hidden_size, num_layers=1, direction="forward",  # noqa: A002
        sequence_length=None, initial_states=None, time_major=False, dropout=0.0,
        weight_ih_attr=None, weight_hh_attr=None, bias_ih_attr=None, bias_hh_attr=None,
        name=None):
    """A GRU, as ``paddle.nn.GRU(...)(input, initial_states, sequence_length)``: returns
    ``(outputs, h)`` (see ``lstm``)."""
    return _rnn("gru", "GRU", input, hidden_size, num_layers, direction, sequence_length,
                initial_states, time_major, dropout,
                (weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr), name)


def simple_rnn(input, hidden_size, num_layers=1, direction="forward",  # noqa: A002
               sequence_length=None, initial_states=None, time_major=False, dropout=0.0,
               activation="tanh", weight_ih_attr=None, weight_hh_attr=None,
               bias_ih_attr=None, bias_hh_attr=None, name=None):
    """An Elman RNN, h = act(x W_ih^T + b_ih + h W_hh^T + b_hh), as ``paddle.nn.SimpleRNN``
    with ``activation`` "tanh" or "relu": returns ``(outputs, h)`` (see ``lstm``)."""
    act = check.one_of("simple_rnn", "activation", activation, ("tanh", "relu"))
    return _rnn("simple_rnn", "RNN_" + act.upper(), input, hidden_size, num_layers,
                direction, sequence_length, initial_states, time_major, dropout,
                (weight_ih_attr, weight_hh_attr, bias_ih_attr, bias_hh_attr), name)
