"""Fluid's DistributeTranspiler: one training program rewritten for parameter servers.

    t = pd.distributed.DistributeTranspiler()
    t.transpile(trainer_id, program=main, pservers="127.0.0.1:6170,127.0.0.1:6171",
                trainers=2, startup_program=startup)
    trainer = t.get_trainer_program()
    ps = t.get_pserver_program("127.0.0.1:6170")
    ps_startup = t.get_startup_program("127.0.0.1:6170", ps)

The rewrite (on copies: the user's programs are never changed):

- **Blocks.** Each parameter an optimize-role op updates (its ``Param`` slot) is cut along
  dim 0 into blocks when ``config.slice_var_up`` and it is big enough (Fluid's
  slice_variable: at most one block per pserver, each of at least ``min_block_size``
  elements, ``ceil(rows / blocks)`` rows per block); blocks are named ``w.block0``,
  ``w.block1``, and a parameter not cut keeps its name. The blocks (of all parameters, in
  the order of their update ops) go to the pservers round-robin.
- **The trainer program**: the forward and backward ops; then ``split_byref`` of each cut
  gradient into its blocks, one ``send`` of every gradient block, one ``send_barrier``,
  one ``recv`` of every parameter block, one ``fetch_barrier``, and a ``concat`` of each
  cut parameter's blocks back into it.
- **A pserver program**: its parameter blocks, their optimizer accumulators (cut like the
  parameter when they have its shape, copied per block otherwise: a beta power), the
  persistable inputs the updates read (the learning rate), each trainer's received
  gradient blocks (``w@GRAD.block0.trainer_1``: fed by the server each round), and one
  ``listen_and_serv`` op owning one optimize block per parameter block: ``sum`` of the
  trainers' gradient blocks (``assign`` for one trainer), ``scale`` by 1/trainers, the
  elementwise gradient ops of the optimizer (value clipping, weight decay), then the
  update op, its slots renamed to the block's variables.

Only updates that are elementwise per parameter are transpiled, since a block is updated
without the rest of its parameter: the optimizers in ``SUPPORTED_UPDATES`` with the
gradient ops in ``ELEMENTWISE_GRADIENT_OPS``. Anything else in the optimize role (clipping
by a norm, LAMB's trust ratio, a learning-rate scheduler) is refused by ``transpile``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from ..core import dtypes
from ..core.backward import OP_ROLE_OPTIMIZE, op_role
from ..core.errors import BuildError
from ..core.framework_pb2 import VarType
from ..core.program import Program, default_main_program, default_startup_program
from .transport import received_name

# Fluid's op roles of the ops the rewrite adds (RPC: send, recv and the barriers; Dist:
# split_byref, concat), with the optimize bit, so that clone(for_test=True) drops them too
OP_ROLE_RPC, OP_ROLE_DIST = 4, 8

# update ops whose update of a parameter is elementwise (a block updates on its own)
SUPPORTED_UPDATES = ("sgd", "momentum", "adam", "adamw", "adagrad", "rmsprop")
# elementwise ops an optimizer puts before its update: value clipping, weight decay
ELEMENTWISE_GRADIENT_OPS = {"clip": "ClipGradByValue", "scale": "L1Decay/L2Decay",
                            "sum": "L1Decay/L2Decay", "sign": "L1Decay"}
# why some optimize-role ops are refused, for the error
_WHY = {
    "squared_l2_norm": "ClipGradByGlobalNorm needs the norm of every whole gradient",
    "clip_by_norm": "ClipGradByNorm needs the norm of each whole gradient",
    "lamb": "LAMB scales each parameter's step by the norm of the whole parameter",
    "increment": "a learning-rate schedule counting steps in the program",
}


# startup ops that make a tensor of any shape from their attributes alone
_SHAPED_INITIALIZERS = frozenset({"fill_constant", "uniform_random", "gaussian_random",
                                  "truncated_gaussian_random"})


@dataclass
class DistributeTranspilerConfig:
    """Fluid's config: ``slice_var_up`` cuts big parameters into blocks spread over the
    pservers; ``min_block_size`` is the fewest elements a block may have."""
    slice_var_up: bool = True
    min_block_size: int = 8192


@dataclass(frozen=True)
class VarBlock:
    """Where a variable of the user's program lives on the pservers: ``name`` on
    ``endpoint`` holds rows ``rows`` = (start, stop) of ``origin``, or all of it (a copy)
    when ``rows`` is None."""
    origin: str
    name: str
    endpoint: str
    rows: tuple[int, int] | None


@dataclass
class _Update:
    """One parameter's update in the original program."""
    param: str
    grad: str                      # the gradient the backward pass leaves (sent)
    op: object                     # the update op
    chain: list                    # the elementwise gradient ops before it
    shape: list
    dtype: str
    rows: list = field(default_factory=list)     # (start, stop) of each block
    endpoints: list = field(default_factory=list)
    state: list = field(default_factory=list)    # accumulators the update writes
    shared: list = field(default_factory=list)   # persistables it only reads (the lr)
    temps: list = field(default_factory=list)    # non-persistables the chain makes

    @property
    def split(self) -> bool:
        return len(self.rows) > 1

    def block_name(self, name: str, k: int) -> str:
        return f"{name}.block{k}" if self.split else name


