"""Parameter-server training in one process: trainers as threads, servers as objects.

``LocalCluster(main, startup, loss, trainers=2, pservers=2)`` transpiles ``main``, makes a
:class:`~paddle_nb.distributed.pserver.ParameterServer` per endpoint (its blocks sliced
from ONE run of the original startup program, so a run starts where a single process
would) and gives every trainer the same starting parameters. ``cluster.step(shards)`` runs
each trainer's program on its shard of the batch, in its own thread, and returns the
losses; ``cluster.parameters()`` gathers the parameters back from the servers' blocks.

:class:`InProcessTransport` is the Transport the trainers' executors use: ``send`` and the
barriers call the servers directly; ``recv`` waits, on a condition variable, for the
round the trainer sent for to complete. Every wait has a timeout, and a trainer that
fails wakes the others with an error: a step never hangs.
"""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout

import numpy as np

from ..core.errors import ExecutionError
from ..core.executor import Executor
from ..core.program import Program
from ..core.scope import Scope
from ..interactive.debugger import Debugger
from .pserver import ParameterServer
from .plan import Cluster, check_seconds, first_line, make_plan, shard
from .transpiler import DistributeTranspilerConfig
from .transport import DEFAULT_TIMEOUT_S


class InProcessTransport:
    """The Transport (transport.py) over ParameterServer objects in this process."""

    def __init__(self, servers: dict[str, ParameterServer],
                 timeout: float = DEFAULT_TIMEOUT_S):
        self.servers = dict(servers)
        self.timeout = float(timeout)
        self._cond = threading.Condition()
        self._sent_for: dict[tuple[str, int], int] = {}   # the round a trainer waits for
        self._failure: str | None = None

    def _server(self, endpoint: str) -> ParameterServer:
        server = self.servers.get(endpoint)
        if server is None:
            raise ExecutionError(f"no parameter server at {endpoint!r} (this cluster's: "
                                 f"{sorted(self.servers)})")
        return server

    def send(self, endpoint, trainer_id, arrays):
        self._check()
        self._server(endpoint).receive(trainer_id, arrays)     # copies

    def send_barrier(self, endpoint, trainer_id):
        server = self._server(endpoint)
        self._check()
        with self._cond:
            self._sent_for[(endpoint, trainer_id)] = server.round
        try:
            done = server.barrier(trainer_id)
        except Exception as e:
            self.abort(f"pserver {endpoint} failed: {e}")
            raise
        if done:
            with self._cond:
                self._cond.notify_all()

    def recv(self, endpoint, trainer_id, names):
        server = self._server(endpoint)
        with self._cond:
            want = self._sent_for.get((endpoint, trainer_id))
            ok = self._cond.wait_for(
                lambda: self._failure is not None or want is None or server.round > want,
                timeout=self.timeout)
            self._check()
            if not ok:
                raise ExecutionError(
                    f"recv from {endpoint}: trainer {trainer_id} waited {self.timeout:g} s "
                    f"for round {want} to complete; the server has had "
                    f"{len(server._arrived)} of {server.trainers} send_barriers (is another "
                    f"trainer stopped, or stepped in a debugger?)")
        return server.values(names)

    def fetch_barrier(self, endpoint, trainer_id):
        self._server(endpoint)
        with self._cond:
            self._sent_for.pop((endpoint, trainer_id), None)

    # --- failures --------------------------------------------------------------------------
    def abort(self, reason: str) -> None:
        """Wake every waiting trainer with an error saying ``reason`` (a trainer or a
        server failed); until ``reset``, every call fails the same way."""
        with self._cond:
            if self._failure is None:
                self._failure = reason
            self._cond.notify_all()

    def reset(self) -> None:
        """Forget a failure and any half-done round (the servers' too): start over."""
        with self._cond:
            self._failure = None
            self._sent_for.clear()
        for server in self.servers.values():
            server.reset_round()

    def _check(self) -> None:
        if self._failure is not None:
            raise ExecutionError(f"this round was abandoned: {self._failure}")


