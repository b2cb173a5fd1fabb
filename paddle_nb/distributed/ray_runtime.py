"""Running a transpiled program on Ray: parameter servers and trainers as Ray actors.

Fluid ran the DistributeTranspiler's programs as processes talking gRPC. Here the transport
and the scheduling are Ray's: each pserver and each trainer is a Ray actor with its own
Scope and Executor running its own program, and the ``send`` / ``send_barrier`` / ``recv`` /
``fetch_barrier`` kernels call the pserver actors through Ray (object refs; no socket of
ours). A pserver actor wraps a :class:`~paddle_nb.distributed.pserver.ParameterServer`:
``send`` stores a trainer's gradients, the last ``send_barrier`` of a round runs the
pserver program once (``listen_and_serv``: the optimize blocks), and ``recv`` waits for
that round and returns the parameter blocks.

    with RayCluster(main, startup, loss, trainers=2, pservers=2) as cluster:
        for batch in batches:
            losses = cluster.step(batch)         # the batch split across the trainers
        params = cluster.parameters()            # {name: the whole array}

or ``train(main, startup, loss, reader, steps=...)``. A local Ray cluster is started with
the given CPUs (``start_local_ray``: ``ray.init``, started again if a busy machine makes it
time out) unless Ray is already running or ``address`` names one to join. Every actor is
killed when the cluster closes (``with``, an error, an interrupt), and a Ray this module
started is shut down, so nothing is left behind. An actor that dies is a
:class:`DistributedError` on the driver naming it (a pserver by index and endpoint); a
trainer's own error (an IndexRangeError from a kernel) is its cause, pickled across with
its attributes.

Ray is an optional dependency (the ``[distributed]`` extra): this module imports it only
when a cluster starts (importing it takes seconds, and ``pd.distributed`` loads with the
package). psutil, which comes with Ray, finds the processes of a start that timed out.
"""
from __future__ import annotations

import asyncio
import logging
import os
import time
import warnings
from dataclasses import dataclass

import numpy as np

from ..core.errors import ExecutionError, PaddleNBError
from ..core.executor import Executor
from ..core.place import CPUPlace
from ..core.program import Program
from ..core.scope import Scope
from .plan import Cluster, check_count, check_seconds, first_line, make_plan, shard
from .pserver import ParameterServer

try:        # installed with Ray; without it a failed start's processes are not looked for
    import psutil
except ImportError:
    psutil = None

# Each actor is a process of its own: one thread for numba, BLAS and OpenMP in each keeps
# 2 trainers and 2 pservers from fighting over a small machine's cores.
ACTOR_ENV = {"NUMBA_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
             "MKL_NUM_THREADS": "1"}
# A step that takes longer than this is taken for a hang (an actor stuck or gone).
STEP_TIMEOUT_S = 120.0
# How long the actors may take to start: each is a new process importing paddle_nb (numba,
# the kernels), which takes seconds when idle and minutes on a machine whose cores are
# all busy. It bounds the wait; a cluster that is up sooner goes on sooner.
START_TIMEOUT_S = 300.0
# Starting a local Ray: how many times, when it times out (see start_local_ray).
START_ATTEMPTS = 3


class DistributedError(PaddleNBError):
    """A distributed run failed: an actor died or hung, or Ray is missing."""


def ray_module():
    """The ``ray`` module, imported on first use; where it is not installed a
    DistributedError that names the extra to install."""
    try:
        import ray   # noqa: PLC0415 (the [distributed] extra: seconds to import, on first use)
    except ImportError:
        raise DistributedError("the Ray runtime needs ray: pip install 'paddle_nb[distributed]'"
                               " (or pd.distributed.LocalCluster, which runs in this process)"
                               ) from None
    return ray


