"""What every runtime needs before its first step: the programs and the starting values.

Both runtimes, threads in one process (local.py) and Ray actors (ray_runtime.py), start
from one :class:`ClusterPlan`: ``main`` transpiled once per trainer, each pserver's
program and startup program, and the values everything starts from, taken from ONE run of
the original startup program. The pservers get the slices of it their blocks stand for,
and the trainers the whole arrays. So a run starts where a single process would.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.errors import ExecutionError
from ..core.executor import Executor
from ..core.program import Program
from ..core.scope import Scope
from .transpiler import DistributeTranspiler, DistributeTranspilerConfig


@dataclass
class ClusterPlan:
    endpoints: list[str]
    loss_name: str
    transpiler: DistributeTranspiler              # trainer 0's: the blocks are the same
    trainer_programs: list[Program]
    pserver_programs: dict[str, Program]
    pserver_startups: dict[str, Program]
    server_values: dict[str, dict[str, np.ndarray]]   # endpoint -> block name -> value
    trainer_values: dict[str, np.ndarray]             # persistable name -> value (all alike)

    @property
    def trainers(self) -> int:
        return len(self.trainer_programs)

    def join_parameters(self, values_at) -> dict[str, np.ndarray]:
        """Every parameter, its blocks fetched with ``values_at(endpoint, names) -> {name:
        array}`` and joined along dim 0."""
        out = {}
        for param, blocks in self.transpiler.param_blocks().items():
            parts = [values_at(b.endpoint, [b.name])[b.name] for b in blocks]
            out[param] = parts[0] if len(parts) == 1 else np.concatenate(parts, axis=0)
        return out


def make_plan(main: Program, startup: Program, loss, trainers: int, pservers: int,
              config: DistributeTranspilerConfig | None = None, place=None,
              endpoints=None, who: str = "cluster") -> ClusterPlan:
    """Transpile ``main`` for ``trainers`` trainers and ``pservers`` servers (endpoints
    ``127.0.0.1:6170``... unless given: names only, nothing listens on them) and take the
    starting values from one run of ``startup``."""
    if not isinstance(pservers, int) or isinstance(pservers, bool) or pservers < 1:
        raise ExecutionError(f"{who}: pservers must be an int >= 1, got {pservers!r}")
    endpoints = list(endpoints) if endpoints is not None else [
        f"127.0.0.1:{6170 + i}" for i in range(pservers)]
    transpilers = [DistributeTranspiler(config).transpile(
        i, program=main, pservers=endpoints, trainers=trainers, startup_program=startup)
        for i in range(trainers)]
    t = transpilers[0]
    start = Scope(name="startup")
    Executor(place).run(startup, scope=start)
    pserver_programs, pserver_startups, server_values = {}, {}, {}
    for ep in endpoints:
        prog = pserver_programs[ep] = t.get_pserver_program(ep)
        pserver_startups[ep] = t.get_startup_program(ep, prog)
        server_values[ep] = {vb.name: _rows(_value(start, vb.origin, who), vb.rows)
                             for vb in t.pserver_vars(ep)}
    trainer_programs = [tr.get_trainer_program() for tr in transpilers]
    trainer_values = {}
    for desc in trainer_programs[0].global_block().table.vars.values():
        var = start.find_var(desc.name) if desc.persistable else None
        if var is not None and var.is_initialized():
            trainer_values[desc.name] = np.array(var.get(), copy=True)
    return ClusterPlan(endpoints, loss if isinstance(loss, str) else loss.name, t,
                       trainer_programs, pserver_programs, pserver_startups, server_values,
                       trainer_values)


def _value(scope: Scope, name: str, who: str) -> np.ndarray:
    var = scope.find_var(name)
    if var is None or not var.is_initialized():
        raise ExecutionError(f"{who}: the startup program made no {name!r}")
    return np.asarray(var.get())


def _rows(value: np.ndarray, rows) -> np.ndarray:
    return value if rows is None else np.ascontiguousarray(value[rows[0]:rows[1]])


def shard(feed: dict, parts: int) -> list[dict]:
    """``feed`` split along its first axis into ``parts`` (as even as np.array_split makes
    them); a batch smaller than ``parts`` rows is refused."""
    shards = [{} for _ in range(parts)]
    for name, value in feed.items():
        a = np.asarray(value)
        if a.ndim == 0 or a.shape[0] < parts:
            raise ExecutionError(f"cannot split feed {name!r} (shape {list(a.shape)}) "
                                 f"across {parts} trainers: it needs at least {parts} rows")
        for i, part in enumerate(np.array_split(a, parts)):
            shards[i][name] = part
    return shards


class Cluster:
    """What both runtimes' clusters share: ``with cluster:`` closes it."""

    def close(self) -> None:
        raise NotImplementedError

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def first_line(e: BaseException) -> str:
    """An exception as one line (a trainer's error, reported on the driver)."""
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"
