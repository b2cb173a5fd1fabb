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
from ..core.validate import check_list_index


def _feed(ctx):
    col = ctx.attr("col")
    items = ctx.output_names("Out")
    feed_list = ctx.scope.find_var(ctx.input_names("X")[0])
    values = feed_list.get() if feed_list is not None and feed_list.is_initialized() else []
    if col >= len(values):
        raise ExecutionError(f"no value was fed for {items[0]!r} (feed column {col}); pass "
                             f"feed={{{items[0]!r}: array}}")
    ctx.set_output("Out", values[col])


def _fetch(ctx):
    col = ctx.attr("col")
    var = ctx.output_var("Out")
    fetched = var.get_mutable("fetch_list")
    if col < 0:
        raise ExecutionError(f"fetch: column col={col} is negative")
    check_list_index(col, "fetch")
    if len(fetched) <= col:
        fetched.extend([None] * (col + 1 - len(fetched)))
    fetched[col] = np.array(ctx.input("X"), copy=True)


register(OpDef(
    "feed", [Slot("X", "the feed list variable (FEED_MINIBATCH)")],
    [Slot("Out", "the variable that receives column col")],
    [Attr("col", A.INT, 0, "which fed value to take")],
    comment="Copy one fed value into a variable.",
    kernels={"cpu": _feed}, grad=NO_GRADIENT))

register(OpDef(
    "fetch", [Slot("X", "the variable to fetch")],
    [Slot("Out", "the fetch list variable (FETCH_LIST)")],
    [Attr("col", A.INT, 0, "which column of the fetch list to fill")],
    comment="Copy a variable into the fetch list.",
    kernels={"cpu": _fetch}, grad=NO_GRADIENT))