# --- starting a local Ray ----------------------------------------------------------------------
# Ray's start-up has two deadlines no setting moves (Ray 2.60): the raylet gives the dashboard
# agent, a Python process it starts, 15 s to write its port file, and ray.init gives the
# raylet 30 s to register. Each Ray process first imports ray (about 2 s of CPU, most of it
# jsonschema's rfc3987_syntax building a grammar), so on a machine whose cores are all busy
# one of them can pass: ray.init raises "The current node timed out during startup". That
# attempt's processes are killed and Ray is started again, START_ATTEMPTS times at most.
_STARTUP_TIMED_OUT = "timed out during startup"
# The Ray this module starts runs its workers (our actors) at the priority of everything
# else: Ray's default is nice 15, which on a machine whose cores are busy left each actor
# a few percent of a core (measured with two busy loops on 2 cores: the first step 64 s,
# later steps 0.5 s; at nice 0: 3.2 s and 0.04 s). And a worker process that takes long
# to register (importing ray) is waited for as long as the actors' start, not killed and
# restarted at 60 s (Ray's default).
_LOCAL_RAY_CONFIG = {"worker_niceness": 0,
                     "worker_register_timeout_seconds": int(START_TIMEOUT_S)}


def start_local_ray(num_cpus: int | None = None, attempts: int = START_ATTEMPTS) -> None:
    """``ray.init`` of a local Ray with ``num_cpus`` CPUs (default: this machine's), no
    dashboard and no worker logs on the driver; tolerant of a busy machine (above)."""
    ray = ray_module()
    num_cpus = check_count("start_local_ray", "num_cpus", num_cpus, optional=True) \
        or os.cpu_count() or 1
    for attempt in range(1, attempts + 1):
        before = _ray_processes()
        try:
            ray.init(num_cpus=num_cpus, include_dashboard=False, log_to_driver=False,
                     logging_level=logging.ERROR, _system_config=dict(_LOCAL_RAY_CONFIG))
            return
        except Exception as e:       # noqa: BLE001 (Ray raises a bare Exception for it)
            if _STARTUP_TIMED_OUT not in str(e):
                raise
            ray.shutdown()
            _kill(_ray_processes() - before)     # what the failed attempt left running
            if attempt == attempts:
                raise DistributedError(
                    f"could not start a local Ray: {attempts} attempts timed out during "
                    f"start-up ({_ray_reason(e)}). Ray's processes did not come up within "
                    f"its own deadlines: is the machine overloaded?") from None
            # said, because the attempt cost half a minute or more
            warnings.warn(f"starting a local Ray timed out (attempt {attempt} of "
                          f"{attempts}; is the machine busy?): starting it again",
                          RuntimeWarning, stacklevel=2)


def _ray_processes() -> set:
    """This process's descendants that are Ray's: its programs (gcs_server, raylet, the
    monitors) and the processes they start (``ray::...``)."""
    if psutil is None:
        return set()
    ray_dir = os.path.dirname(ray_module().__file__)
    found = set()
    for p in psutil.Process().children(recursive=True):
        try:
            cmd = p.cmdline()
        except psutil.Error:
            continue
        if cmd and (cmd[0].startswith("ray::") or any(ray_dir in part for part in cmd)):
            found.add(p)
    return found


def _kill(processes) -> None:
    if not processes:      # (only psutil finds any)
        return
    for p in processes:
        try:
            p.kill()
        except psutil.Error:
            pass
    psutil.wait_procs(list(processes), timeout=30)


