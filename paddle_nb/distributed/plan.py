"""What every runtime needs before its first step: the programs and the starting values.

Both runtimes, threads in one process (local.py) and Ray actors (ray_runtime.py), start
from one :class:`ClusterPlan`: ``main`` transpiled once per trainer, each pserver's
program and startup program, and the values everything starts from, taken from ONE run of
the original startup program. The pservers get the slices of it their blocks stand for,
and the trainers the whole arrays. So a run starts where a single process would.
"""
from __future__ import annotations

import math
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
    trainers, pservers, endpoints = check_shape(who, trainers, pservers, endpoints)
    loss_name = _loss_name(who, main, startup, loss)
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
    return ClusterPlan(endpoints, loss_name, t,
                       trainer_programs, pserver_programs, pserver_startups, server_values,
                       trainer_values)


# --- what a cluster is given: checked here, for both runtimes -----------------------------
def check_count(who: str, name: str, value, *, low: int = 1, optional: bool = False):
    """A count (of trainers, CPUs, steps): an int >= ``low``, or None when ``optional``."""
    if value is None and optional:
        return None
    # bool is an int in Python, but True is not a number of processes
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ExecutionError(f"{who}: {name} must be an int >= {low}"
                             f"{' or None' if optional else ''}, got "
                             f"{type(value).__name__} {value!r}")
    return int(value)


def check_shape(who: str, trainers, pservers, endpoints=None) -> tuple[int, int, list[str]]:
    """``(trainers, pservers, endpoints)`` of a cluster, checked: counts are ints >= 1,
    ``endpoints`` (default ``127.0.0.1:6170``, ``:6171``...) are ``pservers`` distinct
    non-empty strings. ``who`` names the runtime in the error."""
    trainers = check_count(who, "trainers", trainers)
    pservers = check_count(who, "pservers", pservers)
    if endpoints is None:
        return trainers, pservers, [f"127.0.0.1:{6170 + i}" for i in range(pservers)]
    if isinstance(endpoints, str) or not isinstance(endpoints, (list, tuple)):
        raise ExecutionError(f"{who}: endpoints must be a list of {pservers} \"host:port\" "
                             f"strings (one per pserver), got {type(endpoints).__name__} "
                             f"{endpoints!r}")
    endpoints = list(endpoints)
    bad = [e for e in endpoints if not isinstance(e, str) or not e.strip()]
    if bad:
        raise ExecutionError(f"{who}: each endpoint must be a non-empty \"host:port\" string, "
                             f"got {bad[0]!r} in {endpoints!r}")
    if len(set(endpoints)) != len(endpoints):
        raise ExecutionError(f"{who}: endpoints must be distinct (one per pserver), got "
                             f"{endpoints!r}")
    if len(endpoints) != pservers:
        raise ExecutionError(f"{who}: {len(endpoints)} endpoints given for pservers="
                             f"{pservers}; give one endpoint per pserver")
    return trainers, pservers, endpoints


def check_seconds(who: str, name: str, value) -> float:
    """A timeout: a finite number of seconds > 0."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)) \
            or not math.isfinite(value) or value <= 0:
        raise ExecutionError(f"{who}: {name} must be a number of seconds > 0, got "
                             f"{type(value).__name__} {value!r}")
    return float(value)


def _loss_name(who: str, main, startup, loss) -> str:
    for name, program in (("main", main), ("startup", startup)):
        if not isinstance(program, Program):
            raise ExecutionError(f"{who}: {name} must be a Program, got "
                                 f"{type(program).__name__} {program!r:.60}")
    name = loss if isinstance(loss, str) else getattr(loss, "name", None)
    if not isinstance(name, str):
        raise ExecutionError(f"{who}: loss must be a Variable of main (or its name), got "
                             f"{type(loss).__name__} {loss!r:.60}")
    if not main.global_block().has_var(name):
        raise ExecutionError(f"{who}: loss {name!r} is not a variable of main's global block")
    return name


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
    if not isinstance(feed, dict):
        raise ExecutionError(f"a feed is a dict of variable name -> array (the whole batch, "
                             f"cut here into {parts}), got {type(feed).__name__}")
    parts = check_count("shard", "parts", parts)
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
