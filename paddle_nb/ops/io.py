"""feed and fetch: how a saved program names its inputs and outputs.

The executor puts fed values straight into the scope (and skips feed ops whose outputs
are fed), so these kernels only matter for programs that carry them, like Paddle's
inference models. ``feed`` copies column ``col`` of the feed list into Out; ``fetch``
copies X into column ``col`` of the fetch list.
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.errors import ExecutionError
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core.limits import MAX_LIST_LENGTH, check_list_index
from ..kernels.cuda import device


def _fed_value(ctx):
    col = ctx.attr("col")
    items = ctx.output_names("Out")
    feed_list = ctx.scope.find_var(ctx.input_names("X")[0])
    values = feed_list.get() if feed_list is not None and feed_list.is_initialized() else []
    if col >= len(values):
        raise ExecutionError(f"no value was fed for {items[0]!r} (feed column {col}); pass "
                             f"feed={{{items[0]!r}: array}}")
    return values[col]


def _feed(ctx):
    ctx.set_output("Out", _fed_value(ctx))


def _cuda_feed(ctx):
    """The feed list holds host values: Out is a device copy (a feed is one of the two
    places where a CUDA run copies between host and device)."""
    ctx.set_output("Out", device.to_device(_fed_value(ctx)))


def _fetch_list(ctx) -> tuple[list, int]:
    col = ctx.attr("col")
    var = ctx.output_var("Out")
    fetched = var.get_mutable("fetch_list")
    if col < 0:
        raise ExecutionError(f"fetch: column col={col} is negative")
    check_list_index(col, "fetch")
    if len(fetched) <= col:
        fetched.extend([None] * (col + 1 - len(fetched)))
    return fetched, col


def _fetch(ctx):
    fetched, col = _fetch_list(ctx)
    fetched[col] = np.array(ctx.input("X"), copy=True)


def _cuda_fetch(ctx):
    """Fetch is the other copy: the device array comes back as a new host array."""
    fetched, col = _fetch_list(ctx)
    x = ctx.input("X")
    fetched[col] = x.copy_to_host() if device.is_device_array(x) else np.array(x, copy=True)


def _column_check(col):
    if isinstance(col, int) and not 0 <= col < MAX_LIST_LENGTH:
        return (f"expected a column 0..{MAX_LIST_LENGTH - 1} "
                f"(paddle_nb.core.limits.MAX_LIST_LENGTH)")
    return None


def _copy_op(op_type: str, x: str, out: str, col: str, comment: str, cpu, cuda) -> OpDef:
    """feed or fetch: one value copied between a variable and column ``col`` of the feed
    (fetch) list; no gradient."""
    return OpDef(op_type, [Slot("X", x)], [Slot("Out", out)],
                 [Attr("col", A.INT, 0, col, check=_column_check)], comment=comment,
                 kernels={"cpu": cpu, "cuda": cuda}, grad=NO_GRADIENT)


register(_copy_op("feed", "the feed list variable (FEED_MINIBATCH)",
                  "the variable that receives column col", "which fed value to take",
                  "Copy one fed value into a variable.", _feed, _cuda_feed))
register(_copy_op("fetch", "the variable to fetch", "the fetch list variable (FETCH_LIST)",
                  "which column of the fetch list to fill",
                  "Copy a variable into the fetch list.", _fetch, _cuda_fetch))