def _refuse(op, index: int, why: str) -> BuildError:
    supported = (f"supported: the update ops {', '.join(SUPPORTED_UPDATES)}, after the "
                 f"elementwise gradient ops {', '.join(ELEMENTWISE_GRADIENT_OPS)} "
                 f"(ClipGradByValue, L1Decay, L2Decay)")
    return BuildError(f"DistributeTranspiler: cannot transpile op {op.type} (block 0 > op "
                      f"{index}, in the optimize role): {why}; {supported}")


def _endpoints(pservers) -> list[str]:
    items = pservers.split(",") if isinstance(pservers, str) else pservers
    if not isinstance(items, (list, tuple)):
        raise BuildError(f"transpile: pservers is a string \"host:port,host:port\" or a list "
                         f"of endpoints, got {pservers!r}")
    eps = [str(e).strip() for e in items]
    if not eps or not all(eps) or len(set(eps)) != len(eps):
        raise BuildError(f"transpile: pservers must name one or more distinct endpoints, got "
                         f"{pservers!r}")
    return eps


def slice_rows(shape, pservers: int, config: DistributeTranspilerConfig) -> list:
    """(start, stop) rows of each block of a parameter of ``shape`` (Fluid's
    slice_variable, by rows): one block unless slicing is on and it is big enough."""
    rows = shape[0] if shape else 1
    numel = math.prod(shape)
    if not config.slice_var_up or len(shape) == 0 or rows < 2:
        return [(0, rows)]
    count = min(pservers, max(1, numel // config.min_block_size), rows)
    per = math.ceil(rows / count)
    return [(s, min(rows, s + per)) for s in range(0, rows, per)]


class DistributeTranspiler:
    def __init__(self, config: DistributeTranspilerConfig | None = None):
        if config is not None and not isinstance(config, DistributeTranspilerConfig):
            raise BuildError(f"DistributeTranspiler: config is a DistributeTranspilerConfig "
                             f"or None, got {config!r}")
        self.config = config or DistributeTranspilerConfig()
        if not isinstance(self.config.min_block_size, int) or self.config.min_block_size < 1:
            raise BuildError(f"DistributeTranspilerConfig: min_block_size must be an int >= 1, "
                             f"got {self.config.min_block_size!r}")
        self._updates: list[_Update] | None = None

    # --- the analysis --------------------------------------------------------------------
    def transpile(self, trainer_id: int, program: Program | None = None,
                  pservers="127.0.0.1:6174", trainers: int = 1, sync_mode: bool = True,
                  startup_program: Program | None = None, current_endpoint: str = ""):
        """Read ``program`` (default: the default main program) and plan the rewrite for
        ``trainers`` trainers and the ``pservers`` endpoints. Nothing is changed."""
        if not isinstance(trainers, int) or isinstance(trainers, bool) or trainers < 1:
            raise BuildError(f"transpile: trainers must be an int >= 1, got {trainers!r}")
        if not isinstance(trainer_id, int) or not 0 <= trainer_id < trainers:
            raise BuildError(f"transpile: trainer_id must be in [0, {trainers - 1}], got "
                             f"{trainer_id!r}")
        if not sync_mode:
            raise BuildError("transpile: only synchronous training (sync_mode=True) is built "
                             "here: a round per step, every trainer's gradients averaged")
        program = program if program is not None else default_main_program()
        startup = startup_program if startup_program is not None \
            else default_startup_program()
        for name, p in (("program", program), ("startup_program", startup)):
            if not isinstance(p, Program):
                raise BuildError(f"transpile: {name} must be a Program, got {p!r}")
        self.trainer_id, self.trainers = trainer_id, trainers
        self.endpoints = _endpoints(pservers)
        self.sync_mode = True
        self._main, self._startup = program.clone(), startup.clone()
        self._updates = self._analyse(self._main)
        self._assign_blocks()
        return self

    def _analyse(self, main: Program) -> list[_Update]:
        if main.lr_scheduler is not None:
            raise BuildError("DistributeTranspiler: this program's learning rate comes from a "
                             "scheduler (pd.optimizer.lr) that the executor sets before each "
                             "run; the pserver programs would not follow it. Use a constant "
                             "learning rate (or set the pservers' learning-rate variable "
                             "yourself)")
        gb = main.global_block()
        ops = gb.ops
        updates, helpers = [], []
        for i, op in enumerate(ops):
            role = op_role(op)
            if role & 16:                                   # Fluid's LRSched role
                raise _refuse(op, i, "it schedules the learning rate inside the program")
            if not role & OP_ROLE_OPTIMIZE:
                continue
            if op.type in SUPPORTED_UPDATES:
                updates.append(i)
            elif op.type in ELEMENTWISE_GRADIENT_OPS:
                helpers.append(i)
            else:
                why = _WHY.get(op.type) or (
                    f"{op.type} updates a parameter in a way not known to be elementwise"
                    if op.input("Param") else f"{op.type} is not an elementwise gradient op")
                raise _refuse(op, i, why)
        if not updates:
            raise BuildError("DistributeTranspiler: the program has no update ops (optimize "
                             "role): call an optimizer's minimize(loss) before transpile")
        claimed: dict[int, str] = {}
        result = []
        for u in updates:
            op = ops[u]
            param = op.input("Param")[0]
            needed, chain = set(op.input("Grad")), []
            for j in reversed([h for h in helpers if h < u and h not in claimed]):
                if needed & set(ops[j].output_arg_names):
                    claimed[j] = param
                    chain.insert(0, j)
                    needed |= set(ops[j].input_arg_names) - {param}
            result.append(self._update(gb, ops, u, param, chain))
        loose = [h for h in helpers if h not in claimed]
        if loose:
            raise _refuse(ops[loose[0]], loose[0], "it is not part of one parameter's update")
        return result

    def _update(self, gb, ops, u, param, chain) -> _Update:
        op = ops[u]
        var = gb.var(param)
        shape = list(var.shape)
        if any(d < 0 for d in shape):
            raise _refuse(op, u, f"parameter {param!r} has an unknown dim {shape}")
        written, outside, state, shared, temps = set(), [], [], [], []
        for j in chain + [u]:
            o = ops[j]
            for n in o.input_arg_names:
                d = gb.lookup(n)
                if n in written or n == param or d is None:
                    continue
                if d.persistable:
                    target = state if n in ops[u].output_arg_names else shared
                    if n not in state and n not in shared:
                        target.append(n)
                elif n not in outside:
                    outside.append(n)
            for n in o.output_arg_names:
                d = gb.lookup(n)
                if n not in written and n != param and d is not None and \
                        not d.persistable and n not in outside and n not in temps:
                    temps.append(n)
                written.add(n)
        if len(outside) != 1:
            raise _refuse(op, u, f"the update of {param!r} reads {len(outside)} computed "
                          f"variables ({outside}), not one gradient")
        grad = outside[0]
        if gb.lookup(grad).type.type == VarType.SELECTED_ROWS:
            raise _refuse(op, u, f"the gradient of {param!r} is a SelectedRows (a sparse "
                          f"embedding): sparse updates are not transpiled; build the "
                          f"embedding with is_sparse=False")
        return _Update(param, grad, op, [ops[j] for j in chain], shape, var.dtype,
                       state=state, shared=shared, temps=temps)

    def _assign_blocks(self) -> None:
        """Cut each parameter into blocks and give the blocks to the pservers round-robin
        (Fluid's RoundRobin dispatcher), in the order of the update ops."""
        turn = 0
        for up in self._updates:
            up.rows = slice_rows(up.shape, len(self.endpoints), self.config)
            up.endpoints = []
            for _ in up.rows:
                up.endpoints.append(self.endpoints[turn % len(self.endpoints)])
                turn += 1

    def _ready(self) -> list[_Update]:
        if self._updates is None:
            raise BuildError("DistributeTranspiler: call transpile(...) first")
        return self._updates

    def _block_shape(self, up: _Update, name: str, k: int) -> list:
        """The shape of block ``k`` of ``name`` (the parameter or one of its variables)."""
        shape = list(self._main.global_block().var(name).shape)
        start, stop = up.rows[k]
        return [stop - start] + shape[1:] if shape == up.shape and up.split else shape

    # --- what the runtime needs ----------------------------------------------------------
    def param_blocks(self) -> dict[str, list[VarBlock]]:
        """For each parameter its blocks: name on the pserver, endpoint, rows."""
        return {up.param: [VarBlock(up.param, up.block_name(up.param, k), ep,
                                    up.rows[k] if up.split else None)
                           for k, ep in enumerate(up.endpoints)] for up in self._ready()}

    def accumulator_blocks(self) -> dict[str, list[VarBlock]]:
        """For each optimizer accumulator (a moment, a beta power) its blocks: cut like
        its parameter when it has the parameter's shape, else a copy per block."""
        out = {}
        for up in self._ready():
            for acc in up.state:
                sliced = self._block_shape(up, acc, 0) != list(
                    self._main.global_block().var(acc).shape)
                out[acc] = [VarBlock(acc, up.block_name(acc, k), ep,
                                     up.rows[k] if sliced else None)
                            for k, ep in enumerate(up.endpoints)]
        return out

    def pserver_vars(self, endpoint: str) -> list[VarBlock]:
        """Every persistable variable of ``endpoint``'s program and where its value comes
        from: parameter blocks, accumulator blocks, shared inputs (the learning rate)."""
        self._check_endpoint(endpoint)
        out, seen = [], set()
        accs = self.accumulator_blocks()
        for up in self._ready():
            for k, ep in enumerate(up.endpoints):
                if ep != endpoint:
                    continue
                items = [self.param_blocks()[up.param][k]] + [accs[a][k] for a in up.state]
                items += [VarBlock(s, s, ep, None) for s in up.shared]
                for item in items:
                    if item.name not in seen:
                        seen.add(item.name)
                        out.append(item)
        return out

    def _check_endpoint(self, endpoint: str) -> None:
        self._ready()
        if endpoint not in self.endpoints:
            raise BuildError(f"DistributeTranspiler: {endpoint!r} is not one of the pservers "
                             f"{self.endpoints}")

    # --- the trainer program ---------------------------------------------------------------
    def get_trainer_program(self, wait_port: bool = True) -> Program:
        """The trainer's program: forward and backward, then the gradients out and the
        parameters in (a new Program each call)."""
        ups = self._ready()
        prog = self._main.clone()
        gb = prog.global_block()
        removed, kept_names = set(), set()
        for i in range(len(gb.ops) - 1, -1, -1):
            op = gb.ops[i]
            if op_role(op) & OP_ROLE_OPTIMIZE:
                removed.update(op.input_arg_names + op.output_arg_names)
                gb.table.remove_op(i)
        for b in prog.blocks:
            for op in b.ops:
                kept_names.update(op.input_arg_names + op.output_arg_names)
        for name in sorted(removed - kept_names):
            d = gb.table.vars.get(name)
            if d is not None and not d.is_parameter:
                gb.table.remove_var(name)
        rpc = {"op_role": OP_ROLE_OPTIMIZE | OP_ROLE_RPC}
        dist = {"op_role": OP_ROLE_OPTIMIZE | OP_ROLE_DIST}
        send_names, send_eps, recv_names, recv_eps = [], [], [], []
        for up in ups:
            grads = [up.block_name(up.grad, k) for k in range(len(up.rows))]
            if up.split:
                for k, g in enumerate(grads):
                    gb.create_var(g, self._block_shape(up, up.param, k), up.dtype,
                                  stop_gradient=True)
                gb.append_op("split_byref", {"X": [up.grad]}, {"Out": grads},
                             {"sections": [b - a for a, b in up.rows], **dist})
            send_names += grads
            send_eps += up.endpoints
        for up in ups:
            for k in range(len(up.rows)):
                name = up.block_name(up.param, k)
                if up.split:
                    gb.create_var(name, self._block_shape(up, up.param, k), up.dtype,
                                  stop_gradient=True)
                recv_names.append(name)
            recv_eps += up.endpoints
        tid = {"trainer_id": self.trainer_id}
        gb.append_op("send", {"X": send_names}, {},
                     {"epmap": send_eps, "send_varnames": send_names, "sync_mode": True,
                      **tid, **rpc})
        gb.append_op("send_barrier", {}, {}, {"endpoints": self.endpoints, **tid, **rpc})
        gb.append_op("recv", {}, {"Out": recv_names},
                     {"epmap": recv_eps, "recv_varnames": recv_names, **tid, **rpc})
        gb.append_op("fetch_barrier", {}, {}, {"endpoints": self.endpoints, **tid, **rpc})
        for up in ups:
            if up.split:
                gb.append_op("concat", {"X": [up.block_name(up.param, k)
                                              for k in range(len(up.rows))]},
                             {"Out": [up.param]}, {"axis": 0, **dist})
        return prog

    # --- a pserver's programs --------------------------------------------------------------
    def get_pserver_program(self, endpoint: str) -> Program:
        """The program of the pserver at ``endpoint``: its variables and one
        listen_and_serv op with an optimize block per parameter block it holds."""
        self._check_endpoint(endpoint)
        main_gb = self._main.global_block()
        prog = Program()
        prog.random_seed = self._main.random_seed
        gb = prog.global_block()
        here = [(up, k) for up in self._ready() for k, ep in enumerate(up.endpoints)
                if ep == endpoint]
        # declarations: parameter blocks, accumulators, shared inputs, received gradients
        for up, k in here:
            gb.create_parameter(up.block_name(up.param, k),
                                self._block_shape(up, up.param, k), up.dtype)
            for acc in up.state:
                gb.create_var(up.block_name(acc, k), self._block_shape(up, acc, k),
                              main_gb.var(acc).dtype, persistable=True)
            for s in up.shared:
                if not gb.has_var(s):
                    v = main_gb.var(s)
                    gb.create_var(s, list(v.shape), v.dtype, persistable=True)
        received = []
        for up, k in here:
            for t in range(self.trainers):
                name = received_name(up.block_name(up.grad, k), t)
                gb.create_var(name, self._block_shape(up, up.param, k), up.dtype,
                              stop_gradient=True)
                received.append(name)
        blocks, grad_to_block = [], []
        for up, k in here:
            blocks.append(self._optimize_block(prog, up, k))
            grad_to_block.append(f"{up.block_name(up.grad, k)}:{blocks[-1]}")
        gb.append_op("listen_and_serv", {"X": received}, {},
                     {"endpoint": endpoint, "Fanin": self.trainers, "optimize_blocks": blocks,
                      "grad_to_block_id": grad_to_block, "sync_mode": True,
                      "pserver_id": self.endpoints.index(endpoint)})
        return prog

    def _optimize_block(self, prog: Program, up: _Update, k: int) -> int:
        """Block ``k`` of ``up``'s parameter: average the trainers' gradient blocks, then
        the optimizer's own ops, renamed to the block's variables."""
        sub = prog.create_block(0)
        role = {"op_role": OP_ROLE_OPTIMIZE}
        grad = up.block_name(up.grad, k)
        sub.create_var(grad, self._block_shape(up, up.param, k), up.dtype, stop_gradient=True)
        sent = [received_name(grad, t) for t in range(self.trainers)]
        if self.trainers == 1:
            sub.append_op("assign", {"X": sent}, {"Out": [grad]}, role)
        else:
            sub.append_op("sum", {"X": sent}, {"Out": [grad]}, role)
            sub.append_op("scale", {"X": [grad]}, {"Out": [grad]},
                          {"scale": 1.0 / self.trainers, "bias": 0.0,
                           "bias_after_scale": True, **role})
        rename = {up.param: up.block_name(up.param, k), up.grad: grad}
        rename.update({n: up.block_name(n, k) for n in up.state + up.temps})
        for op in up.chain + [up.op]:
            attrs = {a: v for a, v in op.attrs.items() if a != "op_callstack"}
            sub.append_op(op.type,
                          {s: [rename.get(n, n) for n in names] for s, names in op.inputs.items()},
                          {s: [rename.get(n, n) for n in names]
                           for s, names in op.outputs.items()}, attrs)
        prog.rollback()
        return sub.idx

    def get_startup_program(self, endpoint: str, pserver_program: Program | None = None,
                            startup_program: Program | None = None) -> Program:
        """A startup program for ``endpoint``: each of its persistable variables made by
        the op the original startup program made it with, at the block's shape (a
        fill_constant of zeros where that op cannot make a block: it reads inputs, or it
        is not one of the initializers that take any shape, like assign_value's values).
        A random initializer draws other numbers for a block than the rows of the whole
        parameter: runtimes that compare with one process load slices of the original
        startup's values instead (pserver_vars)."""
        self._check_endpoint(endpoint)
        pserver_program = pserver_program or self.get_pserver_program(endpoint)
        original = (startup_program.clone() if startup_program is not None
                    else self._startup).global_block()
        makers = {}
        for op in original.ops:
            for n in op.output_arg_names:
                makers[n] = op
        where = {v.name: v for v in self.pserver_vars(endpoint)}
        prog = Program()
        prog.random_seed = self._startup.random_seed
        gb = prog.global_block()
        for desc in pserver_program.global_block().table.vars.values():
            if not desc.persistable:
                continue
            v = pserver_program.global_block().var(desc.name)
            shape, dtype = list(v.shape), v.dtype
            gb.create_var(desc.name, shape, dtype, persistable=True)
            block = where.get(desc.name)
            maker = makers.get(block.origin if block else desc.name)
            whole = block is None or block.rows is None
            if maker is not None and not maker.input_arg_names and (
                    whole or maker.type in _SHAPED_INITIALIZERS):
                attrs = {a: val for a, val in maker.attrs.items() if a != "op_callstack"}
                if maker.has_attr("shape"):
                    attrs["shape"] = shape
                origin = block.origin if block else desc.name
                outs = {s: [desc.name if n == origin else n for n in names]
                        for s, names in maker.outputs.items()}
                if all(n == desc.name for names in outs.values() for n in names):
                    gb.append_op(maker.type, {}, outs, attrs)
                    continue
            gb.append_op("fill_constant", {}, {"Out": [desc.name]},
                         {"shape": shape, "value": 0.0, "dtype": dtypes.to_code(dtype)})
        return prog

    def get_pserver_programs(self, endpoint: str) -> tuple[Program, Program]:
        """(pserver program, its startup program), as Fluid's get_pserver_programs."""
        main = self.get_pserver_program(endpoint)
        return main, self.get_startup_program(endpoint, main)