# --- the actors -------------------------------------------------------------------------------
class PServerActor:
    """One parameter server (an async Ray actor: a trainer's ``recv`` awaits its round
    while other trainers' calls go on)."""

    def __init__(self, endpoint: str, program: bytes, startup: bytes, trainers: int,
                 values: dict):
        self.server = ParameterServer(endpoint, Program.from_bytes(program),
                                      Program.from_bytes(startup), trainers)
        self.server.set_values(values)
        self.sent_for: dict[int, int] = {}       # trainer -> the round it sent for
        self.done: dict[int, asyncio.Event] = {}
        self.failed: dict[int, Exception] = {}   # round -> why its program failed

    def _event(self, round_: int) -> asyncio.Event:
        if round_ not in self.done:
            self.done[round_] = asyncio.Event()
        return self.done[round_]

    async def send(self, trainer_id: int, arrays: dict) -> None:
        self.server.receive(trainer_id, arrays)

    async def send_barrier(self, trainer_id: int) -> None:
        round_ = self.server.round
        self.sent_for[trainer_id] = round_
        try:
            done = self.server.barrier(trainer_id)
        except Exception as e:
            # the round's program failed: the trainers waiting in recv get the error too,
            # not a hang
            self.failed[round_] = e
            self._event(round_).set()
            raise
        if done:
            self._event(round_).set()

    async def recv(self, trainer_id: int, names: list) -> dict:
        round_ = self.sent_for.get(trainer_id, self.server.round - 1)
        await self._event(round_).wait()
        if round_ in self.failed:
            raise self.failed[round_]
        return self.server.values(names)

    async def fetch_barrier(self, trainer_id: int) -> None:
        round_ = self.sent_for.pop(trainer_id, None)
        if round_ is not None and not any(r == round_ for r in self.sent_for.values()):
            self.done.pop(round_, None)          # every trainer has its values: forget it

    async def values(self, names: list) -> dict:
        return self.server.values(names)

    async def pid(self) -> int:
        return os.getpid()


def call_pserver(pservers: dict, endpoint: str, method: str, *args,
                 timeout_s: float = STEP_TIMEOUT_S, caller: str = "the driver"):
    """``method(*args)`` on the pserver actor at ``endpoint`` (``pservers``: endpoint ->
    actor, in the plan's order), waited for. A pserver that is gone (killed, crashed) or
    does not answer is a DistributedError naming it, its index and its endpoint, and the
    call: what a trainer reports when a server dies under it, rather than Ray's text about
    an actor id."""
    ray = ray_module()
    actor = pservers.get(endpoint)
    if actor is None:
        raise DistributedError(f"no pserver at {endpoint!r} (pservers: "
                               f"{', '.join(pservers)})")
    name = _pserver_name(list(pservers), endpoint)
    try:
        return ray.get(getattr(actor, method).remote(*args), timeout=timeout_s)
    except ray.exceptions.RayActorError as e:
        raise DistributedError(f"{name} died: its actor process is gone ({_ray_reason(e)}); "
                               f"{caller} was calling its {method}") from None
    except ray.exceptions.GetTimeoutError:
        raise DistributedError(f"{name} did not answer {caller}'s {method} in "
                               f"{timeout_s:g} s") from None


def _pserver_name(endpoints: list, endpoint: str) -> str:
    return f"pserver {endpoints.index(endpoint)} ({endpoint})"


def _ray_reason(e: BaseException) -> str:
    """The first line of a Ray error's text, which says why an actor died."""
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return lines[0][:300] if lines else type(e).__name__


class RayTransport:
    """The trainer side of the Transport (distributed/transport.py): each call is a call
    on a pserver actor, waited for."""

    def __init__(self, pservers: dict, timeout_s: float = STEP_TIMEOUT_S,
                 trainer_id: int | None = None):
        self.pservers, self.timeout_s = pservers, timeout_s
        self.caller = "the driver" if trainer_id is None else f"trainer {trainer_id}"

    def _call(self, endpoint: str, method: str, *args):
        return call_pserver(self.pservers, endpoint, method, *args,
                            timeout_s=self.timeout_s, caller=self.caller)

    def send(self, endpoint, trainer_id, arrays):
        self._call(endpoint, "send", trainer_id, arrays)

    def send_barrier(self, endpoint, trainer_id):
        self._call(endpoint, "send_barrier", trainer_id)

    def recv(self, endpoint, trainer_id, names):
        return self._call(endpoint, "recv", trainer_id, list(names))

    def fetch_barrier(self, endpoint, trainer_id):
        self._call(endpoint, "fetch_barrier", trainer_id)


class TrainerActor:
    """One trainer: its program (forward, backward, send, recv) on its shard of each batch."""

    def __init__(self, trainer_id: int, program: bytes, pservers: dict, fetch: list,
                 values: dict):
        self.trainer_id = trainer_id
        self.program = Program.from_bytes(program)
        self.fetch = fetch
        self.scope = Scope(name=f"trainer {trainer_id}")
        for name, value in values.items():
            self.scope.var(name).set(value)
        self.exe = Executor(CPUPlace(), transport=RayTransport(pservers,
                                                               trainer_id=trainer_id))

    def step(self, feed: dict) -> list:
        return self.exe.run(self.program, feed=feed, fetch_list=self.fetch, scope=self.scope)

    def pid(self) -> int:
        return os.getpid()


