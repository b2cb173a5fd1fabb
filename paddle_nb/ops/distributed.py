"""The ops of a transpiled program (Fluid's DistributeTranspiler, paddle_nb/distributed/).

A trainer program ends with ``split_byref`` (a gradient cut into the row blocks its
parameter servers hold), ``send`` (the gradient blocks), ``send_barrier`` ("this trainer
has sent everything for the round"), ``recv`` (the updated parameter blocks) and
``fetch_barrier`` ("this trainer has what it needs"); a parameter-server program is one
``listen_and_serv`` op owning one optimize block per parameter block.

The four communication ops reach the servers through ``ctx.executor.transport`` (an
``Executor(transport=...)``; the interface is ``paddle_nb.distributed.transport.Transport``).
An executor without one refuses them with an ExecutionError saying how to run a trainer
program. Their kernels only move host arrays, so each is registered for both places (on
CUDA a sent value is copied to the host, a received one moves to the device on first read).
"""
from __future__ import annotations

import numpy as np

from ..core import attrs as A
from ..core import dtypes
from ..core.errors import ExecutionError
from ..core.registry import NO_GRADIENT, Attr, OpDef, Slot, register
from ..core.symbol_table import var_dtype, var_shape
from . import arrays


def _non_negative(value):
    return None if value >= 0 else "must be >= 0"


def _at_least_one(value):
    return None if value >= 1 else "must be >= 1"


TRAINER_ID = Attr("trainer_id", A.INT, 0, "the trainer this program runs as", check=_non_negative)
EPMAP = Attr("epmap", A.STRINGS, [], "the endpoint (\"host:port\") of each variable")
ENDPOINTS = Attr("endpoints", A.STRINGS, [], "the parameter servers (\"host:port\")")
# the slots an op has only so that a program can order it after (X) or before (Out) others
DUMMY_X = Slot("X", "a dummy, for dependencies", dispensable=True)
DUMMY_OUT = Slot("Out", "a dummy, for dependencies", dispensable=True)


def _transport(ctx):
    transport = getattr(ctx.executor, "transport", None)
    if transport is None:
        raise ExecutionError(
            f"op {ctx.op.op.type} talks to parameter servers, and this Executor has no "
            f"transport: run the trainer program through pd.distributed (a LocalCluster, "
            f"whose trainer_executor(i) gives an Executor with one, or the Ray runtime), or "
            f"make the Executor with transport=")
    return transport


def _by_endpoint(endpoints, items) -> dict[str, list]:
    """``items`` grouped by their endpoint, endpoints in first-use order."""
    groups: dict[str, list] = {}
    for ep, item in zip(endpoints, items):
        groups.setdefault(ep, []).append(item)
    return groups


def _remote_names(names_attr: str, slot: str) -> Attr:
    """send_varnames / recv_varnames: the name each of ``slot``'s variables has on its
    parameter server."""
    return Attr(names_attr, A.STRINGS, [], f"the name each {slot} has on its parameter "
                f"server (empty: {slot}'s names)")


def _check_epmap(ctx, slot: str, names_attr: str) -> None:
    """One endpoint per variable of ``slot``; the remote names, if given, one per variable."""
    n = len(ctx.input_names(slot) if slot == "X" else ctx.output_names(slot))
    epmap, remote = list(ctx.attr("epmap") or []), list(ctx.attr(names_attr) or [])
    if len(epmap) != n:
        ctx.fail("epmap must name one endpoint per variable", slot=slot,
                 expected=f"{n} endpoints", given=f"epmap={epmap}")
    if remote and len(remote) != n:
        ctx.fail(f"{names_attr} must name one remote variable per variable (or be empty: "
                 f"the same names)", slot=slot, expected=f"{n} names",
                 given=f"{names_attr}={remote}")


# --- send / send_barrier -------------------------------------------------------------------
def _send(ctx):
    transport = _transport(ctx)
    names = ctx.input_names("X")
    remote = list(ctx.attr("send_varnames") or []) or names
    values = [arrays.host(v) for v in ctx.inputs("X")]
    trainer = ctx.attr("trainer_id")
    for ep, items in _by_endpoint(ctx.attr("epmap"), zip(remote, values)).items():
        transport.send(ep, trainer, dict(items))


