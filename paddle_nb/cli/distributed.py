"""``python -m paddle_nb distributed``: the digits MLP trained in one process and on a local
Ray cluster, compared (``paddle_nb/examples/distributed_digits.py``)."""
from __future__ import annotations

import sys

from ..distributed.ray_runtime import DistributedError, ray_module
from ..examples.distributed_digits import main as compare


def main(steps: int, trainers: int, pservers: int) -> int:
    """The example's report, or (no ray, an actor that died) one line saying why, and exit
    code 2."""
    try:
        ray_module()        # before the one-process half runs: without Ray, say so first
        compare(steps=steps, trainers=trainers, pservers=pservers)
    except DistributedError as e:
        print(f"python -m paddle_nb distributed: {e}", file=sys.stderr)
        return 2
    return 0
