"""The table lookup of ``pd.layer``: ``embedding``, with Fluid's signature
(``paddle.static.nn``), appending what Paddle 2.6.2 appends: a ``lookup_table_v2`` op
reading a [vocabulary, width] table, Xavier-uniform as Paddle initialises it. It is how a
sequence model turns word ids into vectors.
"""
from __future__ import annotations

from ..builders import arg_checks as check
from ..builders.initializer import XavierUniform
from ..builders.op_creators import op
from ..core import unique_name
from .base import first_output, parameter
from .param_attr import ParamAttr


def embedding(input, size, is_sparse=False, is_distributed=False,  # noqa: A002
              padding_idx=None, param_attr=None, dtype="float32"):
    """Rows of a [size[0], size[1]] table picked by the int ids ``input`` (any shape; the
    result has the ids' shape and one more dim of size[1]). ``padding_idx`` names a row
    that reads as zeros and is never trained: a negative one counts from the end, and
    the op stores it as a row number, as Paddle does. ``is_sparse=True`` makes the table's
    gradient Paddle's sparse one, a SelectedRows (the ids' rows only, the padding id's
    included), which SGD, Momentum and Adam apply as Paddle does."""
    b = "embedding"
    check.variable(b, "input", input, dtype="int")
    if not isinstance(size, (list, tuple)) or len(size) != 2:
        raise check.refuse(b, "size", "[vocabulary size, embedding width]", size)
    rows, width = (check.integer(b, "size", v, low=1) for v in size)
    if padding_idx is None:
        padding_idx = -1
    else:
        padding_idx = check.integer(b, "padding_idx", padding_idx)
        if not -rows <= padding_idx < rows:
            raise check.refuse(b, "padding_idx", f"a row of the table: -{rows} <= "
                               f"padding_idx < {rows}", padding_idx)
        padding_idx = padding_idx + rows if padding_idx < 0 else padding_idx
    dtype = check.one_of(b, "dtype", str(dtype), ("float32", "float64"))
    table = parameter(ParamAttr.of(param_attr, b, "param_attr"), [rows, width], dtype,
                      unique_name.generate("embedding") + ".w_0", initializer=XavierUniform())
    return first_output(op.lookup_table_v2(
        Ids=input, W=table, padding_idx=padding_idx,
        is_sparse=check.boolean(b, "is_sparse", is_sparse),
        is_distributed=check.boolean(b, "is_distributed", is_distributed)))
