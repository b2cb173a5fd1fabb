"""assert: stop the run with a clear error when a bool condition is false (the slots and
attribute ``paddle.static.nn.control_flow.Assert`` saves in Paddle 2.6.2, which
``F.gaussian_nll_loss`` uses to refuse a negative variance).

``Cond`` is a one-element bool tensor; ``Data`` the tensors to show when it is false, each
by its first ``summarize`` values (-1: all of them). The op has no outputs, and no
gradient. Both places run the same kernel: the one element of Cond is read on the host
(a device tensor is copied back for that, as Paddle's assert kernel does too).
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core.errors import ExecutionError
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..kernels.cpu.assertion import condition_holds
from ..kernels.lowered import Call
from . import arrays

COND = Slot("Cond", "the condition, one bool element")
DATA = Slot("Data", "tensors shown when Cond is false", duplicable=True, dispensable=True)


def _infer(ctx):
    ctx.require_dtype("Cond", "bool")
    ctx.require_one_element("Cond")


def _shown(name: str, value, summarize: int) -> str:
    host = arrays.host(value).reshape(-1)
    part = host if summarize < 0 else host[:summarize]
    more = "" if part.size == host.size else f" ... ({host.size} values)"
    return f"  {name} {list(np.shape(value))} {host.dtype}: {part.tolist()}{more}"


def _assert(ctx):
    cond = arrays.host(ctx.input("Cond"))
    if cond.size != 1:
        raise ExecutionError(f"assert: input slot Cond: expected one bool element, given "
                             f"{list(cond.shape)}")
    if bool(cond.reshape(-1)[0]):
        return
    names = ctx.op.op.input("Data") if ctx.has_input("Data") else []
    values = ctx.inputs("Data") if names else []
    lines = [_shown(n, v, int(ctx.attr("summarize"))) for n, v in zip(names, values)]
    raise ExecutionError(f"assert: the condition {ctx.op.op.input('Cond')[0]} is false"
                         + ("; Data:\n" + "\n".join(lines) if lines else ""))


register(OpDef("assert", [COND, DATA], [],
               [Attr("summarize", A.LONG, -1, "how many values of each Data tensor an error "
                                               "shows (-1: all)")],
               comment="Raise an error showing Data when Cond is false.",
               infer_shape=_infer, kernels={"cpu": _assert, "cuda": _assert},
               # compiled: the check alone; a false condition hands the run to the
               # interpreter, whose error shows Data
               lowered=lambda info: Call(condition_holds, ("Cond",), ()),
               grad=NO_GRADIENT))
