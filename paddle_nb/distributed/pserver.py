"""A parameter server: a pserver program, its scope, and the round bookkeeping.

``ParameterServer`` holds what Fluid's listen_and_serv op kept in its RPC handlers: the
gradient blocks each trainer sent this round and which trainers have reached their
``send_barrier``. When the last of ``trainers`` has, it runs the pserver program once
(its ``listen_and_serv`` op runs the optimize blocks), feeding the received blocks, and
the round is complete. Every method takes a lock and returns at once: waiting for a round
belongs to the transports (local.py's threads; an actor around this class for Ray).
"""
from __future__ import annotations

import threading

import numpy as np

from ..core.errors import ExecutionError
from ..core.executor import Executor
from ..core.framework_pb2 import VarType
from ..core.program import Program
from ..core.scope import Scope
from .transport import received_name


def listen_and_serv_op(program: Program):
    """The one listen_and_serv op of a pserver program's global block."""
    found = [op for op in program.global_block().ops if op.type == "listen_and_serv"]
    if len(found) != 1:
        raise ExecutionError(f"a pserver program has one listen_and_serv op in its global "
                             f"block; this one has {len(found)}")
    return found[0]


class ParameterServer:
    """The server at ``endpoint``: ``program`` (DistributeTranspiler.get_pserver_program)
    run in its own scope, initialized by ``startup`` (get_startup_program), for
    ``trainers`` trainers."""

    def __init__(self, endpoint: str, program: Program, startup: Program | None,
                 trainers: int, place=None):
        if not isinstance(trainers, int) or trainers < 1:
            raise ExecutionError(f"ParameterServer({endpoint!r}): trainers must be an int "
                                 f">= 1, got {trainers!r}")
        self.endpoint = endpoint
        self.program = program
        self.trainers = trainers
        op = listen_and_serv_op(program)
        if op.attr("Fanin") != trainers:
            raise ExecutionError(f"ParameterServer({endpoint!r}): its program was transpiled "
                                 f"for {op.attr('Fanin')} trainers (Fanin), not {trainers}")
        self.expected = frozenset(op.input("X"))
        self.scope = Scope(name=f"pserver {endpoint}")
        self.executor = Executor(place)
        if startup is not None:
            self.executor.run(startup, scope=self.scope)
        self.round = 0                      # rounds completed
        self._lock = threading.Lock()
        self._received: dict[str, np.ndarray] = {}
        self._arrived: set[int] = set()     # trainers past their send_barrier this round

    def _check_trainer(self, trainer_id: int, what: str) -> None:
        if not isinstance(trainer_id, (int, np.integer)) or not 0 <= trainer_id < self.trainers:
            raise ExecutionError(f"pserver {self.endpoint}: {what} from trainer {trainer_id!r}; "
                                 f"its trainers are 0 to {self.trainers - 1}")
        if trainer_id in self._arrived:
            raise ExecutionError(f"pserver {self.endpoint}: {what} from trainer {trainer_id}, "
                                 f"which has already sent its barrier for round "
                                 f"{self.round}")

    def receive(self, trainer_id: int, arrays: dict) -> None:
        """Store ``arrays`` (name -> array) from ``trainer_id`` for this round, as
        ``<name>.trainer_<id>`` (copies)."""
        with self._lock:
            self._check_trainer(trainer_id, "a send")
            for name, value in arrays.items():
                key = received_name(name, int(trainer_id))
                if key not in self.expected:
                    raise ExecutionError(
                        f"pserver {self.endpoint}: trainer {trainer_id} sent {name!r}, which "
                        f"this server does not hold (it takes: "
                        f"{sorted({k.rsplit('.trainer_', 1)[0] for k in self.expected})})")
                self._received[key] = np.array(value, copy=True)

    def barrier(self, trainer_id: int) -> bool:
        """``trainer_id`` has sent everything this round. True when this barrier was the
        last one: the optimize blocks ran and the round is complete."""
        with self._lock:
            self._check_trainer(trainer_id, "a send_barrier")
            self._arrived.add(int(trainer_id))
            if len(self._arrived) < self.trainers:
                return False
            received, self._received, self._arrived = self._received, {}, set()
            missing = sorted(self.expected - set(received))
            if missing:
                raise ExecutionError(f"pserver {self.endpoint}, round {self.round}: every "
                                     f"trainer sent its barrier, but these were never sent: "
                                     f"{missing}")
            try:
                self.executor.run(self.program, feed=received, scope=self.scope)
            except Exception as e:
                raise ExecutionError(f"pserver {self.endpoint}, round {self.round}: its "
                                     f"program failed: {e}") from e
            self.round += 1
            return True

    def reset_round(self) -> None:
        """Drop what this round received and the barriers that came (a trainer failed
        mid-round: the runtime starts the round over)."""
        with self._lock:
            self._received, self._arrived = {}, set()

    def values(self, names) -> dict[str, np.ndarray]:
        """Copies of the named variables of this server's scope."""
        with self._lock:
            out = {}
            for name in names:
                var = self.scope.find_var(name)
                if var is None or not var.is_initialized():
                    raise ExecutionError(f"pserver {self.endpoint} holds no {name!r} "
                                         f"(it holds: {self.persistable_names()})")
                out[name] = np.array(var.get(), copy=True)
            return out

    def set_values(self, arrays: dict) -> None:
        """Set persistable variables (a runtime's starting values), each checked against
        its declaration."""
        block = self.program.global_block()
        with self._lock:
            for name, value in arrays.items():
                desc = block.table.vars.get(name)
                if desc is None or not desc.persistable:
                    raise ExecutionError(f"pserver {self.endpoint}: cannot set {name!r}: its "
                                         f"program declares no such persistable variable")
                var = block.var(name)
                value = np.asarray(value)
                if tuple(var.shape) != value.shape or np.dtype(var.dtype) != value.dtype:
                    raise ExecutionError(
                        f"pserver {self.endpoint}: cannot set {name!r}: expected "
                        f"{var.dtype}{list(var.shape)}, given {value.dtype}{list(value.shape)}")
                self.scope.var(name).set(np.array(value, copy=True))

    def persistable_names(self) -> list[str]:
        return [d.name for d in self.program.global_block().table.vars.values()
                if d.persistable and d.type.type == VarType.LOD_TENSOR]

    def __repr__(self):
        return (f"<ParameterServer {self.endpoint} trainers={self.trainers} "
                f"round={self.round}>")
