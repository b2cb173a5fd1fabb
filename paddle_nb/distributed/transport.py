"""The interface between a trainer's communication ops and the parameter servers.

The kernels of ``send``, ``send_barrier``, ``recv`` and ``fetch_barrier``
(paddle_nb/ops/distributed.py) call the executor's transport (``Executor(transport=...)``,
read as ``ctx.executor.transport``). Any object with these four methods is one: the
in-process one (local.py: threads and a condition variable) and a Ray one implement it.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

# How long a transport waits (for a round to finish, for a server) before it gives up with
# an error that says what it was waiting for: a run never hangs.
DEFAULT_TIMEOUT_S = 60.0


def received_name(name: str, trainer_id: int) -> str:
    """The name a sent variable has on its server for one trainer's round:
    ``w@GRAD.block0`` from trainer 1 is ``w@GRAD.block0.trainer_1``."""
    return f"{name}.trainer_{trainer_id}"


@runtime_checkable
class Transport(Protocol):
    """What a trainer program's ops need from the parameter servers (synchronous mode).

    A round: every trainer ``send``s its gradient blocks and ``send_barrier``s; when all
    ``Fanin`` trainers have, the server runs its program once (``listen_and_serv``: the
    optimize blocks) and the round is complete; each trainer then ``recv``s the updated
    parameter blocks and ``fetch_barrier``s (it has what it needs; the next round may
    begin). Endpoints are the ``"host:port"`` strings of the transpiled programs.
    """

    def send(self, endpoint: str, trainer_id: int, arrays: dict[str, np.ndarray]) -> None:
        """Store ``arrays`` for this round on the server at ``endpoint``, each under
        ``received_name(name, trainer_id)``. The trainer may reuse the arrays' memory once
        this returns: a transport copies (or serializes) them."""

    def send_barrier(self, endpoint: str, trainer_id: int) -> None:
        """This trainer has sent everything it sends to ``endpoint`` this round."""

    def recv(self, endpoint: str, trainer_id: int, names: list[str]) -> dict[str, np.ndarray]:
        """The named variables of the server at ``endpoint`` once the round this trainer
        sent for is complete (it blocks until then, or raises after a timeout)."""

    def fetch_barrier(self, endpoint: str, trainer_id: int) -> None:
        """This trainer has received what it needs from ``endpoint`` this round."""
