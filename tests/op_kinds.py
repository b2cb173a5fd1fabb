"""The kinds of op that the op, fuzz, gradient and random-program tables leave to other
tests, because a one-op program with a feed cannot run them. Two of the kinds are facts
of the ops' declarations, so they are asked of the registry rather than listed again
here (an op declared with one of them joins its kind by that declaration):

- ops that own blocks, through a BLOCK or BLOCKS attribute: the control flow ops
  (conditional_block, while, recurrent) and the parameter server's listen_and_serv,
  whose optimize blocks update the parameters;
- remote ops (``OpDef.remote``): send, recv and the barriers, which talk to parameter
  servers through the executor's transport.

The third kind, the ops that read or write a tensor array (which a feed cannot hold), is
no field of an OpDef, so it is the one list here.
"""
from __future__ import annotations

import paddle_nb as pd
from paddle_nb.core import attrs as A
from paddle_nb.core import registry


def owns_blocks(op_type: str) -> bool:
    return any(a.type in (A.BLOCK, A.BLOCKS) for a in registry.lookup(op_type).attrs)


# forward ops (their <type>_grad ops own the same blocks and are tested with them)
BLOCK_OWNERS = frozenset(t for t in pd.registered_ops(include_grad=False) if owns_blocks(t))
REMOTE = frozenset(registry.types_where("remote"))
TENSOR_ARRAY_OPS = frozenset({"write_to_array", "read_from_array", "lod_array_length",
                              "tensor_array_to_tensor"})
