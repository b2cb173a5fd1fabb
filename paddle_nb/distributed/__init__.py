"""``pd.distributed``: Fluid's DistributeTranspiler (transpiler.py) rewriting a training
program into a trainer program and parameter-server programs, the Transport interface
their communication ops use (transport.py), the server's round logic (pserver.py) and an
in-process runtime of threads (local.py: LocalCluster), and the same programs on Ray
(ray_runtime.py: RayCluster, train; Ray is imported only when a cluster starts)."""
from .local import InProcessTransport, LocalCluster
from .plan import shard
from .pserver import ParameterServer
from .ray_runtime import DistributedError, RayCluster, TrainResult, train
from .transpiler import (DistributeTranspiler, DistributeTranspilerConfig, VarBlock,
                         slice_rows)
from .transport import DEFAULT_TIMEOUT_S, Transport, received_name

__all__ = ["DistributeTranspiler", "DistributeTranspilerConfig", "VarBlock", "slice_rows",
           "Transport", "received_name", "DEFAULT_TIMEOUT_S", "ParameterServer",
           "InProcessTransport", "LocalCluster", "RayCluster", "train", "TrainResult",
           "DistributedError", "shard"]
