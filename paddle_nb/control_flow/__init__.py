"""Control-flow builders: blocks that nest like C's ``{}`` (the Block and Scope design).

Each builder opens a sub-block with ``with``, records what the user builds inside, and on
leaving appends the op that owns the block (``conditional_block``, ``while``,
``recurrent``) with the sub-block's outside reads and writes as its inputs and outputs.
"""
from .cond import Switch, case, cond, switch, switch_case
from .ifelse import IfElse, ifelse, ifelseop
from .rnn import StaticRNN, as_step_input, create_rnn, rnn, rnn_op
from .while_loop import (While, WhileOp, array_length, array_read, array_write, create_array,
                         increment, tensor_array_to_tensor, while_loop, while_op)
from ..core.variable import Variable as _Variable

_Variable.as_step_input = as_step_input     # Block and Scope design: a.as_step_input()