# --- the driver -------------------------------------------------------------------------------
@dataclass
class TrainResult:
    losses: np.ndarray          # [steps, trainers]: each trainer's fetched loss
    parameters: dict            # name -> the whole array after the last step


class RayCluster(Cluster):
    """``trainers`` trainer actors and ``pservers`` pserver actors training ``main`` (built
    with an optimizer's minimize) from ``startup``; ``loss`` is what ``step`` returns per
    trainer. ``address``: a Ray cluster to join (default: the running one, else a local one
    started with ``num_cpus``, all of this machine's by default)."""

    def __init__(self, main: Program, startup: Program, loss, trainers: int = 2,
                 pservers: int = 2, config=None, address: str | None = None,
                 num_cpus: int | None = None, timeout_s: float = STEP_TIMEOUT_S):
        ray = ray_module()
        self.timeout_s = check_seconds("RayCluster", "timeout_s", timeout_s)
        num_cpus = check_count("RayCluster", "num_cpus", num_cpus, optional=True)
        if address is not None and (not isinstance(address, str) or not address.strip()):
            raise ExecutionError(f"RayCluster: address must be a Ray address such as "
                                 f"\"ray://host:10001\" or \"host:6379\" (or None), got "
                                 f"{type(address).__name__} {address!r}")
        self.plan = plan = make_plan(main, startup, loss, trainers, pservers, config,
                                     who="RayCluster")
        self.trainers = trainers = plan.trainers
        self._started_ray = False
        self.pservers: dict = {}
        self.trainer_actors: list = []
        if not ray.is_initialized():
            if address is None:
                start_local_ray(num_cpus)
            else:
                ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
            self._started_ray = True
        try:
            options = {"num_cpus": 0, "max_restarts": 0,
                       "runtime_env": {"env_vars": dict(ACTOR_ENV)}}
            server_cls = ray.remote(PServerActor).options(max_concurrency=64, **options)
            for ep in plan.endpoints:
                self.pservers[ep] = server_cls.remote(
                    ep, plan.pserver_programs[ep].to_bytes(),
                    plan.pserver_startups[ep].to_bytes(), trainers, plan.server_values[ep])
            trainer_cls = ray.remote(TrainerActor).options(**options)
            self.trainer_actors = [trainer_cls.remote(
                i, plan.trainer_programs[i].to_bytes(), self.pservers, [plan.loss_name],
                plan.trainer_values) for i in range(trainers)]
            actors = {**{f"trainer {i}": a for i, a in enumerate(self.trainer_actors)},
                      **{_pserver_name(plan.endpoints, ep): a
                         for ep, a in self.pservers.items()}}
            self._wait([a.pid.remote() for a in actors.values()], "start",
                       names=list(actors), timeout_s=max(self.timeout_s, START_TIMEOUT_S))
        except BaseException:
            self.close()
            raise

    def _wait(self, refs: list, what: str, names: list | None = None,
              timeout_s: float | None = None) -> list:
        """ray.get of the actors' refs (``names``: whose; trainer 0, 1... by default), each
        as soon as it is ready: the first failure (an actor killed, a kernel's error)
        closes the whole cluster, waking the trainers that wait for it, and is a
        DistributedError naming that actor; so is a hang."""
        ray = ray_module()
        names = names or [f"trainer {i}" for i in range(len(refs))]
        timeout_s = self.timeout_s if timeout_s is None else timeout_s
        index = {ref: i for i, ref in enumerate(refs)}
        out, pending = [None] * len(refs), list(refs)
        deadline = time.monotonic() + timeout_s
        try:
            while pending:
                ready, pending = ray.wait(pending, num_returns=1,
                                          timeout=max(0.0, deadline - time.monotonic()))
                if not ready:
                    late = ", ".join(names[index[r]] for r in pending)
                    raise DistributedError(f"{late} did not finish the {what} in "
                                           f"{timeout_s:g} s; the cluster was shut down")
                i = index[ready[0]]
                who = names[i]
                try:
                    out[i] = ray.get(ready[0])
                except ray.exceptions.RayTaskError as e:
                    # before RayActorError: Ray raises a task's error as an instance of
                    # both RayTaskError and the error's class, which may be an actor error.
                    # The cause is the trainer's own error, unpickled here with its
                    # attributes (PaddleNBError.__reduce__), and the cause of this one.
                    cause = e.cause if isinstance(e.cause, BaseException) else None
                    raise DistributedError(f"{who} failed in its {what}: "
                                           f"{first_line(cause or e)}; the cluster was shut "
                                           f"down") from cause
                except ray.exceptions.RayActorError as e:
                    raise DistributedError(f"{who} died during its {what} ({first_line(e)});"
                                           f" the cluster was shut down") from None
                except ray.exceptions.RayError as e:    # Ray's own failure (a lost object)
                    raise DistributedError(f"{who}'s {what} failed in Ray: "
                                           f"{_ray_reason(e)}; the cluster was shut down"
                                           ) from None
            return out
        except BaseException:
            self.close()               # an error, or Ctrl-C: nothing is left running
            raise

    def step(self, feed: dict) -> list:
        """One synchronous step on ``feed``, a whole batch split across the trainers along
        its first axis; each trainer's loss."""
        if not self.trainer_actors:
            raise DistributedError("this RayCluster is closed")
        shards = shard(feed, self.trainers)
        refs = [a.step.remote(s) for a, s in zip(self.trainer_actors, shards)]
        return [np.asarray(out[0]) for out in self._wait(refs, "step")]

    def parameters(self) -> dict[str, np.ndarray]:
        """Every parameter, its blocks fetched from the pserver actors and joined."""
        if not self.pservers:
            raise DistributedError("this RayCluster is closed")
        return self.plan.join_parameters(
            lambda ep, names: call_pserver(self.pservers, ep, "values", names,
                                           timeout_s=self.timeout_s))

    def close(self) -> None:
        """Kill every actor; shut Ray down if this cluster started it."""
        try:
            ray = ray_module()
        except DistributedError:
            return
        for actor in [*self.trainer_actors, *self.pservers.values()]:
            try:
                ray.kill(actor, no_restart=True)
            except Exception:     # noqa: BLE001 (already gone: what closing wants anyway)
                pass
        self.trainer_actors, self.pservers = [], {}
        if self._started_ray and ray.is_initialized():
            ray.shutdown()
        self._started_ray = False

    def __repr__(self):
        return (f"<RayCluster trainers={self.trainers} pservers={self.plan.endpoints}"
                f"{'' if self.trainer_actors else ' closed'}>")


def train(main: Program, startup: Program, loss, reader, *, steps: int | None = None,
          trainers: int = 2, pservers: int = 2, config=None, address: str | None = None,
          num_cpus: int | None = None) -> TrainResult:
    """Train on Ray: each batch ``reader`` yields (a feed dict, or a callable giving an
    iterable of them) is split across the trainers; ``steps`` batches at most. Returns
    every trainer's loss per step and the parameters at the end; the cluster is shut down
    whatever happens."""
    steps = check_count("train", "steps", steps, low=0, optional=True)
    batches = reader() if callable(reader) else reader
    if isinstance(batches, dict) or not hasattr(batches, "__iter__"):
        raise ExecutionError(f"train: reader must be an iterable of feed dicts (or a "
                             f"callable returning one), got {type(batches).__name__}")
    losses = []
    with RayCluster(main, startup, loss, trainers, pservers, config, address,
                    num_cpus) as cluster:
        for i, feed in enumerate(batches):
            if steps is not None and i >= steps:
                break
            losses.append([float(np.asarray(v).reshape(-1)[0]) for v in cluster.step(feed)])
        params = cluster.parameters()
    return TrainResult(np.array(losses), params)
