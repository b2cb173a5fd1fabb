"""Layers: the builder functions users call (``pd.layer.fc``, ``pd.data``, ``pd.var``...).

Each appends ops to the current block of the default main program, creating parameters
(declared in the main program, initialised by an op in the startup program) as Fluid's
LayerHelper does. Names follow Fluid: ``fc_0.w_0``, ``fc_0.b_0``, ``fc_0.tmp_0``.

This file only gathers them (``pd.layers`` and ``pd.layer`` are this package). ``base`` is
what every builder stands on; each family imports it and never another family:

    base         the block, temporaries, append, parameters, act=, fill_constant,
                 reshape, transpose
    declare      data, var, minibatch, sequence, assign
    dense        fc
    elementwise  relu... scale, cast, elementwise_add..., comparisons, logic
    tensor       softmax, matmul, mean, reductions, sums, concat, split
    cnn          conv2d, pool2d, dropout
    norm         batch_norm, layer_norm
    lookup       embedding
    rnn          lstm, gru, simple_rnn
    attention    linear, multi_head_attention, transformer_encoder_layer (with norm's
                 layer_norm)
    losses       cross_entropy, softmax_with_cross_entropy, square_error_cost, mse_loss

Beside them: ``param_attr`` (``pd.ParamAttr``, below base), and two fronts built on the
families, which the public API imports: ``operators`` (``+ - * / @ > <`` on Variables)
and ``variable_api`` (``pd.variable``).
"""
from .base import (__getattr__, append, create_parameter, fill_constant, get_variable,
                   reshape, transpose)
from .declare import assign, data, minibatch, sequence, var
from .dense import fc
from .elementwise import (add, add_scalar, cast, elementwise_add, elementwise_div,
                          elementwise_mul, elementwise_sub, equal, exp, greater_than,
                          larger_than, less_than, log, logical_and, logical_not, logical_or,
                          not_equal, relu, scale, sigmoid, square, tanh)
from .tensor import concat, matmul, mean, reduce_mean, reduce_sum, softmax, split, sums
from .cnn import conv2d, dropout, pool2d
from .norm import batch_norm, layer_norm
from .lookup import embedding
from .rnn import gru, lstm, simple_rnn
from .attention import linear, multi_head_attention, transformer_encoder_layer
from .losses import cross_entropy, mse_loss, softmax_with_cross_entropy, square_error_cost