def _barrier_op(op_type: str, comment: str) -> OpDef:
    """A barrier op (send_barrier, fetch_barrier: they differ only in the call): no data,
    and a kernel calling ``transport.<op_type>(endpoint, trainer_id)`` for each of the op's
    endpoints."""
    def kernel(ctx):
        transport = _transport(ctx)
        for ep in ctx.attr("endpoints"):
            getattr(transport, op_type)(ep, ctx.attr("trainer_id"))
    return OpDef(op_type, [DUMMY_X], [DUMMY_OUT], [ENDPOINTS, TRAINER_ID], comment=comment,
                 kernels={"cpu": kernel, "cuda": kernel}, grad=NO_GRADIENT, remote=True)


def _transfer_op(op_type: str, data: Slot, names_attr: str, kernel, comment: str,
                 more_attrs=()) -> OpDef:
    """send (``data`` is its X) or recv (its Out): each variable of ``data`` to or from
    the parameter server ``epmap`` names for it, under the name ``names_attr`` gives."""
    slot = data.name
    inputs, outputs = ([data], [DUMMY_OUT]) if slot == "X" else ([DUMMY_X], [data])
    return OpDef(op_type, inputs, outputs,
                 [EPMAP, _remote_names(names_attr, slot), TRAINER_ID, *more_attrs],
                 comment=comment, infer_shape=lambda ctx: _check_epmap(ctx, slot, names_attr),
                 kernels={"cpu": kernel, "cuda": kernel}, grad=NO_GRADIENT, remote=True)


register(_transfer_op(
    "send", Slot("X", "the variables to send (gradient blocks)", duplicable=True),
    "send_varnames", _send,
    "Send each X to the parameter server epmap names for it, as send_varnames "
    "(transport.send, one call per endpoint).",
    [Attr("sync_mode", A.BOOLEAN, True, "synchronous training (a round per step)")]))

register(_barrier_op(
    "send_barrier", "Tell every endpoint this trainer has sent all it sends this round; a "
                    "server runs its optimize blocks when every trainer has."))


# --- recv / fetch_barrier ------------------------------------------------------------------
def _received(ctx, i: int, out: str, remote: str, ep: str, value):
    """``value`` as received for Out[i], checked against the variable's declaration."""
    if not isinstance(value, np.ndarray):
        raise ExecutionError(f"{ep} gave {type(value).__name__} for {remote!r}, not "
                             f"an array")
    desc = ctx.op.op.block.lookup(out)
    if desc is None:
        return value
    shape, code = var_shape(desc), var_dtype(desc)
    want = dtypes.to_numpy(code) if code is not None else value.dtype
    fits = shape is None or (len(shape) == value.ndim and all(
        d < 0 or d == g for d, g in zip(shape, value.shape)))
    if not fits or value.dtype != want:
        raise ExecutionError(
            f"variable {out!r} (Out[{i}], {remote!r} from {ep}) does not take what "
            f"was received\n  expected: {np.dtype(want).name}{list(shape or [])}\n"
            f"  given:    {value.dtype.name}{list(value.shape)}")
    return value


def _recv(ctx):
    transport = _transport(ctx)
    outs = ctx.output_names("Out")
    remote = list(ctx.attr("recv_varnames") or []) or outs
    trainer = ctx.attr("trainer_id")
    for ep, items in _by_endpoint(ctx.attr("epmap"), enumerate(zip(outs, remote))).items():
        got = transport.recv(ep, trainer, [r for _, (_, r) in items])
        for i, (out, r) in items:
            if r not in got:
                raise ExecutionError(f"{ep} sent no {r!r} (for Out[{i}] {out!r}); it "
                                     f"sent {sorted(got)}")
            ctx.set_output("Out", _received(ctx, i, out, r, ep, got[r]), i)


register(_transfer_op(
    "recv", Slot("Out", "the variables received (parameter blocks)", duplicable=True),
    "recv_varnames", _recv,
    "Receive each Out from the parameter server epmap names for it (transport.recv, one "
    "call per endpoint: it waits for the round to finish); each value must fit Out's "
    "declared shape and dtype."))

register(_barrier_op(
    "fetch_barrier", "Tell every endpoint this trainer has received what it needs (the next "
                     "round may begin)."))