class LocalCluster(Cluster):
    """``trainers`` trainer threads and ``pservers`` parameter servers training ``main``
    (built with an optimizer's minimize) from ``startup``; ``loss`` is what ``step``
    returns per trainer."""

    def __init__(self, main: Program, startup: Program, loss, trainers: int = 2,
                 pservers: int = 2, config: DistributeTranspilerConfig | None = None,
                 place=None, timeout: float = DEFAULT_TIMEOUT_S, endpoints=None):
        timeout = check_seconds("LocalCluster", "timeout", timeout)
        plan = self.plan = make_plan(main, startup, loss, trainers, pservers, config, place,
                                     endpoints, who="LocalCluster")
        self.endpoints, self.loss_name = plan.endpoints, plan.loss_name
        trainers = plan.trainers                   # checked (an int >= 1)
        self.trainers, self.timeout = trainers, timeout
        self.transpiler, self.trainer_programs = plan.transpiler, plan.trainer_programs
        self.servers: dict[str, ParameterServer] = {}
        for ep in self.endpoints:
            server = ParameterServer(ep, plan.pserver_programs[ep], plan.pserver_startups[ep],
                                     trainers, place)
            server.set_values(plan.server_values[ep])
            self.servers[ep] = server
        self.transport = InProcessTransport(self.servers, timeout)
        self.scopes = [Scope(name=f"trainer {i}") for i in range(trainers)]
        for scope in self.scopes:
            for name, value in plan.trainer_values.items():
                scope.var(name).set(value.copy())
        self.executors = [Executor(place, transport=self.transport) for _ in range(trainers)]
        self._pool = ThreadPoolExecutor(max_workers=trainers, thread_name_prefix="trainer")
        self._failed = False

    # --- a step --------------------------------------------------------------------------
    shard = staticmethod(shard)      # a batch cut into one feed per trainer (plan.py)

    def run_trainer_async(self, i: int, feed: dict) -> Future:
        """Start trainer ``i``'s program on ``feed`` in its thread; a Future of its loss.
        (With another trainer stepped in a debugger: cluster.debugger(j, ...).)"""
        self._check_trainer(i)
        return self._pool.submit(self._run_trainer, i, feed)

    def _run_trainer(self, i: int, feed: dict):
        try:
            loss, = self.executors[i].run(self.trainer_programs[i], feed=feed,
                                          fetch_list=[self.loss_name], scope=self.scopes[i])
            return loss
        except BaseException as e:
            self.transport.abort(f"trainer {i} failed: {first_line(e)}")
            raise

    def step(self, feed_shards) -> list:
        """One synchronous step: trainer ``i`` runs on ``feed_shards[i]`` (a feed dict);
        returns each trainer's loss. A trainer's error is raised here, naming it."""
        if isinstance(feed_shards, dict) or len(feed_shards) != self.trainers:
            raise ExecutionError(f"LocalCluster.step: give one feed dict per trainer "
                                 f"({self.trainers}); LocalCluster.shard(feed, "
                                 f"{self.trainers}) cuts a batch")
        if self._failed:
            self.transport.reset()
            self._failed = False
        futures = [self.run_trainer_async(i, shard) for i, shard in enumerate(feed_shards)]
        return self._gather(futures)

    def _gather(self, futures) -> list:
        losses, errors = [], []
        for i, f in enumerate(futures):
            try:
                losses.append(f.result(timeout=2 * self.timeout + 10))
            except FutureTimeout:
                self.transport.abort(f"trainer {i} did not finish")
                errors.append((i, ExecutionError(f"did not finish in "
                                                 f"{2 * self.timeout + 10:g} s")))
            except Exception as e:          # noqa: BLE001 (re-raised below, named)
                errors.append((i, e))
        if errors:
            self._failed = True
            # the first trainer whose own error it was, not one woken by another's failure
            root = [(i, e) for i, e in errors if "round was abandoned" not in str(e)]
            i, e = (root or errors)[0]
            raise ExecutionError(f"trainer {i}: {e}") from e
        return losses

    # --- looking in --------------------------------------------------------------------------
    def parameters(self) -> dict[str, np.ndarray]:
        """Every parameter, its blocks gathered from the servers and joined."""
        return self.plan.join_parameters(lambda ep, names: self.servers[ep].values(names))

    def trainer_program(self, i: int) -> Program:
        self._check_trainer(i)
        return self.trainer_programs[i]

    def trainer_scope(self, i: int) -> Scope:
        self._check_trainer(i)
        return self.scopes[i]

    def trainer_executor(self, i: int) -> Executor:
        """Trainer ``i``'s Executor (with the cluster's transport): ``steps()`` of its
        program in ``trainer_scope(i)`` talks to the servers like ``step`` does."""
        self._check_trainer(i)
        return self.executors[i]

    def debugger(self, i: int, feed: dict):
        """A pd.Debugger over trainer ``i``'s program, scope and transport: step it (to
        its send, say) while the other trainers run with run_trainer_async."""
        self._check_trainer(i)
        return Debugger(self.trainer_programs[i], feed=feed, fetch_list=[self.loss_name],
                        scope=self.scopes[i], place=self.executors[i].place,
                        transport=self.transport)

    def _check_trainer(self, i) -> None:
        if not isinstance(i, int) or not 0 <= i < self.trainers:
            raise ExecutionError(f"LocalCluster: there is no trainer {i!r} (trainers are 0 "
                                 f"to {self.trainers - 1})")

    def close(self) -> None:
        """Stop the trainer threads (waking any that wait)."""
        self.transport.abort("the cluster was closed")
        self._pool.shutdown(wait=True)

    def __repr__(self):
        return (f"<LocalCluster trainers={self.trainers} pservers={self.endpoints} "
                f"round={[s.round for s in self.servers.values()]}>")
