"""Numba kernels, installed as ``paddle_nb.kernels``.

Plain functions over arrays: no knowledge of ops, programs, scopes or the front end.
``cpu/`` holds module-level ``@njit``/``@vectorize`` kernels (``cache=True`` so a second
process compiles nothing; ``error_model="numpy"`` and ``fastmath`` so loops vectorise).
Op declarations in ``paddle_nb/ops/`` bind them to op types.
"""
