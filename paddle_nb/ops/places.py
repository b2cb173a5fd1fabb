"""The places' primitives moved to ``paddle_nb.backends`` (a backend, not an op family):
this module keeps the old import path working (``from paddle_nb.ops import places``, as
the course's notebooks and "Open in a notebook" write it)."""
from ..backends import CPU, CUDA

__all__ = ["CPU", "CUDA"]