# --- split_byref -----------------------------------------------------------------------------
def _split_byref_infer(ctx):
    xs = ctx.require_rank("X", 1)
    n_out = len(ctx.output_names("Out"))
    num, sections, rows = ctx.attr("num"), list(ctx.attr("sections") or []), xs[0]
    if sections:
        if any(s < 0 for s in sections) or rows >= 0 and sum(sections) != rows:
            ctx.fail(f"sections must cut the {rows} rows of X into row counts >= 0 that add "
                     f"up to them", slot="X", given=f"sections={sections}")
        if len(sections) != n_out:
            ctx.fail("one output per section", slot="Out",
                     expected=f"{len(sections)} outputs", given=f"{n_out}")
    else:
        if num < 0 or num and num != n_out or n_out == 0:
            ctx.fail("num must equal the number of outputs (or be 0: one block per output)",
                     slot="Out", expected=f"num={n_out} or 0", given=f"num={num}, "
                                                                   f"{n_out} outputs")
        if rows >= 0 and rows % n_out:
            ctx.fail(f"the {rows} rows of X do not split into {n_out} equal blocks", slot="X")
        sections = [rows // n_out if rows >= 0 else -1] * n_out
    for i, s in enumerate(sections):
        ctx.set_output("Out", [s] + list(xs[1:]), ctx.dtype("X"), i=i)


def _split_byref(ctx):
    x = ctx.input("X")
    n = len(ctx.output_names("Out"))
    sections = list(ctx.attr("sections") or []) or [x.shape[0] // n] * n
    ctx.set_outputs("Out", arrays.split(x, sections, 0))


register(OpDef(
    "split_byref", [Slot("X", "the tensor (a gradient)")],
    [Slot("Out", "the row blocks", duplicable=True)],
    [Attr("sections", A.INTS, [], "the rows of each block (empty: num equal blocks)"),
     Attr("num", A.INT, 0, "split into num equal blocks (when sections is empty; 0: one "
          "per output)")],
    comment="Out = X cut along dim 0 into blocks of sections rows (Fluid's split_byref "
            "shares X's memory; here each block is a copy).",
    infer_shape=_split_byref_infer, kernels={"cpu": _split_byref, "cuda": _split_byref},
    grad=NO_GRADIENT))


# --- listen_and_serv -----------------------------------------------------------------------
def _listen_and_serv_infer(ctx):
    blocks = list(ctx.attr("optimize_blocks") or [])
    for entry in ctx.attr("grad_to_block_id") or []:
        name, sep, idx = entry.rpartition(":")
        if not sep or not name or not idx.lstrip("-").isdigit() or int(idx) not in blocks:
            ctx.fail("grad_to_block_id entries are \"gradient:block index\", the index one "
                     "of optimize_blocks", expected=f"a block of {blocks}", given=repr(entry))


def _listen_and_serv(ctx):
    """One round: each optimize block, in order, in a kid of the server's run scope (the
    parameter blocks it updates are persistable: they live in the server's own scope)."""
    for k, idx in enumerate(ctx.attr("optimize_blocks")):
        kid = ctx.new_scope(f"optimize {k}")
        try:
            yield from ctx.run_block(idx, kid)
        finally:
            ctx.scope.delete_scope(kid)


register(OpDef(
    "listen_and_serv", [Slot("X", "the variables received this round (each trainer's "
                              "gradient blocks)", duplicable=True, dispensable=True)],
    [],
    [Attr("endpoint", A.STRING, "", "this server's \"host:port\""),
     Attr("Fanin", A.INT, 1, "how many trainers send to it", check=_at_least_one),
     Attr("optimize_blocks", A.BLOCKS, [], "one block per parameter block: average the "
          "trainers' gradient blocks, then update"),
     Attr("grad_to_block_id", A.STRINGS, [], "\"gradient block:block index\" for each "
          "optimize block"),
     Attr("sync_mode", A.BOOLEAN, True, "synchronous training (a round per step)"),
     Attr("pserver_id", A.INT, 0, "this server's number", check=_non_negative)],
    comment="A parameter server's program. Fluid's listen_and_serv loops forever serving "
            "RPCs (gradients in, parameters out) and runs the optimize blocks when every "
            "trainer's send_barrier has come; here one run of the program is one round: "
            "its kernel runs each optimize block once, in the server's scope (parameters "
            "persist), and the runtime (paddle_nb.distributed) receives, counts barriers "
            "and runs the program.",
    infer_shape=_listen_and_serv_infer,
    kernels={"cpu": _listen_and_serv, "cuda": _listen_and_serv}, grad=NO_GRADIENT))
